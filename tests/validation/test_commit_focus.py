"""Commit-mode validation (a focus set, excluded graphs) on an on-disk Store: which nodes a
focus graph puts in the focus set, that shapes are still dispatched to them, and that the
scan checks and their shortcuts (sampled sh:class values, count failures reported without
a report query) give exactly the full audit's results.

The reference is always the full audit of the same data graph, restricted to the nodes
the commit touches, compared on whole Violation objects (message, severity, shape too).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from cleveragents.terms import SH
from cleveragents.validation import Violation, compile_shapes
from cleveragents.validation.reference import pyshacl_validate

EX = "http://example.org/cf/"
PREFIXES = f"""
@prefix ex: <{EX}> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
SHAPES = (
    PREFIXES
    + """
ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
  sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:maxCount 1 ; sh:datatype xsd:string ] ;
  sh:property [ sh:path ex:age ; sh:maxCount 1 ; sh:datatype xsd:integer ; sh:minInclusive 0 ] ;
  sh:property [ sh:path ex:worksFor ; sh:class ex:Org ; sh:maxCount 2 ] .

ex:OrgShape a sh:NodeShape ; sh:targetClass ex:Org ;
  sh:property [ sh:path [ sh:inversePath ex:worksFor ] ; sh:maxCount 2 ;
                sh:message "At most two employees." ] .

ex:TeamShape a sh:NodeShape ; sh:targetClass ex:Team ;
  sh:property [ sh:path ( [ sh:inversePath ex:memberOf ] ex:name ) ; sh:datatype xsd:string ] .

ex:KnowsShape a sh:NodeShape ; sh:targetSubjectsOf ex:knows ;
  sh:property [ sh:path ex:knows ; sh:nodeKind sh:BlankNodeOrIRI ; sh:class ex:Person ] .

ex:CodeShape a sh:NodeShape ; sh:targetSubjectsOf ex:code ;
  sh:property [ sh:path ex:code ; sh:maxCount 1 ; sh:pattern "^[A-Z]+$" ; sh:severity sh:Warning ] .

ex:ReviewShape a sh:NodeShape ; sh:targetClass ex:Review ;
  sh:property [ sh:path ex:reviewer ; sh:minCount 1 ; sh:maxCount 1 ; sh:class ex:Person ] ;
  sh:property [ sh:path ex:about ; sh:minCount 2 ; sh:class ex:Org ] ;
  sh:property [ sh:path ex:score ; sh:minCount 1 ] .

ex:TaggedShape a sh:NodeShape ; sh:targetClass ex:Tagged ;
  sh:property [ sh:path ex:tag ; sh:minCount 1 ; sh:message "A tagged node needs a tag ({$this})." ] ;
  sh:property [ sh:path ex:label ; sh:minCount 2 ; sh:maxCount 3 ; sh:datatype xsd:string ] .
"""
)
BASE = (
    PREFIXES
    + """
ex:alice a ex:Person ; ex:name "Alice" ; ex:worksFor ex:acme .
ex:bob a ex:Person ; ex:name "Bob" ; ex:worksFor ex:acme .
ex:acme a ex:Org .
ex:old a ex:Person .
ex:team1 a ex:Team .
ex:m1 ex:name 42 .
ex:dave ex:knows ex:acme .
"""
)
G = {name: ox.NamedNode(f"{EX}g/{name}") for name in ("base", "commit", "removed")}
DATA = ("base", "commit")


@pytest.fixture
def store(tmp_path: Path) -> ox.Store:
    store = ox.Store(str(tmp_path / "store"))
    store.load(BASE, format=ox.RdfFormat.TURTLE, to_graph=G["base"])
    return store


def put(store: ox.Store, graph: str, turtle: str) -> None:
    store.load(PREFIXES + turtle, format=ox.RdfFormat.TURTLE, to_graph=G[graph])


def commit(store: ox.Store, **kw: Any) -> list[Violation]:
    kw.setdefault("focus_graphs", [G["commit"]])
    return compile_shapes(SHAPES).validate(store, default_graph=[G[g] for g in DATA], **kw)


def audit(store: ox.Store, excluded: str = "") -> list[Violation]:
    kw: dict[str, Any] = {"excluded_graph": G[excluded]} if excluded else {}
    return compile_shapes(SHAPES).validate(store, default_graph=[G[g] for g in DATA], **kw)


