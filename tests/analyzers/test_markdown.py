"""The Markdown analyzer: sections, blocks, links, references, keywords, topics, problems, renderings, real files."""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from cleveragents.analyzers._documents import LEVELS
from cleveragents.analyzers.markdown import ANALYZERS
from cleveragents.indexing.model import FileAnalysis, Reference, RenderRequest, Span
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.tbox.lookup import expand_term
from cleveragents.terms import UKO, UKO_DOC
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

MD = ANALYZERS[0]
CROSS = UKO_DOC + "crossReferences"
PRECEDES = UKO_DOC + "precedes"

GUIDE = """\
# Guide

Intro paragraph. It explains the guide.

## Installation

Install the package with pip. Then configure it.

```python
import thing
thing.setup()
```

### Requirements

- Python 3.11 or newer
- A C compiler
  - gcc or clang

| Name | Version |
|------|---------|
| gcc  | 12      |

## Usage

> Simple is better than complex.
> -- Tim Peters

See Installation for the setup, and [the requirements](#requirements).
Call `Thing.run()` on a `QuerySet`[^speed].

[^speed]: It is fast.
"""


def analysis(text: str | bytes, path: str = "docs/guide.md") -> FileAnalysis:
    return analyze(MD, path, text)


def values(found: FileAnalysis, key: str, name: str) -> list[object]:
    return entity(found, key).values.get(UKO_DOC + name, [])


def span(found: FileAnalysis, key: str) -> Span:
    node = entity(found, key)
    assert node.span is not None, key
    return node.span


def links(found: FileAnalysis, key: str, predicate: str) -> list[str]:
    return [target for p, target in entity(found, key).links if p == predicate]


def render(text: str, key: str, level: str, path: str = "docs/guide.md") -> str:
    node = entity(analysis(text, path), key)
    depth = LEVELS.index(level)
    return MD.render(RenderRequest(key, node.types, path, text.encode(), node.span, level, depth))


def test_handles_markdown_files_only() -> None:
    assert MD.handles("README.md") and MD.handles("docs/a/b.markdown") and MD.handles("NOTES.MD")
    assert not MD.handles("docs/index.rst") and not MD.handles("docs/a.txt") and not MD.handles("md")
    assert MD.file_types("README.md") == (UKO_DOC + "Document",)


def test_document_sections_and_blocks() -> None:
    found = analysis(GUIDE)
    assert [(e.key, e.types[0].removeprefix(UKO_DOC)) for e in found.entities] == [
        ("", "Document"),
        ("guide", "Section"),
        ("guide/p1", "Paragraph"),
        ("guide/installation", "Subsection"),
        ("guide/installation/p1", "Paragraph"),
        ("guide/installation/code1", "CodeBlock"),
        ("guide/installation/requirements", "Subsection"),
        ("guide/installation/requirements/list1", "ListBlock"),
        ("guide/installation/requirements/table1", "Table"),
        ("guide/usage", "Subsection"),
        ("guide/usage/quote1", "BlockQuote"),
        ("guide/usage/p1", "Paragraph"),
        ("guide/usage/fn-speed", "Footnote"),
    ]
    assert found.problems == []
    document = entity(found, "")
    assert document.name == "Guide" and document.span is None
    assert values(found, "", "headingText") == ["Guide"]
    assert document.symbols == (("doc", "docs/guide.md"),)
    # Nesting, heading levels, spans: the section runs to the end of its last block.
    installation = entity(found, "guide/installation")
    assert installation.parent == "guide" and values(found, "guide/installation", "headingLevel") == [2]
    assert values(found, "guide/installation/requirements", "headingLevel") == [3]
    assert installation.span is not None and installation.span.literal() == "5:0-22:18"
    assert span(found, "guide/installation/code1").literal() == "9:0-12:3"
    assert installation.symbols == (("doc", "docs/guide.md#installation"),)
    assert values(found, "guide/installation/code1", "codeLanguage") == ["python"]
    # Reading order among siblings, subsections included.
    assert links(found, "guide/installation/p1", PRECEDES) == ["guide/installation/code1"]
    assert links(found, "guide/installation/code1", PRECEDES) == ["guide/installation/requirements"]
    assert links(found, "guide/installation", PRECEDES) == ["guide/usage"]
    assert links(found, "guide/usage/fn-speed", PRECEDES) == []


