"""Document structure shared by the Markdown and reStructuredText analyzers (not a plugin itself).

A format module parses its file into ``Block``s in reading order (headings included), each
with a 0-based line range and its plain text. Everything after that is common and lives
here: sections nested by heading depth, keys, keywords, links and references (to sections,
other documents and code), topic edges, and rendering at every uko-doc: detail level.

Keywords come from RAKE (Rose et al., 2010, "Automatic keyword extraction from individual
documents"), scored with the word-degree metric, not from YAKE: YAKE costs about 10 ms per
500 characters (25 ms per 2,000) and Django's documentation alone has over 4,000 sections,
so it would take most of a minute by itself. RAKE needs no corpus statistics (nothing like
TF-IDF), and here each block is tokenized once and a section adds its subsections' keywords
to its own counts, so keywords for all of Django's documentation take a few seconds.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from heapq import nlargest
from posixpath import dirname, join, normpath, splitext
from urllib.parse import unquote, urlsplit

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, SourceFile, Span
from cleveragents.vocabulary import detail_levels, uko, uko_doc

DOC_NS = "doc"
DOCUMENT = uko_doc.Document
SECTION = uko_doc.Section
SUBSECTION = uko_doc.Subsection
HEADING_LEVEL = uko_doc.headingLevel
HEADING_TEXT = uko_doc.headingText
WORD_COUNT = uko_doc.wordCount
TOPIC_KEYWORDS = uko_doc.topicKeywords
CODE_LANGUAGE = uko_doc.codeLanguage
HREF = uko_doc.href
PRECEDES = uko_doc.precedes
CROSS_REFERENCES = uko_doc.crossReferences
DISCUSSES_TOPIC = uko_doc.discussesTopic
REFERENCES = uko.references

# Block kinds: the class of their entity and the stem of their key ("<section>/p3").
KIND_CLASS = {
    "paragraph": uko_doc.Paragraph,
    "code": uko_doc.CodeBlock,
    "list": uko_doc.ListBlock,
    "table": uko_doc.Table,
    "quote": uko_doc.BlockQuote,
    "footnote": uko_doc.Footnote,
    "citation": uko_doc.Citation,
    "figure": uko_doc.Figure,
    "toc": uko_doc.TableOfContents,
    "comment": uko_doc.Comment,
}
KEY_STEM = {
    "paragraph": "p",
    "code": "code",
    "list": "list",
    "table": "table",
    "quote": "quote",
    "footnote": "fn",
    "citation": "cite",
    "figure": "figure",
    "toc": "toc",
    "comment": "comment",
}
# Kinds whose text is prose (keywords, "see X" phrases, topic matching).
PROSE = frozenset({"heading", "paragraph", "list", "table", "quote", "footnote", "citation", "figure"})

LEVELS = detail_levels.UKO_DOC
LEVEL_DEPTH = {name: depth for depth, name in enumerate(LEVELS)}
FULL = LEVEL_DEPTH["FULL_CONTENT"]

DOC_EXTENSIONS = (".md", ".markdown", ".rst", ".txt")
KEYWORDS = 5
EXPLICIT_LINK = 0.9  # a link naming its target document (and anchor)
DOCUMENT_ONLY = 0.8  # the anchor of a cross-document link did not resolve; the document did
CODE_MENTION = 0.6  # an identifier named in prose: the name is right, its scope is a guess
TOPIC_LINKS = 3  # strongest topic edges kept per unit


@dataclass(eq=False)
class Block:
    """One block of a document as its format module parsed it."""

    kind: str  # "heading" or a key of KIND_CLASS
    start: int  # first line, 0-based
    end: int  # the line after the last, 0-based; trailing blank lines are trimmed by the builder
    text: str = ""  # plain text, inline markup stripped
    level: int = 0  # headings: 1 = top level; deeper numbers nest (gaps allowed)
    anchors: list[str] = field(default_factory=list)  # ids in-document links reach it by (first: its own)
    labels: list[str] = field(default_factory=list)  # project-wide labels (Sphinx :ref: targets)
    language: str = ""  # code blocks
    label: str = ""  # footnotes and citations
    # List items (their paragraphs apart by a blank line), table rows (header first), toc entries.
    items: list[str] = field(default_factory=list)
    caption: str = ""  # table or figure caption, quote attribution
    hrefs: list[tuple[str, int]] = field(default_factory=list)  # link targets as written, 1-based line
    anchor_links: list[str] = field(default_factory=list)  # in-document ids it links to
    doc_links: list[tuple[tuple[str, ...], int]] = field(default_factory=list)  # candidate "doc" symbols
    mentions: list[tuple[tuple[str, ...], int]] = field(default_factory=list)  # code names, best first
    footnote_refs: list[str] = field(default_factory=list)


@dataclass
class Parsed:
    blocks: list[Block]
    title: str = ""  # from metadata (front matter); otherwise the builder takes a sole top-level heading
    problems: list[Problem] = field(default_factory=list)
    issues: list[tuple[str, int]] = field(default_factory=list)  # parse trouble: message, 0-based line


# ── text helpers ──────────────────────────────────────────────────

# Line breaks other than "\n" (which parsers may honour) become spaces, so that every
# parser's line numbers are the "\n"-separated lines of the file.
_OTHER_BREAKS = str.maketrans({c: " " for c in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})
_WORDS = re.compile(r"\w+(?:['’]\w+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[`*_])")


def decode(source: SourceFile) -> tuple[str, list[Problem]]:
    """The file as text for parsing (one line per "\\n", no byte order mark), and a Problem for invalid UTF-8."""
    problems: list[Problem] = []
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = source.data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (source.data.rfind(b"\n", 0, exc.start) + 1)
        problems.append(
            Problem(
                f"invalid UTF-8 at byte {exc.start}", Span(line, column, line, column + 1, exc.start, exc.start + 1)
            )
        )
        text = source.text()
    return text.removeprefix("\ufeff").replace("\r\n", "\n").translate(_OTHER_BREAKS), problems


def word_count(text: str) -> int:
    return len(_WORDS.findall(text))


def one_line(text: str) -> str:
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    flat = one_line(text)
    return [s for s in _SENTENCE_END.split(flat) if s] if flat else []


def first_sentence(text: str, limit: int = 240) -> str:
    found = sentences(text)
    return _clip(found[0] if found else "", limit)


def summary(text: str, limit: int = 320) -> str:
    """An extractive stand-in for a generated summary: the opening two sentences."""
    return _clip(" ".join(sentences(text)[:2]), limit)


def opening(text: str, words: int = 8) -> str:
    found = text.split(maxsplit=words)
    return " ".join(found[:words]) + (" …" if len(found) > words else "")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def slug(text: str) -> str:
    """Key segment of a heading: lower case, runs of other characters as one hyphen."""
    return re.sub(r"\W+", "-", text.lower()).strip("-_")[:60].strip("-_") or "section"


# ── keywords: RAKE with the degree metric ────────────────────────

_STOPWORD_LIST = """
a about above after again against all almost along already also although always am among an and another any anyone
anything are around as at be became because become been before being below between both but by can cannot could did
do does doing done down during each either else enough etc even ever every for from further get gets given gives had
has have having he her here hers herself him himself his how however i ie if in instead into is it its itself just
least less let lets like likely made make makes many may me might more most much must my myself need needs neither
never no nor not now of off often on once one only onto or other others otherwise our ours ourselves out over own
per perhaps put rather really same see seen shall she should since so some something still such than that the their
theirs them themselves then there therefore these they this those though through thus to too toward under until up
upon us use used uses using very via was we well were what whatever when where whether which while who whom whose
why will with within without would yet you your yours yourself yourselves eg e.g i.e vs
"""
_STOPWORDS = frozenset(_STOPWORD_LIST.split())
# Word-like tokens (identifiers and dotted names stay whole) and the runs between them.
_TOKENS = re.compile(r"[^\W\d_]\w*(?:['’.-][^\W_]\w*)*|\d\w*|[^\w\s]+")
_MAX_PHRASE = 3
_APOSTROPHE = re.compile(r"['’]")


@lru_cache(maxsize=65536)
def _stopword(token: str) -> bool:
    """A stopword, also contracted ("they're", "isn't"); a possessive ("user's") is not."""
    lower = token.lower()
    if lower in _STOPWORDS:
        return True
    if "'" not in lower and "’" not in lower:
        return False
    return _APOSTROPHE.split(lower, 1)[0] in _STOPWORDS or lower.endswith(("n't", "n’t"))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Harman's S-stemmer: folds plurals only, so distinct terms stay distinct."""
    w = word.lower()
    if len(w) > 3 and w.endswith("ies") and not w.endswith(("eies", "aies")):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
        return w[:-1]
    if len(w) > 2 and w.endswith("s") and not w.endswith(("us", "ss")):
        return w[:-1]
    return w


