"""History that counts real changes, checked against Python's ``ast`` on real releases.

Five consecutive requests releases are replayed as git commits. For every release pair the
graph's entities-changed sets (added, removed, changed, formatting-only, moved-only) must
equal what ``ast`` says about the two release texts: a definition's identity is its nesting
path (``Class.method``, ``~2`` for a repeated name in source order), its text runs from its
first decorator's ``@`` to its end (a comment closing the last line included), "formatting"
is a different text with an equal ``ast.dump``, and "moved" the same text at another place.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from cleveragents import iris
from corpora.fetch import corpus_dir

from .test_code_history import RELEASES, replayed, requests_repo, revision_of, select

__all__ = ["replayed", "requests_repo"]  # fixtures used here

Definition = tuple[bytes, tuple[int, int], str]  # text, (line, byte column) of its start, ast.dump


def _package(version: str) -> Path:
    release = corpus_dir(f"requests-{version}")
    return release / "src" / "requests" if (release / "src").is_dir() else release / "requests"


def _definitions(data: bytes) -> dict[str, Definition]:
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    found: dict[str, Definition] = {}
    seen: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> Iterator[None]:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from visit(child, prefix)
                continue
            name = f"{prefix}.{child.name}" if prefix else child.name
            seen[name] = seen.get(name, 0) + 1
            key = name if seen[name] == 1 else f"{name}~{seen[name]}"
            first = min([child, *child.decorator_list], key=lambda n: (n.lineno, n.col_offset))
            start = starts[first.lineno - 1] + first.col_offset
            if first is not child:  # a decorator's expression: the definition starts at its '@'
                start = data.rindex(b"@", 0, start)
            assert child.end_lineno is not None and child.end_col_offset is not None
            end = starts[child.end_lineno - 1] + child.end_col_offset
            trailing = re.match(rb"[ \t]*#[^\r\n]*", data[end:])
            end += trailing.end() if trailing else 0
            line = data.count(b"\n", 0, start) + 1
            found[key] = (data[start:end], (line, start - starts[line - 1]), ast.dump(child))
            yield from visit(child, key)

    for _ in visit(ast.parse(data), ""):
        pass
    return found


def _release(version: str) -> dict[tuple[str, str], Definition]:
    root = _package(version)
    return {
        (f"requests/{path.relative_to(root).as_posix()}", key): value
        for path in sorted(root.rglob("*.py"))
        for key, value in _definitions(path.read_bytes()).items()
    }


def _expected(old: dict, new: dict) -> dict[str, set[tuple[str, str]]]:
    both = old.keys() & new.keys()
    return {
        "added": set(new.keys() - old.keys()),
        "removed": set(old.keys() - new.keys()),
        "changed": {k for k in both if old[k][0] != new[k][0] and old[k][2] != new[k][2]},
        "formatting": {k for k in both if old[k][0] != new[k][0] and old[k][2] == new[k][2]},
        "moved": {k for k in both if old[k][0] == new[k][0] and old[k][1] != new[k][1]},
    }


def test_entities_changed_equals_ast_for_every_release_pair(ws, replayed):
    _, shas = replayed
    states = {version: _release(version) for version in RELEASES}
    totals = dict.fromkeys(("added", "removed", "changed", "formatting", "moved"), 0)
    for old, new in itertools.pairwise(RELEASES):
        expected = _expected(states[old], states[new])
        low, high = revision_of(ws, shas[old]), revision_of(ws, shas[new])
        found: dict[str, set[tuple[str, str]]] = {change: set() for change in expected}
        for row in select(ws, "entities-changed", {"from": str(low), "to": str(high)}):
            assert row["kind"] == "definitions"
            split = iris.split_iri(row["entity"])
            assert split is not None
            found[row["change"]].add((split[1], split[2]))
        for change in expected:
            assert found[change] == expected[change], f"{old} -> {new}: {change}"
            totals[change] += len(expected[change])
    # The comparison is not vacuous: every category occurs in these releases.
    assert all(totals.values()), totals
    assert totals["moved"] > totals["changed"]  # what used to be counted as changes
    _other_kinds_and_change_kinds(ws, shas)


def test_a_moved_definition_has_one_revision_and_its_positions_stay_queryable(ws, replayed):
    info, shas = replayed
    close = iris.file_iri(info.ulid, "requests/adapters.py", "BaseAdapter.close")
    states = [_release(v)[("requests/adapters.py", "BaseAdapter.close")] for v in RELEASES]
    assert len({text for text, _, _ in states}) == 1 and len({at for _, at, _ in states}) > 1
    revisions = select(ws, "entity-revisions", {"entity": close})
    assert len(revisions) == 1  # created once; moved since, never changed
    history = select(ws, "signature-history", {"callable": close})
    assert len(history) == 1 and history[0]["fromSha"] == shas[RELEASES[0]]
    first = revision_of(ws, shas[RELEASES[0]])
    blame = select(ws, "blame", {"node": close})
    assert blame and {r["textRevision"] for r in blame} == {str(first)}
    ranges = [r for r in blame if r["predicate"].endswith("#sourceRange")]
    assert len(ranges) == 1 and int(ranges[0]["revision"]) > first  # the position is newer than the text
    # Change statistics count text changes: HTTPAdapter's text changed, BaseAdapter's never did.
    classes = {r["name"]: r for r in select(ws, "most-changed-classes")}
    assert int(classes["BaseAdapter"]["changes"]) == 0 and int(classes["BaseAdapter"]["revisions"]) == 1
    assert int(classes["HTTPAdapter"]["changes"]) >= 2
    # Every release's position is still there, as of its commit.
    for version, (_, (line, column), _) in zip(RELEASES, states, strict=True):
        rows = select(ws, "as-of", {"node": close, "revision": str(revision_of(ws, shas[version]))})
        ranges = [r["object"] for r in rows if r["predicate"].endswith("#sourceRange")]
        assert len(ranges) == 1 and ranges[0].startswith(f"{line}:{column}-"), version


def _other_kinds_and_change_kinds(ws, shas: dict[str, str]) -> None:
    """``include`` lists other kinds; revisions record why they exist (one replay serves both tests)."""
    low, high = revision_of(ws, shas[RELEASES[0]]), revision_of(ws, shas[RELEASES[1]])
    rows = select(ws, "entities-changed", {"from": str(low), "to": str(high), "include": "imports,docstrings"})
    assert rows and {r["kind"] for r in rows} == {"imports", "docstrings"}
    everything = select(ws, "entities-changed", {"from": str(low), "to": str(high), "include": "all"})
    assert {r["kind"] for r in everything} >= {"definitions", "imports", "docstrings", "attributes"}
    # The release that reformatted code has formatting-only revisions beside content ones.
    query = (
        "SELECT ?kind (COUNT(?r) AS ?n) WHERE { ?r ca:revisionKind ?kind ; prov:wasGeneratedBy ?c . "
        f"?c ca:revision {high} }} GROUP BY ?kind"
    )
    with ws.reader() as store:
        by_kind = {row["kind"].value: int(row["n"].value) for row in store.query(query)}
    assert by_kind.get("formatting", 0) > 0 and by_kind.get("content", 0) > 0
