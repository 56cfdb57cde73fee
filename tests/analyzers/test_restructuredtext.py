"""The reStructuredText analyzer: sections, Sphinx markup, links, references, problems, renderings, real docs."""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from pathlib import Path

import pytest
from docutils import frontend, nodes, utils
from docutils.parsers.rst import Parser, directives, roles

from cleveragents.analyzers._documents import LEVELS
from cleveragents.analyzers.restructuredtext import ANALYZERS
from cleveragents.indexing.model import FileAnalysis, RenderRequest
from cleveragents.terms import UKO, UKO_DOC
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

RST = ANALYZERS[0]
PATH = "docs/topics/guide.txt"
CROSS = UKO_DOC + "crossReferences"
REFERENCES = UKO + "references"

GUIDE = """\
.. _guide-top:

=====
Guide
=====

.. module:: shop.models

Intro with `a link <other.rst#x>`_, ``Order.total()`` and :class:`~shop.models.Order` [#speed]_.
Read :doc:`/ref/api` and :ref:`guide-install` for more.

.. _guide-install:

Installation
============

Install it. See `Requirements`_ below.

.. code-block:: python
   :emphasize-lines: 1

   import shop
   shop.setup()

Some text::

    literal text

.. versionadded:: 2.0

   The ``install_all()`` helper.

Requirements
------------

* Python 3.11
* A compiler

  * gcc

+------+---------+
| Name | Version |
+======+=========+
| gcc  | 12      |
+------+---------+

.. class:: Order(items)

   An order.

   .. method:: total()

      The sum.

Usage
=====

    Simple is better than complex.

    -- Tim Peters

.. [#speed] It is fast.

.. toctree::
   :maxdepth: 2

   intro/index
   Reference <ref/index>
   /faq
"""


def analysis(text: str | bytes, path: str = PATH) -> FileAnalysis:
    return analyze(RST, path, text)


def values(found: FileAnalysis, key: str, name: str) -> list[object]:
    return entity(found, key).values.get(UKO_DOC + name, [])


def links(found: FileAnalysis, key: str, predicate: str) -> list[str]:
    return [target for p, target in entity(found, key).links if p == predicate]


def mentions(found: FileAnalysis, key: str) -> list[tuple[tuple[tuple[str, float], ...], str | None]]:
    return [(r.targets, r.simple_name) for r in found.references if r.source == key and r.predicate == REFERENCES]


def render(text: str, key: str, level: str) -> str:
    node = entity(analysis(text), key)
    return RST.render(RenderRequest(key, node.types, PATH, text.encode(), node.span, level, LEVELS.index(level)))


def test_handles_rst_and_txt_under_docs() -> None:
    assert RST.handles("README.rst") and RST.handles("docs/index.rst") and RST.handles("a/b/INDEX.RST")
    assert RST.handles("docs/topics/db/models.txt") and RST.handles("project/docs/intro.txt")
    assert not RST.handles("requirements.txt") and not RST.handles("docsite/a.txt") and not RST.handles("docs")
    assert not RST.handles("docs/requirements.txt") and not RST.handles("docs/requirements-dev.txt")
    assert not RST.handles("README.md")


