"""What the Rust and Go analyzers share (not a plugin): queries, owner ranges, rendering.

Speed: walking every node from Python costs about 7 µs a node, so the analyzers walk only
the declaration structure and find calls with a tree-sitter query (run in C), attributing each
to the innermost body that encloses it (``Owners``).

Rendering: this module owns what every level shows (the levels are the uko-oo effective
DetailLevelMap, ``vocabulary.detail_levels.UKO_OO``); a language describes its syntax by subclassing ``BraceSyntax``:

- MODULE_LISTING .. MEMBER_SUMMARY: an outline of names (dependencies, members, trait and
  embedding relations, first doc lines);
- SIGNATURES .. KEY_LOGIC: a code view with bodies removed, then docs, visibility and
  attributes, a control-flow skeleton, key statements;
- NEAR_COMPLETE: the source without comments, imports and logging; FULL_SOURCE: the exact slice.

Maps without CLASS_HIERARCHY or VISIBILITY_ANNOTATED (uko-code types such as fields) use
the same names, so one table serves both.
"""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from functools import cache
from typing import Generic, Protocol, TypeVar

import tree_sitter as ts

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, SourceFile, Span
from cleveragents.vocabulary import detail_levels, uko_code

from . import _treesitter as tsu
from ._isolation import Isolation, file_failure

LEVELS = detail_levels.UKO_OO  # the maps of uko-rs and uko-go add nothing to uko-oo's
RANK = {name: rank for rank, name in enumerate(LEVELS)}
(GRAPH, MEMBERS, HIERARCHY, SUMMARY, SIGNATURES, DOCS, VISIBILITY, OUTLINE, KEY, NEAR, FULL) = range(1, 12)

QUALIFIED_NAME = uko_code.qualifiedName
DOCSTRING = uko_code.docstring
DOC = uko_code.Docstring
_SPACE = re.compile(r"\s+")
LINE_LIMIT = 120
# A query is linear in the tree, except in an ERROR node with many children (thousands of
# unclosed brackets): 5,000 cost 0.2 s, 20,000 cost 2 s, 80,000 cost 36 s. (py-tree-sitter
# 0.26's progress callback, which could cancel a query, crashes the interpreter.)
ERROR_CHILDREN_LIMIT = 5000
T = TypeVar("T")


def one_line(value: str, limit: int = LINE_LIMIT) -> str:
    """Whitespace collapsed, cut at ``limit`` characters."""
    flat = _SPACE.sub(" ", value[: limit * 8]).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def head(node: ts.Node | None, limit: int = LINE_LIMIT) -> str:
    """The start of a node's text on one line (a huge initializer is not decoded whole)."""
    if node is None or node.text is None:
        return ""
    return one_line(node.text[: limit * 8].decode("utf-8", errors="replace"), limit)


@cache
def _compiled(language: Callable[[], object], pattern: str) -> ts.Query:
    return ts.Query(ts.Language(language()), pattern)


class CostlyQuery(Exception):
    """A query refused: the tree has an ERROR node with more than ``ERROR_CHILDREN_LIMIT`` children."""


def _check_cost(node: ts.Node) -> None:
    """Refuse trees on which a query would go quadratic (see ``ERROR_CHILDREN_LIMIT``)."""
    stack = [node] if node.has_error else []
    while stack:
        current = stack.pop()
        if current.is_error and current.child_count > ERROR_CHILDREN_LIMIT:
            raise CostlyQuery(
                f"a syntax error region of {current.child_count} nodes at line {current.start_point[0] + 1}"
            )
        stack.extend(c for c in current.children if c.has_error)


def matches(language: Callable[[], object], pattern: str, node: ts.Node) -> list[tuple[int, dict[str, list[ts.Node]]]]:
    """Query matches under ``node`` in source order: (pattern index, capture name -> nodes)."""
    _check_cost(node)
    found = ts.QueryCursor(_compiled(language, pattern)).matches(node)
    return sorted(found, key=lambda m: min(n.start_byte for nodes in m[1].values() for n in nodes))


