"""SPARQL generation for SHACL Core shapes.

A shape becomes a UNION of groups over a focus variable that the caller binds from
outside: ``LATERAL`` at the top level, ``EXISTS`` when a shape is nested in sh:node,
sh:not, sh:and, sh:or, sh:xone or sh:qualifiedValueShape. A group has solutions exactly
when a constraint is violated. The bodies rely on Oxigraph substituting outer bindings
into ``LATERAL`` and ``EXISTS`` groups, including into sub-SELECTs that project the
focus variable (the counts), which the W3C suite exercises.

Two forms are generated:

- *report* groups, one per constraint, binding ``?focus ?c ?value ?k`` (the reported
  focus node, the index of a ``ResultSpec``, the value node, and an extra key: the
  predicate for sh:closed, the language for sh:uniqueLang);
- *check* groups, which only say whether the focus violates the shape: all value-level
  tests, sh:class and the counts of one path are merged into one lookup of the values.
  They are the fast path of commit validation and the nested-shape test.

Excluded graphs (a commit's staged removals) are honoured by filtering every triple
pattern of predicate, inverse, sequence and alternative paths, the rdf:type triples of
sh:class and class targets, the other-property triples of sh:equals, sh:disjoint,
sh:lessThan(OrEquals), and the triples sh:closed inspects. Inside ``*``, ``+`` and ``?``
paths and along rdfs:subClassOf they are not: those are evaluated as SPARQL property paths
over the whole data graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rdflib import BNode, URIRef
from rdflib.term import Node

from cleveragents.terms import RDF_TYPE, RDFS_SUBCLASSOF
from cleveragents.validation.conditions import VALUE_TESTS, ConditionError, value_test
from cleveragents.validation.messages import default_message
from cleveragents.validation.paths import Alt, Inv, Path, Pred, Repeat, Seq, nullable, push_inverse, to_sparql
from cleveragents.validation.rdfterms import label, sparql
from cleveragents.validation.shapes import Constraint, Shape, ShapeCompileError, ShapesGraph

TYPE = f"<{RDF_TYPE}>"
SUBCLASS = f"<{RDFS_SUBCLASSOF}>"
LOGICAL = frozenset(["Not", "And", "Or", "Xone", "Node"])
# Constraints a scan check evaluates: tests of one value node, classes, and counts.
SCANNABLE = VALUE_TESTS | LOGICAL | {"MinCount", "MaxCount", "Class"}
SCAN_VALUE = "?o"  # the value variable of scan-check tests (generated variables end in digits)
EXCLUDED = "<urn:cleveragents:validation:excluded-graphs>"  # placeholder for the excluded graphs' IRIs
MAX_SCANS = 62  # scan checks per shape: each has a bit in a 64-bit integer mask


@dataclass(frozen=True)
class ResultSpec:
    """What a result row of one constraint (in one nesting context) reports."""

    component: str
    shape: str
    path: str | None
    severity: str
    message: str


@dataclass(frozen=True)
class Branch:
    """A group pattern that has solutions when a constraint is violated."""

    pattern: str
    value: str | None = None  # variable holding the value node
    key: str | None = None  # extra distinguishing variable (closed: predicate; uniqueLang: language)


@dataclass(frozen=True)
class ScanCheck:
    """A property shape with a predicate path whose constraints only test each value node
    (value tests, logical constraints) and count the values (sh:minCount, sh:maxCount).
    It is decided by the focus node's outgoing triples with that predicate, so commit
    validation evaluates it from one scan of those triples instead of one lookup per shape."""

    predicate: str
    test: str | None  # expression over SCAN_VALUE, true when the value violates the shape
    low: int  # minimum count (0: none)
    high: int | None  # maximum count
    classes: tuple[str, ...] = ()  # sh:class: checked apart, once per distinct value
    # The ResultSpec of the shape's sh:minCount / sh:maxCount, when a count failure is one
    # result with it (no value), so that it needs no report query.
    min_spec: int | None = None
    max_spec: int | None = None

    @property
    def explained(self) -> bool:
        return (self.low == 0 or self.min_spec is not None) and (self.high is None or self.max_spec is not None)

    @property
    def can_fail(self) -> bool:
        return self.test is not None or self.low > 0 or self.high is not None or bool(self.classes)


class Codegen:
    """Generates shape bodies for a shapes graph, with or without excluded graphs. The
    excluded graphs appear in the text as EXCLUDED, replaced by their IRIs when a query
    runs: the bodies do not depend on which graphs they are (each commit has others)."""

    def __init__(self, shapes: ShapesGraph, excluding: bool = False) -> None:
        self.shapes = shapes
        self.excluding = excluding
        self.specs: list[ResultSpec] = []
        self.count_specs: dict[tuple[Node, str], int] = {}  # (property shape, MinCount / MaxCount) -> spec
        self._counter = 0
        self._stack: list[Node] = []

    # -- patterns ----------------------------------------------------------------------

    def var(self, hint: str = "v") -> str:
        self._counter += 1
        return f"?{hint}{self._counter}"

    def kept(self, s: str, p: str, o: str) -> str:
        """A filter dropping the triple when an excluded graph holds it ('' when none)."""
        if not self.excluding:
            return ""
        g = self.var("xg")
        return f"FILTER NOT EXISTS {{ VALUES {g} {{ {EXCLUDED} }} GRAPH {g} {{ {s} {p} {o} }} }} "

    def triple(self, s: str, p: str, o: str) -> str:
        return f"{s} {p} {o} . {self.kept(s, p, o)}"

    def path_pattern(self, s: str, path: Path, o: str, *, fresh: bool = True) -> str:
        """Triples connecting ``s`` to ``o`` along ``path``. Duplicates are possible, so
        counts use COUNT(DISTINCT) and reports SELECT DISTINCT. ``fresh``: ``o`` is a new
        variable (else a constant or a variable bound elsewhere)."""
        core = f"{s} {to_sparql(path)} {o} . " if not self.excluding else self._expanded(s, push_inverse(path), o)
        if not nullable(path):
            return core
        # Oxigraph finds no zero-length match from a node absent from the data graph (such
        # as a literal or a node that only a target names); SHACL makes it its own value.
        zero = f"BIND({s} AS {o})" if fresh else f"FILTER(sameTerm({s}, {o}))"
        return f"{{ {zero} }} UNION {{ {core}}} "

    def _expanded(self, s: str, path: Path, o: str) -> str:
        if isinstance(path, Pred):
            return self.triple(s, f"<{path.iri}>", o)
        if isinstance(path, Inv):
            assert isinstance(path.path, Pred)  # push_inverse leaves inverses on predicates only
            return self.triple(o, f"<{path.path.iri}>", s)
        if isinstance(path, Seq):
            out, current = "", s
            for i, step in enumerate(path.items):
                nxt = o if i == len(path.items) - 1 else self.var("m")
                out += self._expanded(current, step, nxt)
                current = nxt
            return out
        if isinstance(path, Alt):
            return " UNION ".join(f"{{ {self._expanded(s, p, o)}}}" for p in path.items) + " "
        assert isinstance(path, Repeat)
        return f"{s} {to_sparql(path)} {o} . "

    def class_match(self, v: str, cls: str) -> tuple[str, str]:
        """A pattern binding a fresh variable when ``v`` is a SHACL instance of ``cls``.
        Used inside OPTIONAL with !BOUND: cheaper in Oxigraph than FILTER NOT EXISTS."""
        t = self.var("t")
        return f"{self.triple(v, TYPE, t)}{t} {SUBCLASS}* <{cls}> . ", t

    def values(self, shape: Shape, focus: str) -> tuple[str, str]:
        """The pattern binding the shape's value nodes, and their variable."""
        if shape.path is None:
            return "", focus
        v = self.var()
        return self.path_pattern(focus, shape.path, v), v

    # -- shapes ------------------------------------------------------------------------

    def report_body(self, shape: Shape, focus: str) -> str | None:
        """UNION of report groups binding ?focus ?c ?value ?k (None: nothing to check)."""
        return _union(self._report_groups(shape, focus))

    def check_body(self, shape: Shape, focus: str) -> str | None:
        """UNION of groups with solutions iff ``focus`` violates the shape (None: never)."""
        return _union(self._check_groups(shape, focus))

    def violation(self, node: Node, focus: str) -> str | None:
        return self.check_body(self.shapes.shape(node), focus)

    @contextmanager
    def _entered(self, shape: Shape) -> Iterator[None]:
        if shape.node in self._stack:
            chain = " -> ".join(label(n) for n in [*self._stack, shape.node])
            raise ShapeCompileError(f"recursive shapes are not supported: {chain}")
        self._stack.append(shape.node)
        try:
            yield
        except ConditionError as exc:
            raise ShapeCompileError(f"{shape.key}: {exc}") from exc
        finally:
            self._stack.pop()

    def _report_groups(self, shape: Shape, focus: str) -> list[str]:
        if shape.deactivated:
            return []
        groups: list[str] = []
        with self._entered(shape):
            for constraint in shape.constraints:
                branches = self._branches(shape, constraint, focus)
                if branches:
                    cid = self._spec(shape, constraint)
                    groups.extend(_report_group(b, focus, cid) for b in branches)
                    if constraint.kind in ("MinCount", "MaxCount"):
                        self.count_specs[(shape.node, constraint.kind)] = cid
            groups.extend(self._nested(shape, focus, self._report_groups))
        return groups

    def _check_groups(self, shape: Shape, focus: str) -> list[str]:
        if shape.deactivated:
            return []
        with self._entered(shape):
            groups = self._own_check_groups(shape, focus)
            groups.extend(self._nested(shape, focus, self._check_groups))
        return groups

    def _own_check_groups(self, shape: Shape, focus: str) -> list[str]:
        """Check groups of the shape's own constraints (not of its sh:property shapes)."""
        groups: list[str] = []
        vals, v = self.values(shape, focus)
        tests: list[str] = []
        classes: list[str] = []
        low, high = 0, None
        for c in shape.constraints:
            if c.kind in VALUE_TESTS or c.kind in LOGICAL:
                test = self._test(c, v)
                if test is not None:
                    tests.append(test)
            elif c.kind == "Class":
                classes.append(_iri(shape, c))
            elif c.kind == "MinCount":
                low = max(low, c.arg)
            elif c.kind == "MaxCount":
                high = c.arg if high is None else min(high, c.arg)
            else:
                groups.extend(f"{{ {b.pattern}}}" for b in self._branches(shape, c, focus))
        merged = self._merged(shape, focus, vals, v, tests, classes, low, high)
        return ([merged] if merged else []) + groups

    # -- scan checks -------------------------------------------------------------------

    def split_check(self, shape: Shape, focus: str) -> tuple[list[ScanCheck], str | None]:
        """The check of a targeted shape split in two: the property shapes that one scan of
        the focus node's outgoing triples decides (see ``ScanCheck``), and the UNION of the
        remaining check groups (None: none)."""
        if shape.deactivated:
            return [], None
        if shape.path is not None:
            scan = self._scan_check(shape)
            if scan is None:
                return [], self.check_body(shape, focus)
            return ([scan] if scan.can_fail else []), None
        scans: list[ScanCheck] = []
        with self._entered(shape):
            groups = self._own_check_groups(shape, focus)
            for node in shape.properties:
                prop = self.shapes.shape(node)
                scan = self._scan_check(prop) if len(scans) < MAX_SCANS else None
                if scan is None:
                    groups.extend(self._check_groups(prop, focus))
                elif scan.can_fail:
                    scans.append(scan)
        return scans, _union(groups)

    def _scan_check(self, shape: Shape) -> ScanCheck | None:
        """The shape as a scan check, or None when it needs more than its values."""
        if not isinstance(shape.path, Pred) or shape.properties:
            return None
        if shape.deactivated:
            return ScanCheck(shape.path.iri, None, 0, None)
        if any(c.kind not in SCANNABLE for c in shape.constraints):
            return None
        tests: list[str] = []
        classes: list[str] = []
        low, high = 0, None
        with self._entered(shape):
            for c in shape.constraints:
                if c.kind == "MinCount":
                    low = max(low, c.arg)
                elif c.kind == "MaxCount":
                    high = c.arg if high is None else min(high, c.arg)
                elif c.kind == "Class":
                    classes.append(_iri(shape, c))
                else:
                    test = self._test(c, SCAN_VALUE)
                    if test is not None:
                        tests.append(test)
        # The tests never raise an error (conditions.py), so they need no COALESCE.
        test = (tests[0] if len(tests) == 1 else f"({' || '.join(tests)})") if tests else None
        specs = {kind: self._count_spec(shape, kind) for kind in ("MinCount", "MaxCount")}
        return ScanCheck(
            shape.path.iri, test, low, high, tuple(sorted(set(classes))), specs["MinCount"], specs["MaxCount"]
        )

    def _count_spec(self, shape: Shape, kind: str) -> int | None:
        """The spec of the shape's one constraint of this kind (as reported by report_body,
        which runs first), or None: several (each is its own result), or none reported."""
        if sum(1 for c in shape.constraints if c.kind == kind) != 1:
            return None
        return self.count_specs.get((shape.node, kind))

    def _merged(
        self, shape: Shape, f: str, vals: str, v: str, tests: list[str], classes: list[str], low: int, high: int | None
    ) -> str | None:
        """One group for the value tests, classes and counts of a shape: one lookup."""
        optionals = ""
        for cls in classes:
            pattern, t = self.class_match(v, cls)
            optionals += f"OPTIONAL {{ {pattern}}} "
            tests.append(f"!BOUND({t})")
        test = f"COALESCE({' || '.join(tests)}, false)" if tests else None
        if shape.path is None:  # the focus is the only value node
            if low > 1 or (high is not None and high < 1):
                return "{ }"
            return f"{{ {optionals}FILTER({test}) }}" if test else None
        if high is not None or low > 1:
            n, bad = self.var("n"), self.var("bad")
            select = f"(COUNT(DISTINCT {v}) AS {n})"
            checks = [f"{n} < {low}"] if low > 0 else []
            checks += [f"{n} > {high}"] if high is not None else []
            if test:
                select += f" (MAX(IF(BOUND({v}) && {test}, 1, 0)) AS {bad})"
                checks.append(f"{bad} = 1")
            sub = f"SELECT {f} {select} WHERE {{ OPTIONAL {{ {vals}{optionals}}} }} GROUP BY {f}"
            return f"{{ {{ {sub} }} FILTER({' || '.join(checks)}) }}"
        if low == 1:
            return f"{{ OPTIONAL {{ {vals}{optionals}}} FILTER(!BOUND({v}) || {test or 'false'}) }}"
        return f"{{ {vals}{optionals}FILTER({test}) }}" if test else None

    def _nested(self, shape: Shape, focus: str, groups_of: Callable[[Shape, str], list[str]]) -> list[str]:
        """Groups of the shape's sh:property shapes, whose focus nodes are its value nodes."""
        out: list[str] = []
        for node in shape.properties:
            prop = self.shapes.shape(node)
            if shape.path is None:
                out.extend(groups_of(prop, focus))
                continue
            vals, v = self.values(shape, focus)
            inner = groups_of(prop, v)
            if inner:
                out.append(f"{{ {vals}LATERAL {{ {' UNION '.join(inner)} }} }}")
        return out

    def _spec(self, shape: Shape, c: Constraint) -> int:
        path = to_sparql(shape.path) if shape.path is not None else None
        message = shape.messages[0] if shape.messages else default_message(shape, c)
        self.specs.append(ResultSpec(c.component, shape.key, path, shape.severity, message))
        return len(self.specs) - 1

    # -- one constraint, report form ---------------------------------------------------

    def _branches(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        if c.kind in VALUE_TESTS or c.kind in LOGICAL:
            vals, v = self.values(shape, f)
            test = self._test(c, v)
            return [] if test is None else [Branch(f"{vals}FILTER({test}) ", v)]
        handler = getattr(self, f"_c_{c.kind}", None)
        if handler is None:
            raise ShapeCompileError(f"unsupported constraint component {c.component}")
        return handler(shape, c, f)

    def _c_Class(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        vals, v = self.values(shape, f)
        pattern, t = self.class_match(v, _iri(shape, c))
        return [Branch(f"{vals}OPTIONAL {{ {pattern}}} FILTER(!BOUND({t})) ", v)]

    def _c_HasValue(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        if isinstance(c.arg, BNode):
            return [Branch("")]  # a shapes-graph blank node is never a data node
        value = sparql(c.arg)
        if shape.path is None:
            return [Branch(f"FILTER(!sameTerm({f}, {value})) ")]
        return [Branch(f"FILTER NOT EXISTS {{ {self.path_pattern(f, shape.path, value, fresh=False)}}} ")]

    def _c_MinCount(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        n = c.arg
        if shape.path is None:  # a node shape has exactly one value node: the focus
            return [Branch("")] if n > 1 else []
        if n <= 0:
            return []
        vals, v = self.values(shape, f)
        if n == 1:
            return [Branch(f"OPTIONAL {{ {vals}}} FILTER(!BOUND({v})) ")]
        count = self.var("n")
        sub = f"SELECT {f} (COUNT(DISTINCT {v}) AS {count}) WHERE {{ OPTIONAL {{ {vals}}} }} GROUP BY {f}"
        return [Branch(f"{{ {sub} }} FILTER({count} < {n}) ")]

    def _c_MaxCount(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        n = c.arg
        if shape.path is None:
            return [Branch("")] if n < 1 else []
        vals, v = self.values(shape, f)
        if n <= 0:
            return [Branch(vals)]
        count = self.var("n")
        sub = f"SELECT {f} (COUNT(DISTINCT {v}) AS {count}) WHERE {{ {vals}}} GROUP BY {f}"
        return [Branch(f"{{ {sub} }} FILTER({count} > {n}) ")]

    def _c_UniqueLang(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        vals1, v1 = self.values(shape, f)
        vals2, v2 = self.values(shape, f)
        lang = self.var("lang")
        cond = f'!sameTerm({v1}, {v2}) && lang({v1}) != "" && LCASE(lang({v1})) = LCASE(lang({v2}))'
        return [Branch(f"{vals1}{vals2}FILTER({cond}) BIND(LCASE(lang({v1})) AS {lang}) ", key=lang)]

    def _c_Equals(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        p = f"<{c.arg}>"
        vals, v = self.values(shape, f)
        w = self.var("w")
        if shape.path is None:
            other = f"FILTER(!sameTerm({w}, {f})) "
        else:
            other = f"FILTER NOT EXISTS {{ {self.path_pattern(f, shape.path, w, fresh=False)}}} "
        return [
            Branch(f"{vals}FILTER NOT EXISTS {{ {self.triple(f, p, v)}}} ", v),
            Branch(f"{self.triple(f, p, w)}{other}", w),
        ]

    def _c_Disjoint(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        vals, v = self.values(shape, f)
        return [Branch(f"{vals}{self.triple(f, f'<{c.arg}>', v)}", v)]

    def _c_LessThan(self, shape: Shape, c: Constraint, f: str, op: str = "<") -> list[Branch]:
        vals, v = self.values(shape, f)
        w = self.var("w")
        return [Branch(f"{vals}{self.triple(f, f'<{c.arg}>', w)}FILTER(!COALESCE({v} {op} {w}, false)) ", v)]

    def _c_LessThanOrEquals(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        return self._c_LessThan(shape, c, f, "<=")

    def _c_Closed(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        vals, v = self.values(shape, f)
        p, o = self.var("cp"), self.var("co")
        allowed = ", ".join(f"<{iri}>" for iri in c.arg)
        test = f"FILTER({p} NOT IN ({allowed})) " if allowed else ""
        return [Branch(f"{vals}{self.triple(v, p, o)}{test}", o, key=p)]

    def _c_QualifiedMinCount(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        n = c.extra[0]
        if n <= 0:
            return []
        vals, v = self.values(shape, f)
        count = self.var("n")
        inner = f"OPTIONAL {{ {vals}FILTER({self._qualified(c, v)}) }}"
        sub = f"SELECT {f} (COUNT(DISTINCT {v}) AS {count}) WHERE {{ {inner} }} GROUP BY {f}"
        return [Branch(f"{{ {sub} }} FILTER({count} < {n}) ")]

    def _c_QualifiedMaxCount(self, shape: Shape, c: Constraint, f: str) -> list[Branch]:
        n = c.extra[0]
        vals, v = self.values(shape, f)
        count = self.var("n")
        inner = f"{vals}FILTER({self._qualified(c, v)}) "
        sub = f"SELECT {f} (COUNT(DISTINCT {v}) AS {count}) WHERE {{ {inner}}} GROUP BY {f}"
        return [Branch(f"{{ {sub} }} FILTER({count} > {n}) ")]

    # -- tests over a value variable -------------------------------------------------------

    def _fails(self, node: Node, v: str) -> str:
        """Expression: ``v`` does not conform to the shape at ``node``."""
        body = self.violation(node, v)
        return f"EXISTS {{ {body} }}" if body is not None else "false"

    def _test(self, c: Constraint, v: str) -> str | None:
        """Violation test of a value-level or logical constraint (None: never violated)."""
        if c.kind in VALUE_TESTS:
            return value_test(c, v)
        if c.kind == "Not":
            return f"!({self._fails(c.arg, v)})"
        if c.kind == "Node":
            fails = self._fails(c.arg, v)
            return None if fails == "false" else fails
        members = [self._fails(m, v) for m in c.arg]
        if c.kind == "And":
            failing = [m for m in members if m != "false"]
            return f"({' || '.join(failing)})" if failing else None
        if c.kind == "Or":
            if "false" in members:
                return None  # a member without constraints always conforms
            return f"({' && '.join(members)})" if members else "true"
        conforming = " + ".join(f"IF({m}, 0, 1)" for m in members) or "0"  # Xone
        return f"(({conforming}) != 1)"

    def _qualified(self, c: Constraint, v: str) -> str:
        """The value conforms to the qualified shape and to none of its disjoint siblings."""
        _, siblings = c.extra
        return " && ".join([f"!({self._fails(c.arg, v)})"] + [self._fails(s, v) for s in siblings])

    # -- targets -----------------------------------------------------------------------

    def targets(self, shape: Shape, this: str, *, bound: bool) -> list[str]:
        """Group patterns binding the shape's target nodes to ``this``, or, with ``bound``,
        testing a ``this`` substituted from outside (where VALUES ?this is not allowed)."""
        t = shape.targets
        groups = []
        for cls in t.classes:
            ty = self.var("t")
            groups.append(f"{{ {self.triple(this, TYPE, ty)}{ty} {SUBCLASS}* <{cls}> . }}")
        nodes = [sparql(n) for n in t.nodes if not isinstance(n, BNode)]
        if nodes and bound:
            groups.append(f"{{ FILTER({' || '.join(f'sameTerm({this}, {n})' for n in nodes)}) }}")
        elif nodes:
            groups.append(f"{{ VALUES {this} {{ {' '.join(nodes)} }} }}")
        for p in t.subjects_of:
            groups.append(f"{{ {self.triple(this, f'<{p}>', self.var('x'))}}}")
        for p in t.objects_of:
            groups.append(f"{{ {self.triple(self.var('x'), f'<{p}>', this)}}}")
        return groups


def _union(groups: list[str]) -> str | None:
    return " UNION ".join(groups) if groups else None


def _report_group(branch: Branch, focus: str, cid: int) -> str:
    binds = f"BIND({focus} AS ?focus) BIND({cid} AS ?c) "
    if branch.value is not None:
        binds += f"BIND({branch.value} AS ?value) "
    if branch.key is not None:
        binds += f"BIND({branch.key} AS ?k) "
    return f"{{ {branch.pattern}{binds}}}"


def _iri(shape: Shape, c: Constraint) -> str:
    if not isinstance(c.arg, URIRef):
        raise ShapeCompileError(f"{shape.key}: sh:{c.kind[0].lower()}{c.kind[1:]} needs an IRI, got {c.arg!r}")
    return str(c.arg)
