"""SHACL Core compiled to SPARQL that runs inside pyoxigraph.

``compile_shapes`` reads a shapes graph once (cached by content) and
``CompiledShapes.validate`` runs the compiled queries against a pyoxigraph ``Store``
over a chosen dataset. See ``validate`` for focus restriction and excluded graphs.

A full audit runs one report query per shape. Validation over a focus set (a commit)
runs one *detect* query for all shapes, which returns the failing (node, shape) pairs,
then one *explain* query per failing shape for the detailed rows (see queries.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox
from rdflib import BNode, Graph

from cleveragents.validation.conditions import CANONICALISED_DATATYPES
from cleveragents.validation.messages import fill
from cleveragents.validation.queries import (
    audit_query,
    closure_query,
    detect_query,
    dispatch_pattern,
    explain_query,
    focus_pattern,
)
from cleveragents.validation.rdfterms import label, nt, sparql, to_rdflib
from cleveragents.validation.report import Violation, sort_violations
from cleveragents.validation.shapes import Shape, ShapesGraph
from cleveragents.validation.sparql import Codegen, ResultSpec

ShapesSource = str | bytes | ox.Store | Graph | Iterable[ox.Quad | ox.Triple]
_THIS = ox.Variable("this")
_CACHE: dict[str, CompiledShapes] = {}
_CACHE_LIMIT = 32


@dataclass(frozen=True)
class _ShapePlan:
    shape: Shape
    targets: str  # UNION of target groups binding ?this (full audit)
    report: str  # UNION of report groups for a bound ?this
    check: str  # UNION of merged check groups for a bound ?this


@dataclass(frozen=True)
class _Plan:
    shapes: list[_ShapePlan]
    specs: list[ResultSpec]
    kept: Callable[[str, str, str], str]


class CompiledShapes:
    """A shapes graph compiled to SPARQL, ready to validate any dataset of a Store."""

    def __init__(self, graph: Graph) -> None:
        self.shapes = ShapesGraph(graph)
        self.targeted = self.shapes.targeted()
        self._plans: dict[tuple[str, ...], _Plan] = {}
        self._plan(())  # compile now so that a bad shapes graph fails here, not mid-commit

    @property
    def warnings(self) -> list[str]:
        """Ignored non-Core features, and datatypes Oxigraph rewrites on write."""
        out = list(self.shapes.warnings)
        for shape in self.shapes.all_read():
            for c in shape.constraints:
                if c.kind == "Datatype" and str(c.arg) in CANONICALISED_DATATYPES:
                    out.append(
                        f"{shape.key}: sh:datatype {c.arg} never matches stored data: Oxigraph stores such "
                        "values as xsd:integer; use xsd:integer with sh:minInclusive/sh:maxInclusive"
                    )
        return out

    def _plan(self, excluded: tuple[str, ...]) -> _Plan:
        plan = self._plans.get(excluded)
        if plan is None:
            gen = Codegen(self.shapes, excluded)
            shapes = []
            for shape in self.targeted:
                report = gen.report_body(shape, "?this")
                if report is None:
                    continue
                check = gen.check_body(shape, "?this") or "FILTER(false)"
                targets = " UNION ".join(gen.targets(shape, "?this", bound=False))
                shapes.append(_ShapePlan(shape, targets, report, check))
            plan = self._plans[excluded] = _Plan(shapes, gen.specs, gen.kept)
        return plan

    def queries(self, excluded: tuple[str, ...] = ()) -> list[str]:
        """The full-audit SELECT of every targeted shape (for inspection and debugging)."""
        return [audit_query(s.targets, s.report) for s in self._plan(excluded).shapes]

    def validate(
        self,
        store: ox.Store,
        *,
        default_graph: list[ox.NamedNode],
        focus_nodes: Iterable[Any] | None = None,
        focus_graphs: list[ox.NamedNode] | None = None,
        excluded_graph: ox.NamedNode | None = None,
        excluded_graphs: list[ox.NamedNode] | None = None,
    ) -> list[Violation]:
        """Validate the union of ``default_graph`` and return every result, sorted.

        - ``focus_nodes`` / ``focus_graphs``: only target nodes in this set are validated;
          a focus graph contributes every subject and every non-literal object of its
          triples. Both None: every target node of the data graph (a full audit). When
          both are given the set is their union.
        - ``excluded_graph(s)``: triples in these named graphs count as absent from the
          data graph (a commit's removals are staged there). This is exact for predicate,
          inverse, sequence and alternative paths, class targets, sh:targetSubjectsOf /
          sh:targetObjectsOf, sh:class type lookups, sh:equals / sh:disjoint /
          sh:lessThan(OrEquals) and sh:closed. Limitation: inside ``*``, ``+`` and ``?``
          paths and along the rdfs:subClassOf chain, excluded triples are still seen.
        - Results of every severity are returned; ``Violation.is_violation`` tells
          sh:Violation apart from warnings and infos.
        """
        excluded = {g.value for g in excluded_graphs or []} | ({excluded_graph.value} if excluded_graph else set())
        plan = self._plan(tuple(sorted(excluded)))
        run = _Runner(store, list(default_graph))
        if focus_nodes is None and focus_graphs is None:
            rows = [r for s in plan.shapes for r in run.report(audit_query(s.targets, s.report))]
            return self._violations(plan, rows)
        nodes = list(focus_nodes or [])
        named = [n for n in nodes if not isinstance(n, ox.BlankNode)]
        blanks = [n for n in nodes if isinstance(n, ox.BlankNode)]
        failing = self._detect(plan, run, focus_pattern(named, focus_graphs or []) if named or focus_graphs else None)
        for blank in blanks:  # blank nodes cannot be written in query text: one query each
            failing |= self._detect(plan, run, "", blank)
        return self._violations(plan, self._explain(plan, run, failing))

    def _explain(self, plan: _Plan, run: _Runner, failing: set[tuple[Any, int]]) -> list[tuple[Any, int, Any, Any]]:
        """The report rows of the failing (node, shape) pairs."""
        by_shape: dict[int, list[Any]] = {}
        for node, k in failing:
            by_shape.setdefault(k, []).append(node)
        rows = []
        for k, members in sorted(by_shape.items()):
            report = plan.shapes[k].report
            named = [n for n in members if not isinstance(n, ox.BlankNode)]
            if named:
                rows.extend(run.report(explain_query(report, named)))
            for blank in (n for n in members if isinstance(n, ox.BlankNode)):
                rows.extend(run.report(explain_query(report, None), blank))
        return rows

    def _detect(
        self, plan: _Plan, run: _Runner, focus: str | None, blank: ox.BlankNode | None = None
    ) -> set[tuple[Any, int]]:
        """(node, shape index) pairs of the focus set that violate the shape."""
        if focus is None or not plan.shapes:
            return set()
        class_targets: dict[str, list[int]] = {}
        subjects, objects, nodes = [], [], []
        for k, s in enumerate(plan.shapes):
            t = s.shape.targets
            for cls in t.classes:
                class_targets.setdefault(cls, []).append(k)
            subjects += [(p, k) for p in t.subjects_of]
            objects += [(p, k) for p in t.objects_of]
            nodes += [(sparql(n), k) for n in t.nodes if not isinstance(n, BNode)]
        classes = []
        if class_targets:
            pairs = {(c, c) for c in class_targets} | run.pairs(closure_query(sorted(class_targets)))
            classes = sorted({(sub, k) for sub, cls in pairs for k in class_targets[cls]})
        dispatch = dispatch_pattern(classes, subjects, objects, nodes, plan.kept)
        if not dispatch:
            return set()
        checks = [(k, s.check) for k, s in enumerate(plan.shapes)]
        query = detect_query(focus, dispatch, checks)
        subs = {_THIS: blank} if blank is not None else None
        return {(row["this"], int(row["s"].value)) for row in run.select(query, subs)}

    def _violations(self, plan: _Plan, rows: list[tuple[Any, int, Any, Any]]) -> list[Violation]:
        out: set[Violation] = set()
        for focus, cid, value, key in rows:
            spec = plan.specs[cid]
            path = spec.path
            if spec.component.endswith("#ClosedConstraintComponent") and key is not None:
                path = str(key)
            out.add(
                Violation(
                    focus_node=label(focus),
                    result_path=path,
                    constraint=spec.component,
                    message=fill(spec.message, focus, value, path),
                    value=nt(value) if value is not None else None,
                    shape=spec.shape,
                    severity=spec.severity,
                )
            )
        return sort_violations(out)


class _Runner:
    """Runs queries over one dataset of a store."""

    def __init__(self, store: ox.Store, default_graph: list[ox.NamedNode]) -> None:
        self.store = store
        self.default_graph = default_graph

    def select(self, query: str, substitutions: dict[ox.Variable, Any] | None = None) -> Any:
        return self.store.query(query, default_graph=self.default_graph, substitutions=substitutions)

    def report(self, query: str, blank: ox.BlankNode | None = None) -> list[tuple[Any, int, Any, Any]]:
        subs = {_THIS: blank} if blank is not None else None
        return [(s["focus"], int(s["c"].value), s["value"], s["k"]) for s in self.select(query, subs)]

    def pairs(self, query: str) -> set[tuple[str, str]]:
        return {(s[0].value, s[1].value) for s in self.select(query) if isinstance(s[0], ox.NamedNode)}


# -- compile ------------------------------------------------------------------------------


def compile_shapes(
    source: ShapesSource, *, graph: ox.NamedNode | None = None, base_iri: str | None = None
) -> CompiledShapes:
    """Compile a shapes graph given as Turtle / N-Triples text (parsed with pyoxigraph,
    keeping lexical forms), a pyoxigraph Store (all its quads, or only those of ``graph``),
    quads or triples, or an rdflib Graph. Results are cached by the shapes' content."""
    rdf_graph, key = _read(source, graph, base_iri)
    compiled = _CACHE.get(key) if key else None
    if compiled is None:
        compiled = CompiledShapes(rdf_graph)
        if key:
            if len(_CACHE) >= _CACHE_LIMIT:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = compiled
    return compiled


def _read(source: ShapesSource, graph: ox.NamedNode | None, base_iri: str | None) -> tuple[Graph, str]:
    if isinstance(source, Graph):
        return source, ""  # a mutable rdflib Graph is not cached
    if isinstance(source, str | bytes):
        data = source.encode() if isinstance(source, str) else source
        key = hashlib.sha256(data + b"\0" + (base_iri or "").encode()).hexdigest()
        if key in _CACHE:
            return Graph(), key
        triples = list(ox.parse(data, format=ox.RdfFormat.TURTLE, base_iri=base_iri))
    else:
        if isinstance(source, ox.Store):
            triples = [q.triple for q in source.quads_for_pattern(None, None, None, graph)]
        else:
            triples = [t.triple if isinstance(t, ox.Quad) else t for t in source]
        body = "\n".join(sorted(f"{nt(t.subject)} {nt(t.predicate)} {nt(t.object)} ." for t in triples))
        key = hashlib.sha256(body.encode()).hexdigest()
        if key in _CACHE:
            return Graph(), key
    g = Graph()
    for t in triples:
        g.add((to_rdflib(t.subject), to_rdflib(t.predicate), to_rdflib(t.object)))
    return g, key
