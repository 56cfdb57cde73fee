"""reStructuredText documents as uko-doc: nodes (``*.rst``, and ``*.txt`` under a ``docs`` folder).

docutils parses to a doctree without running transforms; this module walks the doctree
into the shared ``Block``s of ``_documents``. Sphinx and project directives and roles
(``.. versionadded::``, ``:class:``, Django's ``.. setting::``) are unknown to docutils:
while parsing, lookups that docutils cannot answer get permissive stand-ins, so their
content still parses and cross-references and code names are kept. Nothing is read
from disk or printed: file insertion and raw output are off, and system messages go to
an observer that turns warnings and errors into Problems.
"""

from __future__ import annotations

import bisect
import copy
import io
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from posixpath import splitext
from typing import Any

from docutils import frontend, nodes, utils
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.statemachine import StringList

from ._documents import DOC_EXTENSIONS, Block, DocumentAnalyzer, Parsed, code_name, doc_candidates

WARNING = 2  # docutils system message levels: 1 info, 2 warning, 3 error, 4 severe
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")
_DIRECTIVE_LINE = re.compile(r"^(\s*)\.\.\s+[\w:.+-]+::")
_OPTION_LINE = re.compile(r"^\s+:[\w-]+:(?:\s|$)")
_TITLE_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Sphinx (and Django) directive names with code as content, and the language it is in.
_CODE_DIRECTIVES = {"code": "", "code-block": "", "sourcecode": "", "console": "console", "doctest": "pycon"}
_CODE_DIRECTIVES |= {"testcode": "python", "testoutput": "", "testsetup": "python", "ipython": "ipython"}
# Directives whose content is not reStructuredText (entries, diagrams, index terms).
_OPAQUE = _words(
    "toctree autosummary include literalinclude raw highlight index tabularcolumns graphviz digraph graph "
    "mermaid uml plantuml productionlist"
)
# Python-domain object descriptions: their argument names a code object.
_PY_OBJECTS = _words(
    "class function method attribute exception data decorator decoratormethod classmethod staticmethod "
    "property autoclass autofunction automethod autoattribute autoexception autodata autodecorator"
)
_VERSION_NOTES = frozenset({"versionadded", "versionchanged", "deprecated", "versionremoved"})
_PY_MODULES = frozenset({"module", "currentmodule", "automodule"})
_CODE_ROLES = _words("class func meth attr mod exc data obj const function method attribute module exception type any")
_DOC_ROLES = frozenset({"ref", "doc", "numref"})
# Body elements that are neither blocks nor hold any.
_SKIPPED = (nodes.substitution_definition, nodes.pending, nodes.raw, nodes.transition, nodes.meta, nodes.docinfo)
_LISTS = (nodes.bullet_list, nodes.enumerated_list, nodes.definition_list, nodes.field_list, nodes.option_list)


class RestructuredTextAnalyzer(DocumentAnalyzer):
    name = "restructuredtext"
    version = "1"
    extensions = (".rst",)

    def handles(self, path: str) -> bool:
        lower = path.lower()
        if lower.endswith(".rst"):
            return True
        # Sphinx projects such as Django keep their sources as docs/**/*.txt; a docs/requirements.txt
        # is the pip requirements of the documentation build.
        *folders, name = lower.split("/")
        return name.endswith(".txt") and "docs" in folders and not name.startswith("requirements")

    def parse(self, path: str, text: str) -> Parsed:
        parsed = Parsed([])
        document = utils.new_document(path, _settings(io.StringIO()))

        def observe(message: nodes.system_message) -> None:
            if message["level"] >= WARNING:
                line = message.get("line") or 1
                text = message.children[0].astext() if message.children else message.astext()
                parsed.issues.append((text.split("\n", 1)[0], int(line) - 1))

        document.reporter.attach_observer(observe)
        try:
            with _permissive():
                Parser().parse(text, document)
        except Exception as exc:  # docutils on pathological input (e.g. RecursionError on deep nesting)
            parsed.issues.append((f"reStructuredText parse failed: {type(exc).__name__}: {exc}", 0))
            return parsed
        walker = _Walker(document, text.split("\n"), path)
        walker.body(document, 0)
        parsed.blocks = walker.finish()
        return parsed


