"""Commits, intervals, views, diff, history and blame on a real on-disk store."""

from __future__ import annotations

from datetime import UTC, datetime

import pyoxigraph as ox
import pytest

from cleveragents.errors import NotFoundError, StoreLockedError
from cleveragents.graph import history as hist
from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest
from cleveragents.graph.store import GraphStore
from tests.graph.conftest import (
    CALLABLE,
    CALLS,
    CONTAINER,
    DEPENDS,
    IMPORTS,
    MODULE,
    TYPE,
    ex,
    open_store,
)


def names(rows, var: str) -> set[str]:
    return {row[var].value.rsplit("/", 1)[-1] for row in rows}


def test_commit_assigns_revisions_and_records_provenance(store: GraphStore, engine: CommitEngine) -> None:
    first = engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)], message="one", cause="test", agent="alice"))
    second = engine.commit(
        CommitRequest(add=[(ex("b"), TYPE, MODULE)], message="two", external_id="abc123def", agent="bob")
    )
    assert (first.revision, second.revision) == (1, 2)
    assert store.head == 2
    commits = hist.log(store)
    assert [c.revision for c in commits] == [2, 1]
    assert commits[0].external_id == "abc123def" and commits[0].agent == "bob"
    assert commits[1].message == "one" and commits[1].cause == "test"


def test_as_of_sees_the_past_and_current_sees_the_present(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)]))
    engine.commit(CommitRequest(add=[(ex("b"), TYPE, MODULE)], remove=[(ex("a"), TYPE, MODULE)]))
    query = "SELECT ?m WHERE { ?m a uko-code:Module }"
    assert names(store.query(query), "m") == {"b"}
    assert names(store.query(query, view=store.view(1)), "m") == {"a"}
    assert names(store.query(query, view=store.view(0)), "m") == set()


def test_as_of_resolves_numbers_times_and_external_ids(store: GraphStore, engine: CommitEngine) -> None:
    t1 = datetime(2026, 1, 10, tzinfo=UTC)
    t2 = datetime(2026, 1, 15, 10, 30, tzinfo=UTC)
    engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)], timestamp=t1, external_id="1111aaaa"))
    engine.commit(CommitRequest(add=[(ex("b"), TYPE, MODULE)], timestamp=t2, external_id="2222bbbb"))
    assert hist.resolve_revision(store, "1") == 1
    assert hist.resolve_revision(store, "2026-01-12T00:00:00Z") == 1
    assert hist.resolve_revision(store, "2026-01-16") == 2
    assert hist.resolve_revision(store, "2025-12-31") == 0
    assert hist.resolve_revision(store, "2222") == 2
    with pytest.raises(NotFoundError, match="unknown --as-of 'nope'"):
        hist.resolve_revision(store, "nope")
    with pytest.raises(NotFoundError, match=r"revisions 0\.\.2"):
        hist.resolve_revision(store, "7")


def test_adding_a_live_triple_or_removing_an_absent_one_writes_nothing(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)]))
    before = len(store.raw)
    result = engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)], remove=[(ex("zz"), TYPE, MODULE)]))
    assert result.empty and result.revision == 1
    assert store.head == 1 and len(store.raw) == before


def test_removal_closes_the_interval_and_keeps_history(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("f"), TYPE, CALLABLE), (ex("f"), CALLS, ex("g"))]))
    engine.commit(CommitRequest(remove=[(ex("f"), CALLS, ex("g"))]))
    spans = [s for s in hist.history(store, ex("f")) if s.predicate == CALLS and not s.inferred]
    assert [(s.start, s.end) for s in spans] == [(1, 2)]
    added, removed = hist.diff(store, 1, 2, bookkeeping=False)
    assert removed == {(ex("f"), CALLS, ex("g"))} and not added
    everything_added, _ = hist.diff(store, 1, 2)
    assert any(t[0].value.endswith("/commit/2") for t in everything_added)
    # every removed quad lives in exactly one closed interval graph
    quads = list(store.raw.quads_for_pattern(ex("f"), CALLS, ex("g"), None))
    assert [q.graph_name for q in quads] == [layout.interval_graph("iv", 1, 2)]