@dataclass
class Terms:
    """RAKE counts of a text: candidate phrases (stemmed words) and the degree of each word."""

    phrases: dict[tuple[str, ...], int] = field(default_factory=dict)
    degree: dict[str, int] = field(default_factory=dict)
    surface: dict[tuple[str, ...], str] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str, weight: int = 1) -> Terms:
        terms = cls()
        run: list[str] = []
        for token in _TOKENS.findall(text):
            if token[0].isalpha() and len(token) > 1 and not _stopword(token):
                run.append(token)
            elif run:
                terms.add_run(run, weight)
                run = []
        if run:
            terms.add_run(run, weight)
        return terms

    def add_run(self, run: list[str], weight: int) -> None:
        # A run longer than a phrase is usually a list of names: its words count alone.
        for words in [run] if len(run) <= _MAX_PHRASE else [[w] for w in run]:
            key = tuple(map(stem, words))
            self.phrases[key] = self.phrases.get(key, 0) + weight
            if key not in self.surface:
                self.surface[key] = " ".join(words)
            for w in key:
                self.degree[w] = self.degree.get(w, 0) + len(key) * weight

    def merge(self, other: Terms) -> None:
        for key, count in other.phrases.items():
            self.phrases[key] = self.phrases.get(key, 0) + count
        for word, count in other.degree.items():
            self.degree[word] = self.degree.get(word, 0) + count
        for key, text in other.surface.items():
            self.surface.setdefault(key, text)

    def keywords(self, top: int = KEYWORDS) -> list[str]:
        """The best phrases by summed word degree, skipping any whose words a phrase already taken has."""
        degree, phrases = self.degree, self.phrases

        def score(key: tuple[str, ...]) -> tuple[float, int, tuple[str, ...]]:
            return sum(map(degree.__getitem__, key)) / _ROOTS[len(key)], phrases[key], key

        chosen: list[set[str]] = []
        found: list[str] = []
        for key in nlargest(top * 6, phrases, key=score):
            words = set(key)
            if all(not words <= c for c in chosen):
                chosen.append(words)
                found.append(self.surface[key])
                if len(found) == top:
                    break
        return found


