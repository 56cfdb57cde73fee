"""SHACL Core compiled to SPARQL that runs inside pyoxigraph.

``compile_shapes`` reads a shapes graph once (cached by content) and
``CompiledShapes.validate`` runs the compiled queries against a pyoxigraph ``Store``
over a chosen dataset. See ``validate`` for focus restriction and excluded graphs.

A full audit runs one report query per shape. Validation over a focus set (a commit)
first finds the failing (node, shape) pairs (detect.py), then runs one *explain* query
per failing shape for the detailed rows (see queries.py); failures on counts alone are
reported from what detection found.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import pyoxigraph as ox
from rdflib import Graph

from cleveragents.validation.conditions import CANONICALISED_DATATYPES
from cleveragents.validation.detect import Detected, Plan, Runner, ShapePlan, detect
from cleveragents.validation.messages import fill
from cleveragents.validation.paths import inverse_predicates
from cleveragents.validation.queries import audit_query, explain_query, focus_pattern, subproperties_query
from cleveragents.validation.rdfterms import label, nt, to_rdflib
from cleveragents.validation.report import Violation, sort_violations
from cleveragents.validation.shapes import ShapesGraph
from cleveragents.validation.sparql import EXCLUDED, Codegen

ShapesSource = str | bytes | ox.Store | Graph | Iterable[ox.Quad | ox.Triple]
_CACHE: dict[str, CompiledShapes] = {}
_CACHE_LIMIT = 32


class CompiledShapes:
    """A shapes graph compiled to SPARQL, ready to validate any dataset of a Store."""

    def __init__(self, graph: Graph) -> None:
        self.shapes = ShapesGraph(graph)
        self.targeted = self.shapes.targeted()
        self._plans: dict[bool, Plan] = {}
        self._plan(False)  # compile now so that a bad shapes graph fails here, not mid-commit

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

    def _plan(self, excluding: bool) -> Plan:
        plan = self._plans.get(excluding)
        if plan is None:
            gen = Codegen(self.shapes, excluding)
            shapes = []
            for shape in self.targeted:
                report = gen.report_body(shape, "?this")
                if report is None:
                    continue
                scans, complex_body = gen.split_check(shape, "?this")
                check = gen.check_body(shape, "?this") or "FILTER(false)"
                targets = " UNION ".join(gen.targets(shape, "?this", bound=False))
                shapes.append(ShapePlan(shape, targets, report, scans, complex_body, check))
            plan = self._plans[excluding] = Plan(shapes, gen.specs, gen.kept, excluding, self._object_predicates())
        return plan

    def _object_predicates(self) -> frozenset[str]:
        """Predicates along which some shape reads a node from the object side: the
        inverse steps of every path of every shape read (targeted or nested), and the
        sh:targetObjectsOf predicates."""
        out: set[str] = set()
        for shape in self.shapes.all_read():
            if shape.path is not None:
                out |= inverse_predicates(shape.path)
        for shape in self.targeted:
            out.update(shape.targets.objects_of)
        return frozenset(out)

    def queries(self, excluded: tuple[str, ...] = ()) -> list[str]:
        """The full-audit SELECT of every targeted shape (for inspection and debugging)."""
        graphs = " ".join(f"<{g}>" for g in excluded)
        queries = [audit_query(s.targets, s.report) for s in self._plan(bool(excluded)).shapes]
        return [q.replace(EXCLUDED, graphs) for q in queries]

    def validate(
        self,
        store: ox.Store,
        *,
        default_graph: Sequence[ox.NamedNode | ox.DefaultGraph],
        focus_nodes: Iterable[Any] | None = None,
        focus_graphs: Sequence[ox.NamedNode] | None = None,
        excluded_graph: ox.NamedNode | None = None,
        excluded_graphs: Sequence[ox.NamedNode] | None = None,
    ) -> list[Violation]:
        """Validate the union of ``default_graph`` and return every result, sorted.

        - ``focus_nodes`` / ``focus_graphs``: only target nodes in this set are validated;
          a focus graph contributes every subject of its triples, and the non-literal
          objects of those whose predicate some shape follows backwards (sh:inversePath,
          also inside sequences, alternatives and repetitions, and in nested shapes) or
          names in sh:targetObjectsOf. A triple along another predicate is no value and
          no target of its object, so the object's results do not change with it (a
          shape checking the object's type from a referrer is the referrer's: pass it as
          a focus node). Both None: every target node of the data graph (a full audit).
          When both are given the set is their union.
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
        plan = self._plan(bool(excluded))
        run = Runner(store, default_graph, tuple(sorted(excluded)))
        if focus_nodes is None and focus_graphs is None:
            rows = [r for s in plan.shapes for r in run.report(audit_query(s.targets, s.report))]
            return self._violations(plan, rows)
        nodes = list(focus_nodes or [])
        named = [n for n in nodes if not isinstance(n, ox.BlankNode)]
        blanks = [n for n in nodes if isinstance(n, ox.BlankNode)]
        found = Detected()
        if named or focus_graphs:
            objects = set(plan.object_predicates)
            if objects and focus_graphs:
                # A triple of a sub-property entails one of the property (and a store that
                # materializes the entailment may keep it out of the focus graphs).
                rows = run.select(subproperties_query(sorted(objects)))
                objects |= {row["p"].value for row in rows if isinstance(row["p"], ox.NamedNode)}
            small = len(named) + _triples_in(store, focus_graphs or []) <= SMALL_FOCUS
            found |= detect(plan, run, focus_pattern(named, focus_graphs or [], sorted(objects)), small_focus=small)
        for blank in blanks:  # blank nodes cannot be written in query text: one query each
            found |= detect(plan, run, "", blank)
        return self._violations(plan, found.rows + self._explain(plan, run, found.failing))

    def _explain(self, plan: Plan, run: Runner, failing: set[tuple[Any, int]]) -> list[tuple[Any, int, Any, Any]]:
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

    def _violations(self, plan: Plan, rows: list[tuple[Any, int, Any, Any]]) -> list[Violation]:
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


# Up to this many focus triples (plus focus nodes), node triples are looked up node by
# node (LATERAL): a plain join is planned as a scan of the data graph, which only pays
# off for big focus sets.
SMALL_FOCUS = 5_000


def _triples_in(store: ox.Store, graphs: Sequence[ox.NamedNode]) -> int:
    """Triples in the focus graphs, counted up to SMALL_FOCUS + 1 (a big graph is not scanned)."""
    total = 0
    for graph in graphs:
        capped = f"SELECT * WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }} LIMIT {SMALL_FOCUS + 1}"
        query = f"SELECT (COUNT(*) AS ?n) WHERE {{ {{ {capped} }} }}"
        rows = store.query(query)
        assert isinstance(rows, ox.QuerySolutions)  # a SELECT
        total += int(next(iter(rows))["n"].value)
        if total > SMALL_FOCUS:
            break
    return total
