"""Discover the ontology modules and shapes files, and load them as RDF.

Each ``ontology/*.ttl`` file is one module with an ``owl:Ontology`` header (imports,
label, version, ``uko:layer``, preferred prefix).

Blank nodes are kept as they are: SHACL requires property paths (sequence, inverse) to be
blank nodes and OWL requires it of axiom and list nodes, so skolemizing them would change
the meaning. The bundled ontology has none; the shapes have many. Loading therefore
*replaces* a graph's content in one atomic update, so reloading never accumulates copies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, QuerySyntaxError, ValidationError
from cleveragents.iris import term_text
from cleveragents.resources import data_path
from cleveragents.terms import OWL, RDF_TYPE, RDFS, UKO

VANN: Final = "http://purl.org/vocab/vann/"
_OWL_ONTOLOGY = ox.NamedNode(OWL + "Ontology")
_TYPE = ox.NamedNode(RDF_TYPE)

GraphName = ox.NamedNode | ox.BlankNode | ox.DefaultGraph


@dataclass(frozen=True)
class OntologyModule:
    """One ontology module file and what its header declares."""

    prefix: str  # e.g. "uko-code"; "" if the header names none
    namespace: str  # e.g. "https://cleveragents.ai/ontology/uko/code#"
    iri: str  # the owl:Ontology IRI
    path: Path
    layer: int | None  # UKO layer 0-3; None for non-UKO modules such as ca
    imports: tuple[str, ...]  # ontology IRIs of the parent modules
    label: str
    version: str


def module_files() -> list[Path]:
    """The ontology module files, sorted by name."""
    return sorted(data_path("ontology").glob("*.ttl"))


def shape_files() -> list[Path]:
    """The SHACL shapes files, sorted by name."""
    return sorted(data_path("shapes").glob("*.ttl"))


def parse_file(path: Path) -> list[ox.Triple]:
    """Parse one Turtle file."""
    try:
        quads = list(ox.parse(path=str(path), format=ox.RdfFormat.TURTLE))
    except SyntaxError as exc:
        raise QuerySyntaxError(f"{path.name}: {exc}") from exc
    return [q.triple for q in quads]


def _literal(triples: list[ox.Triple], subject: ox.NamedNode, predicate: str) -> str | None:
    for t in triples:
        if t.subject == subject and t.predicate.value == predicate:
            return term_text(t.object)
    return None


def _module_from(path: Path, triples: list[ox.Triple]) -> OntologyModule:
    headers = [t.subject for t in triples if t.predicate == _TYPE and t.object == _OWL_ONTOLOGY]
    if len(headers) != 1 or not isinstance(headers[0], ox.NamedNode):
        raise ValidationError(f"{path.name}: expected exactly one owl:Ontology header")
    iri = headers[0]
    layer = _literal(triples, iri, UKO + "layer")
    imports = tuple(term_text(t.object) for t in triples if t.subject == iri and t.predicate.value == OWL + "imports")
    return OntologyModule(
        prefix=_literal(triples, iri, VANN + "preferredNamespacePrefix") or "",
        namespace=_literal(triples, iri, VANN + "preferredNamespaceUri") or iri.value + "#",
        iri=iri.value,
        path=path,
        layer=int(layer) if layer is not None else None,
        imports=imports,
        label=_literal(triples, iri, RDFS + "label") or path.stem,
        version=_literal(triples, iri, OWL + "versionInfo") or "",
    )


@cache
def list_modules() -> tuple[OntologyModule, ...]:
    """All modules, parents before children (by layer, then prefix; ca last)."""
    modules = [_module_from(p, parse_file(p)) for p in module_files()]
    return tuple(sorted(modules, key=lambda m: (m.layer if m.layer is not None else 99, m.prefix)))


def module_by_prefix(prefix: str) -> OntologyModule:
    """The module whose preferred prefix is ``prefix`` (with or without the colon)."""
    wanted = prefix.rstrip(":")
    for module in list_modules():
        if module.prefix == wanted:
            return module
    raise NotFoundError(f"no ontology module with prefix {wanted!r}")


def module_of(iri: str) -> OntologyModule | None:
    """The module whose namespace the IRI is in (longest namespace wins)."""
    matches = [m for m in list_modules() if iri.startswith(m.namespace)]
    return max(matches, key=lambda m: len(m.namespace)) if matches else None


@cache
def ontology_triples() -> tuple[ox.Triple, ...]:
    """Every module's triples, parents first."""
    return tuple(t for module in list_modules() for t in parse_file(module.path))


@cache
def shapes_triples() -> tuple[ox.Triple, ...]:
    """Every shapes file's triples (blank nodes included: SHACL paths must be blank nodes)."""
    return tuple(t for path in shape_files() for t in parse_file(path))


def as_quads(triples: Iterable[ox.Triple], graph: GraphName | None = None) -> list[ox.Quad]:
    """The triples placed in ``graph`` (the default graph if None)."""
    g = graph if graph is not None else ox.DefaultGraph()
    return [ox.Quad(t.subject, t.predicate, t.object, g) for t in triples]


def ntriples(triples: Iterable[ox.Triple]) -> bytes:
    """Serialize triples as N-Triples."""
    return ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b""


def replace_graph(store: ox.Store, graph: GraphName | None, triples: Iterable[ox.Triple]) -> int:
    """Make ``triples`` the whole content of ``graph`` in one atomic update; returns the count.

    Drop and insert run as one SPARQL update request, which Oxigraph applies in a single
    transaction, so readers see either the old or the new content.
    """
    rows = list(triples)
    body = ntriples(rows).decode()
    if graph is None or isinstance(graph, ox.DefaultGraph):
        update = f"DROP SILENT DEFAULT ;\nINSERT DATA {{\n{body}}}"
    else:
        update = f"DROP SILENT GRAPH {graph} ;\nINSERT DATA {{ GRAPH {graph} {{\n{body}}} }}"
    store.update(update)
    return len(rows)


def load_ontology(store: ox.Store, graph: GraphName | None = None, extra: Iterable[ox.Triple] = ()) -> int:
    """Replace ``graph`` of ``store`` with the ontology (plus ``extra`` triples, e.g. a user
    module); returns the number of triples written."""
    return replace_graph(store, graph, [*ontology_triples(), *extra])


def load_shapes(store: ox.Store, graph: GraphName | None = None) -> int:
    """Replace ``graph`` of ``store`` with the shapes; returns the number of triples written."""
    return replace_graph(store, graph, shapes_triples())


def ontology_ntriples() -> bytes:
    """All ontology triples as N-Triples (e.g. for ``Store.load`` or other tools)."""
    return ntriples(ontology_triples())


def shapes_ntriples() -> bytes:
    """All shapes triples as N-Triples."""
    return ntriples(shapes_triples())
