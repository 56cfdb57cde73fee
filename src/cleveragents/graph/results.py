"""Typed SPARQL results and datasets for code that queries an ``ox.Store`` directly.

``Store.query`` returns solutions, a boolean or triples depending on the query form, so
its declared return type is the union of the three; and its ``default_graph`` parameter
wants exactly a ``list[NamedNode | BlankNode | DefaultGraph]`` (lists are invariant, so a
``list[NamedNode]`` is refused by the type checker). These helpers say which form the
caller wrote, and fail loudly when the query text was of another form.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

GraphName = ox.NamedNode | ox.BlankNode | ox.DefaultGraph
"""What may name a graph of a dataset: ``default_graph`` and ``Quad.graph_name``."""


def dataset(graphs: Iterable[GraphName]) -> list[GraphName]:
    """Graphs as the ``default_graph`` argument of ``Store.query``."""
    return list(graphs)


def solutions(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> ox.QuerySolutions:
    """The rows of a SELECT."""
    if not isinstance(result, ox.QuerySolutions):
        raise TypeError(f"expected the solutions of a SELECT, got {type(result).__name__}")
    return result


def triples(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> ox.QueryTriples:
    """The triples of a CONSTRUCT or DESCRIBE."""
    if not isinstance(result, ox.QueryTriples):
        raise TypeError(f"expected the triples of a CONSTRUCT, got {type(result).__name__}")
    return result


def ntriples(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> bytes:
    """A CONSTRUCT's triples as N-Triples (empty when it built none)."""
    return triples(result).serialize(format=ox.RdfFormat.N_TRIPLES) or b""
