"""Commit-time detection: the (focus node, shape) pairs of a focus set that fail.

The cost that matters is per focus node: every triple pattern evaluated for a node costs
a seek in each graph of the data graph (a commit validates over six), and every row
costs in each operator it passes. So each node's outgoing triples are read once (the
*scan*, queries.scan_pattern), and one *pairs* query (queries.pairs_query) joins them
with small tables to find, by aggregation, both the shapes that target the node and the
outcome of the shapes' scan checks (sparql.ScanCheck: property shapes that only test and
count the values of one predicate, which most product shapes are). What a scan cannot
decide runs afterwards, for the targeted pairs only:

- a shape's other check groups (inverse and sequence paths, sh:closed, qualified counts,
  node-level constraints, ...), in one *check* query per shape over its pairs;
- the sh:class of scan checks, once per distinct value: the pairs query samples a node's
  value when it has one (the common case, with sh:maxCount 1), other values are read in
  one query per predicate, and all the (value, class) pairs are tested in one query.

A pair failing only on counts is reported from the pairs query's masks, without a report
query (Detected.rows). Data that no shape targets costs the scan and a failed hash probe
per triple.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyoxigraph as ox
from rdflib import BNode

from cleveragents.terms import RDF_TYPE
from cleveragents.validation.queries import (
    ANY,
    NODE,
    OBJECT_OF,
    TEST_BLOCK,
    check_query,
    class_failures_query,
    closure_query,
    holders_query,
    pairs_query,
    scan_pattern,
)
from cleveragents.validation.rdfterms import sparql
from cleveragents.validation.shapes import Shape
from cleveragents.validation.sparql import EXCLUDED, ResultSpec, ScanCheck

THIS = ox.Variable("this")


@dataclass(frozen=True)
class ShapePlan:
    shape: Shape
    targets: str  # UNION of target groups binding ?this (full audit)
    report: str  # UNION of report groups for a bound ?this
    scans: list[ScanCheck]  # the checks decided by the focus node's outgoing triples
    complex: str | None  # UNION of the other check groups for a bound ?this
    check: str  # UNION of all the check groups (the fallback for blank nodes in sh:class checks)

    @cached_property
    def class_checks(self) -> list[ScanCheck]:
        return [c for c in self.scans if c.classes]

    @cached_property
    def sampled(self) -> bool:
        """The pairs query reports the value of the shape's one sh:class check."""
        return len(self.class_checks) == 1

    @cached_property
    def explained(self) -> bool:
        """A failure of the shape's scan checks that no value causes is reported without a
        report query (see Detected.rows): the pairs query says which counts fail."""
        return self.complex is None and not self.class_checks and all(c.explained for c in self.scans)

    @cached_property
    def minimums(self) -> int:
        """The mask of the scan checks with a minimum count."""
        return sum(1 << i for i, c in enumerate(self.scans) if c.low > 0)

    @cached_property
    def needs_targets(self) -> bool:
        """Whether detection needs the rows saying which nodes the shape targets. Not when
        only a failing scan check matters and a failing check says that the node is a
        target (its predicate is a sh:targetSubjectsOf of the shape)."""
        targeting = set(self.shape.targets.subjects_of)
        return not (
            self.complex is None
            and not self.class_checks
            and all(c.low == 0 and c.predicate in targeting for c in self.scans)
        )


@dataclass
class Detected:
    """The failing (node, shape index) pairs that need a report query, and the report rows
    (focus, spec, value, key) of the others."""

    failing: set[tuple[Any, int]] = field(default_factory=set)
    rows: list[tuple[Any, int, Any, Any]] = field(default_factory=list)

    def __ior__(self, other: Detected) -> Detected:
        self.failing |= other.failing
        self.rows += other.rows
        return self