def test_every_entity_has_a_span_whose_slice_is_its_text() -> None:
    found = analysis(GUIDE)
    data = GUIDE.encode()
    for node in found.entities[1:]:
        assert node.span is not None, node.key
        chunk = data[node.span.start_byte : node.span.end_byte].decode()
        assert chunk == "\n".join(GUIDE.split("\n")[node.span.start_line - 1 : node.span.end_line]), node.key
    assert data[span(found, "guide/usage/quote1").start_byte :].startswith(b"> Simple")


def test_heading_depths_one_to_six_nest() -> None:
    text = "".join(f"{'#' * n} Level {n}\n\ntext {n}\n\n" for n in range(1, 7))
    found = analysis(text)
    keys = [e.key for e in found.entities if UKO_DOC + "Section" in e.types or UKO_DOC + "Subsection" in e.types]
    assert keys == ["level-1", *("/".join(f"level-{i}" for i in range(1, n + 1)) for n in range(2, 7))]
    assert [values(found, k, "headingLevel")[0] for k in keys] == [1, 2, 3, 4, 5, 6]
    deepest = entity(found, keys[-1])
    assert deepest.parent == keys[-2] and entity(found, keys[-1] + "/p1").parent == keys[-1]
    # A level skipped (h1 then h3) still nests one deeper; the level is the depth of nesting.
    skipped = analysis("# A\n\n### C\n\n## B\n")
    assert values(skipped, "a/c", "headingLevel") == [2] and entity(skipped, "a/b").parent == "a"


def test_setext_headings() -> None:
    found = analysis("Title\n=====\n\nSub part\n--------\n\nBody.\n")
    assert values(found, "title", "headingText") == ["Title"]
    assert span(found, "title").literal() == "1:0-7:5"
    assert values(found, "title/sub-part", "headingLevel") == [2]
    assert span(found, "title/sub-part").start_line == 4


def test_duplicate_headings_get_suffixed_keys_and_github_anchors() -> None:
    found = analysis("# API\n\n## Example\n\none\n\n## Example\n\ntwo\n\n### Notes\n\n## Example\n")
    keys = [e.key for e in found.entities if e.types[0].endswith("ection")]
    assert keys == ["api", "api/example", "api/example~2", "api/example~2/notes", "api/example~3"]
    assert entity(found, "api/example~2").symbols == (("doc", "docs/guide.md#example-1"),)
    assert entity(found, "api/example~3").symbols == (("doc", "docs/guide.md#example-2"),)
    assert entity(found, "api/example~2/p1").name == "two"


def test_nested_lists_are_one_block() -> None:
    found = analysis("- one\n- two\n  - two a\n  - two b\n    1. deep\n- three\n\nAfter.\n")
    lists = [e for e in found.entities if UKO_DOC + "ListBlock" in e.types]
    assert [e.key for e in lists] == ["list1"] and span(found, "list1").literal() == "1:0-6:7"
    text = "- one\n- two\n  - two a\n  - two b\n    1. deep\n- three\n\nAfter.\n"
    assert render(text, "list1", "STRUCTURAL_DETAIL") == "- one\n- two\n- three"
    assert render(text, "list1", "TITLE_ONLY") == "list (3 items)"


def test_tables_and_block_quotes() -> None:
    found = analysis(GUIDE)
    table = "guide/installation/requirements/table1"
    assert render(GUIDE, table, "NEAR_COMPLETE") == "Name | Version\ngcc | 12"
    assert render(GUIDE, table, "TITLE_ONLY") == "table (2 rows)"
    assert values(found, table, "wordCount") == [4]
    assert render(GUIDE, "guide/usage/quote1", "STRUCTURAL_DETAIL") == "> Simple is better than complex. — Tim Peters"


def test_code_blocks_fenced_and_indented() -> None:
    text = "Intro:\n\n    indented = True\n\n~~~ {.rust title=x}\nfn main() {}\n~~~\n\n```\nplain\n```\n"
    found = analysis(text)
    assert values(found, "code1", "codeLanguage") == []
    assert values(found, "code2", "codeLanguage") == ["rust"]
    assert values(found, "code3", "codeLanguage") == []
    assert entity(found, "code2").name == "rust block (1 lines)"


