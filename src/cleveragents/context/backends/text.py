"""The text backend: BM25 (bm25s) over the documents of one revision, with identifier-aware
tokens. Indexes live in ``<data dir>/indexes/text/rev-<N>/``; tokens are cached per document
key (content hash + header) in ``tokens-v<N>.jsonl``, so a new revision re-tokenizes only the
documents that changed and then rebuilds the BM25 matrix, which takes little time."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from cleveragents.context.backends.catalog import index_root, revision_dir, write_revision_dir
from cleveragents.context.backends.documents import Document, TextReader
from cleveragents.context.backends.tokenize import tokenize
from cleveragents.context.model import TextResult
from cleveragents.graph.workspace import Workspace

_EMPTY = "\x00empty"  # bm25s needs at least one token per document


Tokens = tuple[list[str], list[str]]  # (name field, body field)


class TokenCache:
    """Document key -> its fields' tokens, as an append-only JSON-lines file (compacted when
    mostly stale)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Tokens] = {}
        self._lines = 0
        if path.exists():
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    try:
                        key, name, body = json.loads(line)
                    except ValueError:
                        continue  # a torn last line after a crash
                    self.entries[key] = (_split(name), _split(body))
                    self._lines += 1

    def add(self, fresh: dict[str, Tokens]) -> None:
        self.entries.update(fresh)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            for key, (name, body) in fresh.items():
                handle.write(json.dumps([key, " ".join(name), " ".join(body)]) + "\n")
        self._lines += len(fresh)

    def compact(self, live: set[str]) -> None:
        """Rewrite with only the live keys once stale lines outnumber them."""
        if self._lines <= 2 * max(len(live), 1000):
            return
        self.entries = {k: v for k, v in self.entries.items() if k in live}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-")  # unique: processes may race
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for key, (name, body) in self.entries.items():
                handle.write(json.dumps([key, " ".join(name), " ".join(body)]) + "\n")
        os.replace(tmp, self.path)
        self._lines = len(self.entries)


def _split(text: str) -> list[str]:
    return text.split(" ") if text else []


NAME_WEIGHT = 1.0  # the name field's BM25 score is added with this weight (a simple BM25F)
TOKENS_VERSION = 2  # bump when tokenize() or document_tokens() change: the cache is keyed on it


def document_tokens(document: Document, text: str) -> Tokens:
    """What a document is found by, in two fields: its name (qualified name and type) and its
    body (path and text). A separate name field keeps a long body from drowning its name."""
    name = f"{document.type_name} {document.qualified_name or document.name}"
    return tokenize(name), tokenize(f"{document.path}\n{text}")


class BM25TextBackend:
    """BM25 over every indexed resource at one revision; ``search`` filters by resource."""

    FIELDS = ("name", "body")

    def __init__(
        self, ws: Workspace, revision: int, documents: Sequence[Document], fields: dict[str, bm25s.BM25]
    ) -> None:
        self.revision = revision
        self.documents = list(documents)
        self._fields = fields
        self._reader = TextReader(ws)
        ulids = sorted({d.resource for d in self.documents})
        self._resource_code = {ulid: i for i, ulid in enumerate(ulids)}
        self._codes = np.array([self._resource_code[d.resource] for d in self.documents], dtype=np.int32)
        self.stats: dict[str, Any] = {}

    @classmethod
    def open(cls, ws: Workspace, revision: int, documents: Sequence[Document]) -> tuple[BM25TextBackend, str | None]:
        """Load the revision's index, or build it (reusing cached tokens); with a note saying why
        it was built, or None when it was loaded."""
        path = revision_dir(ws, "text", revision)
        reason = f"text index for revision {revision} was missing"
        if path.is_dir():
            try:
                fields = {f: bm25s.BM25.load(str(path / f), mmap=True, show_progress=False) for f in cls.FIELDS}
                if all(int(b.scores["num_docs"]) == max(len(documents), 1) for b in fields.values()):
                    return cls(ws, revision, documents, fields), None
                reason = f"text index for revision {revision} did not match its documents"
            except (OSError, ValueError, KeyError) as exc:
                reason = f"text index for revision {revision} was unreadable ({exc})"
        backend = cls.build(ws, revision, documents)
        stats = backend.stats
        note = f"{reason}: built it ({stats['tokenized']} documents tokenized, {stats['reused']} reused)"
        return backend, note

    @classmethod
    def build(cls, ws: Workspace, revision: int, documents: Sequence[Document]) -> BM25TextBackend:
        started = time.perf_counter()
        cache = TokenCache(index_root(ws, "text") / f"tokens-v{TOKENS_VERSION}.jsonl")
        missing = {d.key: d for d in documents if d.key not in cache.entries}
        reader = TextReader(ws)
        cache.add({d.key: document_tokens(d, text) for d, text in reader.texts(missing.values())})
        tokenized = time.perf_counter()
        fields: dict[str, bm25s.BM25] = {}
        for i, field in enumerate(cls.FIELDS):
            corpus = [cache.entries[d.key][i] or [_EMPTY] for d in documents]
            fields[field] = bm25s.BM25(k1=1.2, b=0.75)
            fields[field].index(corpus or [[_EMPTY]], show_progress=False)

        def save(tmp: Path) -> None:
            for field, bm25 in fields.items():
                bm25.save(str(tmp / field), show_progress=False)

        write_revision_dir(ws, "text", revision, save)
        cache.compact({d.key for d in documents})
        backend = cls(ws, revision, documents, fields)
        backend.stats = {
            "documents": len(documents),
            "tokenized": len(missing),
            "reused": len(documents) - len(missing),
            "tokenized_keys": sorted(missing),
            "tokenize_seconds": round(tokenized - started, 3),
            "build_seconds": round(time.perf_counter() - started, 3),
        }
        return backend

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every document: body plus the weighted name field."""
        tokens = list(dict.fromkeys(tokenize(query)))
        total = np.zeros(len(self.documents), dtype=np.float32)
        for field, bm25 in self._fields.items():
            ids = [bm25.vocab_dict[t] for t in tokens if t in bm25.vocab_dict]
            if ids:
                weight = NAME_WEIGHT if field == "name" else 1.0
                total += weight * np.asarray(bm25.get_scores_from_ids(ids), dtype=np.float32)[: len(self.documents)]
        return total

    def _mask(self, resource_filter: set[str]) -> np.ndarray | None:
        if not resource_filter:
            return None
        codes = [self._resource_code[r] for r in resource_filter if r in self._resource_code]
        return np.isin(self._codes, codes)

    def search(self, query: str, *, resource_filter: set[str], limit: int = 20) -> list[TextResult]:
        """The best ``limit`` documents for ``query`` (BM25 scores, > 0), from the resources in
        ``resource_filter`` (empty: all)."""
        if not self.documents or limit <= 0:
            return []
        scores = self.scores(query)
        mask = self._mask(resource_filter)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [self._result(self.documents[i], float(scores[i])) for i in top if scores[i] > 0]

    def _result(self, document: Document, score: float) -> TextResult:
        text = self._reader.text(document)
        return TextResult(
            resource_ulid=document.resource,
            path=document.path,
            line_range=document.line_range(text),
            content=text,
            score=score,
            uko_node=document.iri,
        )