def test_document_sections_and_blocks() -> None:
    found = analysis(GUIDE)
    assert found.problems == []
    assert [(e.key, e.types[0].removeprefix(UKO_DOC)) for e in found.entities] == [
        ("", "Document"),
        ("guide", "Section"),
        ("guide/p1", "Paragraph"),
        ("guide/installation", "Subsection"),
        ("guide/installation/p1", "Paragraph"),
        ("guide/installation/code1", "CodeBlock"),
        ("guide/installation/p2", "Paragraph"),
        ("guide/installation/code2", "CodeBlock"),
        ("guide/installation/p3", "Paragraph"),
        ("guide/installation/requirements", "Subsection"),
        ("guide/installation/requirements/list1", "ListBlock"),
        ("guide/installation/requirements/table1", "Table"),
        ("guide/installation/requirements/p1", "Paragraph"),
        ("guide/installation/requirements/p2", "Paragraph"),
        ("guide/usage", "Subsection"),
        ("guide/usage/quote1", "BlockQuote"),
        ("guide/usage/fn-speed", "Footnote"),
        ("guide/usage/toc1", "TableOfContents"),
    ]
    assert values(found, "", "headingText") == ["Guide"] and entity(found, "").name == "Guide"
    spans = {e.key: e.span.literal() for e in found.entities if e.span}
    assert spans["guide"] == "3:0-69:7"  # from the overline
    assert spans["guide/installation"] == "14:0-53:14"
    assert spans["guide/installation/code1"] == "19:0-23:15"  # the directive and its options belong to it
    assert spans["guide/installation/code2"] == "27:0-27:16"  # "::" stays with its paragraph
    assert spans["guide/installation/p3"] == "29:0-31:32"  # versionadded's content, with its header
    assert spans["guide/installation/requirements/table1"] == "41:0-45:18"
    assert spans["guide/installation/requirements/p2"] == "51:0-53:14"  # the method description's content
    assert spans["guide/usage/fn-speed"] == "62:0-62:23"
    assert values(found, "guide/installation/code1", "codeLanguage") == ["python"]
    assert values(found, "guide/installation/code2", "codeLanguage") == []
    assert values(found, "guide/usage", "headingLevel") == [2]
    assert values(found, "guide/installation/requirements", "headingLevel") == [3]
    assert render(GUIDE, "guide/usage/quote1", "STRUCTURAL_DETAIL") == "> Simple is better than complex. — Tim Peters"
    assert render(GUIDE, "guide/installation/requirements/list1", "STRUCTURAL_DETAIL") == "- Python 3.11\n- A compiler"


def test_labels_and_anchors_are_symbols() -> None:
    found = analysis(GUIDE)
    assert entity(found, "").symbols == (("doc", PATH),)
    assert entity(found, "guide").symbols == (
        ("doc", f"{PATH}#guide"),
        ("doc", f"{PATH}#guide-top"),
        ("doc", "ref:guide-top"),
    )
    assert ("doc", "ref:guide-install") in entity(found, "guide/installation").symbols


def test_links_and_cross_references() -> None:
    found = analysis(GUIDE)
    assert values(found, "guide/p1", "href") == ["other.rst#x"]
    # `Requirements`_ and "See Requirements below" name the same section: one edge.
    assert links(found, "guide/installation/p1", CROSS) == ["guide/installation/requirements"]
    assert links(found, "guide/p1", REFERENCES) == ["guide/usage/fn-speed"]
    refs = [(r.source, r.targets, r.line) for r in found.references if r.predicate == CROSS]
    assert refs == [
        ("guide/p1", (("docs/topics/other.rst#x", 0.9), ("docs/topics/other.rst", 0.8)), 9),
        ("guide/p1", (("docs/ref/api.txt", 0.9), ("docs/ref/api.rst", 0.9)), 9),
        ("guide/p1", (("ref:guide-install", 0.9),), 9),
        ("guide/usage/toc1", (("docs/topics/intro/index.txt", 0.9), ("docs/topics/intro/index.rst", 0.9)), 64),
        ("guide/usage/toc1", (("docs/topics/ref/index.txt", 0.9), ("docs/topics/ref/index.rst", 0.9)), 64),
        ("guide/usage/toc1", (("docs/faq.txt", 0.9), ("docs/faq.rst", 0.9)), 64),
    ]
    assert render(GUIDE, "guide/usage/toc1", "STRUCTURAL_DETAIL") == "- intro/index\n- Reference <ref/index>\n- /faq"


