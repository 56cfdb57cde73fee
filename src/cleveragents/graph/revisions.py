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
        q.subject for q in removals.values() if layout.parse_graph(q.graph_name).family == "iv"  # type: ignore[union-attr]
    }
    touched |= {s for s in removed_subjects - touched if _is_unit(store, s)}
    if not touched:
        return [], []

    stamp = ox.Literal(when.isoformat().replace("+00:00", "Z"), datatype=ox.NamedNode(XSD + "dateTime"))
    commit = ox.NamedNode(f"https://cleveragents.ai/id/commit/{rev}")
    removed_keys = set(removals)
    adds: list[Triple] = []
    closes: list[ox.Quad] = []
    previous = _current_revisions(store, touched)
    for entity in touched:
        prev = previous.get(entity)
        exists = _exists_after(store, entity, added_g, removed_keys) if entity in removed_subjects else True
        if prev is not None:
            closes += store.live_quads(prev, IS_CURRENT)
            adds += [(prev, IS_CURRENT, FALSE), (prev, VALID_UNTIL, stamp)]
        state = list(store.live_quads(entity, IS_CURRENT))
        if not exists:
            closes += state
            adds += [(entity, IS_CURRENT, FALSE), (entity, VALID_UNTIL, stamp)]
            continue
        if not any(q.object == TRUE for q in state):  # new, or back from deletion
            closes += state
            closes += store.live_quads(entity, VALID_UNTIL)
            closes += store.live_quads(entity, VALID_FROM)
            adds += [(entity, IS_CURRENT, TRUE), (entity, VALID_FROM, stamp)]
        node = revision_node(entity, rev)
        adds += [
            (node, TYPE, ox.NamedNode(CA + "EntityRevision")),
            (node, REVISION_OF, entity),
            (node, ox.NamedNode(CA + "revision"), ox.Literal(str(rev), datatype=ox.NamedNode(XSD + "integer"))),
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


def _exists_after(store: GraphStore, entity: ox.NamedNode, added_g: ox.NamedNode, removed: set[tuple]) -> bool:
    if any(True for _ in store.raw.quads_for_pattern(entity, TYPE, None, added_g)):
        return True
    return any((q.subject, q.predicate, q.object) not in removed for q in store.live_quads(entity, TYPE))


def _current_revisions(store: GraphStore, entities: set[ox.NamedNode]) -> dict[ox.NamedNode, ox.NamedNode]:
    out: dict[ox.NamedNode, ox.NamedNode] = {}
    ordered = sorted(entities, key=lambda n: n.value)
    for start in range(0, len(ordered), 500):
        values = " ".join(str(e) for e in ordered[start : start + 500])
        rows = store.query(
            f"SELECT ?e ?r WHERE {{ VALUES ?e {{ {values} }} ?r ca:revisionOf ?e ; uko:isCurrent true }}"
        )
        out.update({row["e"]: row["r"] for row in rows})
    return out
