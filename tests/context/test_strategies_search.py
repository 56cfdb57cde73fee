"""simple-keyword, semantic-embedding and arce on a real store (six modules of requests,
so that embedding them stays quick), with the real text, vector and graph backends; and the
built-in strategy modules as the plugin loader sees them."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace

import pytest

import cleveragents.strategies as strategies_package
from cleveragents.context.model import ContextRequest, PlanContext
from cleveragents.context.protocols import BackendSet, ContextStrategy
from cleveragents.context.tokens import counter_for
from cleveragents.graph.workspace import Workspace
from cleveragents.services.resources import ResourceInfo
from cleveragents.strategies.arce import Arce
from cleveragents.strategies.plan_decision_context import PlanDecisionContext
from cleveragents.strategies.semantic_embedding import SemanticEmbedding
from cleveragents.strategies.simple_keyword import SimpleKeyword
from tests.context.strategy_support import backends_for, build_requests_store

pytest.importorskip("faiss", reason="the vector backend needs the semantic extra")

MODULES = ("sessions", "adapters", "auth", "exceptions", "structures", "hooks")
QUALITY = {
    "simple-keyword": 0.3,
    "semantic-embedding": 0.6,
    "breadth-depth-navigator": 0.85,
    "arce": 0.95,
    "temporal-archaeology": 0.5,
    "plan-decision-context": 0.7,
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, ResourceInfo]:
    return build_requests_store(tmp_path_factory.mktemp("search"), only=MODULES)


@pytest.fixture(scope="module")
def backends(store: tuple[Workspace, ResourceInfo]) -> BackendSet:
    found = backends_for(store[0], vector=True)
    assert found.vector is not None, found.notes
    return found


def _key(node: str) -> str:
    return node.split("#", 1)[-1] if "#" in node else node.rsplit("/", 1)[-1]


def test_every_builtin_module_exports_its_strategy_with_the_spec_quality() -> None:
    found = {}
    for info in pkgutil.iter_modules(strategies_package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"cleveragents.strategies.{info.name}")
        for cls in module.STRATEGIES:
            strategy = cls()
            assert isinstance(strategy, ContextStrategy)
            assert strategy.explain()
            found[strategy.name] = strategy.capabilities.quality_score
    assert found == QUALITY


def test_no_backend_means_no_confidence() -> None:
    request = ContextRequest(query="how are redirects resolved", focus=["requests.sessions.Session"])
    for cls in (SimpleKeyword, SemanticEmbedding, Arce):
        assert cls().can_handle(request, BackendSet()) == 0.0


def test_simple_keyword_renders_bm25_hits_at_the_requested_depth(backends: BackendSet) -> None:
    strategy = SimpleKeyword()
    request = ContextRequest(query="should_strip_auth redirect", depth="SIGNATURES")
    assert strategy.can_handle(request, backends) > 0
    fragments = strategy.assemble(request, backends, 600, PlanContext())
    assert fragments and sum(f.token_count for f in fragments) <= 600
    first = fragments[0]
    assert _key(first.uko_node) == "SessionRedirectMixin.should_strip_auth"
    assert first.detail_depth == 5 and first.content.startswith("def should_strip_auth(self, old_url, new_url)")
    assert first.relevance_score == 1.0 and first.provenance.path == "requests/sessions.py"
    assert first.provenance.revision == backends.revision


def test_simple_keyword_filters_by_uko_type(backends: BackendSet) -> None:
    request = ContextRequest(query="adapter connection pool", uko_types=["uko-oo:Class"], depth=0)
    fragments = SimpleKeyword().assemble(request, backends, 2000, PlanContext())
    assert fragments and all(f.content.startswith("class ") for f in fragments)


def test_semantic_embedding_finds_related_code_without_shared_words(backends: BackendSet) -> None:
    strategy = SemanticEmbedding()
    request = ContextRequest(query="follow the Location header when the server answers 301 or 302", depth=5)
    assert strategy.can_handle(request, backends) > strategy.can_handle(ContextRequest(entities=["x"]), backends)
    fragments = strategy.assemble(request, backends, 1500, PlanContext())
    assert sum(f.token_count for f in fragments) <= 1500
    keys = [_key(f.uko_node) for f in fragments[:8]]
    assert any("redirect" in k.lower() for k in keys), keys


def test_arce_names_fuse_with_search_and_graph(backends: BackendSet) -> None:
    strategy = Arce()
    request = ContextRequest(
        query="why does `rebuild_auth` drop the Authorization header on redirect?", depth="FULL_SOURCE"
    )
    assert strategy.can_handle(request, backends) == 0.9
    fragments = strategy.assemble(request, backends, 3000, PlanContext())
    assert sum(f.token_count for f in fragments) <= 3000
    by_key = {_key(f.uko_node): f for f in fragments}
    named = by_key["SessionRedirectMixin.rebuild_auth"]
    assert named.detail_depth == 13 and "should_strip_auth" in named.content  # the named function in full
    assert {"graph", "text"} <= set(named.metadata["sources"])
    assert "SessionRedirectMixin.should_strip_auth" in by_key  # what it calls, through the graph
    assert "1 named node(s)" in strategy.explain()


def test_arce_actor_patterns_change_breadth_and_depth(backends: BackendSet) -> None:
    query = "HTTPAdapter.send timeouts"
    execution = Arce().assemble(ContextRequest(query=query, purpose="execution"), backends, 2500, PlanContext())
    strategy = Arce().assemble(ContextRequest(query=query, purpose="strategy"), backends, 2500, PlanContext())
    for fragments in (execution, strategy):
        assert sum(f.token_count for f in fragments) <= 2500
    # Strategy actors get shallower renderings of the same material than execution actors.
    deep = lambda fs: sum(f.detail_depth for f in fs[1:10]) / max(1, len(fs[1:10]))  # noqa: E731
    assert deep(strategy) < deep(execution)


def test_arce_without_vector_backend_defers_to_the_navigator(backends: BackendSet) -> None:
    partial = BackendSet(text=backends.text, graph=backends.graph, resources=backends.resources)
    assert Arce().can_handle(ContextRequest(query="redirects"), partial) == 0.0


def test_plan_decision_context_sets_nothing_aside_without_decisions(backends: BackendSet) -> None:
    # This store has code and no plan decisions: the selector must not allocate budget to it.
    assert PlanDecisionContext().can_handle(ContextRequest(query="redirects"), backends) == 0.0


def test_a_larger_budget_gets_more_of_the_ranking(backends: BackendSet) -> None:
    request = ContextRequest(query="session adapter redirect authentication cookies headers")
    small = SimpleKeyword().assemble(request, backends, 1000, PlanContext())
    large = SimpleKeyword().assemble(request, backends, 16000, PlanContext())
    assert sum(f.token_count for f in large) <= 16000
    assert len(large) > len(small)
    assert sum(f.token_count for f in large) > 1.5 * sum(f.token_count for f in small)


def test_strategies_count_in_the_encoding_the_backends_name(backends: BackendSet) -> None:
    cl100k, o200k = counter_for("cl100k_base"), counter_for("o200k_base")
    request = ContextRequest(query="redirect authorization header", depth="FULL_SOURCE")
    for strategy in (SimpleKeyword(), Arce()):
        fragments = strategy.assemble(request, replace(backends, encoding="cl100k_base"), 3000, PlanContext())
        assert fragments and all(f.token_count == cl100k.count(f.content) for f in fragments)
        assert sum(f.token_count for f in fragments) <= 3000
        assert any(f.token_count != o200k.count(f.content) for f in fragments)  # the encodings do differ