def test_code_roles_literals_and_object_descriptions() -> None:
    found = analysis(GUIDE)
    assert mentions(found, "guide/p1") == [
        ((("Order.total", 0.6),), None),
        ((("shop.models.Order", 0.6),), None),
    ]
    assert mentions(found, "guide/installation/p3") == [((("install_all", 0.6),), "install_all")]
    # ".. class:: Order" in module shop.models names its first block; ".. method::" inside it a method.
    assert mentions(found, "guide/installation/requirements/p1") == [
        ((("shop.models.Order", 0.6), ("Order", 0.6)), None)
    ]
    assert mentions(found, "guide/installation/requirements/p2") == [
        ((("shop.models.Order.total", 0.6), ("shop.models.total", 0.6), ("total", 0.6)), None)
    ]
    roles_text = (
        "Use :meth:`QuerySet.select_related() <django.db.models.query.QuerySet.select_related>` and :attr:`!x`.\n"
    )
    (ref, short) = analysis(roles_text).references
    assert ref.targets == (("django.db.models.query.QuerySet.select_related", 0.6),)
    assert ref.simple_name == "select_related" and short.targets == (("x", 0.6),) and short.simple_name is None
    assert entity(analysis(roles_text), "p1").name == "Use QuerySet.select_related() and x."


def test_sphinx_and_project_markup_parses_without_problems(capfd: pytest.CaptureFixture[str]) -> None:
    text = """\
Title
=====

.. versionchanged:: 4.1
   Changed :setting:`DEBUG` handling, see :djadmin:`migrate` and :rfc:`9110#section-1`.

.. django-admin:: migrate [app_label]

    Runs :ttag:`url` checks. :index:`Indexed` and :pep:`8#naming`.

.. glossary::

    plaintext
    cleartext
        Readable data.

    key
        A secret.

.. include:: /etc/passwd

.. raw:: html

   <b>bold</b>

.. literalinclude:: ../../setup.py

.. highlight:: console

::

    $ run it
"""
    found = analysis(text)
    out, err = capfd.readouterr()
    assert found.problems == [] and out == "" and err == ""
    paragraphs = [e.name for e in found.entities if UKO_DOC + "Paragraph" in e.types]
    assert paragraphs == [
        "Changed DEBUG handling, see migrate and 9110#section-1.",
        "Runs url checks. Indexed and 8#naming.",
    ]
    glossary = [e for e in found.entities if UKO_DOC + "ListBlock" in e.types]
    assert [e.name for e in glossary] == ["plaintext, cleartext Readable data. key A secret."]
    assert values(found, "title/code1", "codeLanguage") == ["console"]
    assert "passwd" not in json.dumps([e.values for e in found.entities])
    # The permissive lookups were only in place for the parse.
    assert directives.directive.__module__ == "docutils.parsers.rst.directives"
    assert roles.role.__module__ == "docutils.parsers.rst.roles"


def test_real_errors_are_problems_with_lines() -> None:
    found = analysis("Title\n====\n\nSome *unclosed emphasis.\n\n.. image::\n")
    assert [(p.message, p.span and p.span.start_line) for p in found.problems] == [
        ("Title underline too short.", 2),
        ("Inline emphasis start-string without end-string.", 4),
        ('Error in "image" directive:', 6),
    ]
    assert values(found, "title", "headingText") == ["Title"]


def test_heading_depths_and_duplicates() -> None:
    text = "".join(f"Level {n}\n{c * 8}\n\ntext\n\n" for n, c in zip(range(1, 7), "=-~^\"'", strict=True))
    found = analysis(text)
    sections = [e for e in found.entities if e.types[0].endswith("ection")]
    assert [values(found, e.key, "headingLevel")[0] for e in sections] == [1, 2, 3, 4, 5, 6]
    assert sections[-1].key == "/".join(f"level-{n}" for n in range(1, 7))
    duplicates = analysis("Example\n=======\n\nA\n\nExample\n=======\n\nB\n\nSub\n---\n")
    keys = [e.key for e in duplicates.entities if e.types[0].endswith("ection")]
    assert keys == ["example", "example~2", "example~2/sub"]
    assert entity(duplicates, "example~2").symbols == (("doc", f"{PATH}#example-1"),)


