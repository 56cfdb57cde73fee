"""Rendering one UKO node at a DetailDepth, from stored content, at any revision."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox

from cleveragents import iris
from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.history import resolve_revision
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.content import content_store
from cleveragents.indexing.indexer import INDEXED_BY
from cleveragents.indexing.model import RenderRequest, Span
from cleveragents.indexing.plugins import AnalyzerSet
from cleveragents.tbox.closure import most_specific_type
from cleveragents.tbox.detail_levels import effective_levels, resolve_depth
from cleveragents.terms import RDF_TYPE
from cleveragents.vocabulary import uko


@dataclass(frozen=True)
class Rendering:
    iri: str
    type: str  # the class whose DetailLevelMap was used
    level: str
    depth: int
    path: str
    range: str | None
    revision: int
    text: str

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def default_depth(levels: list[Any]) -> int:
    """The level that shows a node's whole content, whatever its type: FULL_SOURCE where
    the map has it (code), else its deepest FULL_* level (FULL_CONFIG, FULL_CONTENT,
    FULL_CATALOG...), else its deepest level."""
    names = [level.name for level in levels]
    if "FULL_SOURCE" in names:
        return names.index("FULL_SOURCE")
    full = [i for i, name in enumerate(names) if name.startswith("FULL_")]
    return full[-1] if full else len(levels) - 1


def render(
    ws: Workspace, iri: str, depth: str | None, analyzers: AnalyzerSet, *, as_of: str | None = None
) -> Rendering:
    _parts(iri)  # a malformed IRI is reported before the store is opened
    with rendering_session(ws, analyzers, as_of=as_of) as session:
        return session.render(iri, depth)


def _parts(iri: str) -> tuple[str, str, str]:
    parts = iris.split_iri(iri)
    if parts is None or not parts[1]:
        raise ValidationError(f"{iri} is not an indexed file or entity (expected an IRI under {iris.SOURCE_BASE})")
    return parts


class RenderSession:
    """Renders many nodes at one revision with one read of the store and the ontology
    (context assembly re-renders dozens of fragments; one ``render`` call each would
    reopen the store and rebuild the detail-level model every time)."""

    def __init__(self, ws: Workspace, store: GraphStore, analyzers: AnalyzerSet, revision: int) -> None:
        self.ws = ws
        self.store = store
        self.analyzers = analyzers
        self.revision = revision
        self.view = store.view(revision, inferred=False)
        self.ontology = store.ontology_triples()
        self._levels: dict[str, list] = {}
        self._depths: dict[tuple[str, str], int] = {}
        self._contents: dict[str, bytes] = {}  # by content hash: a file is read once, not per node
        self._file_facts: dict[str, dict[str, list[str]]] = {}

    def render(self, iri: str, depth: str | None) -> Rendering:
        """``depth``: a level name or integer; None is the type's default (default_depth)."""
        parts = _parts(iri)
        key = parts[2]
        revision = self.revision
        node = ox.NamedNode(iri)
        facts = _facts(self.store, self.view, node)
        if not facts.get(RDF_TYPE):
            raise NotFoundError(
                f"{iri} does not exist at revision {revision}", suggestions=["agents graph history " + iri]
            )
        file_iri = iri.split("#", 1)[0]
        file_facts = self._file_facts.get(file_iri)
        if file_facts is None:  # every node of a file shares its file's facts: read them once
            if len(self._file_facts) >= 4096:
                self._file_facts.clear()
            file_facts = self._file_facts[file_iri] = _facts(self.store, self.view, ox.NamedNode(file_iri))
        indexed_by = (file_facts.get(INDEXED_BY) or [""])[0]
        analyzer = self.analyzers.by_name(indexed_by.split("@", 1)[0])
        if analyzer is None:
            raise NotFoundError(f"no analyzer '{indexed_by}' is installed to render {iri}")
        digest = (file_facts.get(uko.contentHash) or [""])[0]
        content = self._contents.get(digest)
        if content is None:
            if len(self._contents) >= 256:  # a long-lived session must not hold a whole corpus
                self._contents.clear()
            content = self._contents[digest] = content_store(self.ws).get(digest)
        node_type = most_specific_type(facts[RDF_TYPE])
        assert node_type is not None  # the node has types: checked above
        if node_type not in self._levels:
            self._levels[node_type] = effective_levels(node_type, self.ontology)
        levels = self._levels[node_type]
        if depth is None:
            number = default_depth(levels)
        else:
            if (node_type, depth) not in self._depths:
                self._depths[node_type, depth] = resolve_depth(node_type, depth, self.ontology)
            number = self._depths[node_type, depth]
        if number >= len(levels):
            raise ValidationError(f"depth {number} is beyond {node_type}'s deepest level {len(levels) - 1}")
        source_range = (facts.get(uko.sourceRange) or [None])[0]
        request = RenderRequest(
            key=key,
            types=tuple(facts[RDF_TYPE]),
            path=parts[1],
            content=content,
            span=span_of_range(content, source_range) if source_range and key else None,
            level=levels[number].name,
            depth=number,
        )
        return Rendering(
            iri, node_type, levels[number].name, number, parts[1], source_range, revision, analyzer.render(request)
        )


@contextmanager
def rendering_session(ws: Workspace, analyzers: AnalyzerSet, *, as_of: str | None = None) -> Iterator[RenderSession]:
    """A RenderSession at ``as_of`` (default: the head), on one read-only open of the store."""
    with ws.reader() as store:
        yield RenderSession(ws, store, analyzers, resolve_revision(store, as_of))


def _facts(store: GraphStore, view: object, node: ox.NamedNode) -> dict[str, list[str]]:
    facts: dict[str, list[str]] = {}
    for row in store.query(f"SELECT ?p ?o WHERE {{ {node} ?p ?o }}", view=view):  # type: ignore[arg-type]
        facts.setdefault(row["p"].value, []).append(row["o"].value)
    return facts


def span_of_range(content: bytes, source_range: str) -> Span:
    """Byte offsets of a 'line:col-line:col' range (columns count bytes, as tree-sitter's do)."""
    sl, sc, el, ec = Span.parse(source_range)
    starts = [0, *(m.end() for m in re.finditer(b"\n", content))]

    def offset(line: int, col: int) -> int:
        return min(starts[min(line, len(starts)) - 1] + col, len(content))

    return Span(sl, sc, el, ec, offset(sl, sc), offset(el, ec))