def test_readding_after_removal_opens_a_new_interval(store: GraphStore, engine: CommitEngine) -> None:
    t = (ex("m"), TYPE, MODULE)
    engine.commit(CommitRequest(add=[t]))
    engine.commit(CommitRequest(remove=[t]))
    engine.commit(CommitRequest(add=[t]))
    spans = [(s.start, s.end) for s in hist.history(store, ex("m")) if s.predicate == TYPE and not s.inferred]
    assert spans == [(1, 2), (3, None)]
    assert hist.diff(store, 1, 3, bookkeeping=False) == (set(), set())


def test_universal_view_follows_subclasses_and_subproperties(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(
        CommitRequest(
            add=[
                (ex("mod"), TYPE, MODULE),
                (ex("mod"), IMPORTS, ex("f")),
                (ex("f"), TYPE, CALLABLE),
            ]
        )
    )
    rows = store.query(f"SELECT ?c WHERE {{ ?c a uko:Container . ?c uko:dependsOn {ex('f')} }}")
    assert names(rows, "c") == {"mod"}
    # asserted and inferred triples stay apart
    assert not list(store.live_quads(ex("mod"), TYPE, CONTAINER))
    assert list(store.live_quads(ex("mod"), TYPE, CONTAINER, families=("inf",)))


def test_retracting_support_retracts_the_inference(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("a"), CALLS, ex("b")), (ex("a"), IMPORTS, ex("b"))]))
    engine.commit(CommitRequest(remove=[(ex("a"), CALLS, ex("b"))]))
    assert bool(store.query(f"ASK {{ {ex('a')} uko:dependsOn {ex('b')} }}"))  # still entailed by imports
    engine.commit(CommitRequest(remove=[(ex("a"), IMPORTS, ex("b"))]))
    assert not bool(store.query(f"ASK {{ {ex('a')} uko:dependsOn {ex('b')} }}"))
    assert bool(store.query(f"ASK {{ {ex('a')} uko:dependsOn {ex('b')} }}", view=store.view(2)))


def test_asserting_an_inferred_triple_never_duplicates_it(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("a"), CALLS, ex("b"))]))
    engine.commit(CommitRequest(add=[(ex("a"), DEPENDS, ex("b"))]))
    rows = list(store.query(f"SELECT ?o WHERE {{ {ex('a')} uko:dependsOn ?o }}"))
    assert len(rows) == 1
    engine.commit(CommitRequest(remove=[(ex("a"), DEPENDS, ex("b"))]))  # still entailed by calls
    rows = list(store.query(f"SELECT ?o WHERE {{ {ex('a')} uko:dependsOn ?o }}"))
    assert len(rows) == 1


def test_entity_revisions_follow_the_seed_contract(store: GraphStore, engine: CommitEngine) -> None:
    cls = ex("AuthManager")
    engine.commit(CommitRequest(add=[(cls, TYPE, MODULE)], timestamp=datetime(2026, 1, 10, tzinfo=UTC)))
    engine.commit(CommitRequest(add=[(cls, IMPORTS, ex("jwt"))], timestamp=datetime(2026, 1, 15, 10, 30, tzinfo=UTC)))
    rows = list(
        store.query(
            f"""SELECT ?r ?cur ?from ?until ?prev WHERE {{
                ?r ca:revisionOf {cls} ; uko:isCurrent ?cur ; uko:validFrom ?from .
                OPTIONAL {{ ?r uko:validUntil ?until }} OPTIONAL {{ ?r uko:isRevisionOf ?prev }} }} ORDER BY ?from"""
        )
    )
    assert [r["cur"].value for r in rows] == ["false", "true"]
    assert rows[0]["until"].value == rows[1]["from"].value == "2026-01-15T10:30:00Z"
    assert rows[1]["prev"] == rows[0]["r"]
    assert bool(store.query(f"ASK {{ {cls} uko:isCurrent true ; uko:validFrom ?t }}"))
    engine.commit(CommitRequest(retract_subjects=[cls]))
    assert bool(store.query(f"ASK {{ {cls} uko:isCurrent false ; uko:validUntil ?t }}"))
    assert not bool(store.query(f"ASK {{ ?r ca:revisionOf {cls} ; uko:isCurrent true }}"))