def test_footnotes_are_annotations_their_citers_reference() -> None:
    found = analysis(GUIDE)
    assert links(found, "guide/usage/p1", UKO + "references") == ["guide/usage/fn-speed"]
    assert span(found, "guide/usage/fn-speed").literal() == "32:0-32:21"
    assert render(GUIDE, "guide/usage/fn-speed", "TABLE_OF_CONTENTS_L1") == "[speed] It is fast."
    # Defined under a later heading than its citation: it belongs where it is written.
    later = analysis("# A\n\nCited[^n].\n\n# B\n\n[^n]: Note.\n")
    assert entity(later, "b/fn-n").parent == "b" and links(later, "a/p1", UKO + "references") == ["b/fn-n"]


def test_links_anchors_and_hrefs() -> None:
    found = analysis(GUIDE)
    assert values(found, "guide/usage/p1", "href") == ["#requirements"]
    # "#requirements" and "See Installation" both resolve inside the document.
    assert links(found, "guide/usage/p1", CROSS) == ["guide/installation/requirements", "guide/installation"]
    text = "# Setup Guide\n\n[up](#setup-guide) [ext](https://example.com/x.md) [img](logo.png) [gone](#nope)\n"
    other = analysis(text)
    assert links(other, "setup-guide/p1", CROSS) == ["setup-guide"]
    assert values(other, "setup-guide/p1", "href") == ["#setup-guide", "https://example.com/x.md", "logo.png", "#nope"]
    assert other.references == []


def test_links_to_other_documents_are_references() -> None:
    text = (
        "Read [install](../setup/install.md#linux), [index](index.rst), [root](/README.md),\n"
        "[self](guide.md#top), [escape](../../../x.md) and [api](api.txt).\n"
    )
    found = analysis(text)
    refs = [r for r in found.references if r.predicate == CROSS]
    assert refs == [
        Reference("p1", CROSS, "doc", (("setup/install.md#linux", 0.9), ("setup/install.md", 0.8)), None, 1),
        Reference("p1", CROSS, "doc", (("docs/index.rst", 0.9),), None, 1),
        Reference("p1", CROSS, "doc", (("README.md", 0.9),), None, 1),
        Reference("p1", CROSS, "doc", (("docs/api.txt", 0.9),), None, 2),
    ]


def test_see_section_phrases_cross_reference_headings() -> None:
    text = (
        "# Manual\n\n## 2.1 Setup\n\nBody.\n\n## Configuration Files\n\nMore.\n\n## Usage\n\n"
        'For paths, see Section 2.1; for options see "Configuration Files". See also: nothing here.\n'
    )
    found = analysis(text)
    assert links(found, "manual/usage/p1", CROSS) == ["manual/2-1-setup", "manual/configuration-files"]
    # The see-phrase does not link a paragraph to its own section.
    own = analysis("# Usage\n\nSee Usage below.\n")
    assert links(own, "usage/p1", CROSS) == []


def test_code_identifiers_in_code_spans() -> None:
    text = (
        "Use `Model.save()`, `django.db.models`, `QuerySet`, `select_related`, `pip`, `setup.py`, `add()`, `__init__`."
    )
    found = analysis(text)
    mentions = {r.targets[0][0]: r for r in found.references if r.predicate == UKO + "references"}
    assert set(mentions) == {"Model.save", "django.db.models", "QuerySet", "select_related"}
    assert all(r.namespace == "*" and r.targets[0][1] == 0.6 and r.source == "p1" for r in mentions.values())
    assert mentions["Model.save"].simple_name is None  # "save" is too common to match by name alone
    assert mentions["QuerySet"].simple_name == "QuerySet"
    assert mentions["select_related"].simple_name == "select_related"
    assert mentions["django.db.models"].simple_name is None
    lines = analysis("Para with\na line break and `Second.line` here.\n").references
    assert [r.line for r in lines] == [2]


def test_keywords_and_word_counts() -> None:
    found = analysis(GUIDE)
    usage = json.loads(str(values(found, "guide/usage", "topicKeywords")[0]))
    assert 1 <= len(usage) <= 5 and any("Thing.run" in k for k in usage)
    assert json.loads(str(values(found, "", "topicKeywords")[0]))
    assert values(found, "guide/installation/p1", "wordCount") == [8]
    assert values(found, "", "wordCount") == values(found, "guide", "wordCount")  # nothing precedes the title
    assert values(found, "guide/installation/code1", "topicKeywords") == []


TOPICS = """\
# Handbook

## Authentication Tokens

Tokens authenticate clients. Each token expires after an hour.

## Deployment

Deploy the service behind a proxy. The proxy forwards each authentication token to the service,
and expired tokens are refused before they reach it.

## Logging

Logs go to standard output.
"""