@dataclass(frozen=True)
class Plan:
    shapes: list[ShapePlan]
    specs: list[ResultSpec]
    kept: Callable[[str, str, str], str]
    excluding: bool  # compiled for excluded graphs (named by the Runner)
    object_predicates: frozenset[str]  # predicates whose objects join the focus set
    # The features of the pairs query, per closure of the target classes in the data graph.
    features: dict[frozenset[tuple[str, str]], _Features] = field(default_factory=dict, compare=False)

    @cached_property
    def class_targets(self) -> dict[str, list[int]]:
        """Target class -> the shapes (indices) that detection dispatches through it."""
        out: dict[str, list[int]] = {}
        for k, s in enumerate(self.shapes):
            if s.needs_targets:
                for cls in s.shape.targets.classes:
                    out.setdefault(cls, []).append(k)
        return out


class Runner:
    """Runs queries over one dataset of a store, minus the triples of the excluded graphs."""

    def __init__(
        self,
        store: ox.Store,
        default_graph: Sequence[ox.NamedNode | ox.BlankNode | ox.DefaultGraph],
        excluded: tuple[str, ...] = (),
    ) -> None:
        self.store = store
        self.default_graph: list[ox.NamedNode | ox.BlankNode | ox.DefaultGraph] = list(default_graph)
        self.excluded = " ".join(f"<{g}>" for g in excluded)

    def select(self, query: str, substitutions: dict[ox.Variable, Any] | None = None) -> Any:
        if self.excluded:
            query = query.replace(EXCLUDED, self.excluded)
        return self.store.query(query, default_graph=self.default_graph, substitutions=substitutions)

    def report(self, query: str, blank: ox.BlankNode | None = None) -> list[tuple[Any, int, Any, Any]]:
        subs = {THIS: blank} if blank is not None else None
        return [(s["focus"], int(s["c"].value), s["value"], s["k"]) for s in self.select(query, subs)]

    def pairs(self, query: str) -> set[tuple[str, str]]:
        return {(s[0].value, s[1].value) for s in self.select(query) if isinstance(s[0], ox.NamedNode)}


@dataclass(frozen=True)
class _Use:
    """What a kind of scan rows is to a shape (see queries.pairs_query)."""

    shape: int
    check: int  # 0: a target
    low: int = 0
    high: int = -1
    targets: bool = False  # a row makes the node a target of the shape
    need: int = 0  # for a target: the mask of the shape's scan checks with a minimum count
    sampled: bool = False  # the check whose values the sh:class test needs
    bit: int = 0  # for a check: its bit in the masks of the shape's checks


@dataclass
class _Features:
    """The tables of the pairs query and what the scan must produce for them."""

    keys: dict[tuple[str, str], Any] = field(default_factory=dict)  # (p, key) -> kind name (without test)
    uses: dict[Any, list[_Use]] = field(default_factory=dict)  # kind name -> uses
    tests: dict[str, int] = field(default_factory=dict)  # value test -> its 1-based index
    objects_of: set[str] = field(default_factory=set)
    type_as_predicate: bool = False
    target_nodes: bool = False
    kinds: list[str] = field(default_factory=list)  # the rows of the tables, once built
    rows: list[str] = field(default_factory=list)

    def add(self, p: str, key: str, use: _Use, test: str | None = None, kind: Any = None) -> None:
        tid = self.tests.setdefault(test, len(self.tests) + 1) if test is not None else 0
        name = (kind if kind is not None else (p, key), tid)
        self.keys[(p, key)] = name[0]
        self.uses.setdefault(name, []).append(use)

    def tables(self) -> tuple[list[str], list[str]]:
        """The kinds and uses rows of queries.pairs_query."""
        keys: dict[Any, list[tuple[str, str]]] = {}
        for pk, kind in self.keys.items():
            keys.setdefault(kind, []).append(pk)
        kinds, uses = [], []
        for kd, ((kind, tid), group) in enumerate(self.uses.items(), 1):
            # A kind is dropped early when it passes and only serves checks that matter when failing.
            dropped = all(u.check > 0 and u.low == 0 and not u.sampled for u in group)
            high = min((u.high for u in group if u.high >= 0), default=-1)
            sampled = any(u.sampled for u in group)
            block = (tid - 1) // TEST_BLOCK if tid else 0
            kinds += [f"({p} {key} {kd} {tid} {block} {int(sampled)} {int(dropped)} {high})" for p, key in keys[kind]]
            for u in group:
                keep = u.check == 0 or u.low > 0 or u.sampled
                row = (kd, u.shape, u.low, u.high, int(u.targets), u.need, int(u.sampled), int(keep), u.bit)
                uses.append("(" + " ".join(str(x) for x in row) + ")")
        return kinds, uses


