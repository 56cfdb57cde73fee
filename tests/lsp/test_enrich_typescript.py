"""`agents index --lsp` on real TypeScript (react-query 5.62.0's sources) with the built-in
typescript-language-server: calls, imports, re-exports and base types are resolved by the
server, and what it cannot see (the uninstalled @tanstack/query-core) keeps its name match."""

from __future__ import annotations

import shutil

import pytest

from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.indexer import IndexSummary
from cleveragents.services import indexing, resources
from cleveragents.terms import UKO, UKO_CODE
from corpora.fetch import corpus_dir

SERVER = "cleveragents/typescript-language-server"
LSP = f"lsp:{SERVER}"


@pytest.fixture(scope="module")
def enriched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, IndexSummary]:
    work = tmp_path_factory.mktemp("react-query")
    tree = work / "src"
    shutil.copytree(corpus_dir("react-query-5.62.0") / "src", tree)
    ws = Workspace(work / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name="local/react-query")
    summary = indexing.index(ws, [info], lsp=True, lsp_timeout=60.0)[0]
    return ws, summary


def select(ws: Workspace, query: str) -> list[tuple[str, ...]]:
    with ws.reader() as store:
        return [tuple(term.value for term in row) for row in store.query(query)]


def test_the_typescript_server_resolves_the_references(enriched: tuple[Workspace, IndexSummary]) -> None:
    _, summary = enriched
    (report,) = summary.enrichment
    assert report["server"] == SERVER and report["unavailable"] is None
    assert report["files"] == 23 and not report["rejected"] and report["failed_requests"] == 0
    calls = summary.resolution[UKO_CODE + "calls"]
    assert calls.confirmed >= 30 and calls.added >= 5
    imports = summary.resolution[UKO_CODE + "imports"]
    assert imports.confirmed >= 40
    # The package's own core is not installed next to the sources: those imports stay guesses.
    assert imports.unresolved >= 20


def test_calls_carry_the_server_as_resolver(enriched: tuple[Workspace, IndexSummary]) -> None:
    ws, _ = enriched
    found = select(
        ws,
        f"""SELECT ?confidence ?by WHERE {{
          ?caller <{UKO}sourcePath> "useQuery.ts" ; <{UKO_CODE}calls> ?callee .
          ?callee <{UKO}sourcePath> "useBaseQuery.ts" ; <{UKO}name> "useBaseQuery" .
          ?edge <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( ?caller <{UKO_CODE}calls> ?callee )>> ;
                <https://cleveragents.ai/ontology/ca#confidence> ?confidence ;
                <https://cleveragents.ai/ontology/ca#resolvedBy> ?by }}""",
    )
    assert found and {by for _, by in found} == {LSP}
    assert {float(confidence) for confidence, _ in found} == {1.0}
    marked = select(
        ws,
        'SELECT (COUNT(?f) AS ?n) WHERE { ?f <https://cleveragents.ai/ontology/ca#enrichedBy> "' + LSP + '" }',
    )
    assert marked == [("23",)]
