"""The vector backend (all-MiniLM-L6-v2 offline + FAISS) on a real store: three of requests'
modules and a second resource (its README), small enough to embed in seconds."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cleveragents.context.backends import backend_set, catalog, forget_open_backends
from cleveragents.context.backends import vector as vector_backend
from cleveragents.context.protocols import VectorBackend
from cleveragents.graph.workspace import Workspace
from cleveragents.services import indexing, resources
from corpora.fetch import corpus_dir

pytestmark = pytest.mark.skipif(not vector_backend.available(), reason="sentence-transformers or faiss missing")

CODE_FILES = ("cookies.py", "hooks.py", "_internal_utils.py")
DOC_FILES = ("README.md",)


@dataclass
class Store:
    ws: Workspace
    code: str
    docs: str
    code_tree: Path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root = tmp_path_factory.mktemp("bal-vector")
    corpus = corpus_dir("requests-2.32.3")
    code_tree, docs_tree = root / "requests", root / "docs"
    code_tree.mkdir()
    docs_tree.mkdir()
    for name in CODE_FILES:
        shutil.copy(corpus / "src" / "requests" / name, code_tree / name)
    for name in DOC_FILES:
        shutil.copy(corpus / name, docs_tree / name)
    ws = Workspace(root / "data")
    ws.initialize()
    code, _ = resources.add(ws, code_tree, type_name="fs-directory", name="local/requests")
    docs, _ = resources.add(ws, docs_tree, type_name="fs-directory", name="local/requests-docs")
    indexing.index(ws, [code, docs])
    yield Store(ws, code.ulid, docs.ulid, code_tree)
    forget_open_backends()


def test_a_request_does_not_embed_a_whole_codebase_inline(store: Store) -> None:
    forget_open_backends()
    backends = backend_set(store.ws, None, vector_inline_limit=5)
    assert backends.vector is None and backends.text is not None
    assert any("have no embedding yet; `agents context index` embeds them" in note for note in backends.notes)
    forget_open_backends()


def test_first_build_embeds_every_document_then_reuses_the_cache(store: Store) -> None:
    forget_open_backends()
    reports: list[tuple[int, int]] = []
    backends = backend_set(store.ws, None, progress=lambda done, total: reports.append((done, total)))
    assert reports and reports[-1][0] == reports[-1][1]  # the progress reached the end
    assert isinstance(backends.vector, VectorBackend)
    inner = backends.vector.backend  # type: ignore[attr-defined]
    documents = catalog.documents(store.ws, backends.revision)[0]  # type: ignore[arg-type]
    assert inner.embedder.embedded == len({d.key for d in documents}) == inner.stats["embedded"]
    assert any("embedded" in n for n in backends.notes)
    forget_open_backends()
    again = backend_set(store.ws, None)
    assert again.vector.backend.embedder.embedded == 0  # type: ignore[union-attr]
    assert not any("embedded" in n for n in again.notes)


def test_search_returns_semantically_close_nodes(store: Store) -> None:
    vectors = backend_set(store.ws, None).vector
    assert vectors is not None
    [query] = vectors.embed(["cookie jar handling"])
    assert len(query) == 384
    results = vectors.search(query, resource_filter=set(), limit=5)
    assert results and all(r.metadata["path"] == "cookies.py" for r in results[:3])
    assert all(0.3 <= r.similarity <= 1.0 for r in results)
    assert results == sorted(results, key=lambda r: -r.similarity)
    assert results[0].metadata["line_range"][0] >= 1 and results[0].content
    # the threshold drops what is not close enough
    assert vectors.search(query, resource_filter=set(), limit=5, threshold=0.99) == []


def test_scoped_vector_view(store: Store) -> None:
    docs_only = backend_set(store.ws, [store.docs]).vector
    code_only = backend_set(store.ws, [store.code]).vector
    assert docs_only is not None and code_only is not None
    [query] = docs_only.embed(["cookie jar handling"])
    assert {r.resource_ulid for r in docs_only.search(query, resource_filter=set(), limit=50, threshold=0.0)} == {
        store.docs
    }
    assert {r.resource_ulid for r in code_only.search(query, resource_filter=set(), limit=50, threshold=0.0)} == {
        store.code
    }
    assert code_only.search(query, resource_filter={store.docs}, threshold=0.0) == []


def test_vector_can_be_left_out(store: Store) -> None:
    backends = backend_set(store.ws, None, vector=False)
    assert backends.vector is None and backends.available() == {"text", "graph"}


def test_only_changed_entities_are_re_embedded(store: Store, tmp_path: Path) -> None:
    backend_set(store.ws, None)  # the embeddings of the current revision are cached
    ws = Workspace(tmp_path / "data")
    shutil.copytree(store.ws.data_dir, ws.data_dir)  # the same store and embedding cache, edited on its own
    target = store.code_tree / "hooks.py"
    original = target.read_text()
    try:
        target.write_text(original + "\n\ndef bake_bread(flour, water):\n    return flour + water\n")
        indexing.index(ws, indexing.resources_to_index(ws, ["local/requests"], None))
    finally:
        target.write_text(original)
    forget_open_backends()
    backends = backend_set(ws, None)
    inner = backends.vector.backend  # type: ignore[union-attr]
    documents = {d.key: d for d in catalog.documents(ws, backends.revision)[0]}  # type: ignore[arg-type]
    assert inner.embedder.embedded == 2  # the edited module and the new function, nothing else
    assert {documents[k].qualified_name for k in inner.stats["embedded_keys"]} == {"hooks", "hooks.bake_bread"}
    [query] = backends.vector.embed(["baking bread from flour and water"])  # type: ignore[union-attr]
    assert backends.vector.search(query, resource_filter=set(), limit=1)[0].uko_node.endswith("#bake_bread")  # type: ignore[union-attr]