def test_topic_overlap_becomes_discusses_topic_with_confidence() -> None:
    found = analysis(TOPICS)
    topics = [r for r in found.references if r.predicate == UKO_DOC + "discussesTopic"]
    # The paragraph and its section name both heading terms; Logging shares nothing.
    assert [(r.source, r.targets[0][0]) for r in topics] == [
        ("handbook/deployment", "docs/guide.md#authentication-tokens"),
        ("handbook/deployment/p1", "docs/guide.md#authentication-tokens"),
    ]
    assert all(0.5 <= r.targets[0][1] <= 0.9 and len(r.targets) == 1 for r in topics)
    assert "Authentication Tokens" in render(TOPICS, "handbook/deployment", "SECTION_OVERVIEWS")


def test_empty_file_and_front_matter_only() -> None:
    empty = analysis(b"")
    assert [e.key for e in empty.entities] == [""] and empty.problems == [] and empty.references == []
    assert values(empty, "", "wordCount") == [0]
    front = analysis("---\ntitle: 'Release notes'\ntags: [a, b]\n---\n")
    assert [e.key for e in front.entities] == [""] and front.problems == []
    assert values(front, "", "headingText") == ["Release notes"]
    assert entity(front, "").name == "Release notes"
    assert render("---\ntitle: Release notes\n---\n", "", "FULL_TOC") == "Release notes"


def test_broken_utf8_is_a_problem_not_an_exception() -> None:
    data = b"# Caf\xe9\n\nOk.\n\nBad \xff\xfe byte.\n"
    found = analysis(data)
    assert [p.message for p in found.problems] == ["invalid UTF-8 at byte 5"]
    assert [str(p.span and p.span.literal()) for p in found.problems] == ["1:5-1:6"]
    assert values(found, "caf", "headingText") == ["Caf\ufffd"]
    assert span(found, "caf/p2").end_byte == len(data) - 1


def test_deep_nesting_and_pathological_input_do_not_raise() -> None:
    found = analysis("> " * 500 + "deep\n\nafter\n")
    assert [p.message for p in found.problems] == [
        "nesting deeper than 40 levels: the innermost content was not parsed"
    ]
    assert analysis("[" * 5000 + "x" + "]" * 5000 + "\n").problems == []
    crlf = analysis("# A\r\n\r\ntext\r\n")
    assert span(crlf, "a/p1").literal() == "3:0-3:4"
    bom = analysis("\ufeff# Title\n\ntext\n".encode())
    assert values(bom, "title", "headingText") == ["Title"] and span(bom, "title").start_byte == 0


def test_triples_load_and_query() -> None:
    store = graph(MD, "docs/guide.md", GUIDE)
    rows = select(
        store,
        "SELECT ?s ?level WHERE { ?s a uko-doc:Subsection ; uko-doc:headingLevel ?level } ORDER BY ?level ?s",
    )
    assert [(r["s"], r["level"]) for r in rows] == [
        (iri("docs/guide.md", "guide/installation"), "2"),
        (iri("docs/guide.md", "guide/usage"), "2"),
        (iri("docs/guide.md", "guide/installation/requirements"), "3"),
    ]
    cross = select(store, "SELECT ?o WHERE { ?s uko-doc:crossReferences ?o } ORDER BY ?o")
    assert [r["o"] for r in cross] == [
        iri("docs/guide.md", "guide/installation"),
        iri("docs/guide.md", "guide/installation/requirements"),
    ]


# ── renderings ────────────────────────────────────────────────────


def test_levels_are_the_uko_doc_map() -> None:
    names = [level.name for level in effective_levels(expand_term("uko-doc:Section"))]
    assert names == list(LEVELS)