def captured(language: Callable[[], object], pattern: str, node: ts.Node) -> list[ts.Node]:
    """Every node a query captures under ``node``, in source order."""
    _check_cost(node)
    found = ts.QueryCursor(_compiled(language, pattern)).captures(node)
    return sorted((n for nodes in found.values() for n in nodes), key=lambda n: (n.start_byte, -n.end_byte))


class Entities:
    """The entities of one file under construction: unique keys, qualified names, doc nodes."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.entities: list[Entity] = []
        self.keys: set[str] = set()
        self.isolation = Isolation(self.entities)

    def symbols(self, qual: str) -> tuple[tuple[str, str], ...]:
        return ((self.namespace, qual),)

    def add(
        self, key: str, types: tuple[str, ...], name: str, parent: str | None, node: ts.Node | None, qual: str | None
    ) -> Entity:
        """A new entity; a key already taken gets the suffix ~2, ~3... in source order."""
        if key in self.keys:
            n = 2
            while f"{key}~{n}" in self.keys:
                n += 1
            key = f"{key}~{n}"
        self.keys.add(key)
        entity = Entity(key, types, name, parent, tsu.span(node) if node is not None else None)
        if qual is not None:
            entity.add(QUALIFIED_NAME, qual)
            entity.symbols = self.symbols(qual)
        self.entities.append(entity)
        return entity

    def document(self, owner: Entity, comments: list[ts.Node], text: str) -> None:
        """The owner's docstring, and the doc comments as the node ``<owner>/doc``."""
        if not comments:
            return
        owner.add(DOCSTRING, text)
        first, last = tsu.span(comments[0]), tsu.span(comments[-1])
        doc = self.add(f"{owner.key}/doc", (DOC,), "doc", owner.key, None, None)
        doc.span = Span(first.start_line, first.start_col, last.end_line, last.end_col, first.start_byte, last.end_byte)


class FileBuilder(Protocol):
    """What :func:`analyze_file` needs of a language's builder (an :class:`Entities`)."""

    entities: list[Entity]
    references: list[Reference]
    problems: list[Problem]
    isolation: Isolation

    def run(self, root: ts.Node) -> None: ...


def analyze_file(
    source: SourceFile,
    language: Callable[[], object],
    builder: FileBuilder,
    file_types: tuple[str, ...],
    definition: re.Pattern[str],
    comment_types: tuple[str, ...],
) -> FileAnalysis:
    """One file of a brace language: parse it, let ``builder`` walk the tree, then add the
    syntax problems (near ``definition``s) and the comment-blind fingerprints. Only a failure
    of the parse or of the file node loses the file; the builder isolates each definition."""
    try:
        tree = tsu.parse(language, source.data)
        builder.run(tree.root_node)
    except Exception as exc:  # only the parse or the file node itself: definitions are isolated
        file_node = builder.entities[0] if builder.entities else Entity("", file_types, source.path, None)
        return file_failure(file_node, exc)
    problems = tsu.problems(tree, definition) + builder.problems
    with builder.isolation.phase("fingerprints"):
        prints = tsu.comment_fingerprints(language, tree.root_node, source.data, comment_types)
        tsu.add_fingerprints(builder.entities, prints)
    return builder.isolation.finish(FileAnalysis(builder.entities, builder.references, problems))


class Owners(Generic[T]):
    """The innermost owner range (a function body, an initializer) around positions visited in order.

    Ranges nest or are disjoint, as syntax trees are. ``add`` takes a range found during the
    sweep; it must start after the positions already visited.
    """

    def __init__(self, ranges: Iterable[tuple[int, int, T]]) -> None:
        self._pending = sorted(ranges, key=lambda r: (r[0], -r[1]))
        self._next = 0
        self._open: list[tuple[int, int, T]] = []

    def add(self, start: int, end: int, value: T) -> None:
        at = bisect.bisect_right(self._pending, (start, -end), lo=self._next, key=lambda r: (r[0], -r[1]))
        self._pending.insert(at, (start, end, value))

    def at(self, position: int) -> T | None:
        while self._next < len(self._pending) and self._pending[self._next][0] <= position:
            opened = self._pending[self._next]
            self._next += 1
            while self._open and self._open[-1][1] <= opened[0]:
                self._open.pop()
            self._open.append(opened)
        while self._open and self._open[-1][1] <= position:
            self._open.pop()
        return self._open[-1][2] if self._open else None


