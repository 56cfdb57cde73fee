"""Configuration files: TOML, ``.env`` files, INI (``*.ini``, ``*.cfg``, ``.editorconfig``).

Values come from ``tomllib`` (the reference parser); tomllib keeps no positions, so a light
statement scanner (strings, brackets, comments) finds where each key and table is written.
``.env`` and INI files are line formats read here directly. All three become one neutral
tree and the shared config-tree builder makes the entities, secrets masked.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import lru_cache
from typing import Any

from cleveragents.indexing.model import FileAnalysis, RenderRequest, SourceFile

from ._config_tree import CONFIG_FILE, CONFIG_KEY, ENV_VAR, Item, Node, Outline, config_tree, render


def _is_env(name: str) -> bool:
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


def _format(path: str) -> str | None:
    name = posixpath.basename(path).lower()
    if name.endswith(".toml"):
        return "toml"
    if _is_env(name):
        return "env"
    if name.endswith((".ini", ".cfg")) or name == ".editorconfig":
        return "ini"
    return None


class ConfigurationAnalyzer:
    name = "configuration"
    version = "1"

    def handles(self, path: str) -> bool:
        return _format(path) is not None

    def file_types(self, path: str) -> tuple[str, ...]:
        return (CONFIG_FILE,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        return outline(source.path, source.data).analysis()

    def render(self, request: RenderRequest) -> str:
        return render(_rendered(request.path, request.content), request)


ANALYZERS = [ConfigurationAnalyzer()]


@lru_cache(maxsize=16)
def _rendered(path: str, data: bytes) -> Outline:
    """Renderings of one file come in runs (a node at several levels, nodes of one file): analyze once."""
    return outline(path, data)


def outline(path: str, data: bytes) -> Outline:
    out = Outline(path, data)
    out.file_node((CONFIG_FILE,))
    kind = _format(path) or "toml"
    try:
        root = {"toml": _toml, "env": _env, "ini": _ini}[kind](out)
        if root is not None:
            out.hide(root)
            config_tree(out, root, parent="", key_prefix="", leaf_type=ENV_VAR if kind == "env" else CONFIG_KEY)
    except Exception as exc:  # a bug must cost one file's detail, not the index run
        out.problem(f"analyzer error: {type(exc).__name__}")  # the message may quote a value
    return out


# ── TOML ───────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Statement:
    kind: str  # "table" | "array" (of tables) | "pair"
    path: tuple[str, ...]
    start: int  # character offsets in the decoded text
    end: int
    value_start: int
    value_end: int


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_ERROR_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def _toml(out: Outline) -> Node | None:
    text = out.index.text
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_ERROR_AT.search(str(exc))
        span = None
        if found:
            point = (int(found.group(1)) - 1, int(found.group(2)) - 1)
            span = out.index.span(point, point)
        out.problem(f"TOML syntax error: {_TOML_ERROR_AT.sub('', str(exc)).strip()}", span)
        return None
    spans, value_spans = _toml_positions(_toml_statements(text))
    return _toml_node(out, document, (), spans, value_spans, None)


def _toml_node(
    out: Outline,
    value: Any,
    path: tuple[str | int, ...],
    spans: dict[tuple[str | int, ...], tuple[int, int]],
    value_spans: dict[tuple[str | int, ...], tuple[int, int]],
    inherited: tuple[int, int] | None,
) -> Node:
    """The node of a tomllib value; a value inside an inline table or array takes its statement's span."""
    where = value_spans.get(path) or inherited
    own = spans.get(path) or where
    if isinstance(value, dict):
        node = Node("map", out.index.char_span(*own) if own else None)
        for key, child in value.items():
            child_path = (*path, key)
            item_span = spans.get(child_path) or where
            built = _toml_node(out, child, child_path, spans, value_spans, value_spans.get(child_path) or where)
            node.items.append(Item(key, built, out.index.char_span(*item_span) if item_span else None))
        return node
    if isinstance(value, list):
        node = Node("seq", out.index.char_span(*own) if own else None)
        node.elements = [_toml_node(out, child, (*path, i), spans, value_spans, where) for i, child in enumerate(value)]
        return node
    return Node("scalar", out.index.char_span(*where) if where else None, text=_toml_text(value))


def _toml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