def test_document_renderings_at_every_level() -> None:
    outputs = {level: render(GUIDE, "", level) for level in LEVELS}
    assert outputs["TITLE_ONLY"] == "Guide"
    assert outputs["TABLE_OF_CONTENTS_L1"] == "Guide\n- Installation\n- Usage"
    assert outputs["TABLE_OF_CONTENTS_L2"] == "Guide\n- Installation\n  - Requirements\n- Usage"
    assert outputs["TOC_WITH_SUMMARIES"].startswith("# Guide\nIntro paragraph.\n## Installation\nInstall the")
    assert (
        "Keywords: " in outputs["SECTION_OVERVIEWS"]
        and "Related: Requirements; Installation" in outputs["SECTION_OVERVIEWS"]
    )
    assert "- Install the package with pip.\n" in outputs["TOPIC_SENTENCES"]
    assert "- Install the package with pip. Then configure it." in outputs["PARAGRAPH_SUMMARIES"]
    detail = outputs["STRUCTURAL_DETAIL"]
    assert "[python, 2 lines] import thing" in detail and "[table, 2 rows] Name | Version" in detail
    assert "- A C compiler" in detail and "[speed] It is fast." in detail
    assert "thing.setup()" in outputs["NEAR_COMPLETE"] and "`" not in outputs["NEAR_COMPLETE"].replace("```", "")
    assert outputs["FULL_CONTENT"] == GUIDE
    # More detail never repeats a level's rendering (FULL_TOC equals L2 here: the outline is 3 deep).
    distinct = [outputs[level] for level in LEVELS if level != "FULL_TOC"]
    assert len(set(distinct)) == len(distinct)


def test_section_and_atom_renderings() -> None:
    assert render(GUIDE, "guide/installation", "TITLE_ONLY") == "Installation"
    assert render(GUIDE, "guide/installation", "TABLE_OF_CONTENTS_L1") == "Installation\n- Requirements"
    full = render(GUIDE, "guide/installation", "FULL_CONTENT")
    assert full.startswith("## Installation\n") and full.endswith("| gcc  | 12      |")
    code = "guide/installation/code1"
    assert render(GUIDE, code, "TITLE_ONLY") == "python block (2 lines)"
    assert render(GUIDE, code, "FULL_CONTENT") == "```python\nimport thing\nthing.setup()\n```"
    paragraph = "guide/usage/p1"
    assert render(GUIDE, paragraph, "TABLE_OF_CONTENTS_L1") == "See Installation for the setup, and the requirements."
    assert render(GUIDE, paragraph, "SECTION_OVERVIEWS").endswith("\nRelated: Requirements; Installation")
    assert render(GUIDE, paragraph, "FULL_CONTENT").endswith("on a `QuerySet`[^speed].")


def test_long_code_is_cut_near_complete() -> None:
    text = "```sh\n" + "".join(f"line{i}\n" for i in range(1, 11)) + "```\n"
    assert (
        render(text, "code1", "NEAR_COMPLETE") == "```sh\nline1\nline2\nline3\n… (4 lines)\nline8\nline9\nline10\n```"
    )


def test_render_survives_a_missing_key() -> None:
    node = entity(analysis(GUIDE), "guide/usage/p1")
    request = RenderRequest("gone", node.types, "docs/guide.md", GUIDE.encode(), node.span, "TOPIC_SENTENCES", 6)
    assert MD.render(request).startswith("See Installation")


# ── real Markdown ─────────────────────────────────────────────────

CORPORA = ["requests-2.32.3", "axios-1.7.9", "express-4.21.2", "rxjs-7.8.1", "react-query-5.62.0", "kopf-1.37.4"]


def test_real_markdown(capfd: pytest.CaptureFixture[str]) -> None:
    """Every .md file of several corpora: no error, nothing printed, every heading markdown-it finds is a section."""
    oracle = MarkdownIt("commonmark").use(front_matter_plugin)
    files = [(name, p) for name in CORPORA for p in sorted(corpus_dir(name).rglob("*.md"))]
    assert len(files) > 30
    elapsed, size, sections = 0.0, 0, 0
    for name, path in files:
        data = path.read_bytes()
        size += len(data)
        started = time.process_time()
        found = analyze(MD, path.relative_to(corpus_dir(name)).as_posix(), data)
        elapsed += time.process_time() - started
        assert found.problems == [], path
        assert len({e.key for e in found.entities}) == len(found.entities), path
        headings = Counter(t.map[0] + 1 for t in oracle.parse(data.decode()) if t.type == "heading_open" and t.map)
        starts = Counter(e.span.start_line for e in found.entities if e.types[0].endswith("ection") and e.span)
        assert starts == headings, path
        sections += sum(headings.values())
    assert sections > 1000
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    with capfd.disabled():
        rate = len(files) / elapsed
        print(f"\nmarkdown: {len(files)} files, {size / 1e6:.2f} MB in {elapsed:.2f} s CPU ({rate:.0f} files/s)")