def _features(plan: Plan, run: Runner) -> _Features:
    """The features of the pairs query (cached per closure of the target classes)."""
    classes = plan.class_targets
    closure = run.pairs(closure_query(sorted(classes))) if classes else set()
    key = frozenset(closure)
    out = plan.features.get(key)
    if out is None:
        if len(plan.features) >= 8:
            plan.features.clear()
        out = plan.features[key] = _build_features(plan, closure)
    return out


def _build_features(plan: Plan, closure: set[tuple[str, str]]) -> _Features:
    out = _Features()
    j = 0
    for k, s in enumerate(plan.shapes):
        t = s.shape.targets
        targeting = set(t.subjects_of)
        for i, c in enumerate(s.scans):
            j += 1
            high = -1 if c.high is None else c.high
            # A value of a predicate the shape targets the subjects of makes the node a target.
            own = c.predicate in targeting and c.low == 0
            use = _Use(k, j, c.low, high, targets=own, sampled=s.sampled and bool(c.classes), bit=1 << i)
            out.add(f"<{c.predicate}>", ANY, use, c.test)
            out.type_as_predicate |= c.predicate == RDF_TYPE
        if not s.needs_targets:
            continue
        target = _Use(k, 0, targets=True, need=s.minimums)
        for p in t.subjects_of:
            out.add(f"<{p}>", ANY, target)
            out.type_as_predicate |= p == RDF_TYPE
        for p in t.objects_of:
            out.add(OBJECT_OF, f"<{p}>", target)
            out.objects_of.add(p)
        for n in t.nodes:
            if not isinstance(n, BNode):  # a shapes-graph blank node is never a data node
                out.add(NODE, sparql(n), target)
                out.target_nodes = True
    # The rdf:type rows of classes with the same target shapes make one kind.
    shapes_of: dict[str, set[int]] = {}
    for sub, cls in {(c, c) for c in plan.class_targets} | closure:
        shapes_of.setdefault(sub, set()).update(plan.class_targets[cls])
    for sub, ks in sorted(shapes_of.items()):
        kind = ("class", tuple(sorted(ks)))
        if (kind, 0) not in out.uses:
            for k in kind[1]:
                out.uses.setdefault((kind, 0), []).append(_Use(k, 0, targets=True, need=plan.shapes[k].minimums))
        out.keys[(f"<{RDF_TYPE}>", f"<{sub}>")] = kind
    out.kinds, out.rows = out.tables()
    return out


def detect(
    plan: Plan, run: Runner, focus: str, blank: ox.BlankNode | None = None, *, small_focus: bool = False
) -> Detected:
    """The failing (node, shape index) pairs of the focus set (a focus_pattern; with
    ``blank``, an empty string and ?this is substituted). ``small_focus``: few focus nodes,
    looked up one by one (see scan_pattern)."""
    out = Detected()
    if not plan.shapes:
        return out
    features = _features(plan, run)
    scan = scan_pattern(
        focus,
        type_as_predicate=features.type_as_predicate,
        target_nodes=features.target_nodes and blank is None,  # no target node is a blank node
        objects_of=sorted(features.objects_of),
        excluding=plan.excluding,
        kept=plan.kept,
        lateral=small_focus,
    )
    later = [k for k, s in enumerate(plan.shapes) if s.complex is not None or s.class_checks]
    query = pairs_query(scan, features.kinds, features.rows, list(features.tests), later)
    pending: dict[int, list[Any]] = {}
    sampled: dict[tuple[Any, int], tuple[Any, ...]] = {}  # the values of a pair's sh:class check, when known
    for this, index, x, y, value in run.select(query, {THIS: blank} if blank is not None else None):
        node = blank if blank is not None else this
        k, x = int(index.value), int(x.value)
        shape = plan.shapes[k]
        if x >= 0:  # a scan check fails
            over = int(y.value)
            rows = _count_rows(shape, node, x, over) if shape.explained and over >= 0 else None
            if rows:
                out.rows += rows
            else:
                out.failing.add((node, k))
            continue
        pending.setdefault(k, []).append(node)
        count = -1 - x
        if shape.sampled and (count == 0 or (count == 1 and value is not None)):
            sampled[(node, k)] = (value,) if count else ()
    for k, members in sorted(pending.items()):
        body = plan.shapes[k].complex
        if body is not None:
            out.failing |= {(n, k) for n in _check(run, body, members)}
    todo = {
        k: [n for n in members if (n, k) not in out.failing]
        for k, members in pending.items()
        if plan.shapes[k].class_checks
    }
    out.failing |= _class_failures(plan, run, todo, sampled)
    return out