def on(violations: list[Violation], *names: str) -> set[Violation]:
    return {v for v in violations if v.focus_node in {EX + n for n in names}}


def short(violations: list[Violation] | set[Violation]) -> set[tuple[str, str]]:
    return {(v.focus_node.removeprefix(EX), v.constraint.removeprefix(SH)) for v in violations}


# -- which objects join the focus set ------------------------------------------------------


def test_an_added_triple_checks_its_object_along_an_inverse_path(store: ox.Store) -> None:
    """Only the object side of the new triple changes: acme gets a third employee."""
    put(store, "commit", "ex:zed ex:worksFor ex:acme .")
    found = commit(store)
    assert short(found) == {("acme", "MaxCountConstraintComponent")}
    assert set(found) == on(audit(store), "acme", "zed")


def test_an_inverse_step_inside_a_sequence_puts_the_object_in_focus(store: ox.Store) -> None:
    """( ^memberOf name ): team1's values change when m1 joins it, although team1 is only
    the object of the new triple."""
    put(store, "commit", "ex:m1 ex:memberOf ex:team1 .")
    found = commit(store)
    assert short(found) == {("team1", "DatatypeConstraintComponent")}
    assert set(found) == on(audit(store), "team1", "m1")


def test_a_removal_on_the_object_side_is_checked(store: ox.Store) -> None:
    put(store, "commit", "ex:zed ex:worksFor ex:acme .")
    put(store, "removed", "ex:zed ex:worksFor ex:acme .")
    focus = [G["commit"], G["removed"]]
    assert commit(store, focus_graphs=focus, excluded_graph=G["removed"]) == []
    assert short(commit(store, focus_graphs=focus)) == {("acme", "MaxCountConstraintComponent")}


def test_a_sub_property_of_an_inverse_path_predicate_puts_the_object_in_focus(store: ox.Store) -> None:
    """As the commit engine does, the entailed worksFor triple sits in an inference graph
    that is in the data graph but not a focus graph: the asserted employedBy triple must
    still bring acme into focus."""
    put(store, "base", "ex:employedBy rdfs:subPropertyOf ex:worksFor .")
    store.load(PREFIXES + "ex:zed ex:worksFor ex:acme .", format=ox.RdfFormat.TURTLE, to_graph=G["removed"])
    put(store, "commit", "ex:zed ex:employedBy ex:acme .")
    compiled = compile_shapes(SHAPES)
    graphs = [G["base"], G["commit"], G["removed"]]  # "removed" plays the inference graph here
    found = compiled.validate(store, default_graph=graphs, focus_graphs=[G["commit"]])
    assert short(found) == {("acme", "MaxCountConstraintComponent")}


def test_other_objects_are_not_in_focus(store: ox.Store) -> None:
    """ex:old (a Person without a name) is only the object of the new triple, along a
    predicate no shape follows backwards: nothing of its own changed, it is not checked."""
    put(store, "commit", "ex:carl a ex:Person ; ex:name 'Carl' ; ex:knows ex:old .")
    assert commit(store) == []
    assert short(on(audit(store), "old")) == {("old", "MinCountConstraintComponent")}


# -- dispatch ------------------------------------------------------------------------------


def test_target_subjects_of_dispatches(store: ox.Store) -> None:
    put(store, "commit", 'ex:eve ex:knows "carol" . ex:fay ex:code "AB", "CD" . ex:gus ex:code "x1" .')
    found = commit(store)
    assert short(found) == {
        ("eve", "NodeKindConstraintComponent"),
        ("eve", "ClassConstraintComponent"),
        ("fay", "MaxCountConstraintComponent"),
        ("gus", "PatternConstraintComponent"),
    }
    assert set(found) == on(audit(store), "eve", "fay", "gus")
    assert {v.severity for v in on(found, "fay", "gus")} == {SH + "Warning"}


def test_a_target_through_an_untouched_triple_is_still_dispatched(store: ox.Store) -> None:
    """dave is a target of KnowsShape through a triple in the base graph; the commit only
    adds another predicate to him, and his (failing) knows value is still checked."""
    put(store, "commit", "ex:dave ex:age 7 .")
    found = commit(store)
    assert short(found) == {("dave", "ClassConstraintComponent")}
    assert set(found) == on(audit(store), "dave")


