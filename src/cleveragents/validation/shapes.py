"""The shapes graph read into plain Python objects (one ``Shape`` per shape node).

Reading is done with rdflib: shapes graphs are small and this runs once per compile.
Only SHACL Core is read; anything else (sh:sparql, sh:rule, ...) is reported in
``ShapesGraph.warnings`` and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rdflib import OWL, RDF, RDFS, XSD, BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from cleveragents.errors import ValidationError
from cleveragents.terms import SH
from cleveragents.validation.paths import Path, PathError, parse_path
from cleveragents.validation.rdfterms import label

_S = URIRef  # shorthand for SHACL IRIs below


def sh(name: str) -> URIRef:
    return _S(SH + name)


TARGET_PREDICATES = (sh("targetClass"), sh("targetNode"), sh("targetSubjectsOf"), sh("targetObjectsOf"))
# Parameters that make a node a shape even without rdf:type sh:NodeShape.
SHAPE_REFERENCES = (sh("node"), sh("property"), sh("not"), sh("qualifiedValueShape"))
SHAPE_LISTS = (sh("and"), sh("or"), sh("xone"))
UNSUPPORTED = (sh("sparql"), sh("rule"), sh("js"), sh("expression"), sh("target"))


class ShapeCompileError(ValidationError):
    """The shapes graph cannot be compiled (malformed path or parameter, recursion)."""


@dataclass(frozen=True)
class Constraint:
    """One constraint component instance of a shape.

    ``kind`` is the component's local name without ``ConstraintComponent`` (``MinCount``),
    ``arg`` its main parameter value, ``extra`` any secondary parameters.
    """

    kind: str
    arg: Any
    extra: Any = None

    @property
    def component(self) -> str:
        return f"{SH}{self.kind}ConstraintComponent"


@dataclass
class Targets:
    classes: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    subjects_of: list[str] = field(default_factory=list)
    objects_of: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.classes or self.nodes or self.subjects_of or self.objects_of)


@dataclass
class Shape:
    node: Node
    path: Path | None
    targets: Targets
    constraints: list[Constraint]
    properties: list[Node]  # sh:property values, resolved through ShapesGraph.shape()
    deactivated: bool = False
    severity: str = SH + "Violation"
    messages: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return label(self.node)

    @property
    def is_property(self) -> bool:
        return self.path is not None


class ShapesGraph:
    """Shapes by node, read on first use, plus the list of shapes that have targets."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.warnings: list[str] = []
        self._shapes: dict[Node, Shape] = {}

    def shape(self, node: Node) -> Shape:
        if node not in self._shapes:
            try:
                self._shapes[node] = self._read(node)
            except (PathError, ValueError) as exc:
                raise ShapeCompileError(f"{label(node)}: {exc}") from exc
        return self._shapes[node]

    def all_read(self) -> list[Shape]:
        """Every shape read so far (all reachable ones, once compiled)."""
        return list(self._shapes.values())

    def targeted(self) -> list[Shape]:
        """Every active shape with at least one target, in a stable order."""
        g = self.graph
        candidates: set[Node] = set()
        for predicate in TARGET_PREDICATES:
            candidates.update(g.subjects(predicate, None))
        for kind in (sh("NodeShape"), sh("PropertyShape")):
            for node in g.subjects(RDF.type, kind):
                if self._is_class(node):
                    candidates.add(node)
        shapes = [self.shape(n) for n in sorted(candidates, key=lambda n: (isinstance(n, BNode), str(n)))]
        return [s for s in shapes if s.targets and not s.deactivated]

    # -- reading -------------------------------------------------------------------

    def _is_class(self, node: Node) -> bool:
        g = self.graph
        return (node, RDF.type, RDFS.Class) in g or (node, RDF.type, OWL.Class) in g

    def _read(self, node: Node) -> Shape:
        g = self.graph
        path_node = g.value(node, sh("path"))
        path = parse_path(g, path_node) if path_node is not None else None
        targets = Targets(
            classes=[str(c) for c in g.objects(node, sh("targetClass")) if isinstance(c, URIRef)],
            nodes=list(g.objects(node, sh("targetNode"))),
            subjects_of=[str(p) for p in g.objects(node, sh("targetSubjectsOf")) if isinstance(p, URIRef)],
            objects_of=[str(p) for p in g.objects(node, sh("targetObjectsOf")) if isinstance(p, URIRef)],
        )
        if self._is_class(node) and (
            (node, RDF.type, sh("NodeShape")) in g or (node, RDF.type, sh("PropertyShape")) in g
        ):
            targets.classes.append(str(node))
        deactivated = any(_is_true(v) for v in g.objects(node, sh("deactivated")))
        severity = g.value(node, sh("severity"))
        for predicate in UNSUPPORTED:
            if (node, predicate, None) in g:
                self.warnings.append(f"{label(node)}: {predicate} is not SHACL Core and is ignored")
        return Shape(
            node=node,
            path=path,
            targets=targets,
            constraints=self._constraints(node, path is not None),
            properties=sorted(g.objects(node, sh("property")), key=str),
            deactivated=deactivated,
            severity=str(severity) if isinstance(severity, URIRef) else SH + "Violation",
            messages=_messages(g, node),
        )

    def _constraints(self, node: Node, is_property: bool) -> list[Constraint]:
        g = self.graph
        out: list[Constraint] = []

        def each(name: str) -> list[Node]:
            return sorted(g.objects(node, sh(name)), key=str)

        for value in each("class"):
            out.append(Constraint("Class", value))
        for value in each("datatype"):
            out.append(Constraint("Datatype", value))
        for value in each("nodeKind"):
            out.append(Constraint("NodeKind", value))
        for name in ("minCount", "maxCount", "minLength", "maxLength"):
            for value in each(name):
                out.append(Constraint(name[0].upper() + name[1:], _int(value, name)))
        for name in ("minExclusive", "minInclusive", "maxExclusive", "maxInclusive"):
            for value in each(name):
                out.append(Constraint(name[0].upper() + name[1:], value))
        flags = g.value(node, sh("flags"))
        for value in each("pattern"):
            out.append(Constraint("Pattern", str(value), str(flags) if flags is not None else ""))
        for value in each("languageIn"):
            out.append(Constraint("LanguageIn", [str(t) for t in Collection(g, value)]))
        for value in each("uniqueLang"):
            if is_property and _is_true(value):
                out.append(Constraint("UniqueLang", True))
        for name in ("equals", "disjoint", "lessThan", "lessThanOrEquals"):
            for value in each(name):
                out.append(Constraint(name[0].upper() + name[1:], str(value)))
        for value in each("hasValue"):
            out.append(Constraint("HasValue", value))
        for value in each("in"):
            out.append(Constraint("In", list(Collection(g, value))))
        for value in each("closed"):
            if _is_true(value):
                out.append(Constraint("Closed", self._closed_allowed(node)))
        for value in each("not"):
            out.append(Constraint("Not", value))
        for name in ("and", "or", "xone"):
            for value in each(name):
                out.append(Constraint(name[0].upper() + name[1:], list(Collection(g, value))))
        for value in each("node"):
            out.append(Constraint("Node", value))
        if is_property:
            out.extend(self._qualified(node))
        return out

    def _closed_allowed(self, node: Node) -> list[str]:
        """Predicates a closed shape allows: its property shapes' IRI paths plus the ignored ones."""
        g = self.graph
        allowed = {
            str(path)
            for prop in g.objects(node, sh("property"))
            for path in g.objects(prop, sh("path"))
            if isinstance(path, URIRef)
        }
        ignored = g.value(node, sh("ignoredProperties"))
        if ignored is not None:
            allowed.update(str(p) for p in Collection(g, ignored) if isinstance(p, URIRef))
        return sorted(allowed)

    def _qualified(self, node: Node) -> list[Constraint]:
        g = self.graph
        shapes = sorted(g.objects(node, sh("qualifiedValueShape")), key=str)
        if not shapes:
            return []
        disjoint = any(_is_true(v) for v in g.objects(node, sh("qualifiedValueShapesDisjoint")))
        out: list[Constraint] = []
        for q in shapes:
            siblings: list[Node] = []
            if disjoint:
                for parent in g.subjects(sh("property"), node):
                    for sibling_prop in g.objects(parent, sh("property")):
                        siblings.extend(s for s in g.objects(sibling_prop, sh("qualifiedValueShape")) if s != q)
            siblings = sorted(set(siblings), key=str)
            for value in g.objects(node, sh("qualifiedMinCount")):
                out.append(Constraint("QualifiedMinCount", q, (_int(value, "qualifiedMinCount"), siblings)))
            for value in g.objects(node, sh("qualifiedMaxCount")):
                out.append(Constraint("QualifiedMaxCount", q, (_int(value, "qualifiedMaxCount"), siblings)))
        return out


def _is_true(value: Node) -> bool:
    """Only the term true activates a boolean parameter ("1"^^xsd:boolean does not; W3C
    test core/property/uniqueLang-002)."""
    return isinstance(value, Literal) and value.datatype == XSD.boolean and str(value) == "true"


def _int(value: Node, name: str) -> int:
    try:
        return int(value.toPython()) if isinstance(value, Literal) else int(str(value))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sh:{name} needs an integer, got {value!r}") from exc


def _messages(graph: Graph, node: Node) -> list[str]:
    """sh:message values, untagged or English first (one is shown per result)."""
    values = [m for m in graph.objects(node, sh("message")) if isinstance(m, Literal)]
    values.sort(key=lambda m: (m.language not in (None, "", "en"), m.language or "", str(m)))
    return [str(m) for m in values]