@cache
def _base_settings() -> Any:
    settings = frontend.get_default_settings(Parser())
    settings.report_level = 5  # print nothing
    settings.halt_level = 5  # raise on nothing
    settings.file_insertion_enabled = False  # never read other files (include, csv-table :file:)
    settings.raw_enabled = False
    settings.syntax_highlight = "none"
    settings.doctitle_xform = False  # keep the title a section, like every other heading
    return settings


def _settings(stream: io.StringIO) -> Any:
    settings = copy.copy(_base_settings())
    settings.warning_stream = stream
    return settings


# ── permissive directives and roles ──────────────────────────────


class _AnyOption(dict[str, Callable[[str], Any]]):
    """An option spec accepting every option (non-empty, or docutils would not parse options)."""

    def __init__(self) -> None:
        super().__init__(name=directives.unchanged)

    def __missing__(self, key: str) -> Callable[[str], Any]:
        return directives.unchanged


class _Generic(Directive):
    """Any directive docutils does not know: a container for its parsed content."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = _AnyOption()

    def run(self) -> list[nodes.Node]:
        argument = self.arguments[0] if self.arguments else ""
        name = self.name.lower().removeprefix("py:")
        if name in _CODE_DIRECTIVES:
            body = "\n".join(self.content)
            block = nodes.literal_block(body, body)
            block["language"] = _CODE_DIRECTIVES[name] or argument.split(" ", 1)[0].lower()
            block.line = self.lineno
            return [block]
        container = nodes.container()
        container["directive"] = name
        container["argument"] = argument
        container.line = self.lineno
        words = argument.split(maxsplit=1)
        if name in _VERSION_NOTES and len(words) == 2:  # ".. versionchanged:: 4.1 What changed."
            container["argument"], prose = words
            text, messages = self.state.inline_text(prose, self.lineno)
            paragraph = nodes.paragraph(prose, "", *text)
            paragraph.line = self.lineno
            container += [paragraph, *messages]
        if name in _OPAQUE:
            container["entries"] = [line.strip() for line in self.content if line.strip()]
        elif self.content:
            content = _glossary(self.content) if name == "glossary" else self.content
            self.state.nested_parse(content, self.content_offset, container)
        return [container]


def _glossary(content: StringList) -> StringList:
    """Sphinx lets terms on consecutive lines share a definition; a plain definition list takes one
    term, so they become one term line (each line keeps its source position)."""
    lines: list[str] = []
    items: list[tuple[str, int]] = []
    for line, item in zip(content, content.items, strict=True):
        if lines and _term(line) and _term(lines[-1]):
            lines[-1] += ", " + line.strip()
        else:
            lines.append(line)
            items.append(item)
    return StringList(lines, items=items)


def _term(line: str) -> bool:
    return bool(line.strip()) and not line[0].isspace()


# Names docutils knows but Sphinx means differently (Sphinx's "class" describes a Python class,
# its :rfc: takes anchors, its :index: works) or that docutils would refuse here (raw, include).
_OVERRIDDEN = {name: _Generic for name in (*_CODE_DIRECTIVES, "include", "raw", "class")}
_OVERRIDDEN_ROLES = frozenset({"pep", "rfc", "pep-reference", "rfc-reference", "index", "raw"})
_unknown_directives: set[str] = set()
_unknown_roles: set[str] = set()


def _role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: object,
    options: dict[str, Any] | None = None,
    content: Sequence[str] = (),
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Any role docutils does not know: its title as text, its kind and target kept for the walker."""
    text = utils.unescape(text)
    match = _TITLE_TARGET.match(text)
    title, target = (match.group(1), match.group(2)) if match else ("", text)
    kind = name.lower().rsplit(":", 1)[-1]
    if not title:
        title = target.lstrip("~!").rsplit(".", 1)[-1] if target.startswith("~") else target.lstrip("!")
    node: nodes.TextElement = (nodes.literal if kind in _CODE_ROLES else nodes.inline)(rawtext, title)
    node["role"], node["target"] = kind, target
    return [node], []


_original_directive = directives.directive
_original_role = roles.role