_ROOTS = [1.0, *(math.sqrt(n) for n in range(1, _MAX_PHRASE + 1))]
_NO_TERMS = Terms()


def content_stems(text: str) -> set[str]:
    return {stem(t) for t in _TOKENS.findall(text) if t[0].isalpha() and len(t) > 1 and not _stopword(t)}


# ── code identifiers named in prose ──────────────────────────────

_IDENTIFIER = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\(.*\))?")
# Last parts that make a dotted word a file or host name rather than code.
_NOT_CODE = "py md rst txt json yaml yml toml cfg ini html htm js ts css sh bat xml csv sql log lock png svg jpg gif"
_NOT_CODE_SUFFIXES = frozenset((_NOT_CODE + " com org net io edu gov dev co uk de").split())


def code_name(text: str, *, explicit: bool = False) -> str | None:
    """The dotted name a code span or code role names, or None when it is not an identifier.

    A code span qualifies when it names something a bare word could not: dotted, CamelCase or
    snake_case (``add()`` alone says too little). An explicit code role (``:class:``) always does.
    """
    text = text.strip().lstrip("~!").strip()
    if text.startswith("."):
        text = text[1:]
    match = _IDENTIFIER.fullmatch(text)
    if match is None:
        return None
    name = match.group(1)
    if explicit:
        return name
    parts = name.split(".")
    if len(parts) == 2 and parts[1].lower() in _NOT_CODE_SUFFIXES:
        return None  # a file or host name: setup.py, example.com
    return name if len(parts) > 1 or distinctive(name) else None


def distinctive(name: str) -> bool:
    """Whether a bare name is rare enough for a name-only match: CamelCase, or snake_case of 6+ characters."""
    core = name.strip("_")
    return bool(re.search(r"[a-z][A-Z]", core)) or ("_" in core and len(core) >= 6)


# ── links ────────────────────────────────────────────────────────


def doc_candidates(path: str, target: str, extensions: tuple[str, ...]) -> tuple[str, ...]:
    """Resource-relative paths a link to ``target`` (relative to ``path``'s folder) may mean."""
    resolved = normpath(join(dirname(path), target))
    if resolved.startswith("../") or resolved == "..":
        return ()
    if splitext(resolved)[1].lower() in DOC_EXTENSIONS:
        return (resolved,)
    return tuple(resolved + ext for ext in extensions)