def test_blank_nodes_are_skolemized_so_they_can_be_removed_later(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("a"), CALLS, ox.BlankNode("x"))]))
    (quad,) = store.live_quads(ex("a"), CALLS)
    assert isinstance(quad.object, ox.NamedNode) and "/.well-known/genid/" in quad.object.value
    engine.commit(CommitRequest(remove=[(ex("a"), CALLS, quad.object)]))
    assert not list(store.live_quads(ex("a"), CALLS))


def test_unpublished_graphs_of_a_crashed_commit_are_discarded(tmp_path) -> None:
    store = open_store(tmp_path / "s")
    engine = CommitEngine(
        store,
        __import__("cleveragents.graph.hierarchy", fromlist=["TBox"]).TBox.from_store(store.raw),
        None,
    )
    engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)]))
    # what a commit killed before publishing leaves behind
    store.raw.add(ox.Quad(ex("ghost"), TYPE, MODULE, layout.interval_graph("iv", 2)))
    store.raw.add(ox.Quad(ex("ghost"), TYPE, MODULE, layout.stage_graph(2, "removed")))
    store.forget_graphs()
    assert names(store.query("SELECT ?m WHERE { ?m a uko-code:Module }"), "m") == {"a"}
    store.close()
    reopened = open_store(tmp_path / "s")
    assert not list(reopened.raw.quads_for_pattern(ex("ghost"), None, None, None))
    reopened.close()


def test_second_writer_is_told_who_holds_the_store(store: GraphStore) -> None:
    with pytest.raises(StoreLockedError, match=r"held by another writer: pid \d+"):
        GraphStore.open(store.path)


def test_reader_works_beside_a_writer(store: GraphStore, engine: CommitEngine) -> None:
    engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE)]))
    store.raw.flush()
    reader = GraphStore.open_read_only(store.path)
    assert names(reader.query("SELECT ?m WHERE { ?m a uko-code:Module }"), "m") == {"a"}


def test_an_ontology_change_rederives_the_closure(store: GraphStore, engine: CommitEngine) -> None:
    from cleveragents.graph.hierarchy import rebuild_closure
    from cleveragents.tbox.modules import replace_graph

    engine.commit(CommitRequest(add=[(ex("m"), TYPE, MODULE), (ex("m"), CALLS, ex("f"))]))
    assert bool(store.query(f"ASK {{ {ex('m')} a uko:Container }}"))
    # Module is no longer a Container; calls is no longer a dependency.
    ontology = [q.triple for q in store.raw.quads_for_pattern(None, None, None, layout.ONTOLOGY)]
    kept = [t for t in ontology if t.subject not in (MODULE, CALLS)]
    replace_graph(store.raw, layout.ONTOLOGY, kept)
    rebuild_closure(store.raw)
    result = engine.rederive_inferences()
    assert result.revision == 2 and result.inferred_removed >= 3
    assert not bool(store.query(f"ASK {{ {ex('m')} a uko:Container }}"))
    assert not bool(store.query(f"ASK {{ {ex('m')} uko:dependsOn {ex('f')} }}"))
    assert bool(store.query(f"ASK {{ {ex('m')} a uko:Container }}", view=store.view(1)))
    assert engine.rederive_inferences().empty  # nothing changed since