def test_see_section_and_in_document_links() -> None:
    text = """\
Manual
======

3.2 Setup
---------

Body.

Options
-------

For paths see section 3.2, for flags see "Options" and `the setup <#setup>`_.
"""
    found = analysis(text)
    assert links(found, "manual/options/p1", CROSS) == ["manual/3-2-setup"]
    assert values(found, "manual/options/p1", "href") == ["#setup"]
    other = analysis(text.replace("<#setup>", "<#3-2-setup>"))
    assert links(other, "manual/options/p1", CROSS) == ["manual/3-2-setup"]


def test_keywords_word_counts_and_topics() -> None:
    text = """\
Handbook
========

Authentication Tokens
---------------------

Tokens authenticate clients. Each token expires after an hour.

Deployment
----------

Deploy the service behind a proxy. The proxy forwards each authentication token to the service,
and expired tokens are refused.
"""
    found = analysis(text)
    keywords = json.loads(str(values(found, "handbook/authentication-tokens", "topicKeywords")[0]))
    assert "Authentication Tokens" in keywords and len(keywords) <= 5
    assert values(found, "handbook/authentication-tokens/p1", "wordCount") == [9]
    topics = [(r.source, r.targets) for r in found.references if r.predicate == UKO_DOC + "discussesTopic"]
    assert [(source, targets[0][0]) for source, targets in topics] == [
        ("handbook/deployment", f"{PATH}#authentication-tokens"),
        ("handbook/deployment/p1", f"{PATH}#authentication-tokens"),
    ]


def test_bad_input_never_raises() -> None:
    empty = analysis(b"")
    assert [e.key for e in empty.entities] == [""] and empty.problems == []
    fields = analysis(":Author: Me\n:Version: 1\n")
    assert [e.key for e in fields.entities] == ["", "list1"] and fields.problems == []
    comment = analysis(".. just a comment\n")
    assert [e.key for e in comment.entities] == ["", "comment1"]
    broken = analysis(b"Caf\xe9\n====\n\nText.\n")
    assert [p.message for p in broken.problems] == ["invalid UTF-8 at byte 3"]
    assert values(broken, "caf", "headingText") == ["Caf\ufffd"]
    deep = analysis("".join("  " * i + "x\n\n" for i in range(400)))
    assert [e.key for e in deep.entities] == [""]
    assert deep.problems[0].message.startswith("reStructuredText parse failed: RecursionError")
    long_line = analysis("x" * 20_000 + "\n")
    assert [p.message for p in long_line.problems] == ["Line 1 exceeds the line-length-limit."]


def test_triples_load_and_query() -> None:
    store = graph(RST, PATH, GUIDE)
    rows = select(store, "SELECT ?s WHERE { ?s a uko-doc:Footnote }")
    assert rows == [{"s": iri(PATH, "guide/usage/fn-speed")}]
    levels = select(store, "SELECT ?l WHERE { ?s uko-doc:headingLevel ?l } ORDER BY ?l")
    assert [r["l"] for r in levels] == ["1", "2", "2", "3"]


def test_renderings_at_every_level() -> None:
    outputs = {level: render(GUIDE, "", level) for level in LEVELS}
    assert outputs["TITLE_ONLY"] == "Guide"
    assert outputs["TABLE_OF_CONTENTS_L1"] == "Guide\n- Installation\n- Usage"
    assert outputs["TABLE_OF_CONTENTS_L2"] == "Guide\n- Installation\n  - Requirements\n- Usage"
    assert outputs["TOC_WITH_SUMMARIES"].startswith("# Guide\nIntro with a link, Order.total() and Order .\n")
    assert "Related: Requirements" in outputs["SECTION_OVERVIEWS"]
    assert (
        "- Install it.\n" in outputs["TOPIC_SENTENCES"]
        and "- Install it. See Requirements below.\n" in (outputs["PARAGRAPH_SUMMARIES"])
    )
    assert "[python, 2 lines] import shop" in outputs["STRUCTURAL_DETAIL"]
    assert "[table, 2 rows] Name | Version" in outputs["STRUCTURAL_DETAIL"]
    assert "```python\nimport shop\nshop.setup()\n```" in outputs["NEAR_COMPLETE"]
    assert outputs["FULL_CONTENT"] == GUIDE
    distinct = [outputs[level] for level in LEVELS if level != "FULL_TOC"]
    assert len(set(distinct)) == len(distinct)
    section = render(GUIDE, "guide/installation", "FULL_CONTENT")
    assert section.startswith("Installation\n============\n") and section.endswith("      The sum.")
    assert render(GUIDE, "guide/installation/code1", "FULL_CONTENT").startswith(".. code-block:: python\n")