def test_class_targets_dispatch_through_types_outside_the_commit(store: ox.Store) -> None:
    put(store, "commit", 'ex:alice ex:age -1 . ex:bob ex:name "Robert" .')
    found = commit(store)
    assert short(found) == {
        ("alice", "MinInclusiveConstraintComponent"),
        ("bob", "MaxCountConstraintComponent"),
    }
    assert set(found) == on(audit(store), "alice", "bob")


def test_a_removed_target_triple_ends_the_dispatch(store: ox.Store) -> None:
    put(store, "removed", "ex:dave ex:knows ex:acme .")
    assert commit(store, focus_graphs=[G["removed"]], excluded_graph=G["removed"]) == []
    assert short(commit(store, focus_graphs=[G["removed"]])) == {("dave", "ClassConstraintComponent")}


# -- scan checks and their shortcuts -------------------------------------------------------


def test_class_checks_on_one_and_on_several_values(store: ox.Store) -> None:
    put(
        store,
        "commit",
        """
ex:r1 a ex:Review ; ex:reviewer ex:alice ; ex:about ex:acme, ex:bob ; ex:score 3 .
ex:r2 a ex:Review ; ex:reviewer ex:acme ; ex:about ex:acme, ex:beta ; ex:score 1 .
ex:r3 a ex:Review ; ex:reviewer "someone" ; ex:about ex:acme .
ex:r4 a ex:Review ; ex:reviewer [ a ex:Person ; ex:name "X" ] , ex:bob ; ex:about [ a ex:Org ], ex:acme ; ex:score 2 .
ex:r5 a ex:Review ; ex:reviewer [ a ex:Org ] ; ex:about [ a ex:Org ], [ a ex:Person ; ex:name "Y" ] ; ex:score 2 .
ex:beta a ex:Org .
""",
    )
    found = commit(store)
    assert short(found) == {
        ("r1", "ClassConstraintComponent"),  # bob is not an Org (two values: read, not sampled)
        ("r2", "ClassConstraintComponent"),  # acme is not a Person (one value: sampled)
        ("r3", "ClassConstraintComponent"),  # a literal is never an instance
        ("r3", "MinCountConstraintComponent"),  # one about, no score
        ("r4", "MaxCountConstraintComponent"),
        ("r5", "ClassConstraintComponent"),  # blank-node values: the whole check runs
    }
    assert set(found) == on(audit(store), "r1", "r2", "r3", "r4", "r5", "beta")


def test_a_single_class_check_samples_its_value(store: ox.Store) -> None:
    """KnowsShape has one sh:class check: the pairs query reports a node's value when it
    has exactly one; other nodes have their values read, blank values run the whole check."""
    put(
        store,
        "commit",
        """
ex:hal ex:knows [ a ex:Person ; ex:name "Anon" ] .
ex:ian ex:knows [ a ex:Org ] .
ex:jo ex:knows ex:alice, ex:acme .
ex:kim ex:knows ex:bob .
ex:lu ex:knows ex:team1 .
[] ex:knows ex:acme .
""",
    )
    found = commit(store)
    blank = next(v.focus_node for v in found if v.focus_node.startswith("_:"))
    assert short(found) == {
        ("ian", "ClassConstraintComponent"),
        ("jo", "ClassConstraintComponent"),
        ("lu", "ClassConstraintComponent"),
        (blank, "ClassConstraintComponent"),
    }
    assert {v.key() for v in found} == {v.key() for v in audit(store) if v.focus_node not in {EX + "old", EX + "dave"}}


