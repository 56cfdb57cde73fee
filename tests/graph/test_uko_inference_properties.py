"""Property: whatever sequence of commits built a state, the UKO engine's live facts equal
a derivation of that state from scratch, and the inferred graphs hold exactly the RDFS
closure of the asserted and derived triples (apart from both)."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.graph import history as hist
from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest
from cleveragents.graph.hierarchy import TBox, rebuild_closure
from cleveragents.graph.store import GraphStore
from cleveragents.graph.uko_inference import DERIVED_PREDICATES, IMPLICIT_EDGES, RESOLVED_BY
from cleveragents.tbox.modules import load_ontology
from cleveragents.terms import RDF_TYPE, UKO, UKO_CODE, UKO_PY
from tests.graph.test_history_properties import entailed

BASE = "https://cleveragents.ai/id/src/01ARZ3NDEKTSV4RRFFQ69G5FAV/"
TYPE = ox.NamedNode(RDF_TYPE)
CONTAINS = ox.NamedNode(UKO + "contains")
CALLS = ox.NamedNode(UKO_CODE + "calls")
DOCSTRING = ox.NamedNode(UKO_CODE + "docstring")


def n(iri: str) -> ox.NamedNode:
    return ox.NamedNode(iri if "://" in iri else BASE + iri)


PKG, A, B = n("pkg/"), n("pkg/a.py"), n("pkg/b.py")
F, G, H = n("pkg/a.py#f"), n("pkg/a.py#f.g"), n("pkg/b.py#h")
TOPIC, LEAF = n("https://example.org/t"), n("https://example.org/t/u")
# Outside the UKO until it gets a UKO type: its text, types and calls alone derive nothing.
OTHER, THING = n("https://example.org/other"), n("https://example.org/Thing")
TRIPLES = [
    (PKG, TYPE, ox.NamedNode(UKO_CODE + "Package")),
    (A, TYPE, ox.NamedNode(UKO_PY + "Module")),
    (B, TYPE, ox.NamedNode(UKO_PY + "Module")),
    (F, TYPE, ox.NamedNode(UKO_PY + "Function")),
    (G, TYPE, ox.NamedNode(UKO_PY + "Function")),
    (H, TYPE, ox.NamedNode(UKO_PY + "Function")),
    (TOPIC, TYPE, ox.NamedNode(UKO + "Container")),
    (LEAF, TYPE, ox.NamedNode(UKO + "Atom")),
    (PKG, CONTAINS, A),
    (A, CONTAINS, F),
    (F, CONTAINS, G),
    (B, CONTAINS, H),
    (F, DOCSTRING, ox.Literal("see b.py")),
    (G, DOCSTRING, ox.Literal("uses pkg/b.py and https://example.org/t/u")),
    (H, DOCSTRING, ox.Literal("reads ./a.py")),
    (LEAF, DOCSTRING, ox.Literal("https://example.org/t")),
    (OTHER, TYPE, THING),
    (LEAF, TYPE, THING),
    (OTHER, DOCSTRING, ox.Literal("see pkg/a.py")),
    (OTHER, TYPE, ox.NamedNode(UKO_PY + "Function")),
] + [(s, CALLS, o) for s in (F, G, H, LEAF, OTHER) for o in (F, G, H, B, LEAF) if s != o]
triple_sets = st.sets(st.sampled_from(TRIPLES), max_size=8)
commits = st.lists(st.tuples(triple_sets, triple_sets), min_size=1, max_size=6)


def fresh_store() -> tuple[GraphStore, CommitEngine]:
    store = GraphStore.in_memory()
    load_ontology(store.raw, layout.ONTOLOGY)
    rebuild_closure(store.raw)
    return store, CommitEngine(store, TBox.from_store(store.raw), None)


def live_derived(store: GraphStore) -> set[tuple]:
    raw = store.raw
    reifiers = {q.subject for q in raw.quads_for_pattern(None, None, RESOLVED_BY, layout.LIVE_INFERRED)}
    return {
        (q.subject, q.predicate, q.object)
        for q in raw.quads_for_pattern(None, None, None, layout.LIVE_INFERRED)
        if q.predicate in DERIVED_PREDICATES or q.subject in reifiers
    }


def from_scratch(store: GraphStore, engine: CommitEngine) -> set[tuple]:
    scratch = layout.interval_graph("inf", store.head + 100)
    assert engine.uko is not None
    engine.uko.derive_all(store, scratch)
    out = {(q.subject, q.predicate, q.object) for q in store.raw.quads_for_pattern(None, None, None, scratch)}
    store.raw.remove_graph(scratch)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits)
def test_incremental_derivation_equals_derivation_from_scratch(sequence) -> None:
    store, engine = fresh_store()
    for add, remove in sequence:
        engine.commit(CommitRequest(add=add, remove=remove))
        derived = live_derived(store)
        assert derived == from_scratch(store, engine)
        # The closure of the content (commit records and revision nodes are left to the
        # graph core's own tests), implicit edges included.
        asserted = hist.state(store, store.head)
        inferred = {t for t in hist.state(store, store.head, inferred=True) - asserted if not hist.is_bookkeeping(t)}
        content = {t for t in asserted if not hist.is_bookkeeping(t)}
        edges = {t for t in derived if t[1] in IMPLICIT_EDGES}
        assert inferred - derived == entailed(content | edges, engine.tbox) - derived


def test_an_asserted_dependency_stands_in_for_the_implicit_one_while_it_lasts() -> None:
    """A commit that only adds or removes the asserted edge (the text naming the target is
    unchanged) still re-derives the implicit one."""
    store, engine = fresh_store()
    implicit = (F, ox.NamedNode(UKO + "implicitDependsOn"), B)
    setup = [(A, TYPE, ox.NamedNode(UKO_PY + "Module")), (B, TYPE, ox.NamedNode(UKO_PY + "Module"))]
    engine.commit(
        CommitRequest(
            add=[*setup, (F, TYPE, ox.NamedNode(UKO_PY + "Function")), (F, DOCSTRING, ox.Literal("see b.py"))]
        )
    )
    assert implicit in live_derived(store)
    engine.commit(CommitRequest(add=[(F, CALLS, B)]))
    assert implicit not in live_derived(store)
    engine.commit(CommitRequest(remove=[(F, CALLS, B)]))
    assert implicit in live_derived(store)
    assert live_derived(store) == from_scratch(store, engine)
