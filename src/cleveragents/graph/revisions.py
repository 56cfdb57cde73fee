"""Revision nodes: the spec's node-level temporal contract on top of triple intervals.

Entities keep one stable IRI, so edges always point at the logical entity. Each
commit that changes a UKO entity also records a revision node ``<entity>@r<N>``:

    <e@r3> a ca:EntityRevision ; ca:revisionOf <e> ; ca:revision 3 ;
           uko:validFrom "..." ; uko:isCurrent true ; uko:isRevisionOf <e@r1> .

and closes the predecessor (``uko:isCurrent false``, ``uko:validUntil``). The entity
itself carries ``uko:validFrom`` / ``uko:isCurrent`` for its current incarnation.
These are ordinary temporal triples, so as-of queries see them as they were.
"""

from __future__ import annotations

from datetime import datetime

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.graph.store import GraphStore
from cleveragents.terms import CA, PROV, RDF_TYPE, UKO, XSD

TYPE = ox.NamedNode(RDF_TYPE)
IS_CURRENT = ox.NamedNode(UKO + "isCurrent")
VALID_FROM = ox.NamedNode(UKO + "validFrom")
VALID_UNTIL = ox.NamedNode(UKO + "validUntil")
IS_REVISION_OF = ox.NamedNode(UKO + "isRevisionOf")
REVISION_OF = ox.NamedNode(CA + "revisionOf")
TRUE = ox.Literal("true", datatype=ox.NamedNode(XSD + "boolean"))
FALSE = ox.Literal("false", datatype=ox.NamedNode(XSD + "boolean"))
INFORMATION_UNIT = ox.NamedNode(UKO + "InformationUnit")

Triple = tuple[object, object, object]


def revision_node(entity: ox.NamedNode, revision: int) -> ox.NamedNode:
    return ox.NamedNode(f"{entity.value}@r{revision}")


def derive_revisions(
    store: GraphStore,
    rev: int,
    when: datetime,
    added_g: ox.NamedNode,
    inferred_g: ox.NamedNode,
    removals: dict[tuple, ox.Quad],
) -> tuple[list[Triple], list[ox.Quad]]:
    """Revision triples to add and live quads to close for the entities a commit touches."""
    raw = store.raw
    live = [g for g, iv in store.interval_graphs().items() if iv.is_open and iv.start <= store.head]
    touched = _touched_by_additions(raw, added_g, [*live, added_g, inferred_g])
    removed_subjects = {
        q.subject
        for q in removals.values()
        if layout.parse_graph(q.graph_name).family == "iv"  # type: ignore[union-attr]
    }
    touched |= {s for s in removed_subjects - touched if _is_unit(store, s)}
    if not touched:
        return [], []

    stamp = ox.Literal(when.isoformat().replace("+00:00", "Z"), datatype=ox.NamedNode(XSD + "dateTime"))
    commit = ox.NamedNode(f"https://cleveragents.ai/id/commit/{rev}")
    removed_keys = set(removals)
    head = store.head
    adds: list[Triple] = []
    closes: list[ox.Quad] = []
    for entity in sorted(touched, key=lambda n: n.value):
        own = list(store.live_quads(entity, head=head))  # one seek for all of its state
        prev = _current_revision(store, entity, head)
        if entity in removed_subjects:
            exists = any(True for _ in raw.quads_for_pattern(entity, TYPE, None, added_g)) or any(
                q.predicate == TYPE and (q.subject, q.predicate, q.object) not in removed_keys for q in own
            )
        else:
            exists = True
        if prev is not None:
            closes += store.live_quads(prev, IS_CURRENT, TRUE, head=head)
            adds += [(prev, IS_CURRENT, FALSE), (prev, VALID_UNTIL, stamp)]
        state = [q for q in own if q.predicate == IS_CURRENT]
        if not exists:
            closes += state
            adds += [(entity, IS_CURRENT, FALSE), (entity, VALID_UNTIL, stamp)]
            continue
        if not any(q.object == TRUE for q in state):  # new, or back from deletion
            closes += [q for q in own if q.predicate in (IS_CURRENT, VALID_UNTIL, VALID_FROM)]
            adds += [(entity, IS_CURRENT, TRUE), (entity, VALID_FROM, stamp)]
        node = revision_node(entity, rev)
        adds += [
            (node, TYPE, ox.NamedNode(CA + "EntityRevision")),
            (node, REVISION_OF, entity),
            (node, VALID_FROM, stamp),
            (node, IS_CURRENT, TRUE),
            (node, ox.NamedNode(PROV + "wasGeneratedBy"), commit),
        ]
        if prev is not None:
            adds.append((node, IS_REVISION_OF, prev))
    return adds, [q for q in closes if (q.subject, q.predicate, q.object) not in removed_keys]


def _touched_by_additions(raw: ox.Store, added_g: ox.NamedNode, graphs: list[ox.NamedNode]) -> set[ox.NamedNode]:
    rows = raw.query(
        f"SELECT DISTINCT ?s WHERE {{ GRAPH {added_g} {{ ?s ?p ?o }} GRAPH ?g {{ ?s a {INFORMATION_UNIT} }} }}",
        named_graphs=graphs,
    )
    return {row["s"] for row in rows if isinstance(row["s"], ox.NamedNode)}


def _is_unit(store: GraphStore, subject: ox.NamedNode) -> bool:
    return any(True for _ in store.live_quads(subject, TYPE, INFORMATION_UNIT, families=("iv", "inf")))


def _current_revision(store: GraphStore, entity: ox.NamedNode, head: int) -> ox.NamedNode | None:
    """The newest revision node of an entity, if it is current (``ca:revisionOf`` links
    are never retracted, so the newest one is found with one seek)."""
    newest: tuple[int, ox.NamedNode] | None = None
    for quad in store.live_quads(None, REVISION_OF, entity, head=head):
        number = int(quad.subject.value.rsplit("@r", 1)[1])
        if newest is None or number > newest[0]:
            newest = (number, quad.subject)  # type: ignore[assignment]
    if newest is None or not any(True for _ in store.live_quads(newest[1], IS_CURRENT, TRUE, head=head)):
        return None
    return newest[1]