def test_count_failures_are_reported_without_a_report_query(store: ox.Store) -> None:
    put(
        store,
        "commit",
        """
ex:t1 a ex:Tagged ; ex:label "a" .
ex:t2 a ex:Tagged ; ex:tag 1 ; ex:label "a", "b", "c", "d" .
ex:t3 a ex:Tagged ; ex:tag 1 ; ex:label "a", "b" .
ex:fay ex:code "AB", "CD" .
""",
    )
    runs = _Counting(store)
    default = [G[g] for g in DATA]
    found = compile_shapes(SHAPES).validate(runs, default_graph=default, focus_graphs=[G["commit"]])  # type: ignore[arg-type]
    assert short(found) == {
        ("t1", "MinCountConstraintComponent"),  # twice: no tag, one label
        ("t2", "MaxCountConstraintComponent"),
        ("fay", "MaxCountConstraintComponent"),
    }
    assert len(found) == 4
    assert set(found) == on(audit(store), "t1", "t2", "t3", "fay")
    assert f"A tagged node needs a tag ({EX}t1)." in {v.message for v in found}
    assert not any("?focus" in q for q in runs.queries)  # no report query ran
    # A failing value needs the report query, which names the value.
    put(store, "commit", "ex:t3 ex:label 5 .")
    runs.queries.clear()
    found = compile_shapes(SHAPES).validate(runs, default_graph=default, focus_graphs=[G["commit"]])  # type: ignore[arg-type]
    assert set(found) == on(audit(store), "t1", "t2", "t3", "fay")
    assert ("t3", "DatatypeConstraintComponent") in short(found)
    assert any("?focus" in q for q in runs.queries)


def test_commit_mode_equals_the_audit_with_removals(store: ox.Store) -> None:
    put(store, "commit", 'ex:zed a ex:Person ; ex:name "Zed" ; ex:worksFor ex:acme, ex:beta . ex:beta a ex:Org .')
    put(store, "removed", 'ex:alice ex:name "Alice" . ex:acme a ex:Org .')
    touched = ["zed", "beta", "acme", "alice"]
    focus = [G["commit"], G["removed"]]
    found = commit(store, focus_graphs=focus, excluded_graph=G["removed"])
    assert set(found) == on(audit(store, excluded="removed"), *touched)
    assert short(found) >= {("alice", "MinCountConstraintComponent"), ("zed", "ClassConstraintComponent")}
    removed = {q.triple for q in store.quads_for_pattern(None, None, None, G["removed"])}
    kept = [q.triple for g in DATA for q in store.quads_for_pattern(None, None, None, G[g]) if q.triple not in removed]
    reference = pyshacl_validate(ox.serialize(kept, format=ox.RdfFormat.N_TRIPLES).decode(), SHAPES)
    assert {v.key() for v in found} == {v.key() for v in reference if v.focus_node in {EX + n for n in touched}}


def test_the_plan_does_not_depend_on_the_excluded_graphs(store: ox.Store) -> None:
    compiled = compile_shapes(SHAPES)
    for i in range(5):
        graph = ox.NamedNode(f"{EX}g/removed-{i}")
        store.add(ox.Quad(ox.NamedNode(EX + "bob"), ox.NamedNode(EX + "name"), ox.Literal("Bob"), graph))
        found = compiled.validate(store, default_graph=[G["base"]], focus_graphs=[graph], excluded_graphs=[graph])
        assert short(found) == {("bob", "MinCountConstraintComponent")}
    assert len(compiled._plans) <= 2


# -- data that no shape targets ------------------------------------------------------------


@pytest.mark.serial
def test_an_untargeted_focus_graph_costs_one_scan(store: ox.Store) -> None:
    dbo = "http://dbpedia.org/ontology/"
    lines = []
    for i in range(1_000):
        s = f"<http://dbpedia.org/resource/R{i}>"
        lines.append(f"{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{dbo}Place> .")
        lines.append(f'{s} <http://www.w3.org/2000/01/rdf-schema#label> "R{i}"@en .')
        lines += [f"{s} <{dbo}link{j}> <http://dbpedia.org/resource/R{(i * 7 + j) % 1000}> ." for j in range(8)]
    store.load("\n".join(lines).encode(), format=ox.RdfFormat.N_TRIPLES, to_graph=G["commit"])
    compiled = compile_shapes(SHAPES)
    runs = _Counting(store)
    start = time.perf_counter()
    found = compiled.validate(runs, default_graph=[G[g] for g in DATA], focus_graphs=[G["commit"]])  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    assert found == []
    assert len(runs.queries) == 4  # sub-properties, focus size, class closure, pairs query: nothing is pending
    assert elapsed < 1.0, f"10k untargeted triples took {elapsed:.2f} s"  # about 0.03 s; it was 1.5 s


class _Counting:
    """A Store stand-in that records the queries run."""

    def __init__(self, store: ox.Store) -> None:
        self.store = store
        self.queries: list[str] = []

    def query(self, query: str, **kw: Any) -> Any:
        self.queries.append(query)
        return self.store.query(query, **kw)