def classify_href(path: str, href: str) -> str | tuple[tuple[str, float], ...] | None:
    """An in-document link's anchor (a str), the targets of a link to another document (a tuple),
    or None for anything else (external URLs, images, other files, paths outside the resource)."""
    try:
        parts = urlsplit(href.strip())
    except ValueError:
        return None
    if parts.scheme or parts.netloc:
        return None
    fragment = unquote(parts.fragment)
    target = unquote(parts.path)
    if not target:
        return fragment or None
    if splitext(target)[1].lower() not in DOC_EXTENSIONS:
        return None
    resolved = normpath(target.lstrip("/")) if target.startswith("/") else normpath(join(dirname(path), target))
    if resolved.startswith("../") or resolved == "..":
        return None
    if resolved == path:
        return fragment or None
    if fragment:
        return (f"{resolved}#{fragment}", EXPLICIT_LINK), (resolved, DOCUMENT_ONLY)
    return ((resolved, EXPLICIT_LINK),)


_NUMBER = re.compile(r"\d+(?:\.\d+)*\.?")
_SEE = re.compile(r"\bsee\s+(?:also\s+)?(?:the\s+)?(?:(?:section|chapter)\s+)?", re.IGNORECASE)


def _normal(text: str) -> str:
    return one_line(re.sub(r"[\"“”‘’'`*_]", "", text)).lower().rstrip(".:;,!?")


# ── the outline: blocks nested into a tree ───────────────────────


@dataclass(eq=False)
class Node:
    key: str
    kind: str  # "document", "section" or a block kind
    block: Block | None
    parent: Node | None
    depth: int = 0  # sections: nesting depth, 1 = top level
    start: int = 0
    end: int = 0
    children: list[Node] = field(default_factory=list)
    terms: Terms = field(default_factory=Terms)
    keywords: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)  # keys of sections here it cross-references or discusses
    words: int = 0

    @property
    def heading(self) -> str:
        return self.block.text if self.block is not None else ""

    def walk(self) -> list[Node]:
        order: list[Node] = []
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(node.children))
        return order


@dataclass
class Outline:
    path: str
    root: Node
    nodes: dict[str, Node]
    title: str
    title_section: Node | None  # the sole top-level section, when it carries the document title
    analysis: FileAnalysis


