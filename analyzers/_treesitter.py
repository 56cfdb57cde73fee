"""Tree-sitter plumbing shared by the built-in code analyzers (not a plugin itself).

Grammars come from the per-language wheels (tree-sitter-python, ...), which ship
compiled parsers: nothing is downloaded at run time.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable, Iterator
from functools import cache

import tree_sitter as ts

from cleveragents.indexing.model import Entity, Problem, Span
from cleveragents.vocabulary import ca


@cache
def parser(language_factory: Callable[[], object]) -> ts.Parser:
    """One parser per grammar per process (parsers are not shared across processes)."""
    return ts.Parser(ts.Language(language_factory()))


def parse(language_factory: Callable[[], object], data: bytes) -> ts.Tree:
    return parser(language_factory).parse(data)


def span(node: ts.Node) -> Span:
    (sl, sc), (el, ec) = node.start_point, node.end_point
    return Span(sl + 1, sc, el + 1, ec, node.start_byte, node.end_byte)


def text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def field_text(node: ts.Node, name: str) -> str:
    return text(node.child_by_field_name(name))


def walk(node: ts.Node) -> Iterator[ts.Node]:
    """Pre-order traversal without recursion (deep files must not hit the recursion limit)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def problems(tree: ts.Tree, definition: re.Pattern[str]) -> list[Problem]:
    """Each ERROR or MISSING region as a Problem, naming the definitions it swallowed.

    ``definition`` matches a definition keyword and captures its name (e.g.
    ``def (\\w+)``); what it finds inside an error region is reported as hidden.
    """
    if not tree.root_node.has_error:
        return []
    found: list[Problem] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_missing:
            found.append(Problem(f"missing {node.type}", span(node)))
        elif node.is_error:
            hidden = tuple(m.group(0) for m in definition.finditer(text(node)))
            found.append(Problem("syntax error", span(node), hidden))
        elif node.has_error:
            stack.extend(reversed(node.children))
    return found


# ── fingerprints: what a definition says, without how it is laid out ──────────────────────

# A token of source text: a word, or one other non-space character.
_TOKEN = re.compile(rb"\w+|[^\w\s]")
FINGERPRINT_PREFIX = "tokens:"


class Fingerprints:
    """Normalized fingerprints of regions of one file, beside the content hash.

    The file becomes one token stream: words and punctuation, with whitespace and comments
    dropped, each string literal one token (as ``literal`` normalizes it), and the marks a
    grammar adds (e.g. Python's block boundaries, which indentation alone encodes). Two
    regions whose streams are equal differ only in formatting. Built once per file;
    ``of(start, end)`` hashes the tokens inside a byte range.
    """

    def __init__(
        self,
        data: bytes,
        dropped: list[tuple[int, int]],
        literals: list[tuple[int, int, bytes]],
        marks: list[tuple[int, bytes]] = (),  # type: ignore[assignment]
    ) -> None:
        # (start, end, token or None to drop): the regions not tokenized by the regex.
        special = sorted(
            [(s, e, None) for s, e in dropped] + [(s, e, t) for s, e, t in literals], key=lambda r: (r[0], -r[1])
        )
        # (position, 0 for a mark and 1 for a token, token): a mark sorts before a token at its position.
        events: list[tuple[int, int, bytes]] = [(position, 0, token) for position, token in marks]
        at = 0
        for start, end, token in special:
            if start < at:
                continue  # inside a region already taken
            events += [(m.start(), 1, m.group()) for m in _TOKEN.finditer(data, at, start)]
            if token is not None:
                events.append((start, 1, token))
            at = max(at, end)
        events += [(m.start(), 1, m.group()) for m in _TOKEN.finditer(data, at)]
        events.sort(key=lambda e: (e[0], e[1]))
        self._starts = [e[0] for e in events]
        self._tokens = [e[2] for e in events]

    def of(self, start: int, end: int) -> str:
        low = bisect.bisect_left(self._starts, start)
        high = bisect.bisect_left(self._starts, end, lo=low)
        digest = hashlib.sha256(b"\x1f".join(self._tokens[low:high])).hexdigest()
        return f"{FINGERPRINT_PREFIX}{digest[:32]}"


def captured_ranges(language_factory: Callable[[], object], pattern: str, root: ts.Node) -> dict[str, list[ts.Node]]:
    """Nodes captured by ``pattern`` (compiled once per grammar and pattern)."""
    return ts.QueryCursor(_query(language_factory, pattern)).captures(root)


@cache
def _query(language_factory: Callable[[], object], pattern: str) -> ts.Query:
    return ts.Query(ts.Language(language_factory()), pattern)


def comment_fingerprints(
    language_factory: Callable[[], object], root: ts.Node, data: bytes, comment_types: tuple[str, ...]
) -> Fingerprints:
    """Fingerprints for a brace language: comments dropped, everything else a token."""
    pattern = " ".join(f"({kind}) @c" for kind in comment_types)
    comments = captured_ranges(language_factory, pattern, root).get("c", [])
    return Fingerprints(data, [(n.start_byte, n.end_byte) for n in comments], [])


SYNTAX_FINGERPRINT = ca.syntaxFingerprint


def add_fingerprints(entities: list[Entity], prints: Fingerprints) -> None:
    """Each entity with a range gets the fingerprint of its text (``ca:syntaxFingerprint``)."""
    for entity in entities:
        if entity.span is not None:
            entity.values[SYNTAX_FINGERPRINT] = [prints.of(entity.span.start_byte, entity.span.end_byte)]
