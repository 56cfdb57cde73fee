"""Smaller behaviours: path printing, inputs and caching of compile_shapes, compile-time
errors and warnings, deactivation, and the readable report."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from rdflib import Graph, URIRef

from cleveragents.terms import SH
from cleveragents.validation import ShapeCompileError, Violation, compile_shapes, render_report
from cleveragents.validation.paths import Alt, Inv, Pred, Repeat, Seq, nullable, parse_path, push_inverse, to_sparql

EX = "http://example.org/u/"
PREFIXES = f"""
@prefix ex: <{EX}> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
ROOT = Path(__file__).resolve().parents[2]
A, B, C = Pred(EX + "a"), Pred(EX + "b"), Pred(EX + "c")


def test_paths_print_as_sparql() -> None:
    assert to_sparql(A) == f"<{EX}a>"
    assert to_sparql(Inv(A)) == f"^<{EX}a>"
    assert to_sparql(Seq((A, Alt((B, C))))) == f"<{EX}a>/(<{EX}b>|<{EX}c>)"
    assert to_sparql(Repeat(Seq((A, B)), "*")) == f"(<{EX}a>/<{EX}b>)*"
    assert to_sparql(Inv(Seq((A, B)))) == f"^(<{EX}a>/<{EX}b>)"
    assert to_sparql(Repeat(Inv(A), "+")) == f"(^<{EX}a>)+"
    assert push_inverse(Inv(Seq((A, Inv(B))))) == Seq((B, Inv(A)))
    assert nullable(Repeat(A, "?")) and nullable(Seq((Repeat(A, "*"), Repeat(B, "?"))))
    assert not nullable(Seq((Repeat(A, "*"), B))) and not nullable(Repeat(A, "+"))


def test_paths_parse_from_turtle() -> None:
    g = Graph().parse(
        data=PREFIXES
        + "ex:s sh:path ( ex:a [ sh:alternativePath ( ex:b [ sh:inversePath ex:c ] ) ] [ sh:zeroOrOnePath ex:a ] ) .",
        format="turtle",
    )
    path = parse_path(g, g.value(URIRef(EX + "s"), URIRef(SH + "path")))
    assert to_sparql(path) == f"<{EX}a>/(<{EX}b>|^<{EX}c>)/<{EX}a>?"


SHAPES = PREFIXES + "ex:S a sh:NodeShape ; sh:targetClass ex:T ; sh:property [ sh:path ex:p ; sh:minCount 1 ] ."


def test_compile_accepts_text_bytes_store_quads_and_graph() -> None:
    store = ox.Store()
    graph = ox.NamedNode(EX + "shapes")
    store.load(SHAPES, format=ox.RdfFormat.TURTLE, to_graph=graph)
    quads = list(store.quads_for_pattern(None, None, None, graph))
    sources = [SHAPES, SHAPES.encode(), store, quads, Graph().parse(data=SHAPES, format="turtle")]
    for source in sources:
        compiled = compile_shapes(source, graph=graph) if source is store else compile_shapes(source)
        assert [s.key for s in compiled.targeted] == [EX + "S"]
    assert compile_shapes(SHAPES) is compile_shapes(SHAPES)  # cached by content
    assert compile_shapes(quads) is compile_shapes(list(reversed(quads)))


def test_recursive_shapes_fail_at_compile_time() -> None:
    with pytest.raises(ShapeCompileError, match="recursive"):
        compile_shapes(
            PREFIXES + "ex:S a sh:NodeShape ; sh:targetNode ex:x ; sh:property [ sh:path ex:p ; sh:node ex:S ] ."
        )


def test_warnings_for_non_core_features_and_rewritten_datatypes() -> None:
    compiled = compile_shapes(
        PREFIXES
        + """ex:S a sh:NodeShape ; sh:targetNode ex:x ; sh:sparql [ sh:select "SELECT $this WHERE {}" ] ;
             sh:property [ sh:path ex:p ; sh:datatype xsd:int ] ."""
    )
    text = "\n".join(compiled.warnings)
    assert "shacl#sparql is not SHACL Core" in text
    assert "sh:datatype http://www.w3.org/2001/XMLSchema#int never matches stored data" in text


def test_oxigraph_rewrites_derived_integer_types() -> None:
    """Why sh:datatype xsd:int warns: the store keeps no xsd:int literal."""
    store = ox.Store()
    int_type = ox.NamedNode("http://www.w3.org/2001/XMLSchema#int")
    store.add(ox.Quad(ox.NamedNode(EX + "x"), ox.NamedNode(EX + "p"), ox.Literal("7", datatype=int_type)))
    assert next(iter(store)).object.datatype.value.endswith("#integer")


def test_deactivated_shapes_and_severities() -> None:
    store = ox.Store()
    store.load(PREFIXES + "ex:x a ex:T .", format=ox.RdfFormat.TURTLE)
    dg = [ox.DefaultGraph()]
    off = compile_shapes(SHAPES.replace("ex:S a sh:NodeShape ;", "ex:S a sh:NodeShape ; sh:deactivated true ;"))
    assert off.validate(store, default_graph=dg) == []  # type: ignore[arg-type]
    info = compile_shapes(SHAPES.replace("sh:minCount 1", "sh:minCount 1 ; sh:severity sh:Info"))
    [row] = info.validate(store, default_graph=dg)  # type: ignore[arg-type]
    assert row.severity == SH + "Info" and not row.is_violation
    assert row.message == f"Fewer than 1 values on <{EX}p>"


def test_render_report() -> None:
    assert render_report([]) == "Conforms: no SHACL violations."
    row = Violation(
        focus_node="https://cleveragents.ai/id/x",
        result_path="<https://cleveragents.ai/ontology/uko#sourcePath>",
        constraint=SH + "DatatypeConstraintComponent",
        message="A node has at most one uko:sourcePath, a string.",
        value='"7"^^<http://www.w3.org/2001/XMLSchema#integer>',
        shape="https://cleveragents.ai/shapes#SourcePathShape",
    )
    text = render_report([row, row])
    assert text.splitlines()[0] == "SHACL report: 1 violation"
    assert "  path:       uko:sourcePath" in text
    assert "  constraint: sh:DatatypeConstraintComponent" in text
    assert '  value:      "7"^^xsd:integer' in text
    assert row.to_dict()["focus_node"] == "https://cleveragents.ai/id/x"


@pytest.mark.skipif(not (ROOT / "shapes").is_dir(), reason="no shapes/ folder")
def test_the_product_shapes_compile() -> None:
    text = b"\n".join(p.read_bytes() for p in sorted((ROOT / "shapes").glob("*.ttl")))
    compiled = compile_shapes(text)
    assert compiled.targeted
    assert all(q.startswith("SELECT") for q in compiled.queries())


def test_malformed_shapes_fail_at_compile_time() -> None:
    with pytest.raises(ShapeCompileError, match="not a path"):
        compile_shapes(PREFIXES + 'ex:S a sh:PropertyShape ; sh:targetNode ex:x ; sh:path "p" ; sh:minCount 1 .')
    with pytest.raises(ShapeCompileError, match="integer"):
        compile_shapes(PREFIXES + 'ex:S a sh:PropertyShape ; sh:targetNode ex:x ; sh:path ex:p ; sh:minCount "x" .')
