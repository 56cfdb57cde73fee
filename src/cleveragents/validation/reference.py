"""pyshacl as the reference validator, its results normalised into ``Violation`` rows.

Used as the oracle in tests: the compiled validator must report the same
(focus, path, constraint, value) set on the same data.
"""

from __future__ import annotations

from rdflib import RDF, Graph, Literal, URIRef
from rdflib.term import Node

from cleveragents.terms import SH
from cleveragents.validation.paths import parse_path, to_sparql
from cleveragents.validation.rdfterms import label, nt
from cleveragents.validation.report import Violation, sort_violations


def _graph(source: str | Graph) -> Graph:
    if isinstance(source, Graph):
        return source
    g = Graph()
    g.parse(data=source, format="turtle")  # N-Triples is a subset of Turtle
    return g


def pyshacl_validate(data_nt_or_turtle: str | Graph, shapes_turtle: str | Graph) -> list[Violation]:
    """Validate with pyshacl (no inference, SHACL Core semantics) and return sorted rows."""
    import pyshacl  # the dev extra: only tests and benchmarks use the reference (and it is slow to import)

    _, results, _ = pyshacl.validate(
        _graph(data_nt_or_turtle),
        shacl_graph=_graph(shapes_turtle),
        inference="none",
        advanced=False,
        meta_shacl=False,
        allow_infos=True,
        allow_warnings=True,
    )
    assert isinstance(results, Graph)  # pyshacl's report graph (inference off, no serialization)
    return results_to_violations(results)


def results_to_violations(results: Graph) -> list[Violation]:
    """Rows of a SHACL validation report graph (pyshacl's, or a manifest's expected one)."""
    out = []
    for report in results.subjects(RDF.type, URIRef(SH + "ValidationReport")):
        for result in results.objects(report, URIRef(SH + "result")):
            out.append(result_row(results, result))
    return sort_violations(out)


def result_row(g: Graph, result: Node) -> Violation:
    def one(name: str) -> Node | None:
        return g.value(result, URIRef(SH + name))

    focus, value, path = one("focusNode"), one("value"), one("resultPath")
    messages = sorted(str(m) for m in g.objects(result, URIRef(SH + "resultMessage")) if isinstance(m, Literal))
    severity, shape, component = one("resultSeverity"), one("sourceShape"), one("sourceConstraintComponent")
    return Violation(
        focus_node=label(focus) if focus is not None else "",
        result_path=to_sparql(parse_path(g, path)) if path is not None else None,
        constraint=str(component) if component is not None else "",
        message=messages[0] if messages else "",
        value=nt(value) if value is not None else None,
        shape=label(shape) if shape is not None else "",
        severity=str(severity) if severity is not None else SH + "Violation",
    )