def _directive_lookup(name: str, language: Any, document: Any) -> tuple[type[Directive] | None, list[Any]]:
    normal = name.lower()
    if normal in _OVERRIDDEN:
        return _OVERRIDDEN[normal], []
    if normal not in _unknown_directives:
        found, messages = _original_directive(name, language, document)
        if found is not None:
            return found, messages
        _unknown_directives.add(normal)
    return _Generic, []


def _role_lookup(name: str, language: Any, lineno: int, reporter: Any) -> tuple[Callable[..., Any] | None, list[Any]]:
    normal = name.lower()
    if normal not in _unknown_roles and normal not in _OVERRIDDEN_ROLES:
        found, messages = _original_role(name, language, lineno, reporter)
        if found is not None:
            return found, messages
        _unknown_roles.add(normal)
    return _role, []


_LOCK = threading.Lock()


@contextmanager
def _permissive() -> Iterator[None]:
    """docutils looks directives and roles up through module functions: swap in permissive ones
    for one parse (as Sphinx does), so that other users of docutils in the process see no change."""
    with _LOCK:
        directives.directive, roles.role = _directive_lookup, _role_lookup  # type: ignore[assignment]
        try:
            yield
        finally:
            directives.directive, roles.role = _original_directive, _original_role


# ── the doctree as blocks ────────────────────────────────────────


