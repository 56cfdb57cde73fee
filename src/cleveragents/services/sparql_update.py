"""Turn a SPARQL 1.1 Update into the triples it deletes and inserts.

Updates never touch the store directly: every change is a commit, validated and
recorded with history. Each operation is rewritten as CONSTRUCT queries over the
current state (the DELETE and INSERT templates against the same WHERE solutions),
and the results become one commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cleveragents.errors import ValidationError


@dataclass(frozen=True)
class Operation:
    delete: str | None  # template text, or None
    insert: str | None
    where: str | None  # None for DATA operations


@dataclass(frozen=True)
class ParsedUpdate:
    prologue: str
    operations: list[Operation]

    def constructs(self) -> list[tuple[str, str, bool]]:
        """(kind, CONSTRUCT query, has WHERE) triples, kind being 'delete' or 'insert'.
        Without a WHERE (DATA blocks) the query reads nothing from the store."""
        out: list[tuple[str, str, bool]] = []
        for op in self.operations:
            where = op.where if op.where is not None else "{}"
            for kind, template in (("delete", op.delete), ("insert", op.insert)):
                if template is not None:
                    out.append((kind, f"{self.prologue}\nCONSTRUCT {template} WHERE {where}", op.where is not None))
        return out


_GRAPH_IN_TEMPLATE = re.compile(r"(?i)\bGRAPH\s*[<?$]")
_UNSUPPORTED = {"LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH", "USING"}


def parse_update(text: str) -> ParsedUpdate:
    tokens = _tokenize(text)
    prologue: list[str] = []
    i = 0
    while i < len(tokens) and tokens[i][0].upper() in ("PREFIX", "BASE"):
        take = 3 if tokens[i][0].upper() == "PREFIX" else 2
        prologue.append(" ".join(t for t, _ in tokens[i : i + take]))
        i += take
    operations: list[Operation] = []
    current: dict[str, str] = {}
    expect: str | None = None
    for token, is_block in tokens[i:]:
        word = token.upper()
        if is_block:
            if expect is None:
                raise ValidationError(f"unexpected block in SPARQL update near '{token[:40]}'")
            current[expect] = token
            expect = None
        elif word == ";":
            operations.append(_operation(current))
            current = {}
        elif word in _UNSUPPORTED:
            raise ValidationError(
                f"SPARQL update '{word}' is not supported: graph names are managed by the store",
                suggestions=["write to the default graph; use 'agents graph import FILE' to load files"],
            )
        elif word in ("INSERT", "DELETE"):
            expect = word.lower()
        elif word in ("DATA", "WHERE"):
            if word == "WHERE" and expect == "delete" and "delete" not in current:
                # DELETE WHERE { P } is DELETE { P } WHERE { P }
                expect = "delete_where"
            elif word == "WHERE":
                expect = "where"
            else:
                expect = (expect or "") + "_data"
        else:
            raise ValidationError(f"unexpected '{token}' in SPARQL update")
    if current:
        operations.append(_operation(current))
    if not operations:
        raise ValidationError("empty SPARQL update")
    if len(operations) > 1 and any(op.where is not None for op in operations[1:]):
        raise ValidationError(
            "an update with several operations may use WHERE only in its first one: all "
            "operations of one commit see the state before it",
            suggestions=["run the operations as separate 'agents graph update' calls"],
        )
    return ParsedUpdate("\n".join(prologue), operations)


def _operation(parts: dict[str, str]) -> Operation:
    for kind, block in parts.items():
        if kind != "where" and _GRAPH_IN_TEMPLATE.search(block):
            raise ValidationError(
                "GRAPH blocks are not allowed in update templates: graph names are managed by the store"
            )
    if "delete_where" in parts:
        block = parts["delete_where"]
        return Operation(delete=block, insert=None, where=block)
    if "insert_data" in parts or "delete_data" in parts:
        return Operation(delete=parts.get("delete_data"), insert=parts.get("insert_data"), where=None)
    if "where" not in parts:
        raise ValidationError("DELETE/INSERT templates need a WHERE clause (or use INSERT DATA)")
    return Operation(delete=parts.get("delete"), insert=parts.get("insert"), where=parts["where"])


def _tokenize(text: str) -> list[tuple[str, bool]]:
    """Top-level words and balanced {...} blocks (strings, IRIs and comments respected)."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "#":
            i = _skip_comment(text, i)
        elif ch == "{":
            end = _block_end(text, i)
            out.append((text[i:end], True))
            i = end
        elif ch == ";":
            out.append((";", False))
            i += 1
        elif ch == "<":
            end = text.find(">", i)
            if end < 0:
                raise ValidationError("unterminated IRI in SPARQL update")
            out.append((text[i : end + 1], False))
            i = end + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "{};<#":
                j += 1
            out.append((text[i:j], False))
            i = j
    return out


def _skip_comment(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _block_end(text: str, start: int) -> int:
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = _string_end(text, i)
            continue
        if ch == "#":
            i = _skip_comment(text, i)
            continue
        if ch == "<":
            m = re.match(r"<[^<>\"{}|^`\\\s]*>", text[i:])
            if m:
                i += m.end()
                continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValidationError("unbalanced '{' in SPARQL update")


def _string_end(text: str, i: int) -> int:
    quote = text[i]
    long = text.startswith(quote * 3, i)
    delim = quote * 3 if long else quote
    j = i + len(delim)
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text.startswith(delim, j):
            return j + len(delim)
        j += 1
    raise ValidationError("unterminated string in SPARQL update")
