"""Commits: the one write path of the product.

A commit adds and removes triples atomically, gets the next revision number and a
PROV-O activity. The protocol keeps big commits close to raw load speed:

1. additions are bulk-loaded into ``iv/<r>/open``; the UKO engine's layers and implicit
   edges for the nodes they affect (graph/uko_inference.py) and the RDFS closure of both
   go into ``inf/<r>/open``; with ``r`` above the head these graphs are invisible;
2. additions that are already live are dropped; removals are located in their live
   graphs and copied into their closed intervals ``iv/<from>/<r>`` (still invisible);
3. revision metadata (the seed's validFrom / isCurrent / isRevisionOf contract) is
   derived for the UKO entities the commit touches;
4. SHACL runs over the touched nodes, seeing the state after the commit;
5. publication (graph/publish.py) takes the removed triples out of their open graphs
   and moves the head, with a redo record so that a crash is rolled forward.

A rejected commit, or one killed before publication, leaves only invisible graphs,
which the next writer discards.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import pyoxigraph as ox
from ulid import ULID

from cleveragents.errors import CleverAgentsError, ShapeViolationError, ValidationError
from cleveragents.graph import audit, layout
from cleveragents.graph.hierarchy import TBox
from cleveragents.graph.inference import InferenceDelta, infer, rederive_all
from cleveragents.graph.ntriples import load_ntriples, ntriples
from cleveragents.graph.publish import publish
from cleveragents.graph.revisions import TEMPORAL_PREDICATES, derive_revisions
from cleveragents.graph.store import GraphStore, syntax_error
from cleveragents.graph.uko_inference import IMPLICIT_EDGES, UkoInferenceEngine
from cleveragents.iris import agent_iri, commit_iri
from cleveragents.terms import GENID, PROV, RDF_TYPE, XSD
from cleveragents.vocabulary import ca

Triple = tuple[Any, Any, Any]


class Validator(Protocol):
    def validate(
        self,
        store: ox.Store,
        *,
        default_graph: Sequence[ox.NamedNode | ox.DefaultGraph],
        focus_nodes: Iterable[Any] | None = None,
        focus_graphs: Sequence[ox.NamedNode] | None = None,
        excluded_graphs: Sequence[ox.NamedNode] | None = None,
    ) -> list[Any]: ...


@dataclass
class CommitRequest:
    """What a caller wants changed, and why."""

    add: Iterable[Triple] = ()
    remove: Iterable[Triple] = ()
    # N-Triples text to add, loaded without building Python objects (big imports).
    add_ntriples: bytes | None = None
    # Close every live asserted triple of these subjects (except temporal metadata).
    retract_subjects: Iterable[ox.NamedNode] = ()
    message: str = ""
    cause: str = "api"
    agent: str = "cleveragents"
    external_id: str | None = None
    timestamp: datetime | None = None
    # The caller guarantees that no subject of the additions has live triples (fresh IRIs,
    # e.g. the first index of a resource), so nothing added can be live already and the
    # dedupe join (a seek per added triple) is skipped.
    new_subjects: bool = False


@dataclass
class CommitResult:
    revision: int
    commit: ox.NamedNode | None
    added: int = 0
    removed: int = 0
    inferred_added: int = 0
    inferred_removed: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    # SHACL results below sh:Violation (warnings, infos): reported, not blocking.
    warnings: list[Any] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.commit is None


def commit_node(revision: int) -> ox.NamedNode:
    return ox.NamedNode(commit_iri(revision))


def _has_blank_node_term(data: bytes) -> bool:
    """A blank node label where a term starts (line start, or after a space or '<<(').

    Substring tests, not a regex: they run at memory speed on big loads, and text such
    as 'x_:' inside literals does not send a load down the slow path.
    """
    return data.startswith(b"_:") or any(m in data for m in (b"\n_:", b" _:", b"\t_:", b"(_:"))


def agent_node(name: str) -> ox.NamedNode:
    """The agent's IRI; names such as 'Ada <ada@example.org>' (git authors) are percent-encoded."""
    return ox.NamedNode(agent_iri(name))


