"""The TBox closure the universal view needs: reflexive-transitive subClassOf/subPropertyOf.

Oxigraph does no reasoning, so ``?x a uko:Container`` only finds subclass instances if the
closure pairs are materialized next to the data. Computed in Python: the TBox is a few
thousand triples, and a plain graph walk is simpler to trust than property paths.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from typing import TypeGuard

import pyoxigraph as ox

from cleveragents.iris import term_text
from cleveragents.terms import GENID, OWL, RDF, RDF_TYPE, RDFS, RDFS_SUBCLASSOF, RDFS_SUBPROPERTYOF

from .modules import ontology_triples

CLASS_TYPES = frozenset({OWL + "Class", RDFS + "Class"})
PROPERTY_TYPES = frozenset(
    {
        RDF + "Property",
        OWL + "ObjectProperty",
        OWL + "DatatypeProperty",
        OWL + "AnnotationProperty",
        OWL + "FunctionalProperty",
        OWL + "InverseFunctionalProperty",
        OWL + "TransitiveProperty",
        OWL + "SymmetricProperty",
    }
)


def _named(term: object) -> TypeGuard[ox.NamedNode]:
    # Skolemized blank nodes (anonymous class expressions) are not vocabulary terms.
    return isinstance(term, ox.NamedNode) and not term.value.startswith(GENID)


def _closure(nodes: set[str], edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Every node's reflexive-transitive successors."""
    result: dict[str, set[str]] = {}
    for start in nodes:
        seen = {start}
        stack = [start]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        result[start] = seen
    return result


Pairs = tuple[dict[str, set[str]], dict[str, set[str]]]


@cache
def _bundled_pairs() -> Pairs:
    return _compute(ontology_triples())


def closure_pairs(triples: Iterable[ox.Triple] | None = None) -> Pairs:
    """(class -> all superclasses, property -> all superproperties), each reflexive.

    Without ``triples`` the bundled ontology is used (computed once per process).
    """
    return _bundled_pairs() if triples is None else _compute(triples)


def _compute(source: Iterable[ox.Triple]) -> Pairs:
    classes: set[str] = set()
    properties: set[str] = set()
    sub_class: dict[str, set[str]] = defaultdict(set)
    sub_prop: dict[str, set[str]] = defaultdict(set)
    for t in source:
        s, p, o = t.subject, t.predicate.value, t.object
        if p == RDF_TYPE and _named(s):
            if term_text(o) in CLASS_TYPES:
                classes.add(s.value)
            elif term_text(o) in PROPERTY_TYPES:
                properties.add(s.value)
        elif p == RDFS_SUBCLASSOF and _named(s) and _named(o):
            sub_class[s.value].add(o.value)
            classes.update((s.value, o.value))
        elif p == RDFS_SUBPROPERTYOF and _named(s) and _named(o):
            sub_prop[s.value].add(o.value)
            properties.update((s.value, o.value))
    return _closure(classes, sub_class), _closure(properties, sub_prop)


def tbox_closure(triples: Iterable[ox.Triple] | None = None) -> list[ox.Triple]:
    """The closure as triples: ``C rdfs:subClassOf D`` and ``p rdfs:subPropertyOf q``.

    Reflexive pairs are included so that a query can always join through the closure
    (``?x a ?c . ?c rdfs:subClassOf uko:Container``) without a UNION for the class itself.
    """
    classes, properties = closure_pairs(triples)
    sc, sp = ox.NamedNode(RDFS_SUBCLASSOF), ox.NamedNode(RDFS_SUBPROPERTYOF)
    out = [
        ox.Triple(ox.NamedNode(c), sc, ox.NamedNode(sup)) for c, sups in sorted(classes.items()) for sup in sorted(sups)
    ]
    out += [
        ox.Triple(ox.NamedNode(p), sp, ox.NamedNode(sup))
        for p, sups in sorted(properties.items())
        for sup in sorted(sups)
    ]
    return out


def superclasses(iri: str, triples: Iterable[ox.Triple] | None = None) -> set[str]:
    """All superclasses of ``iri`` including itself (empty if not a class)."""
    return set(closure_pairs(triples)[0].get(iri, ()))


def most_specific_type(types: Iterable[str]) -> str | None:
    """The class with the deepest ancestry among ``types`` (None for none): its
    DetailLevelMap is the most specific. Ties go to the first IRI in sorted order."""
    ordered = sorted(set(types))
    return max(ordered, key=lambda t: len(superclasses(t))) if ordered else None


def superproperties(iri: str, triples: Iterable[ox.Triple] | None = None) -> set[str]:
    """All superproperties of ``iri`` including itself (empty if not a property)."""
    return set(closure_pairs(triples)[1].get(iri, ()))
