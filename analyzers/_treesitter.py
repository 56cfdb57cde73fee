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
_WORD = re.compile(rb"\w\w")  # two word characters: a cut between them would split a token
_SENTINEL = b"\x03"  # a token of its own (not a word, not whitespace) that Python code never holds
FINGERPRINT_PREFIX = "tokens:"


class Fingerprints:
    """Normalized fingerprints of regions of one file, beside the content hash.

    A region's text with comments (and the grammar's other dropped regions) cut out, each
    string literal replaced by one token (as the grammar normalizes it), the grammar's marks
    inserted (e.g. Python's block boundaries, which indentation alone encodes), then
    whitespace removed except between two words. Two regions that agree on that differ only
    in formatting.

    The replacements are made once for the whole file (``_normalized``), with a map from
    file offsets to offsets in it. ``many`` then cuts that text at every region's ends and
    tokenizes each piece between two cuts once: a region's tokens are its pieces' tokens,
    so a class and each of its methods no longer tokenize the same text again. A region that
    starts or ends inside a replaced piece, or a cut inside a word, takes the region-by-region
    path (``_of_region``), which defines the result; every path gives the same fingerprint.
    """

    def __init__(
        self,
        data: bytes,
        dropped: list[tuple[int, int]],
        literals: list[tuple[int, int, bytes]],
        marks: list[tuple[int, bytes]] = (),  # type: ignore[assignment]
    ) -> None:
        # Ordered by (begin, longest first), ties in the order given: dropped, literals, marks
        # (what a stable sort on (begin, -stop) gives; sorting plain tuples is faster).
        given = [(s, e, b" ") for s, e in dropped]
        given += [
            (s, e, b" \x00" + hashlib.sha1(t, usedforsecurity=False).hexdigest().encode() + b" ")
            for s, e, t in literals
        ]
        given += [(p, p, b" \x02" + t + b" ") for p, t in marks]
        pieces = [(begin, -stop, order, replacement) for order, (begin, stop, replacement) in enumerate(given)]
        pieces.sort()
        self._data = data
        self._pieces = [(begin, -stop, replacement) for begin, stop, _, replacement in pieces]
        self._starts = [piece[0] for piece in self._pieces]
        self._normalize()

    def _normalize(self) -> None:
        """The whole file with every piece replaced, and for each replaced piece (in order) its
        begin and stop in the file and where the file resumes after it in the normalized text."""
        data = self._data
        out: list[bytes] = []
        begins: list[int] = []
        stops: list[int] = []
        resumes: list[int] = []
        at = length = 0
        for begin, stop, replacement in self._pieces:
            if begin < at:
                continue  # inside a piece already replaced (a string in a dropped region)
            out.append(data[at:begin])
            out.append(replacement)
            length += begin - at + len(replacement)
            begins.append(begin)
            stops.append(stop)
            resumes.append(length)
            at = max(at, stop)
        out.append(data[at:])
        self._normalized = b"".join(out)
        self._begins, self._stops, self._resumes = begins, stops, resumes

    def _position(self, offset: int) -> int | None:
        """Where the file's ``offset`` is in the normalized text, before any piece that begins
        there; None inside a replaced piece."""
        index = bisect.bisect_left(self._begins, offset) - 1
        if index < 0:
            return offset
        stop = self._stops[index]
        if stop > offset:
            return None
        return self._resumes[index] + (offset - stop)

    def many(self, regions: list[tuple[int, int]]) -> list[str]:
        """The fingerprints of ``regions``, as ``of`` gives them one by one.

        The normalized text is tokenized once, with a sentinel token at every region end (a
        cut): the tokens between two sentinels are one piece, and a region's tokens are the
        pieces between its two cuts. A cut inside a word, or a file that holds the sentinel
        byte itself, leaves those regions to ``of``."""
        text = self._normalized
        mapped = [(self._position(start), self._position(end)) for start, end in regions]
        cuts: list[int] = []
        if _SENTINEL not in text:
            length, word = len(text), _WORD.match  # a cut between two word characters would split a token
            ends = {p for pair in mapped for p in pair if p is not None}
            cuts = sorted(p for p in ends if not (0 < p < length and word(text, p - 1)))
        marked = [_SENTINEL]
        at = 0
        for cut in cuts:
            marked += (text[at:cut], _SENTINEL)
            at = cut
        marked += (text[at:], _SENTINEL)
        # "\x03\x1fa\x1fb\x1f\x03\x1f\x03..." -> per piece "\x1fa\x1fb\x1f" (or "\x1f" when empty)
        parts = b"\x1f".join(_TOKEN.findall(b"".join(marked))).split(_SENTINEL)[1:-1]
        pieces = [part[1:-1] for part in parts]  # the piece before the first cut is pieces[0]
        index = {cut: i + 1 for i, cut in enumerate(cuts)}  # the piece that starts at this cut
        out: list[str] = []
        for (start, end), (first, last) in zip(regions, mapped, strict=True):
            i = index.get(first) if first is not None else None
            j = index.get(last) if last is not None else None
            if i is None or j is None or j < i:
                out.append(self._of_region(start, end))
                continue
            tokens = b"\x1f".join([piece for piece in pieces[i:j] if piece])
            out.append(f"{FINGERPRINT_PREFIX}{hashlib.sha256(tokens).hexdigest()[:32]}")
        return out

    def of(self, start: int, end: int) -> str:
        first, last = self._position(start), self._position(end)
        if first is None or last is None or last < first:
            return self._of_region(start, end)
        return _fingerprint(self._normalized[first:last])

    def _of_region(self, start: int, end: int) -> str:
        """The definition: the region's own text with the pieces that begin inside it replaced."""
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
        return _fingerprint(b"".join(out))


def _fingerprint(text: bytes) -> str:
    tokens = b"\x1f".join(_TOKEN.findall(text))
    return f"{FINGERPRINT_PREFIX}{hashlib.sha256(tokens).hexdigest()[:32]}"


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
    spanned = [entity for entity in entities if entity.span is not None]
    found = prints.many([(e.span.start_byte, e.span.end_byte) for e in spanned])  # type: ignore[union-attr]
    for entity, fingerprint in zip(spanned, found, strict=True):
        entity.values[SYNTAX_FINGERPRINT] = [fingerprint]