class _Walker:
    def __init__(self, document: nodes.document, lines: list[str], path: str) -> None:
        self.document = document
        self.lines = lines
        self.path = path
        self.blocks: list[Block] = []
        self.starts: list[int] = []  # first lines of all body elements: a block ends where the next starts
        self.ids: list[str] = []  # targets (".. _label:") waiting for the element they label
        self.labels: list[str] = []
        self.mentions: list[tuple[tuple[str, ...], int]] = []  # from object descriptions, for their first block
        self.heading: Block | None = None
        self.module = ""
        self.owners: list[str] = []  # enclosing class descriptions
        self.highlight = ""
        self.uris = {i: t["refuri"] for t in document.findall(nodes.target) if t.get("refuri") for i in t["ids"]}
        extension = splitext(path)[1].lower() or ".rst"
        self.extensions = (extension, *(e for e in (".txt", ".rst") if e != extension))
        parts = path.split("/")
        roots = [i for i, p in enumerate(parts[:-1]) if p in ("docs", "doc")]
        self.root = "/".join(parts[: roots[0] + 1]) if roots else ""  # where "/path" links start (Sphinx srcdir)

    def finish(self) -> list[Block]:
        starts = sorted(set(self.starts))
        for block in self.blocks:
            if block.kind != "heading":
                after = bisect.bisect_right(starts, block.start)
                block.end = starts[after] if after < len(starts) else len(self.lines)
        if self.heading is not None:
            self._claim(self.heading)
        return self.blocks

    def body(self, parent: nodes.Element, depth: int) -> None:
        for child in parent.children:
            if isinstance(child, nodes.Element):
                self.element(child, depth)

    def element(self, node: nodes.Element, depth: int) -> None:
        if isinstance(node, (nodes.system_message, nodes.title, nodes.subtitle)):
            return  # titles belong to their section; messages are Problems already
        if isinstance(node, nodes.section):
            self.section(node, depth + 1)
            return
        start = self._start(node)
        if start is not None:
            self.starts.append(start)
        if isinstance(node, nodes.target):
            if not node.get("refuri") and not node.get("refname") and node["ids"]:
                self.ids += node["ids"]
                self.labels += node["names"]
        elif isinstance(node, nodes.container) and node.get("directive"):
            self.directive(node, start, depth)
        elif isinstance(node, _SKIPPED):
            return
        elif start is None:
            self.body(node, depth)
        else:
            kind = self._kind(node)
            if kind is None:
                self.body(node, depth)
            elif kind != "comment" or node.astext().strip():
                self.emit(self._block(kind, node, start))

    def section(self, node: nodes.section, depth: int) -> None:
        title = node.next_node(nodes.title)
        text = title.astext() if title is not None else ""
        start, end = self._heading(node, title)
        block = Block("heading", start, end, text, level=depth)
        block.anchors = list(node["ids"])
        if title is not None:
            self._inline(title, block, start + 1)
        self.starts.append(start)
        self.emit(block)
        self.heading = block
        self.body(node, depth)

    def directive(self, node: nodes.container, start: int | None, depth: int) -> None:
        name, argument = node["directive"], node["argument"]
        line = (start or 0) + 1
        if name in _PY_MODULES:
            self.module = "" if argument.strip() == "None" else argument.strip()
        elif name == "highlight":
            self.highlight = argument.split(" ", 1)[0].lower()
        elif name == "toctree" and start is not None:
            block = Block("toc", start, start + 1, "\n".join(node["entries"]), items=list(node["entries"]))
            for entry in node["entries"]:
                match = _TITLE_TARGET.match(entry)
                target = match.group(2) if match else entry
                if target != "self" and not re.search(r"[*?\[]|://", target):
                    block.doc_links.append((self._doc(target), line))
            self.emit(block)
            return
        elif name == "include":
            if splitext(argument)[1].lower() in DOC_EXTENSIONS and self.heading is not None:
                self.heading.doc_links.append((self._doc(argument), line))
            return
        owner = name == "class" or name == "autoclass"
        if name in _PY_OBJECTS:
            found = re.match(r"[\w.]+", argument.strip())
            if found is not None:
                self.mentions.append((self._qualified(found.group(0).strip(".")), line))
        if owner and argument:
            self.owners.append(argument.split("(", 1)[0].strip())
        self.body(node, depth)
        if owner and argument:
            self.owners.pop()
        if self.mentions and self.heading is not None:  # a description without content
            self.heading.mentions += self.mentions
            self.mentions = []

    def emit(self, block: Block) -> None:
        self._claim(block)
        self.blocks.append(block)

    def _claim(self, block: Block) -> None:
        """Waiting targets and object names belong to the next element."""
        block.anchors += self.ids
        block.labels += self.labels
        block.mentions += self.mentions
        self.ids, self.labels, self.mentions = [], [], []

    def _kind(self, node: nodes.Element) -> str | None:
        if isinstance(node, (nodes.paragraph, nodes.line_block, nodes.rubric)):
            return "paragraph"
        if isinstance(node, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
            return "code"
        if isinstance(node, _LISTS):
            return "list"
        if isinstance(node, nodes.table):
            return "table"
        if isinstance(node, nodes.block_quote):
            return "quote"
        if isinstance(node, nodes.footnote):
            return "footnote"
        if isinstance(node, nodes.citation):
            return "citation"
        if isinstance(node, (nodes.figure, nodes.image)):
            return "figure"
        if isinstance(node, nodes.comment):
            return "comment"
        if isinstance(node, nodes.TextElement):
            return "paragraph"
        return None  # containers (admonitions, topics, compounds): their children are the blocks

    def _block(self, kind: str, node: nodes.Element, start: int) -> Block:
        block = Block(kind, start, start + 1, node.astext())
        if kind == "code":
            classes = [c for c in node.get("classes", ()) if c != "code"]
            if isinstance(node, nodes.doctest_block):
                block.language = "pycon"
            elif isinstance(node, nodes.math_block):
                block.language = "math"
            else:
                block.language = node.get("language") or (classes[0] if classes else self.highlight)
            return block
        if kind == "list":
            block.items = [self._item(child) for child in node.children if isinstance(child, nodes.Element)]
        elif kind == "table":
            block.items = [
                " | ".join(" ".join(e.astext().split()) for e in row.children) for row in node.findall(nodes.row)
            ]
            caption = node.next_node(nodes.title)
            block.caption = caption.astext() if caption is not None else ""
        elif kind == "quote":
            attribution = node.next_node(nodes.attribution)
            block.caption = attribution.astext() if attribution is not None else ""
            if attribution is not None:
                block.text = "\n\n".join(c.astext() for c in node.children if c is not attribution)
        elif kind in ("footnote", "citation"):
            label = node.next_node(nodes.label)
            block.label = node["names"][0] if node["names"] else (label.astext() if label is not None else "")
            if label is not None:
                block.text = "\n\n".join(c.astext() for c in node.children if c is not label)
        elif kind == "figure":
            caption = node.next_node(nodes.caption)
            block.caption = caption.astext() if caption is not None else node.get("alt", node.get("uri", ""))
        self._inline(node, block, start + 1)
        return block

    def _item(self, node: nodes.Element) -> str:
        if isinstance(node, (nodes.definition_list_item, nodes.field)) and len(node.children) > 1:
            return node.children[0].astext() + ": " + node.children[1].astext()
        return node.astext()

    def _inline(self, node: nodes.Element, block: Block, line: int) -> None:
        """Links, code names, cross-references and footnote references inside a block."""
        # Inline is a mixin, not a Node subclass, so it is tested as a predicate (as docutils
        # itself does for a class condition).
        for child in node.findall(lambda n: isinstance(n, nodes.Inline)):
            if isinstance(child, nodes.reference):
                if child.get("refuri"):
                    block.hrefs.append((child["refuri"], line))
                elif child.get("refid"):
                    block.anchor_links.append(child["refid"])
                elif child.get("refname"):
                    target = self.document.nameids.get(child["refname"])
                    if target in self.uris:
                        block.hrefs.append((self.uris[target], line))
                    elif target:
                        block.anchor_links.append(target)
            elif isinstance(child, (nodes.footnote_reference, nodes.citation_reference)):
                if child.get("refname"):
                    block.footnote_refs.append(child["refname"])
            elif isinstance(child, nodes.literal):
                role = child.get("role")
                if role:
                    name = code_name(child["target"], explicit=True)
                    if name is not None:
                        block.mentions.append((self._qualified(name), line))
                else:
                    name = code_name(child.astext())
                    if name is not None:
                        block.mentions.append(((name,), line))
            elif isinstance(child, nodes.inline) and child.get("role") in _DOC_ROLES:
                target = child["target"]
                if child["role"] == "doc":
                    block.doc_links.append((self._doc(target), line))
                else:
                    block.doc_links.append((("ref:" + nodes.fully_normalize_name(target),), line))

    def _qualified(self, name: str) -> tuple[str, ...]:
        """Candidate full names of an object named inside the current module (and class) description."""
        scope = ".".join(p for p in (self.module, *self.owners[-1:]) if p)
        found = [f"{scope}.{name}"] if scope and not name.startswith(scope + ".") else []
        if self.module and self.owners and not name.startswith(self.module + "."):
            found.append(f"{self.module}.{name}")
        return tuple(dict.fromkeys([*found, name]))

    def _doc(self, target: str) -> tuple[str, ...]:
        base = f"{self.root}/_" if target.startswith("/") else self.path
        return doc_candidates(base, target.lstrip("/"), self.extensions)

    def _start(self, node: nodes.Element) -> int | None:
        line = node.line
        if line is None:
            inner = next((n for n in node.findall(nodes.Element) if n.line), None)
            line = inner.line if inner is not None else None
        if line is None:
            return None
        index = max(0, min(line - 1, len(self.lines) - 1))
        while index > 0 and not self.lines[index].strip():  # docutils places some elements a line late
            index -= 1
        return self._header(index)

    def _header(self, index: int) -> int:
        """The line of the directive whose content starts at ``index``, if any (its header belongs to it)."""
        indent = len(self.lines[index]) - len(self.lines[index].lstrip())
        j = index - 1
        while j >= 0 and (not self.lines[j].strip() or _OPTION_LINE.match(self.lines[j])):
            j -= 1
        header = _DIRECTIVE_LINE.match(self.lines[j]) if j >= 0 else None
        return j if header is not None and len(header.group(1)) < indent else index

    def _heading(self, node: nodes.section, title: nodes.title | None) -> tuple[int, int]:
        """First and after-last line of a section title with its adornment (docutils gives the underline)."""
        line = node.line or (title.line if title is not None else None) or 1
        under = max(0, min(line - 1, len(self.lines) - 1))
        if not (_ADORNMENT.match(self.lines[under]) and under > 0 and self.lines[under - 1].strip()):
            return under, under + 1
        start = under - 1
        if start > 0 and _ADORNMENT.match(self.lines[start - 1]):
            start -= 1  # an overline
        return start, under + 1


ANALYZERS = [RestructuredTextAnalyzer()]
