"""The Backend Abstraction Layer on a real store: requests' sources and a second resource
(requests' README, history and packaging files) indexed together, so scoping has something
to keep apart. Text (BM25) and graph backends here; the vector backend has its own module."""

from __future__ import annotations

import shutil
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cleveragents.context.backends import backend_set, catalog, forget_open_backends
from cleveragents.context.backends.documents import TextReader, load_documents
from cleveragents.context.backends.graph import apply_scope
from cleveragents.context.backends.text import BM25TextBackend
from cleveragents.context.backends.tokenize import split_identifier, tokenize
from cleveragents.context.protocols import GraphBackend, TextBackend
from cleveragents.errors import ValidationError
from cleveragents.graph.workspace import Workspace
from cleveragents.services import indexing, resources
from corpora.fetch import corpus_dir

DOC_FILES = ("README.md", "HISTORY.md", "pyproject.toml", "setup.cfg")


@dataclass
class Store:
    ws: Workspace
    code: str  # resource ULID of requests' sources
    docs: str  # resource ULID of the documentation resource
    code_tree: Path


def make_store(root: Path) -> Store:
    corpus = corpus_dir("requests-2.32.3")
    code_tree, docs_tree = root / "requests", root / "docs"
    shutil.copytree(corpus / "src" / "requests", code_tree)
    docs_tree.mkdir()
    for name in DOC_FILES:
        shutil.copy(corpus / name, docs_tree / name)
    ws = Workspace(root / "data")
    ws.initialize()
    code, _ = resources.add(ws, code_tree, type_name="fs-directory", name="local/requests")
    docs, _ = resources.add(ws, docs_tree, type_name="fs-directory", name="local/requests-docs")
    indexing.index(ws, [code, docs])
    return Store(ws, code.ulid, docs.ulid, code_tree)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield make_store(tmp_path_factory.mktemp("bal"))
    forget_open_backends()


def names(results: list) -> list[str]:
    return [r.uko_node.split("#", 1)[-1] for r in results]


def test_identifier_splitting() -> None:
    assert split_identifier("cookiejar_from_dict") == ["cookiejar", "from", "dict"]
    assert split_identifier("getHTTPResponse_v2") == ["get", "http", "response", "v", "2"]
    assert split_identifier("HTTPAdapter") == ["http", "adapter"]
    # the whole identifier is kept beside its words; stopwords and one-letter words are dropped
    assert tokenize("self.merge_cookies(jar)") == ["merge_cookies", "merge", "cookie", "jar"]
    assert tokenize("HTTPAdapter") == ["httpadapter", "http", "adapter"]
    assert tokenize("send a request with the session") == ["send", "request", "session"]
    assert tokenize("utf8 = 2") == ["utf8", "utf"]


def test_documents_are_code_entities_sections_and_config(store: Store) -> None:
    documents = catalog.documents(store.ws, _head(store))[0]
    by_iri = {d.iri: d for d in documents}
    kinds = {d.type_name for d in documents}
    assert {"Module", "Class", "Method", "Function", "Section", "ConfigKey"} <= kinds
    assert not kinds & {"Docstring", "Import", "Paragraph", "ListBlock"}  # inside their parents' text
    request = next(d for d in documents if d.qualified_name == "sessions.Session.request")
    text = TextReader(store.ws).text(request)
    assert text.startswith("def request(") and "return resp" in text
    assert request.line_range(text)[1] - request.line_range(text)[0] == text.count("\n")
    assert request.resource == store.code and request.path == "sessions.py"
    module = by_iri[request.iri.split("#", 1)[0]]
    assert module.source_range is None and module.line_range(TextReader(store.ws).text(module))[0] == 1


def _head(store: Store) -> int:
    with store.ws.reader() as s:
        return s.head


def test_bm25_finds_session_request(store: Store) -> None:
    backends = backend_set(store.ws, None, vector=False)
    assert isinstance(backends.text, TextBackend) and isinstance(backends.graph, GraphBackend)
    assert backends.resources == {store.code, store.docs}
    results = backends.text.search("send a request with a session", resource_filter=set(), limit=5)
    assert "Session.request" in names(results)
    hit = next(r for r in results if r.uko_node.endswith("#Session.request"))
    assert hit.path == "sessions.py" and hit.resource_ulid == store.code
    assert hit.content.startswith("def request(") and hit.line_range[0] < hit.line_range[1]
    assert names(backends.text.search("get_netrc_auth", resource_filter=set(), limit=1)) == ["get_netrc_auth"]
    assert backends.text.search("zzzqqq", resource_filter=set()) == []  # no known token: nothing, no error


def test_text_search_is_fast(store: Store) -> None:
    text = backend_set(store.ws, None, vector=False).text
    timings = []
    for query in ["cookie jar handling", "redirect authentication", "HTTPAdapter send", "proxy environment"] * 5:
        started = time.perf_counter()
        text.search(query, resource_filter=set(), limit=20)
        timings.append(time.perf_counter() - started)
    assert statistics.median(timings) < 0.05


