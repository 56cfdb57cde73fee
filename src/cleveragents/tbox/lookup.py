"""Term lookup for ``show <term>``: what the ontology says about a class, property or individual."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import pyoxigraph as ox

from cleveragents.errors import NotFoundError
from cleveragents.iris import term_text
from cleveragents.terms import (
    OWL,
    PREFIXES,
    RDF,
    RDF_TYPE,
    RDFS,
    RDFS_SUBCLASSOF,
    RDFS_SUBPROPERTYOF,
)

from .modules import list_modules, ontology_triples, parse_file

_KINDS: dict[str, str] = {
    OWL + "Class": "class",
    RDFS + "Class": "class",
    OWL + "ObjectProperty": "object property",
    OWL + "DatatypeProperty": "datatype property",
    OWL + "AnnotationProperty": "annotation property",
    RDF + "Property": "property",
    OWL + "NamedIndividual": "individual",
    OWL + "Ontology": "ontology",
}


@dataclass(frozen=True)
class TermInfo:
    """What the ontology states about one term; IRIs are full, lists are sorted."""

    iri: str
    kind: str  # "class", "object property", "datatype property", ..., "individual"
    label: str | None
    comment: str | None
    domains: tuple[str, ...]
    ranges: tuple[str, ...]
    supers: tuple[str, ...]  # direct superclasses or superproperties
    subs: tuple[str, ...]  # direct subclasses or subproperties
    types: tuple[str, ...]  # rdf:type values other than the kind's own (classes of an individual)
    module: str | None  # prefix of the module file that declares the term


def expand_term(term: str) -> str:
    """``prefix:local`` to a full IRI using the standard prefixes; full IRIs pass through."""
    if term.startswith("<") and term.endswith(">"):
        return term[1:-1]
    prefix, sep, local = term.partition(":")
    if sep and prefix in PREFIXES and not local.startswith("//"):
        return PREFIXES[prefix] + local
    return term


@cache
def _declaring_modules() -> dict[str, str]:
    """Term IRI -> prefix of the module file that gives it an rdf:type."""
    out: dict[str, str] = {}
    for module in list_modules():
        for t in parse_file(module.path):
            if t.predicate.value == RDF_TYPE and isinstance(t.subject, ox.NamedNode):
                out.setdefault(term_text(t.subject), module.prefix)
    return out


class _Index:
    """Triples indexed by subject and by object, for repeated lookups."""

    def __init__(self, triples: Iterable[ox.Triple]) -> None:
        self.by_subject: dict[str, list[ox.Triple]] = defaultdict(list)
        self.by_object: dict[str, list[ox.Triple]] = defaultdict(list)
        for t in triples:
            self.by_subject[term_text(t.subject)].append(t)
            self.by_object[term_text(t.object)].append(t)

    def objects(self, s: str, p: str) -> list[str]:
        return sorted({term_text(t.object) for t in self.by_subject.get(s, ()) if t.predicate.value == p})

    def subjects(self, p: str, o: str) -> list[str]:
        return sorted({term_text(t.subject) for t in self.by_object.get(o, ()) if t.predicate.value == p})


@cache
def _bundled_index() -> _Index:
    return _Index(ontology_triples())


def show_term(term: str, triples: Iterable[ox.Triple] | None = None) -> TermInfo:
    """Describe ``term`` (``uko-code:calls`` or a full IRI) from the bundled ontology or
    from ``triples`` (e.g. the store's ontology graph with a user's extension)."""
    iri = expand_term(term)
    index = _bundled_index() if triples is None else _Index(triples)
    if iri not in index.by_subject:
        known = sorted(k for k in index.by_subject if "://" in k)
        close = difflib.get_close_matches(iri, known, n=3, cutoff=0.8)
        raise NotFoundError(f"unknown ontology term {term!r}", suggestions=close)
    types = index.objects(iri, RDF_TYPE)
    kinds = [_KINDS[t] for t in types if t in _KINDS and _KINDS[t] != "individual"]
    if not kinds:
        kinds = ["individual"]
    is_class = kinds[0] == "class"
    hierarchy = RDFS_SUBCLASSOF if is_class else RDFS_SUBPROPERTYOF
    label = index.objects(iri, RDFS + "label")
    comment = index.objects(iri, RDFS + "comment")
    return TermInfo(
        iri=iri,
        kind=kinds[0],
        label=label[0] if label else None,
        comment=comment[0] if comment else None,
        domains=tuple(index.objects(iri, RDFS + "domain")),
        ranges=tuple(index.objects(iri, RDFS + "range")),
        supers=tuple(index.objects(iri, hierarchy)),
        subs=tuple(index.subjects(hierarchy, iri)),
        types=tuple(t for t in types if t not in _KINDS),
        module=_declaring_modules().get(iri),
    )
