"""Run one analyzer on one file and look at the result as a graph (analyzer unit tests)."""

from __future__ import annotations

import pyoxigraph as ox

from cleveragents.indexing.emit import content_hash, entity_lines
from cleveragents.indexing.model import Analyzer, Entity, FileAnalysis, SourceFile
from cleveragents.iris import file_iri
from cleveragents.terms import PREFIXES

RESOURCE_ULID = "01TESTRESOURCE0000000000000"
RESOURCE_IRI = f"https://cleveragents.ai/id/resource/{RESOURCE_ULID}"


def source(path: str, text: str | bytes) -> SourceFile:
    data = text.encode() if isinstance(text, str) else text
    return SourceFile(path=path, data=data, content_hash=content_hash(data))


def analyze(analyzer: Analyzer, path: str, text: str | bytes) -> FileAnalysis:
    return analyzer.analyze(source(path, text))


def entity(analysis: FileAnalysis, key: str) -> Entity:
    for found in analysis.entities:
        if found.key == key:
            return found
    raise AssertionError(f"no entity {key!r}; keys: {[e.key for e in analysis.entities]}")


def graph(analyzer: Analyzer, path: str, text: str | bytes) -> ox.Store:
    """The file's triples (without cross-file edges) in an in-memory store; must parse."""
    src = source(path, text)
    lines = entity_lines(analyzer.analyze(src), src, RESOURCE_ULID, RESOURCE_IRI)
    store = ox.Store()
    store.load("\n".join(lines).encode(), format=ox.RdfFormat.N_TRIPLES)
    return store


def select(store: ox.Store, query: str) -> list[dict[str, str]]:
    prologue = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())
    results = store.query(prologue + query)
    names = [v.value for v in results.variables]
    return [{n: row[n].value for n in names if row[n] is not None} for row in results]


def iri(path: str, key: str = "") -> str:
    return file_iri(RESOURCE_ULID, path, key)
