"""The compiled validator on a real on-disk Store, with data spread over named graphs.

The data graph is the union of the graphs passed as ``default_graph``; a commit's
additions sit in their own graph (the focus graph) and its removals are staged in an
excluded graph. Every scenario is also checked against pyshacl run on the equivalent
plain graph (the union minus the excluded triples).
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.terms import SH
from cleveragents.validation import Violation, compile_shapes, render_report
from cleveragents.validation.reference import pyshacl_validate

EX = "http://example.org/fx/"
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
  sh:property [ sh:path ex:age ; sh:datatype xsd:integer ; sh:minInclusive 0 ] ;
  sh:property [ sh:path ex:worksFor ; sh:class ex:Org ; sh:maxCount 2 ] ;
  sh:property [ sh:path ex:email ; sh:pattern "^[^@ ]+@[^@ ]+$" ; sh:severity sh:Warning ;
                sh:message "Bad e-mail {$value} on {$this}" ] .

ex:OrgShape a sh:NodeShape ; sh:targetClass ex:Org ;
  sh:property [ sh:path ex:label ; sh:minCount 1 ] ;
  sh:property [ sh:path [ sh:inversePath ex:worksFor ] ; sh:minCount 1 ] .

ex:KnowsShape a sh:NodeShape ; sh:targetSubjectsOf ex:knows ;
  sh:property [ sh:path ex:knows ; sh:nodeKind sh:IRI ; sh:class ex:Person ] .

ex:ManagerShape a sh:NodeShape ; sh:targetObjectsOf ex:managedBy ;
  sh:property [ sh:path ( ex:worksFor ex:label ) ; sh:minCount 1 ] .
"""
)
ONTOLOGY = PREFIXES + "ex:Employee rdfs:subClassOf ex:Person . ex:Person rdfs:subClassOf ex:Agent ."
BASE = (
    PREFIXES
    + """
ex:alice a ex:Employee ; ex:name "Alice" ; ex:age 30 ; ex:worksFor ex:acme ; ex:email "alice@acme.test" .
ex:bob a ex:Person ; ex:name "Bob" ; ex:worksFor ex:acme ; ex:managedBy ex:alice .
ex:acme a ex:Org ; ex:label "ACME" .
ex:carol a ex:Person ; ex:name "Carol" .
ex:dave ex:knows ex:carol .
ex:old a ex:Person .
"""
)
GRAPHS = {name: ox.NamedNode(f"{EX}g/{name}") for name in ("onto", "base", "commit", "removed", "other")}


@pytest.fixture
def store(tmp_path: Path) -> ox.Store:
    store = ox.Store(str(tmp_path / "store"))
    store.load(ONTOLOGY, format=ox.RdfFormat.TURTLE, to_graph=GRAPHS["onto"])
    store.load(BASE, format=ox.RdfFormat.TURTLE, to_graph=GRAPHS["base"])
    return store


def put(store: ox.Store, graph: str, turtle: str) -> None:
    store.load(PREFIXES + turtle, format=ox.RdfFormat.TURTLE, to_graph=GRAPHS[graph])


def validate(store: ox.Store, *, graphs: tuple[str, ...] = ("onto", "base", "commit"), **kw: object) -> list[Violation]:
    return compile_shapes(SHAPES).validate(store, default_graph=[GRAPHS[g] for g in graphs], **kw)  # type: ignore[arg-type]


def reference(store: ox.Store, graphs: tuple[str, ...] = ("onto", "base", "commit"), excluded: str = "") -> set:
    """pyshacl's results on the union of ``graphs`` minus the triples of ``excluded``."""
    gone = {q.triple for q in store.quads_for_pattern(None, None, None, GRAPHS[excluded])} if excluded else set()
    triples = {q.triple for g in graphs for q in store.quads_for_pattern(None, None, None, GRAPHS[g])} - gone
    data = ox.serialize(list(triples), format=ox.RdfFormat.N_TRIPLES).decode()
    return {v.key() for v in pyshacl_validate(data, SHAPES)}


def keys(violations: list[Violation]) -> set:
    return {v.key() for v in violations}


def short(violations: list[Violation]) -> set[tuple[str, str]]:
    """(focus local name, component local name) pairs."""
    return {(v.focus_node.removeprefix(EX), v.constraint.removeprefix(SH)) for v in violations}


def test_valid_base_conforms_and_matches_pyshacl(store: ox.Store) -> None:
    found = validate(store)
    assert short(found) == {("old", "MinCountConstraintComponent")}
    assert keys(found) == reference(store)


def test_focus_graph_restricts_to_touched_nodes(store: ox.Store) -> None:
    put(store, "commit", 'ex:erin a ex:Employee ; ex:age -1 ; ex:worksFor ex:acme . ex:dave ex:knows "carol" .')
    found = validate(store, focus_graphs=[GRAPHS["commit"]])
    # ex:old (untouched, in base) is not reported; erin, dave and acme (an object) are checked.
    assert short(found) == {
        ("erin", "MinCountConstraintComponent"),
        ("erin", "MinInclusiveConstraintComponent"),
        ("dave", "NodeKindConstraintComponent"),
        ("dave", "ClassConstraintComponent"),
    }
    touched = {EX + n for n in ("erin", "dave", "acme", "carol")}
    assert keys(found) == {k for k in reference(store) if k[0] in touched}


