"""What the text and vector backends index: one document per UKO node with source content
(modules and files, classes, functions, methods, fields, document sections, config and schema
nodes), read with SPARQL at one revision. A node's text is a slice of its file's stored
content (file contents are kept once per content hash, as renderings.py reads them)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cleveragents import iris
from cleveragents.graph.history import resolve_revision
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.content import ContentStore, content_store
from cleveragents.indexing.indexer import INDEXED_BY
from cleveragents.indexing.renderings import span_of_range
from cleveragents.iris import RESOURCE_BASE
from cleveragents.tbox.closure import most_specific_type, superclasses
from cleveragents.terms import UKO_DOC
from cleveragents.vocabulary import uko

# Asserted types only (inferred=False): one row per (node, type); the file node of an
# entity carries the hash of the stored file content and the analyzer that indexed it.
_DOCUMENTS_SPARQL = f"""
SELECT ?node ?path ?range ?hash ?type ?name ?qname ?indexedBy WHERE {{
  ?node uko:sourceResource ?res ; uko:sourcePath ?path ; uko:contentHash ?hash ; a ?type .
  OPTIONAL {{ ?node uko:sourceRange ?range }}
  OPTIONAL {{ ?node uko:name ?name }}
  OPTIONAL {{ ?node uko-code:qualifiedName ?qname }}
  OPTIONAL {{ ?node <{INDEXED_BY}> ?indexedBy }}
}}"""


FILES_READ_ONE_BY_ONE = 200  # ~10 ms a file (Django); beyond this, one full query (~5 s) is faster
_FILES_SPARQL = f"""
SELECT ?file ?hash ?by WHERE {{ ?file <{INDEXED_BY}> ?by ; uko:contentHash ?hash ; uko:sourceResource ?res }}"""


@dataclass(frozen=True, slots=True)
class Document:
    iri: str
    resource: str  # resource ULID
    path: str
    source_range: str | None  # 'line:col-line:col'; None: the whole file
    node_type: str  # the most specific asserted class
    name: str
    qualified_name: str
    content_hash: str  # the node's own uko:contentHash: changes when its content does
    file_hash: str  # the stored content of its file

    def line_range(self, text: str) -> tuple[int, int]:
        """1-based inclusive lines; ``text`` (the node's own) gives a whole file's last line."""
        if self.source_range is None:
            return 1, text.count("\n") + 1
        start, end = self.source_range.split("-")
        return int(start.split(":")[0]), int(end.split(":")[0])

    @property
    def type_name(self) -> str:
        return self.node_type.rsplit("#", 1)[-1].rsplit("/", 1)[-1]

    @property
    def key(self) -> str:
        """Cache key of everything a backend derives from this document (content and header)."""
        raw = f"{self.content_hash}\x00{self.node_type}\x00{self.qualified_name}\x00{self.path}"
        return hashlib.sha1(raw.encode(), usedforsecurity=False).hexdigest()

    def header(self) -> str:
        """A one-line description: type, qualified name and path."""
        return f"{self.type_name} {self.qualified_name or self.name} ({self.path})"


@lru_cache(maxsize=512)
def _excluded(node_type: str) -> bool:
    """Docstrings and imports are part of their parent's text; so are a document's paragraphs
    and lists, which would otherwise be indexed twice (in themselves and in their section)."""
    ancestors = superclasses(node_type)
    return uko.Annotation in ancestors or (uko.Atom in ancestors and node_type.startswith(UKO_DOC))


def _text(term: object) -> str:
    return getattr(term, "value", "") if term is not None else ""


def file_fingerprints(store: GraphStore, revision: int) -> dict[str, str]:
    """File IRI -> its content hash and analyzer: while neither changes, neither do its nodes."""
    rows = store.query(_FILES_SPARQL, view=store.view(revision, inferred=False))
    return {row["file"].value: f"{row['hash'].value} {row['by'].value}" for row in rows}


def _sparql_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def _file_sparql(file_iri: str) -> str | None:
    """The documents query for one file's nodes, with its resource and path as constants
    (Oxigraph plans those well; a VALUES block over them is evaluated after the full scan)."""
    parts = iris.split_iri(file_iri)
    if parts is None:
        return None
    pattern = f"?node uko:sourcePath {_sparql_string(parts[1])} ; uko:sourceResource <{RESOURCE_BASE}{parts[0]}> ;"
    return _DOCUMENTS_SPARQL.replace("?node uko:sourceResource ?res ;", pattern, 1)


def load_documents(
    store: GraphStore, revision: int, resources: Iterable[str] | None = None, *, files: Iterable[str] | None = None
) -> list[Document]:
    """Every indexable node valid at ``revision``, sorted by IRI; ``resources`` (ULIDs) or
    ``files`` (file IRIs) limit them."""
    wanted = set(resources) if resources is not None else None
    first: dict[str, tuple[str, Any]] = {}  # IRI -> (resource ULID, its first row)
    types: dict[str, list[str]] = {}
    file_hashes: dict[str, str] = {}  # file IRI -> content hash, for files an analyzer indexed
    view = store.view(revision, inferred=False)
    queries = [_DOCUMENTS_SPARQL] if files is None else [q for f in files if (q := _file_sparql(f))]
    rows = (row for sparql in queries for row in store.query(sparql, view=view))
    for row in rows:
        iri = row["node"].value
        if iri not in first:
            parts = iris.split_iri(iri)
            if parts is None or (wanted is not None and parts[0] not in wanted):
                continue
            first[iri] = (parts[0], row)
            if row["indexedBy"] is not None and "#" not in iri:
                file_hashes[iri] = row["hash"].value
        types.setdefault(iri, []).append(row["type"].value)
    documents = []
    for iri, (resource, row) in first.items():
        file_hash = file_hashes.get(iri.split("#", 1)[0])
        if file_hash is None:  # a directory, or a file no analyzer read: no stored content
            continue
        node_type = most_specific_type(types[iri])
        if node_type is None or _excluded(node_type):
            continue
        documents.append(
            Document(
                iri=iri,
                resource=resource,
                path=row["path"].value,
                source_range=_text(row["range"]) or None if "#" in iri else None,
                node_type=node_type,
                name=_text(row["name"]),
                qualified_name=_text(row["qname"]),
                content_hash=row["hash"].value,
                file_hash=file_hash,
            )
        )
    documents.sort(key=lambda d: d.iri)
    return documents


def update_documents(
    store: GraphStore, revision: int, previous: Sequence[Document], previous_files: dict[str, str]
) -> tuple[list[Document], dict[str, str], int]:
    """The documents at ``revision`` from those of another revision: only files whose content
    or analyzer differ are read again. Returns them, the file fingerprints and how many files
    were read (a large change reads everything: one query is cheaper than many)."""
    files = file_fingerprints(store, revision)
    changed = {iri for iri, fingerprint in files.items() if previous_files.get(iri) != fingerprint}
    if len(changed) > max(FILES_READ_ONE_BY_ONE, len(files) // 20):
        return load_documents(store, revision), files, len(files)
    kept = [d for d in previous if (f := d.iri.split("#", 1)[0]) in files and f not in changed]
    fresh = load_documents(store, revision, files=changed) if changed else []
    return sorted(kept + fresh, key=lambda d: d.iri), files, len(changed)


def documents_at(ws: Workspace, as_of: str | int | None = None) -> tuple[int, list[Document]]:
    """The revision ``as_of`` resolves to (head by default) and its documents."""
    with ws.reader() as store:
        revision = resolve_revision(store, as_of)
        return revision, load_documents(store, revision)


def head_revision(ws: Workspace, as_of: str | int | None = None) -> int:
    with ws.reader() as store:
        return resolve_revision(store, as_of)


class TextReader:
    """Reads documents' texts from the content store, each file decompressed once."""

    def __init__(self, ws: Workspace, *, cached_files: int = 64) -> None:
        self._content: ContentStore = content_store(ws)
        self._files: dict[str, bytes] = {}
        self._limit = cached_files
        self._lock = threading.Lock()  # strategies may run in threads

    def _file(self, digest: str) -> bytes:
        with self._lock:
            data = self._files.get(digest)
        if data is None:
            data = self._content.get(digest)
            with self._lock:
                if len(self._files) >= self._limit:
                    self._files.pop(next(iter(self._files)))
                self._files[digest] = data
        return data

    def text(self, document: Document) -> str:
        content = self._file(document.file_hash)
        if document.source_range is None:
            return content.decode("utf-8", errors="replace")
        span = span_of_range(content, document.source_range)
        return content[span.start_byte : span.end_byte].decode("utf-8", errors="replace")

    def texts(self, documents: Iterable[Document]) -> Iterator[tuple[Document, str]]:
        """Grouped by file so each file is decompressed once even with a small cache."""
        for document in sorted(documents, key=lambda d: (d.file_hash, d.iri)):
            yield document, self.text(document)