class CommitEngine:
    """Applies CommitRequests to a writable GraphStore.

    ``uko``: derive UKO layers and implicit edges on every commit (off only for tests of
    the graph core that check the RDFS closure alone)."""

    def __init__(self, store: GraphStore, tbox: TBox, validator: Validator | None, *, uko: bool = True) -> None:
        if not store.writable:
            raise ValidationError("the store is open read-only; commits need a writer")
        self.store = store
        self.tbox = tbox
        self.validator = validator
        self.uko = UkoInferenceEngine.from_store(store.raw, tbox) if uko else None

    def commit(self, request: CommitRequest) -> CommitResult:
        with self._writing():
            return self._commit(request)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write at a time; whatever a failed or empty write left unpublished goes."""
        store = self.store
        with store.write_lock:
            store.discard_unpublished()
            try:
                yield
            except CleverAgentsError as exc:
                # Frames of a failed commit hold the Oxigraph handle; dropping them lets
                # GraphStore.close() release the writer even while the error is kept.
                raise exc.with_traceback(None) from None
            finally:
                store.forget_graphs()  # the cache does not know the graphs this write made
                store.discard_unpublished()

    def rederive_inferences(self, *, message: str = "ontology changed", agent: str = "cleveragents") -> CommitResult:
        """Rebuild the materialized closure after the ontology (TBOX_CLOSURE) changed, as
        one commit: entailments that appeared are added, those that vanished closed."""
        store = self.store
        with self._writing():
            self.tbox = TBox.from_store(store.raw)
            rev, head = store.head + 1, store.head
            when = datetime.now(UTC)
            inferred_g = layout.interval_graph("inf", rev)
            if self.uko is not None:
                self.uko = UkoInferenceEngine.from_store(store.raw, self.tbox)
                self.uko.derive_all(store, inferred_g)
            delta = rederive_all(store, inferred_g)
            if not delta.added and not delta.closes:
                return CommitResult(head, None)
            request = CommitRequest(message=message, cause="ontology-change", agent=agent)
            removals = {(q.subject, q.predicate, q.object): q for q in delta.closes}
            node = commit_node(rev)
            insert(
                store.raw,
                [
                    ox.Quad(s, p, o, layout.interval_graph("iv", rev))
                    for s, p, o in _activity(node, rev, when, request, 0, removals)
                ],
            )
            insert(store.raw, [_closed_copy(q, rev) for q in delta.closes])
            publish(store, rev)
            return CommitResult(rev, node, inferred_added=delta.added, inferred_removed=len(delta.closes))

    # -- steps -------------------------------------------------------------------------

    def _commit(self, request: CommitRequest) -> CommitResult:
        store, raw = self.store, self.store.raw
        clock = _Clock()
        head = store.head
        rev = head + 1
        when = (request.timestamp or datetime.now(UTC)).astimezone(UTC)
        added_g = layout.interval_graph("iv", rev)
        inferred_g = layout.interval_graph("inf", rev)
        live_asserted = [n for n, iv in store.interval_graphs().items() if iv.family == "iv" and iv.is_open]
        live_inferred = [n for n, iv in store.interval_graphs().items() if iv.family == "inf" and iv.is_open]

        added, loaded_ntriples = self._write_additions(request, added_g)
        audit.refuse(audit.audit_records_in(raw, added_g), "add")
        clock.lap("load")
        removals, unchanged = self._locate_removals(request, added_g)
        audit.refuse((k for k in removals if audit.is_audit_record(k)), "remove")
        added -= unchanged
        clock.lap("locate")
        # Additions already live are no-ops; additions live only as inferences replace them.
        asserted_set = set(live_asserted)
        for quad in [] if request.new_subjects else store.overlap(added_g, live_asserted + live_inferred):
            if quad.graph_name in asserted_set:
                raw.remove(ox.Quad(quad.subject, quad.predicate, quad.object, added_g))
                added -= 1
            else:
                removals[(quad.subject, quad.predicate, quad.object)] = quad
        clock.lap("dedupe")

        derived: frozenset[ox.NamedNode] = frozenset()
        if self.uko is not None:
            for quad in self.uko.derive(store, added_g, inferred_g, removals):
                removals[(quad.subject, quad.predicate, quad.object)] = quad
            derived = IMPLICIT_EDGES
        clock.lap("uko")
        delta: InferenceDelta = infer(store, self.tbox, added_g, inferred_g, removals, live_inferred, derived)
        for quad in delta.closes:
            removals[(quad.subject, quad.predicate, quad.object)] = quad
        clock.lap("infer")

        revision_adds, revision_closes = derive_revisions(
            store, rev, when, added_g, inferred_g, removals, fresh=request.new_subjects
        )
        revision_text = ntriples(revision_adds)
        load_ntriples(raw, revision_text, added_g)
        for quad in revision_closes:
            removals[(quad.subject, quad.predicate, quad.object)] = quad
        clock.lap("revisions")

        if added == 0 and not removals and delta.added == 0:
            return CommitResult(head, None, timings=clock.laps)

        node = commit_node(rev)
        activity = _activity(node, rev, when, request, added, removals)
        records = [ox.Quad(s, p, o, added_g) for s, p, o in activity if not any(store.live_quads(s, p, o))]
        insert(raw, records)
        closed = [_closed_copy(q, rev) for q in removals.values()]
        insert(raw, closed)
        clock.lap("stage")

        closed_graphs = sorted({q.graph_name for q in closed if isinstance(q.graph_name, ox.NamedNode)}, key=str)
        warnings = self._validate(store, added_g, inferred_g, closed_graphs, _referrers(store, removals))
        clock.lap("validate")

        publish(store, rev, loaded=(loaded_ntriples + b"\n" + revision_text, records) if loaded_ntriples else None)
        clock.lap("publish")
        store.forget_graphs()
        asserted_removed = sum(1 for q in removals.values() if _family(q) == "iv")
        return CommitResult(
            rev,
            node,
            added=added,
            removed=asserted_removed,
            inferred_added=delta.added,
            inferred_removed=len(removals) - asserted_removed,
            timings=clock.laps,
            warnings=warnings,
        )

    def _write_additions(self, request: CommitRequest, graph: ox.NamedNode) -> tuple[int, bytes | None]:
        """The number of triples written, and the N-Triples when they were bulk-loaded."""
        raw = self.store.raw
        if request.add_ntriples:
            data = request.add_ntriples
            if _has_blank_node_term(data):  # blank nodes must be skolemized: re-enter through the triple path
                request = CommitRequest(add=[(t.subject, t.predicate, t.object) for t in _parse_nt(data)])
            else:
                try:
                    raw.bulk_load(data, ox.RdfFormat.N_TRIPLES, to_graph=graph)
                except SyntaxError as exc:
                    raise syntax_error(exc, "N-Triples") from None
                return self.store.count(graph), data
        skolem: dict[str, ox.NamedNode] = {}
        quads = [ox.Quad(*_skolemize(t, skolem), graph) for t in request.add]
        insert(raw, quads)
        return (self.store.count(graph) if quads else 0), None

    def _locate_removals(self, request: CommitRequest, added_g: ox.NamedNode) -> tuple[dict[Triple, ox.Quad], int]:
        """The live quads the request closes. Removal applies before addition (as in SPARQL
        DELETE/INSERT): a live triple both removed and added stays live, untouched."""
        store, raw = self.store, self.store.raw
        found: dict[Triple, ox.Quad] = {}
        for s, p, o in request.remove:
            for quad in store.live_quads(s, p, o):
                found[(quad.subject, quad.predicate, quad.object)] = quad
        for subject in request.retract_subjects:
            for quad in store.live_quads(subject):
                if quad.predicate.value not in TEMPORAL_PREDICATES:
                    found[(quad.subject, quad.predicate, quad.object)] = quad
        unchanged = [k for k in found if ox.Quad(*k, added_g) in raw]
        for key in unchanged:
            raw.remove(ox.Quad(*key, added_g))
            del found[key]
        return found, len(unchanged)

    def _validate(
        self,
        store: GraphStore,
        added_g: ox.NamedNode,
        inferred_g: ox.NamedNode,
        removed_graphs: list[ox.NamedNode],
        referrers: set[ox.NamedNode],
    ) -> list[Any]:
        """SHACL over the nodes the commit touches, on the state after it: the view plus
        the new graphs, minus the triples whose closed copies sit in ``removed_graphs``;
        plus the ``referrers`` whose constraints may depend on what changed."""
        if self.validator is None:
            return []
        violations = self.validator.validate(
            store.raw,
            default_graph=[*store.view().graphs, added_g, inferred_g],
            focus_graphs=[added_g, *removed_graphs],
            focus_nodes=referrers,
            excluded_graphs=removed_graphs,
        )
        blocking = [v for v in violations if getattr(v, "is_violation", True)]
        if blocking:
            raise ShapeViolationError(
                f"commit rejected: {len(blocking)} SHACL violation(s); nothing was written",
                blocking,
            )
        return [v for v in violations if not getattr(v, "is_violation", True)]


def _referrers(store: GraphStore, removals: dict[Triple, ox.Quad]) -> set[ox.NamedNode]:
    """Nodes pointing at a node that loses a type: their sh:class constraints may break
    although none of their own triples changed."""
    retyped = {q.subject for q in removals.values() if q.predicate.value == RDF_TYPE}
    out: set[ox.NamedNode] = set()
    for node in retyped:
        out.update(q.subject for q in store.live_quads(None, None, node) if isinstance(q.subject, ox.NamedNode))  # type: ignore[misc]
    return out - retyped


def insert(raw: ox.Store, quads: list[ox.Quad]) -> None:
    """Write quads into graphs no view reads yet (so atomicity is not needed here)."""
    if len(quads) > 20_000:
        raw.bulk_extend(quads)
    elif quads:
        raw.extend(quads)


def _closed_copy(quad: ox.Quad, rev: int) -> ox.Quad:
    iv = layout.parse_graph(quad.graph_name)  # type: ignore[arg-type]
    assert iv is not None
    return ox.Quad(quad.subject, quad.predicate, quad.object, layout.interval_graph(iv.family, iv.start, rev))


def _family(quad: ox.Quad) -> str:
    iv = layout.parse_graph(quad.graph_name)  # type: ignore[arg-type]
    return iv.family if iv else ""


def _skolemize(triple: Triple, mapping: dict[str, ox.NamedNode]) -> Triple:
    def term(t: Any) -> Any:
        if isinstance(t, ox.BlankNode):
            return mapping.setdefault(t.value, ox.NamedNode(f"{GENID}{ULID()}"))
        return t

    s, p, o = triple
    return term(s), p, term(o)


def _parse_nt(data: bytes) -> Sequence[ox.Triple]:
    try:
        return [q.triple for q in ox.parse(data, ox.RdfFormat.N_TRIPLES)]
    except SyntaxError as exc:
        raise syntax_error(exc, "N-Triples") from None


def _activity(
    node: ox.NamedNode,
    rev: int,
    when: datetime,
    request: CommitRequest,
    added: int,
    removals: dict[Triple, ox.Quad],
) -> list[Triple]:
    """The PROV-O record of a commit."""
    agent = agent_node(request.agent)
    stamp = ox.Literal(when.isoformat().replace("+00:00", "Z"), datatype=ox.NamedNode(XSD + "dateTime"))
    integer = ox.NamedNode(XSD + "integer")
    out: list[Triple] = [
        (node, ox.NamedNode(RDF_TYPE), ox.NamedNode(ca.Commit)),
        (node, ox.NamedNode(RDF_TYPE), ox.NamedNode(PROV + "Activity")),
        (node, ox.NamedNode(ca.revision), ox.Literal(str(rev), datatype=integer)),
        (node, ox.NamedNode(PROV + "startedAtTime"), stamp),
        (node, ox.NamedNode(PROV + "wasAssociatedWith"), agent),
        (node, ox.NamedNode(ca.cause), ox.Literal(request.cause)),
        (node, ox.NamedNode(ca.message), ox.Literal(request.message)),
        (node, ox.NamedNode(ca.addedCount), ox.Literal(str(added), datatype=integer)),
        (node, ox.NamedNode(ca.removedCount), ox.Literal(str(len(removals)), datatype=integer)),
        (agent, ox.NamedNode(RDF_TYPE), ox.NamedNode(PROV + "Agent")),
    ]
    if request.external_id:
        out.append((node, ox.NamedNode(ca.externalId), ox.Literal(request.external_id)))
    return out


class _Clock:
    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = now - self.last
        self.last = now
