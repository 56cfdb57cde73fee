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

# A token: a word, or one other character that is not whitespace (whitespace is layout).
_TOKEN = re.compile(rb"\w+|[^\w\s]")
FINGERPRINT_PREFIX = "tokens:"


class Fingerprints:
    """Normalized fingerprints of regions of one file, beside the content hash.

    A region's text with comments (and the grammar's other dropped regions) cut out, each
    string literal replaced by one token (as the grammar normalizes it), the grammar's marks
    inserted (e.g. Python's block boundaries, which indentation alone encodes), then
    whitespace removed except between two words. Two regions that agree on that differ only
    in formatting. The work is regular expressions over bytes; Python only walks the
    dropped regions and literals inside each region.
    """

    def __init__(
        self,
        data: bytes,
        dropped: list[tuple[int, int]],
        literals: list[tuple[int, int, bytes]],
        marks: list[tuple[int, bytes]] = (),  # type: ignore[assignment]
    ) -> None:
        pieces = [(s, e, b" ") for s, e in dropped]
        pieces += [
            (s, e, b" \x00" + hashlib.sha1(t, usedforsecurity=False).hexdigest().encode() + b" ")
            for s, e, t in literals
        ]
        pieces += [(p, p, b" \x02" + t + b" ") for p, t in marks]
        pieces.sort(key=lambda r: (r[0], -r[1]))
        self._data = data
        self._pieces = pieces
        self._starts = [piece[0] for piece in pieces]

    def of(self, start: int, end: int) -> str:
        data, pieces = self._data, self._pieces
        out: list[bytes] = []
        at = start
        for index in range(bisect.bisect_left(self._starts, start), len(pieces)):
            begin, stop, replacement = pieces[index]
            if begin >= end:
                break
            if begin < at:
                continue  # inside a piece already replaced (a string in a dropped region)
            out.append(data[at:begin])
            out.append(replacement)
            at = max(at, stop)
        out.append(data[at:end] if at < end else b"")
        text = b"\x1f".join(_TOKEN.findall(b"".join(out)))
        return f"{FINGERPRINT_PREFIX}{hashlib.sha256(text).hexdigest()[:32]}"


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
