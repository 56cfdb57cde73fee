"""The W3C SHACL Core test manifests, and one case run through both validators.

A case's data graph is loaded into a pyoxigraph Store (keeping blank node labels) and read
back, so pyshacl sees exactly the data the compiled validator sees: Oxigraph canonicalises
literals on write (``"300"^^xsd:byte`` becomes ``"300"^^xsd:integer``, ``"1"^^xsd:boolean``
becomes ``"true"``), and the comparison must not depend on that. Expected values from the
manifests are canonicalised the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
import rdflib
from rdflib import RDF, RDFS, Graph, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from cleveragents.validation import compile_shapes
from cleveragents.validation.rdfterms import to_rdflib
from cleveragents.validation.reference import pyshacl_validate, results_to_violations
from cleveragents.validation.report import Violation

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
SHT = Namespace("http://www.w3.org/ns/shacl-test#")
DATA = ox.NamedNode("urn:test:data")

Key = tuple[str, str, str, str]


@dataclass
class Case:
    id: str  # e.g. "node/class-001"
    label: str
    manifest_path: Path
    manifest: Graph
    result: Node
    data_path: Path
    shapes_path: Path

    def graph(self, path: Path) -> Graph:
        """The graph of a file of the case (the manifest itself when the case says <>)."""
        return self.manifest if path == self.manifest_path else _parse(path)


def load_cases(core: Path) -> list[Case]:
    """Every sht:Validate entry reachable from ``core/manifest.ttl``."""
    cases: list[Case] = []
    for manifest_path in _manifests(core / "manifest.ttl"):
        g = _parse(manifest_path)
        for manifest in g.subjects(RDF.type, MF.Manifest):
            entries = g.value(manifest, MF.entries)
            if entries is None:
                continue
            for entry in Collection(g, entries):
                if (entry, RDF.type, SHT.Validate) not in g:
                    continue
                action = g.value(entry, MF.action)
                data = Path(_file(g.value(action, SHT.dataGraph)))
                shapes = Path(_file(g.value(action, SHT.shapesGraph)))
                rel = manifest_path.relative_to(core).with_suffix("")
                name = str(entry).rsplit("/", 1)[-1]
                case_id = f"{rel.parent.as_posix()}/{name}"
                label = str(g.value(entry, RDFS.label) or name)
                result = g.value(entry, MF.result)
                cases.append(Case(case_id, label, manifest_path, g, result, data, shapes))
    return sorted(cases, key=lambda c: c.id)


def _parse(path: Path) -> Graph:
    """A test file as rdflib reads it, but with lexical forms kept (no normalisation):
    expected values such as "2011-01-01"^^xsd:dateTime are ill-formed on purpose."""
    g = Graph()
    previous, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
    try:
        g.parse(path, format="turtle", publicID=path.as_uri())
    finally:
        rdflib.NORMALIZE_LITERALS = previous
    return g


def _manifests(path: Path) -> list[Path]:
    g = _parse(path)
    out = [path]
    for include in g.objects(None, MF.include):
        out.extend(_manifests(Path(_file(include))))
    return out


def _file(uri: Node) -> str:
    return str(uri).removeprefix("file://")


@dataclass
class Outcome:
    ours: list[Violation]
    reference: list[Violation]
    expected: list[Violation]
    expected_conforms: bool


def run_case(case: Case, store: ox.Store | None = None) -> Outcome:
    """Validate a case with the compiled validator and with pyshacl on the same data."""
    store = store if store is not None else ox.Store()
    store.load(path=case.data_path, format=ox.RdfFormat.TURTLE, base_iri=case.data_path.as_uri(), to_graph=DATA)
    stored = Graph()
    for q in store.quads_for_pattern(None, None, None, DATA):
        stored.add((to_rdflib(q.subject), to_rdflib(q.predicate), to_rdflib(q.object)))
    shapes_text = case.shapes_path.read_bytes()
    compiled = compile_shapes(shapes_text, base_iri=case.shapes_path.as_uri())
    ours = compiled.validate(store, default_graph=[DATA])
    reference = [_canonical(v) for v in pyshacl_validate(stored, case.graph(case.shapes_path))]
    expected = [_canonical(v) for v in results_to_violations(_expected_graph(case))]
    conforms = case.manifest.value(case.result, URIRef("http://www.w3.org/ns/shacl#conforms"))
    return Outcome(ours, reference, expected, bool(conforms is not None and conforms.toPython()))


def _expected_graph(case: Case) -> Graph:
    """Only the expected report: the triples reachable from the case's mf:result."""
    g, todo, seen = Graph(), [case.result], set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for p, o in case.manifest.predicate_objects(node):
            g.add((node, p, o))
            todo.append(o)
    return g


_CANON = ox.Store()


def _canonical(v: Violation) -> Violation:
    """The expected row with its literals as Oxigraph stores them."""

    def canon(text: str | None) -> str | None:
        if text is None or not text.startswith('"'):
            return text
        term = next(iter(ox.parse(f"<urn:s> <urn:p> {text} .", format=ox.RdfFormat.N_TRIPLES))).object
        _CANON.clear()
        _CANON.add(ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), term))
        return str(next(iter(_CANON)).object)

    return Violation(
        focus_node=canon(v.focus_node) or "",
        result_path=v.result_path,
        constraint=v.constraint,
        message=v.message,
        value=canon(v.value),
        shape=v.shape,
        severity=v.severity,
    )


def keys(rows: list[Violation], *, blank_wildcard: bool = False) -> set[Key]:
    """The comparison set; with ``blank_wildcard`` every blank node label reads ``_:*``."""
    out = set()
    for v in rows:
        key = v.key()
        if blank_wildcard:
            key = tuple(re.sub(r"_:[A-Za-z0-9_\-.]+", "_:*", part) for part in key)  # type: ignore[assignment]
        out.add(key)
    return out
