"""Incremental RDFS closure (rdfs9 subclass typing, rdfs7 sub-properties).

Users write ``?x a uko:Container`` and ``?a uko:dependsOn ?b`` and get every subclass
and sub-property instance. Oxigraph does no reasoning, so the entailed triples are
materialized in ``inf/`` interval graphs, apart from what was asserted. A triple is
inferred only while it is entailed and not asserted, so no triple is ever live twice.

The closure's base facts are the asserted triples and the *derived* facts another engine
wrote to the inferred graphs (the UKO engine's implicit edges, graph/uko_inference.py):
``?a uko:dependsOn ?b`` sees ``?a uko:implicitDependsOn ?b`` as it sees ``?a uko-code:calls ?b``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.graph.hierarchy import TBox
from cleveragents.graph.results import ntriples
from cleveragents.graph.store import GraphStore
from cleveragents.terms import RDF_TYPE

TYPE = ox.NamedNode(RDF_TYPE)
_RDFS = {"rdfs": "http://www.w3.org/2000/01/rdf-schema#"}
Triple = tuple[ox.NamedNode, ox.NamedNode, object]


@dataclass
class InferenceDelta:
    added: int = 0
    closes: list[ox.Quad] = field(default_factory=list)


def entailments_of(graph: ox.NamedNode | None) -> str:
    """CONSTRUCT of what the triples of ``graph`` (None: the default graph) entail."""
    tbox = layout.TBOX_CLOSURE

    def data(pattern: str) -> str:
        return f"GRAPH {graph} {{ {pattern} }}" if graph is not None else pattern

    return f"""
    CONSTRUCT {{ ?s a ?d . ?x ?q ?y }} WHERE {{
      {{ {data("?s a ?c")} GRAPH {tbox} {{ ?c rdfs:subClassOf ?d }} FILTER(?c != ?d) }}
      UNION
      {{ GRAPH {tbox} {{ ?p rdfs:subPropertyOf ?q }} FILTER(?p != ?q) {data("?x ?p ?y")} }}
    }}"""


def rederive_all(store: GraphStore, inferred_g: ox.NamedNode) -> InferenceDelta:
    """After an ontology change: the whole closure of the live asserted triples (and of
    the derived facts already written to ``inferred_g``), written to ``inferred_g`` where
    it is new, and the live inferences it no longer contains."""
    raw = store.raw
    head = store.head
    live = {n: iv for n, iv in store.interval_graphs().items() if iv.is_open and iv.start <= head}
    asserted = [n for n, iv in live.items() if iv.family == "iv"]
    body = ntriples(raw.query(entailments_of(None), default_graph=[layout.LIVE, inferred_g], prefixes=_RDFS))
    if body:
        raw.bulk_load(body, ox.RdfFormat.N_TRIPLES, to_graph=inferred_g)
    drop_present(store, inferred_g, asserted)
    delta = InferenceDelta()
    for node, iv in live.items():
        if iv.family != "inf":
            continue
        for quad in raw.quads_for_pattern(None, None, None, node):
            fresh = ox.Quad(quad.subject, quad.predicate, quad.object, inferred_g)
            if fresh in raw:
                raw.remove(fresh)  # still entailed: keep the live copy and its history
            else:
                delta.closes.append(quad)
    delta.added = store.count(inferred_g)
    return delta


def infer(
    store: GraphStore,
    tbox: TBox,
    added_g: ox.NamedNode,
    inferred_g: ox.NamedNode,
    removals: dict[tuple, ox.Quad],
    live_inferred: list[ox.NamedNode],
    derived: frozenset[ox.NamedNode] = frozenset(),
) -> InferenceDelta:
    """Write what the additions entail into ``inferred_g``; return inferences to close.

    ``derived``: the predicates of derived base facts. ``inferred_g`` holds the ones this
    commit adds (and nothing else yet); ``removals`` the ones it closes."""
    raw = store.raw
    delta = InferenceDelta()
    if tbox.superclasses or tbox.superproperties:
        sources = [added_g]
        if derived and next(iter(raw.quads_for_pattern(None, None, None, inferred_g)), None) is not None:
            sources.append(inferred_g)
        bodies = [ntriples(raw.query(entailments_of(g), prefixes=_RDFS)) for g in sources]
        for body in bodies:
            if body:
                raw.bulk_load(body, ox.RdfFormat.N_TRIPLES, to_graph=inferred_g)
        if any(bodies):
            live = [g for g, iv in store.interval_graphs().items() if iv.is_open and iv.start <= store.head]
            drop_present(store, inferred_g, [*live, added_g])
    _recompute_after_removals(store, tbox, added_g, inferred_g, removals, live_inferred, derived, delta)
    delta.added = store.count(inferred_g)
    return delta


def drop_present(store: GraphStore, graph: ox.NamedNode, others: list[ox.NamedNode]) -> None:
    """Remove from ``graph`` every triple some graph of ``others`` already holds."""
    for quad in store.overlap(graph, others):
        store.raw.remove(ox.Quad(quad.subject, quad.predicate, quad.object, graph))


def _recompute_after_removals(
    store: GraphStore,
    tbox: TBox,
    added_g: ox.NamedNode,
    inferred_g: ox.NamedNode,
    removals: dict[tuple, ox.Quad],
    live_inferred: list[ox.NamedNode],
    derived: frozenset[ox.NamedNode],
    delta: InferenceDelta,
) -> None:
    """Re-derive the inferences of nodes whose base support (asserted or derived) shrank."""
    raw = store.raw

    def is_base(quad: ox.Quad) -> bool:
        family = layout.parse_graph(quad.graph_name).family  # type: ignore[arg-type, union-attr]
        return family == "iv" or (family == "inf" and quad.predicate in derived)

    removed_base = [q for q in removals.values() if is_base(q)]
    typed_subjects = {q.subject for q in removed_base if q.predicate == TYPE}
    related = tbox.related_predicates
    edges = {(q.subject, q.object) for q in removed_base if q.predicate != TYPE and q.predicate in related}
    if not typed_subjects and not edges:
        return
    removed_keys = set(removals)
    live_inf = set(live_inferred)
    additions: list[ox.Quad] = []

    def remaining_base(s: object, p: object, o: object) -> set[tuple]:
        families = ("iv", "inf") if derived else ("iv",)
        out = {
            (q.subject, q.predicate, q.object)
            for q in store.live_quads(s, p, o, families=families)  # type: ignore[arg-type]
            if (q.subject, q.predicate, q.object) not in removed_keys and is_base(q)
        }
        for graph in (added_g, inferred_g) if derived else (added_g,):
            out |= {
                (q.subject, q.predicate, q.object)
                for q in raw.quads_for_pattern(s, p, o, graph)  # type: ignore[arg-type]
                if graph == added_g or q.predicate in derived
            }
        return out

    def current_inferred(s: object, p: object, o: object) -> dict[tuple[Any, Any, Any], ox.Quad]:
        out: dict[tuple[Any, Any, Any], ox.Quad] = {}
        for q in raw.quads_for_pattern(s, p, o, None):  # type: ignore[arg-type]
            key = (q.subject, q.predicate, q.object)
            if q.predicate in derived:
                continue  # a base fact, not an entailment
            if (q.graph_name in live_inf and key not in removed_keys) or q.graph_name == inferred_g:
                out[key] = q
        return out

    def reconcile(desired: set[tuple[Any, Any, Any]], current: dict[tuple[Any, Any, Any], ox.Quad]) -> None:
        for key, quad in current.items():
            if key not in desired:
                if quad.graph_name == inferred_g:
                    raw.remove(quad)
                else:
                    delta.closes.append(quad)
        additions.extend(ox.Quad(*key, inferred_g) for key in desired if key not in current)

    for s in typed_subjects:
        asserted = {t[2] for t in remaining_base(s, TYPE, None)}
        desired = {(s, TYPE, c) for c in tbox.entailed_types(asserted)}  # type: ignore[arg-type]
        reconcile(desired, current_inferred(s, TYPE, None))
    by_pair: dict[tuple, set] = defaultdict(set)
    for s, o in edges:
        by_pair[(s, o)] = {t[1] for t in remaining_base(s, None, o) if t[1] != TYPE}
    for (s, o), preds in by_pair.items():
        desired = {(s, p, o) for p in tbox.entailed_predicates(preds)}  # type: ignore[arg-type]
        current = {k: q for k, q in current_inferred(s, None, o).items() if k[1] != TYPE}
        reconcile(desired, current)
    if additions:
        raw.extend(additions)  # into inferred_g, which no view reads yet
