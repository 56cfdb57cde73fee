"""Property: every revision's state equals replaying the commits up to it, and diffs
equal set differences of states; the materialized closure always matches the TBox."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.graph import history as hist
from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest
from cleveragents.graph.hierarchy import TBox, rebuild_closure
from cleveragents.graph.store import GraphStore
from cleveragents.tbox.modules import replace_graph
from tests.graph.conftest import CALLABLE, CALLS, DEPENDS, IMPORTS, MINI_ONTOLOGY, MODULE, TYPE, ex

SUBJECTS = [ex(n) for n in "abcd"]
TRIPLES = [(s, TYPE, c) for s in SUBJECTS for c in (MODULE, CALLABLE)] + [
    (s, p, o) for s in SUBJECTS[:3] for p in (CALLS, IMPORTS, DEPENDS) for o in SUBJECTS[1:]
]
triple_sets = st.sets(st.sampled_from(TRIPLES), max_size=6)
# The third element sends the additions as N-Triples (the bulk path) instead of terms.
commits = st.lists(st.tuples(triple_sets, triple_sets, st.booleans()), min_size=1, max_size=7)


def fresh_store() -> tuple[GraphStore, CommitEngine]:
    store = GraphStore.in_memory()
    replace_graph(store.raw, layout.ONTOLOGY, [q.triple for q in ox.parse(MINI_ONTOLOGY, ox.RdfFormat.TURTLE)])
    rebuild_closure(store.raw)
    return store, CommitEngine(store, TBox.from_store(store.raw), None, uko=False)  # the RDFS closure alone


def content(triples: set[tuple]) -> set[tuple]:
    return {t for t in triples if not hist.is_bookkeeping(t)}


def entailed(state: set[tuple], tbox: TBox) -> set[tuple]:
    out: set[tuple] = set()
    for s, p, o in state:
        if p == TYPE:
            out |= {(s, TYPE, c) for c in tbox.superclasses.get(o, ())}
        else:
            out |= {(s, q, o) for q in tbox.superproperties.get(p, ())}
    return out - state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits)
def test_states_equal_replay_and_diffs_equal_set_differences(sequence) -> None:
    store, engine = fresh_store()
    replayed: list[set[tuple]] = [set()]
    for add, remove, as_ntriples in sequence:
        if as_ntriples and add:
            body = ox.serialize([ox.Triple(*t) for t in add], format=ox.RdfFormat.N_TRIPLES)
            result = engine.commit(CommitRequest(add_ntriples=body, remove=remove))
        else:
            result = engine.commit(CommitRequest(add=add, remove=remove))
        expected = (replayed[-1] - remove) | add
        if expected != replayed[-1]:
            assert result.revision == len(replayed)
            replayed.append(expected)
        else:
            assert result.empty  # nothing changed: no commit at all
    assert store.head == len(replayed) - 1
    # The current-state mirror holds exactly what the intervals say is live at the head.
    head = store.head
    for family, mirror in (("asserted", layout.LIVE), ("inferred", layout.LIVE_INFERRED)):
        mirrored = {(q.subject, q.predicate, q.object) for q in store.raw.quads_for_pattern(None, None, None, mirror)}
        asserted = hist.state(store, head)
        expected_mirror = asserted if family == "asserted" else hist.state(store, head, inferred=True) - asserted
        assert mirrored == expected_mirror
    for rev, expected in enumerate(replayed):
        assert content(hist.state(store, rev)) == expected
        inferred = hist.state(store, rev, inferred=True) - hist.state(store, rev)
        assert inferred == entailed(expected, engine.tbox)
    for r1 in range(len(replayed)):
        for r2 in range(len(replayed)):
            added, removed = hist.diff(store, r1, r2, bookkeeping=False)
            assert added == replayed[r2] - replayed[r1]
            assert removed == replayed[r1] - replayed[r2]