class _Builder:
    def __init__(self, source: SourceFile, text: str, parsed: Parsed, types: tuple[str, ...]) -> None:
        self.source = source
        self.path = source.path
        self.lines = text.split("\n")
        # Spans are bytes of the file as stored; its lines match ``self.lines`` one to one.
        self.raw = source.data.split(b"\n")
        self.offsets = [0]
        for line in self.raw:
            self.offsets.append(self.offsets[-1] + len(line) + 1)
        self.parsed = parsed
        self.types = types
        self.nodes: dict[str, Node] = {}
        self.entities: dict[str, Entity] = {}
        self.references: list[Reference] = []
        self.headings: list[tuple[str, Node]] | None = None  # normalized, longest first ("see X")

    def build(self) -> Outline:
        root = Node("", "document", None, None, end=len(self.lines))
        self.nodes[""] = root
        self._tree(root)
        order = root.walk()  # reading order, the document first
        sections = [n for n in order if n.kind == "section"]
        top = [n for n in root.children if n.kind == "section"]
        title_section = top[0] if len(top) == 1 else None
        title = self.parsed.title or (title_section.heading if title_section else "")
        self._measure(order)
        file_node = Entity("", self.types, title or self.path.rsplit("/", 1)[-1], symbols=((DOC_NS, self.path),))
        if title:
            file_node.add(HEADING_TEXT, title)
        self.entities[""] = file_node
        for node in order[1:]:
            self.entities[node.key] = self._entity(node)
        for node in order:
            self._describe(node)
        anchors = self._anchors()
        footnotes = {n.block.label: n.key for n in order if n.kind in ("footnote", "citation") and n.block}
        for node in order:
            self._link(node, anchors, footnotes, sections)
        self._topics(order, sections)
        problems = list(self.parsed.problems)
        for message, line in self.parsed.issues:
            line = max(0, min(line, len(self.lines) - 1))
            problems.append(Problem(message, self._span(Node("", "issue", None, None, 0, line, line + 1))))
        for node in order:
            node.terms = _NO_TERMS  # counts are done with; an outline may be kept for rendering
        analysis = FileAnalysis(list(self.entities.values()), self.references, problems)
        return Outline(self.path, root, self.nodes, title, title_section, analysis)

    # Sections nest by heading level; every other block belongs to the innermost open section.
    def _tree(self, root: Node) -> None:
        blocks = sorted(self.parsed.blocks, key=lambda b: b.start)
        stack: list[tuple[int, Node]] = []
        counts: Counter[tuple[str, str]] = Counter()
        for block in blocks:
            block.start = max(0, min(block.start, len(self.lines) - 1))
            block.end = max(block.start + 1, min(block.end, len(self.lines)))
            while block.end - 1 > block.start and not self.lines[block.end - 1].strip():
                block.end -= 1
            if block.kind == "heading":
                while stack and stack[-1][0] >= block.level:
                    stack.pop()
                parent = stack[-1][1] if stack else root
                key = self._unique(_prefix(parent) + slug(block.text))
                node = Node(key, "section", block, parent, len(stack) + 1, block.start, block.end)
                stack.append((block.level, node))
            else:
                parent = stack[-1][1] if stack else root
                counts[parent.key, block.kind] += 1
                name = f"{KEY_STEM[block.kind]}-{slug(block.label)}" if block.label else KEY_STEM[block.kind]
                number = "" if block.label else str(counts[parent.key, block.kind])
                node = Node(self._unique(_prefix(parent) + name + number), block.kind, block, parent, 0, block.start)
                node.end = block.end
            parent.children.append(node)
            self.nodes[node.key] = node

    def _unique(self, key: str) -> str:
        if key not in self.nodes:
            return key
        n = 2
        while f"{key}~{n}" in self.nodes:
            n += 1
        return f"{key}~{n}"

    # Words, keywords and extents, children before parents. A section's keywords come from its
    # heading (counted twice), its own blocks and its subsections' keywords (counted twice), so
    # each block is tokenized once and nothing is counted again at every level above it.
    def _measure(self, order: list[Node]) -> None:
        root = order[0]
        for node in reversed(order):
            block = node.block
            if block is not None and block.kind in PROSE:
                # Items and rows are separate phrases; lines of a paragraph are not.
                text = " ;\n".join(block.items) if block.kind in ("list", "table") else block.text
                node.terms = Terms.of(text, 2 if block.kind == "heading" else 1)
            node.words = word_count(block.text) if block is not None else 0
            for child in node.children:
                if child.kind == "section":
                    for keyword in child.keywords:
                        node.terms.add_run(keyword.split(" "), 2)
                else:
                    node.terms.merge(child.terms)
                node.words += child.words
                node.end = max(node.end, child.end)
            if node.kind in ("document", "section", "paragraph"):
                node.keywords = node.terms.keywords()
        if self.parsed.title and not root.children:
            root.keywords = Terms.of(self.parsed.title).keywords()

    def _span(self, node: Node) -> Span:
        end_col = len(self.raw[node.end - 1].rstrip(b"\r"))
        start_byte = self.offsets[node.start]
        return Span(node.start + 1, 0, node.end, end_col, start_byte, self.offsets[node.end - 1] + end_col)

    def _entity(self, node: Node) -> Entity:
        assert node.block is not None and node.parent is not None
        if node.kind == "section":
            types = (SECTION if node.depth == 1 else SUBSECTION,)
            name = node.heading or node.key
        else:
            types = (KIND_CLASS[node.kind],)
            name = self._name(node)
        return Entity(node.key, types, name, node.parent.key, self._span(node))

    def _name(self, node: Node) -> str:
        block = node.block
        assert block is not None
        if node.kind == "code":
            return f"{block.language or 'code'} block ({len(block.text.splitlines())} lines)"
        if node.kind in ("footnote", "citation") and block.label:
            return f"[{block.label}] {opening(block.text, 6)}"
        return opening(block.caption or block.text or (block.items[0] if block.items else node.key))

    def _describe(self, node: Node) -> None:
        entity = self.entities[node.key]
        block = node.block
        if block is not None:
            # Sections are found by "path#anchor" (links) and by "ref:label" (Sphinx :ref:).
            entity.symbols += tuple((DOC_NS, f"{self.path}#{anchor}") for anchor in block.anchors)
            entity.symbols += tuple((DOC_NS, f"ref:{label}") for label in block.labels)
        if node.kind == "section" and block is not None:
            entity.add(HEADING_LEVEL, node.depth)
            entity.add(HEADING_TEXT, block.text)
        entity.add(WORD_COUNT, node.words)
        if node.keywords and node.kind in ("document", "section", "paragraph"):
            entity.add(TOPIC_KEYWORDS, json.dumps(node.keywords, ensure_ascii=False))
        if node.kind == "code" and block is not None and block.language:
            entity.add(CODE_LANGUAGE, block.language)
        for before, after in zip(node.children, node.children[1:], strict=False):
            self.entities[before.key].links.append((PRECEDES, after.key))

    def _anchors(self) -> dict[str, str]:
        anchors: dict[str, str] = {}
        for node in self.nodes.values():
            if node.block is not None:
                for anchor in node.block.anchors:
                    anchors.setdefault(anchor, node.key)
                    anchors.setdefault(anchor.lower(), node.key)
        return anchors

    def _link(self, node: Node, anchors: dict[str, str], footnotes: dict[str, str], sections: list[Node]) -> None:
        block = node.block
        if block is None:
            return
        entity = self.entities[node.key]
        linked: list[str] = []
        for href, line in block.hrefs:
            entity.add(HREF, href)
            found = classify_href(self.path, href)
            if isinstance(found, str):
                key = anchors.get(found) or anchors.get(found.lower())
                if key is not None:
                    linked.append(key)
            elif found is not None:
                self.references.append(Reference(node.key, CROSS_REFERENCES, DOC_NS, found, line=line))
        for anchor in block.anchor_links:
            key = anchors.get(anchor) or anchors.get(anchor.lower())
            if key is not None:
                linked.append(key)
        for candidates, line in block.doc_links:
            targets = tuple((c, EXPLICIT_LINK) for c in candidates)
            self.references.append(Reference(node.key, CROSS_REFERENCES, DOC_NS, targets, line=line))
        if block.kind in PROSE and block.kind != "heading":
            linked += self._see(node, block.text, sections)
        for key in dict.fromkeys(linked):
            if key != node.key:
                entity.links.append((CROSS_REFERENCES, key))
                node.related.append(key)
        for label in dict.fromkeys(block.footnote_refs):
            if label in footnotes:
                entity.links.append((REFERENCES, footnotes[label]))
        seen: set[str] = set()
        for names, line in block.mentions:
            if names[0] in seen:
                continue
            seen.add(names[0])
            bare = names[0].rsplit(".", 1)[-1]
            targets = tuple((name, CODE_MENTION) for name in names)
            simple = bare if distinctive(bare) else None
            self.references.append(Reference(node.key, REFERENCES, "*", targets, simple, line))

    def _see(self, node: Node, text: str, sections: list[Node]) -> list[str]:
        """Sections a "see X" / "see Section X" phrase names by heading (or heading number)."""
        found: list[str] = []
        if "see" not in text.lower():
            return found
        if self.headings is None:
            self.headings = sorted(((_normal(s.heading), s) for s in sections), key=lambda h: -len(h[0]))
        headings = self.headings
        for match in _SEE.finditer(text):
            rest = _normal(text[match.end() : match.end() + 160])
            for heading, section in headings:
                if len(heading) < 3 or section is node.parent:
                    continue
                number = heading.split(" ", 1)[0]
                named = rest.startswith(heading) and not rest[len(heading) : len(heading) + 1].isalnum()
                numbered = _NUMBER.fullmatch(number) is not None and re.match(re.escape(number) + r"\b", rest)
                if named or numbered:
                    found.append(section.key)
                    break
        return found

    def _topics(self, order: list[Node], sections: list[Node]) -> None:
        """discussesTopic: a paragraph or section that covers another section's topic terms.

        A section's topic is the stems of its heading and of its keywords, less the terms
        common in this document (in more than a quarter of its paragraphs or headings, and
        more than two): those say nothing about one section. A unit's score for section S weighs the
        share of S's heading terms it contains (0.6) and of S's other keyword terms (0.4);
        it discusses S when the score is at least 0.5 on two or more shared terms. The score
        is the confidence of the edge (at most 0.9: it is an inference).
        """
        if len(sections) < 2:
            return
        paragraphs = [set(n.terms.degree) for n in order if n.kind == "paragraph"]
        frequency = Counter(term for words in paragraphs for term in words)
        common = max(2, len(paragraphs) // 4)
        headings = {s.key: content_stems(s.heading) for s in sections}
        repeated = Counter(term for words in headings.values() for term in words)  # "Bug Fixes" x 100
        topic: dict[str, tuple[set[str], set[str]]] = {}
        index: dict[str, list[str]] = {}
        for section in sections:
            head = {t for t in headings[section.key] if frequency[t] <= common and repeated[t] <= common}
            rest = {t for k in section.keywords for t in content_stems(k) if frequency[t] <= common} - head
            topic[section.key] = (head, rest)
            if head:
                for term in head | rest:
                    index.setdefault(term, []).append(section.key)
        for node in order[1:]:
            if node.kind == "section":
                words = set().union(*topic[node.key]) | content_stems(node.heading)
            elif node.kind == "paragraph":
                words = set(node.terms.degree)
            else:
                continue
            candidates = {key for term in words for key in index.get(term, ())}
            scored = []
            for key in candidates:
                head, rest = topic[key]
                shared_head, shared_rest = len(head & words), len(rest & words)
                score = 0.6 * shared_head / len(head) + (0.4 * shared_rest / len(rest) if rest else 0.0)
                # Its own sections and its subsections are what a unit is about anyway.
                nested = _nested(node.key, key) or _nested(key, node.key)
                if shared_head + shared_rest >= 2 and score >= 0.5 and not nested:
                    scored.append((score, key))
            for score, key in sorted(scored, key=lambda s: (-s[0], s[1]))[:TOPIC_LINKS]:
                target = self.nodes[key]
                assert target.block is not None
                anchor = target.block.anchors[0] if target.block.anchors else key
                confidence = round(min(score, 0.9), 2)
                self.references.append(
                    Reference(
                        node.key, DISCUSSES_TOPIC, DOC_NS, ((f"{self.path}#{anchor}", confidence),), line=node.start + 1
                    )
                )
                node.related.append(key)


def _nested(outer: str, inner: str) -> bool:
    """Whether key ``inner`` is ``outer`` or inside it (keys are slug paths)."""
    return inner == outer or not outer or inner.startswith(outer + "/")


def _prefix(parent: Node) -> str:
    return f"{parent.key}/" if parent.key else ""


def build(source: SourceFile, text: str, parsed: Parsed, types: tuple[str, ...]) -> Outline:
    return _Builder(source, text, parsed, types).build()


# ── the analyzer both formats share ──────────────────────────────


class DocumentAnalyzer:
    """analyze() and render() for a document format; subclasses parse."""

    name = "document"
    version = "1"
    extensions: tuple[str, ...] = ()

    def handles(self, path: str) -> bool:
        return path.lower().endswith(self.extensions)

    def file_types(self, path: str) -> tuple[str, ...]:
        return (DOCUMENT,)

    def parse(self, path: str, text: str) -> Parsed:
        raise NotImplementedError

    def outline(self, source: SourceFile) -> Outline:
        text, problems = decode(source)
        parsed = self.parse(source.path, text)
        parsed.problems[:0] = problems
        return build(source, text, parsed, self.file_types(source.path))

    def analyze(self, source: SourceFile) -> FileAnalysis:
        try:
            return self.outline(source).analysis
        except Exception as exc:  # the contract: bad input never raises; a bug is reported on the file
            node = Entity("", self.file_types(source.path), source.path.rsplit("/", 1)[-1])
            return FileAnalysis([node], problems=[Problem(f"document analysis failed: {type(exc).__name__}: {exc}")])

    def render(self, request: RenderRequest) -> str:
        outline = _outline(self, request.path, request.content)
        return render(outline, request)


@lru_cache(maxsize=16)
def _outline(analyzer: DocumentAnalyzer, path: str, content: bytes) -> Outline:
    # Rendering a file's nodes one by one re-reads the same content: parse it once.
    return analyzer.outline(SourceFile(path, content, ""))


# ── rendering ────────────────────────────────────────────────────


def render(outline: Outline, request: RenderRequest) -> str:
    depth = LEVEL_DEPTH.get(request.level, max(0, min(request.depth, FULL)))
    node = outline.nodes.get(request.key)
    if depth >= FULL:
        if request.span is None:
            return request.content.decode("utf-8", errors="replace")
        return request.content[request.span.start_byte : request.span.end_byte].decode("utf-8", errors="replace")
    if node is None:  # the content no longer has this node: show what its span covers
        if request.span is None:
            return outline.title or outline.path
        chunk = request.content[request.span.start_byte : request.span.end_byte].decode("utf-8", errors="replace")
        return opening(chunk) if depth == 0 else one_line(chunk)
    if node.kind in ("document", "section"):
        return "\n".join(_container(outline, node, depth))
    return "\n".join(_atom(outline, node, depth))


def _container(outline: Outline, node: Node, depth: int) -> list[str]:
    if node.kind == "document":
        title = outline.title or outline.path
        root = outline.title_section or node
    else:
        title, root = node.heading, node
    lines = [title]
    if depth == 0:
        return lines
    if depth <= 3:  # tables of contents to 1, 2 or all levels below this node
        limit = depth if depth < 3 else 1_000
        for section, level in _sections(root, limit):
            lines.append("  " * (level - 1) + "- " + section.heading)
        return lines
    lines = []
    for section, level in [(root, 0), *_sections(root, 1_000)]:
        heading = title if section is root else section.heading
        lines.append("#" * (level + 1) + " " + heading)
        lines += _section_body(outline, section, depth)
    return lines


def _sections(root: Node, limit: int, level: int = 1) -> list[tuple[Node, int]]:
    found: list[tuple[Node, int]] = []
    if level > limit:
        return found
    for child in root.children:
        if child.kind == "section":
            found.append((child, level))
            found += _sections(child, limit, level + 1)
    return found


def _section_body(outline: Outline, section: Node, depth: int) -> list[str]:
    lines: list[str] = []
    blocks = [c for c in section.children if c.kind != "section"]
    paragraphs = [c for c in blocks if c.kind == "paragraph"]
    if depth in (4, 5) and paragraphs and paragraphs[0].block is not None:
        lines.append(first_sentence(paragraphs[0].block.text))
    if depth >= 5 and section.keywords and depth < 9:
        lines.append("Keywords: " + ", ".join(section.keywords))
    if depth >= 5 and depth < 9:
        related = _related(outline, [section, *blocks])
        if related:
            lines.append("Related: " + "; ".join(related))
    if depth < 6:
        return lines
    for child in blocks:
        block = child.block
        assert block is not None
        if depth >= 9:
            lines.append(_full_text(child))
        elif child.kind == "paragraph":
            lines.append("- " + (first_sentence(block.text) if depth == 6 else summary(block.text)))
        elif depth == 8:
            lines += _structure(child)
    return lines


def _related(outline: Outline, nodes: list[Node]) -> list[str]:
    keys = dict.fromkeys(k for n in nodes for k in n.related)
    return [outline.nodes[k].heading for k in keys if k in outline.nodes]


def _structure(node: Node) -> list[str]:
    """STRUCTURAL_DETAIL lines of a non-paragraph block: captions, headers, first lines, sources."""
    block = node.block
    assert block is not None
    if node.kind == "code":
        body = [line for line in block.text.split("\n") if line.strip()]
        return [
            f"[{block.language or 'code'}, {len(block.text.splitlines())} lines] " + (body[0].strip() if body else "")
        ]
    if node.kind == "table":
        head = block.items[0] if block.items else ""
        caption = f"{block.caption}: " if block.caption else ""
        return [f"[table, {len(block.items)} rows] {caption}{head}"]
    if node.kind in ("list", "toc"):
        return ["- " + opening(item.split("\n\n", 1)[0], 16) for item in block.items]  # first paragraphs
    if node.kind == "quote":
        source = f" — {block.caption}" if block.caption else ""
        return ["> " + first_sentence(block.text) + source]
    if node.kind in ("footnote", "citation"):
        return [f"[{block.label}] " + first_sentence(block.text)]
    if node.kind == "figure":
        return [f"[figure] {block.caption or block.text}"]
    return [f"[{node.kind}] " + first_sentence(block.text)]


def _full_text(node: Node) -> str:
    """NEAR_COMPLETE text of a block: plain text, code cut to its first and last three lines."""
    block = node.block
    assert block is not None
    if node.kind == "code":
        body = block.text.split("\n")
        if len(body) > 7:
            body = [*body[:3], f"… ({len(body) - 6} lines)", *body[-3:]]
        return "\n".join([f"```{block.language}", *body, "```"])
    if node.kind in ("list", "toc"):
        return "\n".join("- " + one_line(item) for item in block.items)
    if node.kind == "table":
        return "\n".join(one_line(row) for row in block.items)
    if node.kind == "quote":
        return "> " + one_line(block.text)
    if node.kind in ("footnote", "citation"):
        return f"[{block.label}] " + one_line(block.text)
    return one_line(block.text)


def _atom(outline: Outline, node: Node, depth: int) -> list[str]:
    block = node.block
    assert block is not None
    if depth == 0:
        return [_label(node)]
    if depth >= 9:
        return [_full_text(node)]
    if depth == 8:
        return _structure(node) if node.kind != "paragraph" else [one_line(block.text)]
    if node.kind == "paragraph":
        lines = [first_sentence(block.text) if depth < 4 else summary(block.text)]
    else:
        lines = _structure(node)[:1] if depth < 4 else _structure(node)
    if depth >= 4 and node.keywords:
        lines.append("Keywords: " + ", ".join(node.keywords))
    if depth >= 5:
        related = _related(outline, [node]) + [h for h, _ in block.hrefs if not h.startswith("#")]
        if related:
            lines.append("Related: " + "; ".join(dict.fromkeys(related)))
    return lines


def _label(node: Node) -> str:
    block = node.block
    assert block is not None
    if node.kind == "code":
        return f"{block.language or 'code'} block ({len(block.text.splitlines())} lines)"
    if node.kind == "table":
        return f"table ({len(block.items)} rows)" + (f": {block.caption}" if block.caption else "")
    if node.kind in ("list", "toc"):
        return f"{'list' if node.kind == 'list' else 'table of contents'} ({len(block.items)} items)"
    if node.kind in ("footnote", "citation"):
        return f"[{block.label}]"
    return opening(block.caption or block.text)