def _count_rows(shape: ShapePlan, node: Any, satisfied: int, over: int) -> list[tuple[Any, int, Any, Any]]:
    """The report rows of a pair that fails on counts only: a sh:minCount result for each
    check with a minimum not in the ``satisfied`` mask, a sh:maxCount result for each check
    in the ``over`` mask."""
    out = []
    for i, c in enumerate(shape.scans):
        if c.low > 0 and not satisfied >> i & 1:
            out.append((node, c.min_spec, None, None))
        if over >> i & 1:
            out.append((node, c.max_spec, None, None))
    return out


def _check(run: Runner, body: str, nodes: list[Any]) -> set[Any]:
    """The nodes that violate a check body."""
    named = [n for n in nodes if not isinstance(n, ox.BlankNode)]
    out = {row["this"] for row in run.select(check_query(body, named))} if named else set()
    for node in (n for n in nodes if isinstance(n, ox.BlankNode)):
        if any(True for _ in run.select(check_query(body, None), {THIS: node})):
            out.add(node)
    return out


def _class_failures(
    plan: Plan, run: Runner, todo: dict[int, list[Any]], sampled: dict[tuple[Any, int], tuple[Any, ...]]
) -> set[tuple[Any, int]]:
    """The (node, shape) pairs of ``todo`` that fail a sh:class of a scan check. Values not
    ``sampled`` are read in one query per predicate; each distinct (value, class) is
    tested once. Blank nodes cannot be written in a query: a pair with a blank node as
    focus node or value runs the shape's whole check instead."""
    fallback: dict[int, set[Any]] = {}
    unread: dict[str, set[Any]] = {}  # predicate -> nodes whose values must be read
    for k, members in todo.items():
        for node in members:
            if isinstance(node, ox.BlankNode):
                fallback.setdefault(k, set()).add(node)
            elif (node, k) not in sampled:
                for c in plan.shapes[k].class_checks:
                    unread.setdefault(c.predicate, set()).add(node)
    read: dict[str, dict[Any, set[Any]]] = {}  # predicate -> node -> values
    for p, nodes in unread.items():
        for row in run.select(holders_query(p, sorted(nodes, key=str), plan.kept)):
            read.setdefault(p, {}).setdefault(row["this"], set()).add(row["v"])

    def values(node: Any, k: int, c: ScanCheck) -> set[Any]:
        if (node, k) in sampled:
            return set(sampled[(node, k)])
        return read.get(c.predicate, {}).get(node, set())

    checks = [
        (node, k, c, values(node, k, c))
        for k, members in todo.items()
        for node in members
        if not isinstance(node, ox.BlankNode)
        for c in plan.shapes[k].class_checks
    ]
    for node, k, _, vs in checks:
        if any(isinstance(v, ox.BlankNode) for v in vs):
            fallback.setdefault(k, set()).add(node)
    wanted = {(v, cls) for node, k, c, vs in checks if node not in fallback.get(k, ()) for v in vs for cls in c.classes}
    bad: set[tuple[Any, str]] = set()
    if wanted:
        query = class_failures_query(sorted(wanted, key=str), plan.kept)
        bad = {(row["v"], row["cls"].value) for row in run.select(query)}
    out = {
        (node, k)
        for node, k, c, vs in checks
        if node not in fallback.get(k, ()) and any((v, cls) in bad for v in vs for cls in c.classes)
    }
    for k, nodes in fallback.items():
        out |= {(n, k) for n in _check(run, plan.shapes[k].check, sorted(nodes, key=str))}
    return out