def _toml_positions(
    statements: list[_Statement],
) -> tuple[dict[tuple[str | int, ...], tuple[int, int]], dict[tuple[str | int, ...], tuple[int, int]]]:
    """Where each key path is written (tables reach over their pairs) and where pair values are."""
    spans: dict[tuple[str | int, ...], tuple[int, int]] = {}
    value_spans: dict[tuple[str | int, ...], tuple[int, int]] = {}
    arrays: dict[tuple[str | int, ...], int] = {}  # array-of-tables path -> elements so far

    def resolve(path: tuple[str, ...]) -> tuple[str | int, ...]:
        resolved: tuple[str | int, ...] = ()
        for part in path:
            resolved = (*resolved, part)
            if resolved in arrays:
                resolved = (*resolved, arrays[resolved] - 1)
        return resolved

    def extend(path: tuple[str | int, ...], start: int, end: int) -> None:
        old = spans.get(path)
        spans[path] = (min(old[0], start), max(old[1], end)) if old else (start, end)

    table: tuple[str | int, ...] = ()
    for statement in statements:
        if statement.kind == "pair":
            full = (*table, *statement.path)
            extend(full, statement.start, statement.end)
            value_spans[full] = (statement.value_start, statement.value_end)
        elif statement.kind == "array":
            base = (*resolve(statement.path[:-1]), statement.path[-1])
            arrays[base] = arrays.get(base, 0) + 1
            table = (*base, arrays[base] - 1)
            extend(table, statement.start, statement.end)
        else:
            table = resolve(statement.path)
            extend(table, statement.start, statement.end)
    for path, (start, end) in list(spans.items()):
        for size in range(1, len(path)):
            extend(path[:size], start, end)
    return spans, value_spans


def _toml_statements(text: str) -> list[_Statement]:
    """Table headers and key/value pairs with their offsets (the file is known to be valid)."""
    found: list[_Statement] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in " \t\r\n":
            i += 1
        elif char == "#":
            i = _line_end(text, i)
        elif char == "[":
            array = text.startswith("[[", i)
            path, j = _toml_key(text, i + (2 if array else 1))
            close = "]]" if array else "]"
            if path and text.startswith(close, j):
                end = j + len(close)
                found.append(_Statement("array" if array else "table", path, i, end, end, end))
            i = _line_end(text, i)
        else:
            path, j = _toml_key(text, i)
            if not path or j >= n or text[j] != "=":
                i = _line_end(text, i)
                continue
            j = _skip_blanks(text, j + 1)
            end = _toml_value_end(text, j)
            # A one-line string's value is inside its quotes (a masked secret keeps them).
            quote = text[j : j + 1]
            inner = int(quote in ("'", '"') and text[j : j + 3] != quote * 3 and end - j >= 2)
            found.append(_Statement("pair", path, i, end, j + inner, end - inner))
            i = _line_end(text, end)
    return found


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _toml_key(text: str, i: int) -> tuple[tuple[str, ...], int]:
    """A dotted key from ``i``: its segments and the offset after it (blanks skipped)."""
    parts: list[str] = []
    while True:
        i = _skip_blanks(text, i)
        if i < len(text) and text[i] in "\"'":
            end = _toml_value_end(text, i)
            raw = text[i:end]
            try:
                parts.append(json.loads(raw) if raw.startswith('"') else raw[1:-1])
            except ValueError:
                parts.append(raw[1:-1])
            i = end
        else:
            match = _BARE_KEY.match(text, i)
            if match is None:
                return tuple(parts), i
            parts.append(match.group())
            i = match.end()
        i = _skip_blanks(text, i)
        if i < len(text) and text[i] == ".":
            i += 1
            continue
        return tuple(parts), i


def _toml_value_end(text: str, i: int) -> int:
    """The offset just after the value starting at ``i`` (strings, arrays and inline tables span lines)."""
    n = len(text)
    for quotes, escapes in (('"""', True), ("'''", False)):
        if text.startswith(quotes, i):
            k = i + 3
            while k < n:
                if escapes and text[k] == "\\":
                    k += 2
                elif text.startswith(quotes, k):
                    end = k + 3
                    while end < n and text[end] == quotes[0] and end - k < 5:  # up to two quotes inside
                        end += 1
                    return end
                else:
                    k += 1
            return n
    char = text[i] if i < n else ""
    if char in "\"'":
        k = i + 1
        while k < n and text[k] not in (char, "\n"):
            k += 2 if char == '"' and text[k] == "\\" else 1
        return min(k + 1, n) if k < n and text[k] == char else k
    if char in "[{":
        depth, k = 0, i
        while k < n:
            current = text[k]
            if current in "\"'":
                k = _toml_value_end(text, k)
                continue
            if current == "#":
                k = _line_end(text, k)
                continue
            if current in "[{":
                depth += 1
            elif current in "]}":
                depth -= 1
                if depth == 0:
                    return k + 1
            k += 1
        return n
    k = i
    while k < n and text[k] not in "\n#":
        k += 1
    while k > i and text[k - 1] in " \t\r":
        k -= 1
    return k


