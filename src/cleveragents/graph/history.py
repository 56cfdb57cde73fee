"""Reading history: resolving --as-of, the commit log, diffs, node history and blame."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.revisions import REVISION_SUFFIX, TEMPORAL_PREDICATES
from cleveragents.graph.store import GraphStore
from cleveragents.iris import AGENT_BASE, COMMIT_BASE


@dataclass(frozen=True)
class CommitInfo:
    revision: int
    iri: str
    time: str
    agent: str
    cause: str
    message: str
    external_id: str | None
    added: int
    removed: int


@dataclass(frozen=True)
class TripleSpan:
    """One stretch of validity of one triple."""

    subject: ox.NamedNode
    predicate: ox.NamedNode
    object: object
    start: int
    end: int | None
    inferred: bool


LOG_QUERY = """
SELECT ?c ?rev ?time ?agent ?cause ?msg ?ext ?added ?removed WHERE {
  ?c a ca:Commit ; ca:revision ?rev ; prov:startedAtTime ?time .
  OPTIONAL { ?c prov:wasAssociatedWith ?agent }
  OPTIONAL { ?c ca:cause ?cause } OPTIONAL { ?c ca:message ?msg }
  OPTIONAL { ?c ca:externalId ?ext }
  OPTIONAL { ?c ca:addedCount ?added } OPTIONAL { ?c ca:removedCount ?removed }
} ORDER BY DESC(?rev)
"""


def log(store: GraphStore, *, limit: int | None = None) -> list[CommitInfo]:
    """Commits, newest first."""
    out: list[CommitInfo] = []
    for row in store.query(LOG_QUERY + (f" LIMIT {int(limit)}" if limit else "")):
        agent = row["agent"].value if row["agent"] else ""
        out.append(
            CommitInfo(
                revision=int(row["rev"].value),
                iri=row["c"].value,
                time=row["time"].value,
                agent=unquote(agent.rsplit("/", 1)[-1]),
                cause=row["cause"].value if row["cause"] else "",
                message=row["msg"].value if row["msg"] else "",
                external_id=row["ext"].value if row["ext"] else None,
                added=int(row["added"].value) if row["added"] else 0,
                removed=int(row["removed"].value) if row["removed"] else 0,
            )
        )
    return out


def resolve_revision(store: GraphStore, ref: str | int | None) -> int:
    """A revision number from a number, an ISO timestamp, an external id or 'head'."""
    head = store.head
    if ref is None or ref == "head":
        return head
    text = str(ref).strip()
    if text.isdigit() and int(text) <= head:
        return int(text)
    stamp = _parse_time(text)
    commits = log(store)
    if stamp is not None and not text.isdigit():
        earlier = [c.revision for c in commits if _parse_time(c.time) <= stamp]  # type: ignore[operator]
        return max(earlier, default=0)
    matches = {c.revision for c in commits if c.external_id and c.external_id.startswith(text)}
    if len(text) >= 4 and len(matches) == 1:
        return matches.pop()
    if len(text) >= 4 and len(matches) > 1:
        raise ValidationError(f"ambiguous revision reference '{text}': {len(matches)} commits match")
    if text.isdigit():
        raise NotFoundError(f"unknown revision {text}: the store has revisions 0..{head}")
    raise NotFoundError(
        f"unknown --as-of '{text}': not a revision number, an ISO timestamp or a known external id",
        suggestions=["agents graph log"],
    )


def _parse_time(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def state(store: GraphStore, revision: int, *, inferred: bool = False) -> set[tuple]:
    """Every triple valid at ``revision`` (asserted; optionally the inferred closure too)."""
    families = ("iv", "inf") if inferred else ("iv",)
    out: set[tuple] = set()
    for node, iv in store.interval_graphs().items():
        if iv.family in families and iv.start <= store.head and iv.valid_at(revision):
            out.update((q.subject, q.predicate, q.object) for q in store.raw.quads_for_pattern(None, None, None, node))
    return out


def is_bookkeeping(triple: tuple) -> bool:
    """Commit records, agents, revision nodes and temporal metadata (not content)."""
    subject = triple[0].value
    return (
        subject.startswith((COMMIT_BASE, AGENT_BASE))
        or bool(REVISION_SUFFIX.search(subject))
        or triple[1].value in TEMPORAL_PREDICATES
    )


def diff(
    store: GraphStore, old: int, new: int, *, inferred: bool = False, bookkeeping: bool = True
) -> tuple[set[tuple], set[tuple]]:
    """(added, removed) between two revisions, as set differences of the two states.

    Only graphs whose interval starts or ends between the revisions can differ, so
    the rest of the store is never read.
    """
    low, high = sorted((old, new))
    families = ("iv", "inf") if inferred else ("iv",)
    candidates: set[tuple[Any, Any, Any]] = set()
    for node, iv in store.interval_graphs().items():
        if iv.family not in families or iv.start > store.head:
            continue
        changes = low < iv.start <= high or (iv.end is not None and low < iv.end <= high)
        if changes:
            candidates.update(
                (q.subject, q.predicate, q.object) for q in store.raw.quads_for_pattern(None, None, None, node)
            )
    at_low = {t for t in candidates if _valid(store, t, low, families)}
    at_high = {t for t in candidates if _valid(store, t, high, families)}
    added, removed = at_high - at_low, at_low - at_high
    if not bookkeeping:
        added = {t for t in added if not is_bookkeeping(t)}
        removed = {t for t in removed if not is_bookkeeping(t)}
    return (added, removed) if old <= new else (removed, added)


def _valid(store: GraphStore, triple: tuple[Any, Any, Any], revision: int, families: tuple[str, ...]) -> bool:
    graphs = store.interval_graphs()
    for quad in store.raw.quads_for_pattern(*triple, None):
        iv = graphs.get(quad.graph_name)  # type: ignore[arg-type]
        if iv and iv.family in families and iv.start <= store.head and iv.valid_at(revision):
            return True
    return False


def spans(store: GraphStore, node: ox.NamedNode, *, as_object: bool = False) -> Iterator[TripleSpan]:
    """Every triple the node ever had as subject (and object), with its validity."""
    graphs = store.interval_graphs()
    head = store.head
    patterns = [(node, None, None)] + ([(None, None, node)] if as_object else [])
    for pattern in patterns:
        for quad in store.raw.quads_for_pattern(*pattern, None):
            iv = graphs.get(quad.graph_name)  # type: ignore[arg-type]
            if iv and iv.family != "stage" and iv.start <= head:
                yield TripleSpan(quad.subject, quad.predicate, quad.object, iv.start, iv.end, iv.family == "inf")  # type: ignore[arg-type]


def history(store: GraphStore, node: ox.NamedNode, *, as_object: bool = False) -> list[TripleSpan]:
    return sorted(
        spans(store, node, as_object=as_object),
        key=lambda s: (s.start, s.end or 1 << 62, s.predicate.value, str(s.object)),
    )


def require_known(store: GraphStore, node: ox.NamedNode) -> None:
    if next(spans(store, node, as_object=True), None) is None:
        raise NotFoundError(f"{node.value} has never been in the graph")


def commit_times(store: GraphStore) -> dict[int, CommitInfo]:
    return {c.revision: c for c in log(store)}