def slice_text(data: bytes, start: int, end: int, skip: Iterable[tuple[int, int]] = ()) -> str:
    """``data[start:end]`` decoded, without the (sorted, disjoint) byte ranges in ``skip``."""
    parts: list[bytes] = []
    at = start
    for s, e in skip:
        if e <= at or s >= end:
            continue
        parts.append(data[at:s])
        at = max(at, e)
    parts.append(data[at:end])
    return b"".join(parts).decode("utf-8", errors="replace")


def descendants(node: ts.Node, stop: Callable[[ts.Node], bool] = lambda n: False) -> Iterable[ts.Node]:
    """Named descendants in source order, not entering nodes for which ``stop`` holds."""
    stack = list(reversed(node.named_children))
    while stack:
        current = stack.pop()
        yield current
        if not stop(current):
            stack.extend(reversed(current.named_children))


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


class BraceSyntax(ABC):
    """What the renderer needs to know about one language's tree-sitter grammar."""

    language: Callable[[], object]
    indent = "    "
    declaration_end = ";"  # after a callable's signature when its body is hidden
    definitions: frozenset[str] = frozenset()  # node types an entity's span can denote
    control: frozenset[str] = frozenset()  # branch and loop nodes of the outline
    bodies: frozenset[str] = frozenset()  # statement blocks: their statements are one level deeper
    key: frozenset[str] = frozenset()  # statements KEY_LOGIC keeps
    comments: frozenset[str] = frozenset()
    boilerplate: frozenset[str] = frozenset()  # imports: dropped at NEAR_COMPLETE
    logging: re.Pattern[str] = re.compile(r"(?!)")  # statements dropped at NEAR_COMPLETE

    # ── the language's answers ──
    @abstractmethod
    def title(self, node: ts.Node, path: str) -> str:
        """Kind and name, e.g. 'fn parse' or 'mod crate.a'."""

    @abstractmethod
    def members(self, node: ts.Node) -> list[ts.Node]:
        """Member definitions of a container, in source order; [] for leaves and callables."""

    @abstractmethod
    def dependencies(self, node: ts.Node) -> list[str]:
        """What the node depends on: imports of a module, callees of a callable, types of a type."""

    @abstractmethod
    def hierarchy(self, node: ts.Node) -> list[str]:
        """Trait/interface implementation and embedding relations that involve the node."""

    @abstractmethod
    def docs(self, node: ts.Node) -> list[ts.Node]:
        """The comment nodes documenting the node."""

    @abstractmethod
    def doc_text(self, comments: list[ts.Node]) -> str:
        """The documentation text of those comments (markers removed)."""

    @abstractmethod
    def header(self, node: ts.Node, visible: bool) -> str:
        """The declaration without body or members; ``visible``: with visibility modifiers."""

    @abstractmethod
    def leaf(self, node: ts.Node, visible: bool) -> str:
        """The one-line form of a member without members or body (field, constant, alias)."""

    @abstractmethod
    def code_body(self, node: ts.Node) -> ts.Node | None:
        """The statement block of a callable; None for anything else."""

    @abstractmethod
    def preamble(self, node: ts.Node) -> list[str]:
        """Lines a module view starts with (package clause, imports); [] for other nodes."""

    @abstractmethod
    def branches(self, node: ts.Node) -> list[ts.Node]:
        """The parts of a control node one outline level deeper (blocks, arms, cases)."""

    @abstractmethod
    def label(self, node: ts.Node) -> str:
        """The outline line of a control node, without expressions ('if …', 'for …')."""

    def decorations(self, node: ts.Node) -> list[str]:
        """Lines shown above a member from VISIBILITY_ANNOTATED on (attributes)."""
        return []

    def visibility_note(self, node: ts.Node) -> str:
        """A suffix stating visibility where the header does not show it (Go capitalization)."""
        return ""

    def is_key(self, node: ts.Node) -> bool:
        return node.type in self.key

    def spec_of(self, node: ts.Node) -> ts.Node:
        """The node the views describe when a span denotes a wrapper (Go's single-spec declarations)."""
        return node

    # ── rendering ──
    def render(self, request: RenderRequest) -> str:
        rank = RANK.get(request.level)
        if rank is None:
            raise ValueError(f"unknown detail level {request.level!r} for {request.path}#{request.key}")
        data = request.content
        start, end = (request.span.start_byte, request.span.end_byte) if request.span else (0, len(data))
        if rank == FULL:
            return data[start:end].decode("utf-8", errors="replace")
        root = tsu.parse(self.language, data).root_node
        node = self.locate(root, request.span)
        text = data[start:end].decode("utf-8", errors="replace")
        plain = text if rank >= SIGNATURES else one_line(text.splitlines()[0] if text.strip() else "")
        try:
            if rank == NEAR:
                return self.near_complete(node, data, start, end)
            if node is None:  # a doc comment, an import: plain text
                return plain
            node = self.spec_of(node)
            if rank < SIGNATURES:
                return "\n".join(self.listing(node, request.path, rank))
            return "\n".join(self.code(node, data, rank))
        except CostlyQuery:  # a pathological tree: the text itself
            return plain

    def locate(self, root: ts.Node, span: Span | None) -> ts.Node | None:
        """The definition node at ``span`` (the root for the file); None when none is there."""
        if span is None:
            return root
        node: ts.Node | None = root.descendant_for_byte_range(span.start_byte, span.end_byte)
        while node is not None and node.type not in self.definitions:
            node = node.parent
        if node is None or node.start_byte != span.start_byte:
            return None
        return node

    def summary(self, node: ts.Node) -> str:
        text = self.doc_text(self.docs(node)).strip()
        return one_line(text.splitlines()[0]) if text else ""

    def listing(self, node: ts.Node, path: str, rank: int) -> list[str]:
        def line(n: ts.Node, depth: int) -> str:
            note = self.summary(n) if rank >= SUMMARY else ""
            return "  " * depth + self.title(n, path) + (f" — {note}" if note else "")

        lines = [line(node, 0)]
        if rank >= GRAPH:
            lines += [f"  → {dep}" for dep in self.dependencies(node)]
        if rank >= MEMBERS:
            stack = [(m, 1) for m in reversed(self.members(node))]
            while stack:
                member, depth = stack.pop()
                lines.append(line(member, depth))
                stack += [(m, depth + 1) for m in reversed(self.members(member))]
        if rank >= HIERARCHY:
            lines += [f"  ⇒ {relation}" for relation in self.hierarchy(node)]
        return lines

    def code(self, node: ts.Node, data: bytes, rank: int) -> list[str]:
        lines = self.preamble(node) if rank >= SIGNATURES else []
        if node.parent is None:  # the file: members at the top level, no braces
            if rank >= DOCS and (comments := self.docs(node)):
                lines[:0] = self.comment_lines(comments, data, "")
            stack: list[tuple[ts.Node | None, int]] = [(m, 0) for m in reversed(self.members(node))]
        else:
            stack = [(node, 0)]
        while stack:
            current, depth = stack.pop()
            pad = self.indent * depth
            if current is None:
                lines.append(pad + "}")
                continue
            if rank >= DOCS:
                lines += self.comment_lines(self.docs(current), data, pad)
            visible = rank >= VISIBILITY
            if visible:
                lines += [pad + d for d in self.decorations(current)]
            note = self.visibility_note(current) if visible else ""
            members = self.members(current)
            body = self.code_body(current)
            if members:
                lines.append(pad + self.header(current, visible) + " {" + note)
                lines += [self.indent * (depth + 1) + p for p in self.preamble(current)]
                stack.append((None, depth))
                stack += [(m, depth + 1) for m in reversed(members)]
            elif body is not None and rank >= OUTLINE:
                lines.append(pad + self.header(current, visible) + " {" + note)
                inner = self.outline(body, depth + 1, rank >= KEY)
                if not inner and any(c.type not in self.comments for c in body.named_children):
                    inner = [self.indent * (depth + 1) + "…"]  # statements without control flow
                lines += inner
                lines.append(pad + "}")
            elif body is not None:
                lines.append(pad + self.header(current, visible) + self.declaration_end + note)
            else:
                lines.append(pad + self.leaf(current, visible) + note)
        return lines

    def comment_lines(self, comments: list[ts.Node], data: bytes, pad: str) -> list[str]:
        if not comments:
            return []
        text = data[comments[0].start_byte : comments[-1].end_byte].decode("utf-8", errors="replace")
        return [pad + line.strip() for line in text.splitlines() if line.strip()]

    def outline(self, body: ts.Node, depth: int, with_key: bool) -> list[str]:
        """The control-flow skeleton of a block (and its key statements when ``with_key``)."""
        lines: list[str] = []
        # (node, depth, prefix) or (None, depth, literal line)
        stack: list[tuple[ts.Node | None, int, str]] = [(c, depth, "") for c in reversed(body.named_children)]
        while stack:
            node, level, prefix = stack.pop()
            pad = self.indent * level
            if node is None:
                lines.append(pad + prefix)
                continue
            if node.type in self.comments:
                continue
            if node.type in self.bodies:
                stack += [(c, level, "") for c in reversed(node.named_children)]
            elif node.type in self.control:
                lines.append(pad + prefix + self.label(node))
                later: list[tuple[ts.Node | None, int, str]] = []
                alternative = node.child_by_field_name("alternative")
                if alternative is not None:
                    if alternative.type == "else_clause" and alternative.named_children:
                        alternative = alternative.named_children[-1]
                    if alternative.type in self.control:
                        later.append((alternative, level, "else "))
                    else:
                        later += [(None, level, "else"), (alternative, level + 1, "")]
                later[:0] = [(b, level + 1, "") for b in self.branches(node)]
                stack += reversed(later)
            elif with_key and self.is_key(node):
                nested = next((d for d in descendants(node) if d.type in self.control), None)
                if nested is None:
                    lines.append(pad + one_line(tsu.text(node)))
                else:
                    head = (node.text or b"")[: nested.start_byte - node.start_byte]
                    lines.append(pad + one_line(head.decode("utf-8", errors="replace")) + " …")
                    stack.append((nested, level + 1, ""))
            else:
                stack += [(c, level, "") for c in reversed(node.named_children)]
        return lines

    def near_complete(self, node: ts.Node | None, data: bytes, start: int, end: int) -> str:
        """The source without comments (doc comments stay), imports and logging statements."""
        if node is None:
            return data[start:end].decode("utf-8", errors="replace")
        found = [(p, next(iter(nodes.values()))[0]) for p, nodes in matches(self.language, self._near_query(), node)]
        kept = {c.id for c in self.docs(node)}
        kept.update(c.id for p, current in found if p == 2 for c in self.docs(current))
        drop: list[tuple[int, int]] = []
        for pattern, current in found:
            if (pattern == 0 and current.id not in kept) or (pattern == 1 and self.logging.match(head(current))):
                drop.append(_whole_lines(data, current.start_byte, current.end_byte))
        drop = [r for r in drop if r[0] >= start]
        merged: list[tuple[int, int]] = []
        for s, e in sorted(drop):
            if merged and s <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((s, e))
        return _BLANK_RUNS.sub("\n\n", slice_text(data, start, end, merged))

    def _near_query(self) -> str:
        """0: comments and imports, 1: statements (logging?), 2: definitions (their docs stay)."""
        dropped = " ".join(f"({t})" for t in sorted(self.comments | self.boilerplate))
        definitions = " ".join(f"({t})" for t in sorted(self.definitions - {"source_file"}))
        return f"[{dropped}] @drop (expression_statement) @statement [{definitions}] @definition"


_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Widen a range to whole lines when it is alone on them; otherwise take the blanks before it."""
    line_start = data.rfind(b"\n", 0, start) + 1
    before = data[line_start:start]
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    after = data[end:line_end]
    if not after.strip():
        if not before.strip():
            return line_start, min(line_end + 1, len(data))
        return start - (len(before) - len(before.rstrip())), end
    return start, end
