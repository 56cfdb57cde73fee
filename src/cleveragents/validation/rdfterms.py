"""Term conversions between rdflib (shapes graph, pyshacl) and pyoxigraph (data), and the
text forms the validator prints.

Both validators must print a term identically, so every label goes through pyoxigraph's
N-Triples serialisation, even for rdflib terms.
"""

from __future__ import annotations

from typing import Any

import pyoxigraph as ox
from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

OxTerm = ox.NamedNode | ox.BlankNode | ox.Literal
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def to_ox(term: Node) -> OxTerm:
    """An rdflib term as a pyoxigraph term (blank node labels are kept)."""
    if isinstance(term, URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        if term.datatype is not None:
            return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
        return ox.Literal(str(term))
    raise TypeError(f"not an RDF term: {term!r}")


def to_rdflib(term: Any) -> Node:
    """A pyoxigraph term as an rdflib term (blank node labels are kept)."""
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        if term.datatype.value == _XSD_STRING:
            return Literal(term.value)  # rdflib tells a plain literal from ^^xsd:string; RDF 1.1 does not
        # normalize=False keeps the lexical form ("1"^^xsd:boolean is not the term true).
        return Literal(term.value, datatype=URIRef(term.datatype.value), normalize=False)
    raise TypeError(f"not an RDF term: {term!r}")


def sparql(term: Node | OxTerm) -> str:
    """A term as a SPARQL constant (N-Triples syntax is valid SPARQL for IRIs and literals)."""
    ox_term = to_ox(term) if isinstance(term, Node) else term
    if isinstance(ox_term, ox.BlankNode):
        # A blank node in query text is a fresh variable, never the data's node.
        raise ValueError("blank nodes cannot be written as SPARQL constants")
    return str(ox_term)


def nt(term: Node | OxTerm | ox.Triple) -> str:
    """N-Triples form: <iri>, _:label, "lex"^^<dt> or "lex"@lang (<<( s p o )>> for a triple term)."""
    return str(to_ox(term) if isinstance(term, Node) else term)


def label(term: Node | OxTerm) -> str:
    """How a focus node or shape is shown: a bare IRI, _:label, or an N-Triples literal."""
    ox_term = to_ox(term) if isinstance(term, Node) else term
    return ox_term.value if isinstance(ox_term, ox.NamedNode) else str(ox_term)