# ── real reStructuredText ─────────────────────────────────────────


def docutils_sections(path: str, text: str) -> Counter[int]:
    """Plain docutils (no stand-ins for Sphinx markup): the line of every section title."""
    settings = frontend.get_default_settings(Parser)
    settings.report_level, settings.halt_level, settings.warning_stream = 5, 5, io.StringIO()
    settings.file_insertion_enabled, settings.raw_enabled, settings.doctitle_xform = False, False, False
    document = utils.new_document(path, settings)
    Parser().parse(text, document)
    return Counter(s.line - 1 for s in document.findall(nodes.section))  # docutils gives the underline


def check_corpus(files: list[tuple[str, Path]], capfd: pytest.CaptureFixture[str]) -> tuple[int, float]:
    elapsed, sections = 0.0, 0
    for relative, path in files:
        data = path.read_bytes()
        started = time.process_time()
        found = analyze(RST, relative, data)
        elapsed += time.process_time() - started
        assert found.problems == [], (relative, found.problems[:3])
        assert len({e.key for e in found.entities}) == len(found.entities), relative
        # A section starts at its title line, or at the overline just above it.
        starts = sorted(e.span.start_line for e in found.entities if e.types[0].endswith("ection") and e.span)
        titles = sorted(docutils_sections(relative, data.decode()).elements())
        assert len(starts) == len(titles), relative
        assert all(0 <= title - start <= 1 for start, title in zip(starts, titles, strict=True)), relative
        sections += len(titles)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    return sections, elapsed


def sources(name: str, pattern: str) -> list[tuple[str, Path]]:
    root = corpus_dir(name)
    found = [(p.relative_to(root).as_posix(), p) for p in sorted(root.glob(pattern))]
    return [(relative, path) for relative, path in found if RST.handles(relative)]


def test_real_sphinx_projects(capfd: pytest.CaptureFixture[str]) -> None:
    """Docs of kopf, cryptography and Django (how-to guides, contrib reference): clean, every section docutils sees."""
    files = sources("kopf-1.37.4", "docs/**/*.rst") + sources("cryptography-41.0.7", "docs/*.rst")
    files += sources("django", "docs/howto/*.txt") + sources("django", "docs/ref/contrib/*.txt")
    assert len(files) > 90
    sections, elapsed = check_corpus(files, capfd)
    assert sections > 500
    with capfd.disabled():
        print(f"\nrestructuredtext: {len(files)} files in {elapsed:.2f} s CPU ({len(files) / elapsed:.0f} files/s)")


@pytest.mark.slow
def test_django_documentation(capfd: pytest.CaptureFixture[str]) -> None:
    """Django's documentation (docs/**/*.txt and *.rst): every 5th file in sorted order, so
    that every part of the docs tree is covered and the suite stays within CI's budget."""
    every = sources("django", "docs/**/*")
    assert len(every) > 600
    files = every[::5]
    sections, elapsed = check_corpus(files, capfd)
    with capfd.disabled():
        rate = len(files) / elapsed
        print(f"\nDjango docs: {len(files)} files, {sections} sections in {elapsed:.1f} s CPU ({rate:.0f} files/s)")
