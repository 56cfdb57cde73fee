"""SHACL property paths: parsed from a shapes graph, printed as SPARQL property paths.

The printed form is also the ``result_path`` of a violation, so pyshacl's results and the
W3C manifests are printed with the same function to compare them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import RDF, BNode, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from cleveragents.terms import SH


@dataclass(frozen=True)
class Pred:
    iri: str


@dataclass(frozen=True)
class Inv:
    path: Path


@dataclass(frozen=True)
class Seq:
    items: tuple[Path, ...]


@dataclass(frozen=True)
class Alt:
    items: tuple[Path, ...]


@dataclass(frozen=True)
class Repeat:
    """``*`` (zeroOrMore), ``+`` (oneOrMore) or ``?`` (zeroOrOne)."""

    path: Path
    mod: str


Path = Pred | Inv | Seq | Alt | Repeat

_REPEAT = {URIRef(SH + "zeroOrMorePath"): "*", URIRef(SH + "oneOrMorePath"): "+", URIRef(SH + "zeroOrOnePath"): "?"}


class PathError(ValueError):
    """The node is not a well-formed SHACL property path."""


def parse_path(graph: Graph, node: Node, _depth: int = 0) -> Path:
    """Read the SHACL path rooted at ``node`` (a list is a sequence, as in pyshacl)."""
    if _depth > 50:
        raise PathError(f"path nesting too deep (cyclic?) at {node}")
    if isinstance(node, URIRef):
        return Pred(str(node))
    if not isinstance(node, BNode):
        raise PathError(f"a literal is not a path: {node!r}")
    if (node, RDF.first, None) in graph:
        items = tuple(parse_path(graph, item, _depth + 1) for item in Collection(graph, node))
        if not items:
            raise PathError("empty sequence path")
        return items[0] if len(items) == 1 else Seq(items)
    inverse = graph.value(node, URIRef(SH + "inversePath"))
    if inverse is not None:
        return Inv(parse_path(graph, inverse, _depth + 1))
    alternatives = graph.value(node, URIRef(SH + "alternativePath"))
    if alternatives is not None:
        if (alternatives, RDF.first, None) not in graph:
            raise PathError(f"sh:alternativePath needs a list: {node}")
        items = tuple(parse_path(graph, item, _depth + 1) for item in Collection(graph, alternatives))
        if not items:
            raise PathError("empty alternative path")
        return items[0] if len(items) == 1 else Alt(items)
    for predicate, mod in _REPEAT.items():
        inner = graph.value(node, predicate)
        if inner is not None:
            return Repeat(parse_path(graph, inner, _depth + 1), mod)
    raise PathError(f"not a SHACL path: {node}")


def to_sparql(path: Path) -> str:
    """The SPARQL 1.1 property path, parenthesised only where precedence needs it."""
    if isinstance(path, Pred):
        return f"<{path.iri}>"
    if isinstance(path, Inv):
        inner = path.path
        return "^" + (to_sparql(inner) if isinstance(inner, Pred | Repeat) else f"({to_sparql(inner)})")
    if isinstance(path, Seq):
        return "/".join(f"({to_sparql(p)})" if isinstance(p, Alt) else to_sparql(p) for p in path.items)
    if isinstance(path, Alt):
        return "|".join(to_sparql(p) for p in path.items)
    inner = path.path
    return (to_sparql(inner) if isinstance(inner, Pred) else f"({to_sparql(inner)})") + path.mod


def push_inverse(path: Path, inverted: bool = False) -> Path:
    """An equivalent path where ``Inv`` wraps only predicates (so each step is a triple)."""
    if isinstance(path, Pred):
        return Inv(path) if inverted else path
    if isinstance(path, Inv):
        return push_inverse(path.path, not inverted)
    if isinstance(path, Seq):
        items = [push_inverse(p, inverted) for p in path.items]
        return Seq(tuple(reversed(items) if inverted else items))
    if isinstance(path, Alt):
        return Alt(tuple(push_inverse(p, inverted) for p in path.items))
    return Repeat(push_inverse(path.path, inverted), path.mod)


def nullable(path: Path) -> bool:
    """True when the path can be zero-length, making the focus node its own value node."""
    if isinstance(path, Pred):
        return False
    if isinstance(path, Inv):
        return nullable(path.path)
    if isinstance(path, Seq):
        return all(nullable(p) for p in path.items)
    if isinstance(path, Alt):
        return any(nullable(p) for p in path.items)
    return path.mod != "+" or nullable(path.path)


def inverse_predicates(path: Path) -> set[str]:
    """The predicates the path follows backwards (from object to subject), anywhere in it:
    a triple with one of them can change the values of the node at its object."""
    path = push_inverse(path)
    out: set[str] = set()
    stack = [path]
    while stack:
        p = stack.pop()
        if isinstance(p, Inv):
            assert isinstance(p.path, Pred)
            out.add(p.path.iri)
        elif isinstance(p, Seq | Alt):
            stack.extend(p.items)
        elif isinstance(p, Repeat):
            stack.append(p.path)
    return out