# ── .env ───────────────────────────────────────────────────────────

_ENV_KEY = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*(=[ \t]*)?")
_ENV_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "$": "$"}


def _env(out: Outline) -> Node:
    """``NAME=value`` lines: ``export`` prefixes, quotes (double-quoted values may span lines), comments."""
    text = out.index.text
    root = Node("map", None)
    i, n = 0, len(text)
    while i < n:
        line_end = _line_end(text, i)
        line = text[i:line_end]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i = line_end + 1
            continue
        match = _ENV_KEY.match(text, i, line_end)
        start = i + len(line) - len(line.lstrip())
        if match is None or (
            match.group(2) is None and text[match.end() : line_end].strip(" \t\r")[:1] not in ("", "#")
        ):
            out.problem(f"not a NAME=value line: {stripped[:40]!r}", out.index.char_span(start, line_end))
            i = line_end + 1
            continue
        name, j = match.group(1), match.end()
        value: str | None = None
        end = j
        if match.group(2) is None:
            value_start = value_end = j
        elif j < n and text[j] in "\"'":
            quote, k = text[j], j + 1
            while k < n and text[k] != quote:
                k += 2 if quote == '"' and text[k] == "\\" else 1
            if k >= n:
                out.problem(f"unterminated quote in {name}", out.index.char_span(start, n))
            raw = text[j + 1 : min(k, n)]
            value = re.sub(r"\\(.)", lambda m: _ENV_ESCAPES.get(m.group(1), m.group(0)), raw) if quote == '"' else raw
            value_start, value_end, end = j + 1, min(k, n), min(k + 1, n)
        else:
            k = j
            while k < line_end and not (text[k] == "#" and (k == j or text[k - 1] in " \t")):
                k += 1
            value = text[j:k].rstrip(" \t\r")
            value_start, value_end = j, j + len(value)
            end = value_end
        scalar = Node("scalar", out.index.char_span(value_start, value_end), text=value or "", null=value is None)
        root.items.append(Item(name, scalar, out.index.char_span(start, max(end, j if value is None else end))))
        i = _line_end(text, end) + 1
    return root


# ── INI ────────────────────────────────────────────────────────────

_INI_PAIR = re.compile(r"([^=:\s][^=:]*?)[ \t]*[=:][ \t]*(.*?)[ \t\r]*$")


def _ini(out: Outline) -> Node:
    """``[section]`` headers, ``key = value`` / ``key: value`` pairs, indented continuation lines."""
    index = out.index
    root = Node("map", None)
    section: Node = root
    section_start = 0
    last: tuple[Node, str, int, int] | None = None  # the scalar, its section, key start, value start
    offset = 0

    def close_section(end: int) -> None:
        if section is not root and root.items:
            root.items[-1] = Item(root.items[-1].key, section, index.char_span(section_start, end))

    for line in index.text.splitlines(keepends=True):
        start, body = offset, line.rstrip("\r\n")
        offset += len(line)
        stripped = body.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if body[:1] in " \t" and last is not None:  # a continuation of the previous value
            scalar, key, key_start, value_start = last
            scalar.text = f"{scalar.text}\n{stripped}" if scalar.text else stripped
            scalar.span = index.char_span(value_start, start + len(body))
            section.items[-1] = Item(key, scalar, index.char_span(key_start, start + len(body)))
            close_section(start + len(body))
            continue
        if stripped.startswith("[") and "]" in stripped:
            section = Node("map", None)
            section_start = start + body.index("[")
            root.items.append(Item(stripped[1 : stripped.index("]")].strip(), section, None))
            close_section(start + len(body))
            last = None
            continue
        match = _INI_PAIR.match(stripped)
        key_start = start + len(body) - len(body.lstrip())
        if match is None:
            key, value, value_start = stripped, None, start + len(body)
        else:
            key, value = match.group(1).strip(), match.group(2)
            value_start = key_start + match.start(2)
        value_end = value_start + len(value or "")
        scalar = Node("scalar", index.char_span(value_start, value_end), text=value or "", null=value is None)
        section.items.append(Item(key, scalar, index.char_span(key_start, max(value_end, key_start + len(key)))))
        last = (scalar, key, key_start, value_start)
        close_section(value_end)
    return root