def test_focus_nodes_restrict_too(store: ox.Store) -> None:
    found = validate(store, focus_nodes=[ox.NamedNode(EX + "old"), ox.NamedNode(EX + "alice")])
    assert short(found) == {("old", "MinCountConstraintComponent")}
    assert validate(store, focus_nodes=[]) == []


def test_removal_causing_min_count_violation_is_caught(store: ox.Store) -> None:
    put(store, "removed", 'ex:alice ex:name "Alice" .')
    focus = [GRAPHS["commit"], GRAPHS["removed"]]
    found = validate(store, focus_graphs=focus, excluded_graph=GRAPHS["removed"])
    assert short(found) == {("alice", "MinCountConstraintComponent")}
    assert [v.result_path for v in found] == [f"<{EX}name>"]
    assert keys(found) == {k for k in reference(store, excluded="removed") if k[0] == EX + "alice"}
    # Without the exclusion the same store conforms for alice.
    assert validate(store, focus_graphs=focus) == []


def test_removal_on_an_inverse_path_is_caught(store: ox.Store) -> None:
    put(store, "removed", "ex:alice ex:worksFor ex:acme . ex:bob ex:worksFor ex:acme .")
    found = validate(store, focus_graphs=[GRAPHS["removed"]], excluded_graphs=[GRAPHS["removed"]])
    # acme (an object of a removed triple) loses its last employee; bob's manager alice no
    # longer reaches a labelled org along the sequence path worksFor/label.
    assert short(found) == {("acme", "MinCountConstraintComponent"), ("alice", "MinCountConstraintComponent")}
    paths = {v.focus_node.removeprefix(EX): v.result_path for v in found}
    assert paths == {"acme": f"^<{EX}worksFor>", "alice": f"<{EX}worksFor>/<{EX}label>"}
    touched = {EX + n for n in ("alice", "bob", "acme")}
    assert keys(found) == {k for k in reference(store, excluded="removed") if k[0] in touched}


def test_removed_type_ends_targeting_and_breaks_class_constraints(store: ox.Store) -> None:
    put(store, "removed", "ex:carol a ex:Person .")
    found = validate(store, focus_graphs=[GRAPHS["removed"]], excluded_graph=GRAPHS["removed"])
    assert found == []  # carol is no longer a Person target: nothing of hers is checked
    found = validate(store, focus_nodes=[ox.NamedNode(EX + "dave")], excluded_graph=GRAPHS["removed"])
    assert short(found) == {("dave", "ClassConstraintComponent")}
    assert keys(found) == {k for k in reference(store, excluded="removed") if k[0] == EX + "dave"}


def test_triples_outside_the_default_graph_are_not_seen(store: ox.Store) -> None:
    put(store, "other", 'ex:alice ex:name "Second name" . ex:zed a ex:Person . ex:old ex:name "Old" .')
    focus = [ox.NamedNode(EX + n) for n in ("alice", "zed", "old")]
    found = validate(store, focus_nodes=focus)
    assert short(found) == {("old", "MinCountConstraintComponent")}  # no maxCount on alice, zed no target
    with_other = validate(store, graphs=("onto", "base", "other"), focus_nodes=focus)
    assert short(with_other) == {("alice", "MaxCountConstraintComponent"), ("zed", "MinCountConstraintComponent")}
    assert keys(with_other) == {
        k for k in reference(store, ("onto", "base", "other")) if k[0] in {str(n.value) for n in focus}
    }


def test_severity_message_and_report(store: ox.Store) -> None:
    put(store, "commit", 'ex:frank a ex:Person ; ex:name "Frank" ; ex:email "not an email" .')
    found = validate(store, focus_graphs=[GRAPHS["commit"]])
    assert len(found) == 1
    warning = found[0]
    assert warning.severity == SH + "Warning" and not warning.is_violation
    assert warning.message == f"Bad e-mail not an email on {EX}frank"
    assert warning.value == '"not an email"'
    text = render_report(found)
    for part in ("focus node", f"{EX}frank", "path", "PatternConstraintComponent", "not an email", "Bad e-mail"):
        assert part in text
    assert warning.to_dict()["constraint"] == SH + "PatternConstraintComponent"


def test_blank_node_focus(store: ox.Store) -> None:
    put(store, "commit", "[] a ex:Person ; ex:age 5 .")
    blank = next(q.subject for q in store.quads_for_pattern(None, None, None, GRAPHS["commit"]))
    assert isinstance(blank, ox.BlankNode)
    for found in (
        validate(store, focus_nodes=[blank]),
        validate(store, focus_graphs=[GRAPHS["commit"]]),
    ):
        assert [(v.focus_node, v.constraint.removeprefix(SH)) for v in found] == [
            (str(blank), "MinCountConstraintComponent")
        ]