def test_scoped_views_never_leak_another_resource(store: Store) -> None:
    code_only = backend_set(store.ws, [store.code], vector=False)
    docs_only = backend_set(store.ws, [f"https://cleveragents.ai/id/resource/{store.docs}"], vector=False)
    assert code_only.resources == {store.code} and docs_only.resources == {store.docs}
    # "requests" is everywhere in both resources
    assert {r.resource_ulid for r in code_only.text.search("requests", resource_filter=set(), limit=50)} == {store.code}
    assert {r.resource_ulid for r in docs_only.text.search("requests", resource_filter=set(), limit=50)} == {store.docs}
    # a caller's filter narrows the scope, never widens it
    assert code_only.text.search("requests", resource_filter={store.docs}) == []
    assert backend_set(store.ws, [], vector=False).text.search("requests", resource_filter=set()) == []

    # graph: with the $SCOPE marker, and without it (rows naming out-of-scope nodes are dropped)
    marked = "SELECT ?n WHERE { ?n uko:sourceResource ?r . $SCOPE(?r) }"
    unmarked = "SELECT ?n ?name WHERE { ?n uko:sourceResource ?r ; uko:name ?name }"
    for query in (marked, unmarked):
        rows = docs_only.graph.query_sparql(query, resource_filter=set())
        assert rows and all(f"/src/{store.docs}/" in row["n"] for row in rows)
    everything = backend_set(store.ws, None, vector=False).graph.query_sparql(marked, resource_filter=set())
    assert len(everything) > len(docs_only.graph.query_sparql(marked, resource_filter=set()))
    session = f"https://cleveragents.ai/id/src/{store.code}/sessions.py#Session.request"
    assert docs_only.graph.render(session, 1) is None
    assert code_only.graph.render(session, 1) is not None


def test_apply_scope_convention() -> None:
    query = "SELECT ?n WHERE { ?n uko:sourceResource ?res . $SCOPE( ?res ) }"
    assert apply_scope(query, {"B", "A"}) == (
        "SELECT ?n WHERE { ?n uko:sourceResource ?res . VALUES ?res { "
        "<https://cleveragents.ai/id/resource/A> <https://cleveragents.ai/id/resource/B> } }"
    )
    assert apply_scope(query, set()) == "SELECT ?n WHERE { ?n uko:sourceResource ?res .  }"


def test_graph_values_and_rendering(store: Store) -> None:
    graph = backend_set(store.ws, [store.code], vector=False).graph
    rows = graph.query_sparql(
        "SELECT ?n ?layer ?current WHERE { ?n uko:sourceResource ?r ; uko:layer ?layer ; uko:isCurrent ?current ;"
        " uko-code:qualifiedName 'sessions.Session.request' . $SCOPE(?r) }",
        resource_filter=set(),
    )
    assert rows == [
        {
            "n": f"https://cleveragents.ai/id/src/{store.code}/sessions.py#Session.request",
            "layer": 3,
            "current": True,
        }
    ]
    assert graph.query_sparql("ASK { ?n uko:name 'merge_cookies' }", resource_filter=set()) == [{"result": True}]
    text, depth = graph.render(rows[0]["n"], 9)  # type: ignore[misc]
    assert depth == 9 and text.startswith("def request(self, method, url")
    assert graph.render(rows[0]["n"] + "_nothing", 1) is None
    with pytest.raises(ValidationError, match="unknown detail level"):
        graph.render(rows[0]["n"], "no-such-level")


def test_missing_or_stale_index_is_rebuilt_with_a_reason(store: Store) -> None:
    forget_open_backends()
    loaded = backend_set(store.ws, None, vector=False)
    assert loaded.notes == []  # built by the earlier tests, loaded from disk now
    shutil.rmtree(store.ws.data_dir / "indexes" / "text" / f"rev-{loaded.revision}")
    forget_open_backends()
    rebuilt = backend_set(store.ws, None, vector=False)
    assert any("was missing: built it" in n and "0 documents tokenized" in n for n in rebuilt.notes)
    (store.ws.data_dir / "indexes" / "text" / f"rev-{loaded.revision}" / "body" / "params.index.json").write_text("{")
    forget_open_backends()
    broken = backend_set(store.ws, None, vector=False)
    assert any("unreadable" in n for n in broken.notes)
    assert "Session.request" in names(broken.text.search("send a request with a session", resource_filter=set()))


def test_incremental_update_retokenizes_only_changed_documents(store: Store, tmp_path: Path) -> None:
    backend_set(store.ws, None, vector=False)  # the indexes of the current revision exist
    ws = Workspace(tmp_path / "data")
    shutil.copytree(store.ws.data_dir, ws.data_dir)  # the same store and caches, edited on its own
    cookies = store.code_tree / "cookies.py"
    original = cookies.read_text()
    try:
        cookies.write_text(
            original + "\n\ndef count_crumbles(jar):\n    return sum(1 for crumble in jar if crumble.secure)\n"
        )
        indexing.index(ws, indexing.resources_to_index(ws, ["local/requests"], None))
    finally:
        cookies.write_text(original)
    forget_open_backends()
    backends = backend_set(ws, None, vector=False)
    listed = catalog.documents(ws, backends.revision)[0]  # type: ignore[arg-type]
    documents = {d.key: d for d in listed}
    # the document list too was updated from the previous revision's, reading one file again
    assert any("updated: 1 changed files read" in n for n in backends.notes), backends.notes
    with ws.reader() as s:
        assert listed == load_documents(s, backends.revision)  # type: ignore[arg-type]
    text: BM25TextBackend = backends.text.backend  # type: ignore[attr-defined]
    changed = [documents[k] for k in text.stats["tokenized_keys"]]
    assert {d.path for d in changed} == {"cookies.py"}
    assert {d.qualified_name for d in changed} == {"cookies", "cookies.count_crumbles"}
    assert text.stats["tokenized"] == 2 and text.stats["reused"] == len(listed) - 2
    assert names(backends.text.search("count crumbles", resource_filter=set(), limit=1)) == ["count_crumbles"]
    # the revision before the edit is still there to search, without the new function
    before = backend_set(ws, None, as_of=_head(store), vector=False)
    assert before.revision == _head(store) < backends.revision  # type: ignore[operator]
    assert "count_crumbles" not in names(before.text.search("count crumbles", resource_filter=set(), limit=5))
