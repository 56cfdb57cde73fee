"""The assembler runs the three phases over real fragments and never exceeds the budget:
explained, deterministic, graceful with failing strategies and tiny budgets."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.context.assembler import ContextAssembler
from cleveragents.context.inheritance import PlanContextInheritance
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext
from cleveragents.context.pipeline import CircuitBreaker, RenderContext, resolve_pipeline
from cleveragents.context.tokens import counter_for
from cleveragents.errors import UsageError

from .pipeline_support import Corpus, FixedFragmentsStrategy, RaisingStrategy, SlowStrategy, build_corpus

COUNTER = counter_for()
NAMES = (
    "Session", "Session.request", "Session.send", "Session.merge_environment_settings", "SessionRedirectMixin",
    "HTTPBasicAuth", "HTTPDigestAuth", "HTTPDigestAuth.build_digest_header", "CaseInsensitiveDict", "LookupDict",
)  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    corpus = build_corpus(tmp_path_factory.mktemp("assembler"))
    yield corpus
    corpus.graph.close()


@pytest.fixture(scope="module")
def pool(corpus: Corpus) -> list[ContextFragment]:
    """Each node at full source, signatures and listing depth, with falling relevance."""
    nodes = [next(n for n, _, _ in corpus.nodes if n.endswith("#" + name)) for name in NAMES]
    return [
        corpus.fragment(iri, depth, round(1.0 - i * 0.07, 2), distance=min(i, 3))
        for i, iri in enumerate(nodes)
        for depth in (13, 5, 1)
    ]


def assembler(*strategies: object, executor: dict[str, object] | None = None) -> ContextAssembler:
    overrides = {"strategy-executor": executor} if executor else {}
    return ContextAssembler(resolve_pipeline(plan_overrides=overrides), strategies, COUNTER)  # type: ignore[arg-type]


def two_strategies(pool: list[ContextFragment]) -> tuple[FixedFragmentsStrategy, FixedFragmentsStrategy]:
    graphy = FixedFragmentsStrategy("breadth-depth-navigator", pool[::3] + pool[1:9:3], quality=0.85, confidence=0.9)
    texty = FixedFragmentsStrategy("simple-keyword", pool[1::3], quality=0.3, confidence=0.7)
    return graphy, texty


def test_an_assembly_fits_explains_and_hashes_its_payload(corpus: Corpus, pool: list[ContextFragment]) -> None:
    graphy, texty = two_strategies(pool)
    request = ContextRequest(query="session auth", max_tokens=3000)
    result = assembler(graphy, texty).assemble(request, corpus.backends())
    payload = result.render()
    assert result.total_tokens == COUNTER.count(payload) <= 3000
    assert result.context_hash == "sha256:" + hashlib.sha256(payload.encode()).hexdigest()
    assert result.budget == 3000 and result.budget_used == pytest.approx(result.total_tokens / 3000)
    assert result.encoding == "o200k_base"
    assert result.preamble and result.preamble.startswith("# Context:")
    assert set(result.strategies_used) <= {"breadth-depth-navigator", "simple-keyword"}
    assert set(result.provenance_map) == {f.uko_node for f in result.fragments}
    assert len(result.provenance_map) == len(result.fragments)  # one fragment per node
    explanation = result.explanation
    assert [row["strategy"] for row in explanation["selection"]] == ["breadth-depth-navigator", "simple-keyword"]
    allocated = {row["strategy"]: row["tokens"] for row in explanation["allocations"]}
    # The depth-planning packer asks the strategies for three times what fits, and keeps the budget.
    assert explanation["budget"]["fragments"] == 3000 - explanation["budget"]["preamble_reserve"]
    assert sum(allocated.values()) == explanation["budget"]["candidate_pool"] == 3 * explanation["budget"]["fragments"]
    assert allocated["breadth-depth-navigator"] > allocated["simple-keyword"]
    assert graphy.budgets == [allocated["breadth-depth-navigator"]]
    assert explanation["produced"]["simple-keyword"]["fragments"] >= 1
    assert explanation["depth_conflicts"] or explanation["deduplicated"]  # both produced some of the same nodes
    assert set(explanation["timings_ms"]) == {"phase1", "phase2", "phase3", "strategies"}
    own = explanation["timings_ms"]["strategies"]  # wall time per strategy, ms (a fixed list may round to 0)
    assert set(own) == {"breadth-depth-navigator", "simple-keyword"} and all(ms >= 0 for ms in own.values())


def test_the_same_inputs_give_the_same_context(corpus: Corpus, pool: list[ContextFragment]) -> None:
    request = ContextRequest(query="session", max_tokens=2000)
    first = assembler(*two_strategies(pool)).assemble(request, corpus.backends())
    second = assembler(*reversed(two_strategies(pool))).assemble(request, corpus.backends())
    assert first.context_hash == second.context_hash
    assert [f.uko_node for f in first.fragments] == [f.uko_node for f in second.fragments]


def test_failing_and_slow_strategies_are_explained_not_raised(corpus: Corpus, pool: list[ContextFragment]) -> None:
    slow = SlowStrategy(delay=5.0, confidence=0.9, quality=0.9)
    good = FixedFragmentsStrategy("simple-keyword", pool[:6], quality=0.3)
    run = assembler(good, RaisingStrategy(confidence=0.9), slow, executor={"timeout-seconds": 0.3})
    run.components.strategy_executor.breaker = CircuitBreaker()  # type: ignore[attr-defined]
    result = run.assemble(ContextRequest(query="x", max_tokens=1500), corpus.backends())
    slow.release.set()
    assert result.fragments and result.total_tokens <= 1500
    assert result.strategies_used == ["simple-keyword"]
    kinds = {row["strategy"]: row["kind"] for row in result.explanation["failures"]}
    assert kinds == {"raising": "error", "slow": "timeout"}


def test_oversized_fragments_are_downgraded_through_the_graph(corpus: Corpus, pool: list[ContextFragment]) -> None:
    # A strategy that under-declares its token count: the assembler recounts, and the packer
    # re-renders the node lower through the graph backend to fit.
    full_session = pool[0].model_copy(update={"token_count": 50})  # Session at depth 13, really ~3600 tokens
    liar = FixedFragmentsStrategy("breadth-depth-navigator", [full_session], quality=0.85)
    result = assembler(liar).assemble(ContextRequest(query="x", max_tokens=600), corpus.backends())
    assert result.total_tokens <= 600
    (fragment,) = result.fragments
    assert fragment.uko_node == full_session.uko_node and fragment.detail_depth < 13
    assert fragment.token_count == COUNTER.count(fragment.content)
    (downgrade,) = result.explanation["downgraded"]
    assert downgrade["from_depth"] == 13 and downgrade["to_depth"] == fragment.detail_depth


def test_budget_zero_and_tiny_budgets_are_explained(corpus: Corpus, pool: list[ContextFragment]) -> None:
    strategy = FixedFragmentsStrategy("simple-keyword", pool)
    empty = assembler(strategy).assemble(ContextRequest(query="x", max_tokens=0), corpus.backends())
    assert empty.fragments == [] and empty.total_tokens == 0 and empty.budget == 0
    assert empty.explanation["empty_reason"] == "the budget is 0 tokens: nothing can be assembled"
    tiny = assembler(strategy).assemble(ContextRequest(query="x", max_tokens=12), corpus.backends())
    assert tiny.preamble is None and tiny.total_tokens <= 12
    assert "too small for a preamble" in tiny.explanation["warnings"][0]


def test_nothing_can_run(corpus: Corpus, pool: list[ContextFragment]) -> None:
    result = assembler(FixedFragmentsStrategy("x", pool, confidence=0.0)).assemble(
        ContextRequest(query="x", max_tokens=500), corpus.backends()
    )
    assert result.fragments == [] and result.preamble is None
    assert result.explanation["empty_reason"] == "no strategy can handle this request with the available backends"


def test_bad_requests_are_usage_errors(corpus: Corpus) -> None:
    with pytest.raises(UsageError, match=r"unknown detail level 'FULL_SOURC'.*did you mean FULL_SOURCE"):
        assembler().assemble(ContextRequest(depth="FULL_SOURC"), corpus.backends())
    with pytest.raises(UsageError, match="unknown strategy nope"):
        assembler().assemble(ContextRequest(preferred_strategies=["nope"]), corpus.backends())


def test_simulate_plans_without_running(corpus: Corpus, pool: list[ContextFragment]) -> None:
    graphy, texty = two_strategies(pool)
    request = ContextRequest(query="session", focus=["sessions.py"], depth="SIGNATURES", max_tokens=4000)
    plan = assembler(graphy, texty).simulate(request, corpus.backends())
    assert graphy.budgets == [] and texty.budgets == []
    first = plan["allocations"][0]
    assert first["strategy"] == "breadth-depth-navigator" and first["confidence"] == 0.9
    assert first["asked"] == {
        "query": "session", "focus": ["sessions.py"], "depth": "SIGNATURES", "max_tokens": 4000,
        "budget": first["tokens"],
    }  # fmt: skip
    assert sum(row["tokens"] for row in plan["allocations"]) == plan["budget"]["candidate_pool"]
    assert first["about"] == "breadth-depth-navigator: 10 fixed fragments" or first["about"].endswith("fixed fragments")


def test_a_child_inherits_a_low_depth_skeleton_within_its_ratio(corpus: Corpus, pool: list[ContextFragment]) -> None:
    parent_request = ContextRequest(query="session", breadth=3, depth=5, max_tokens=6000)
    parent = assembler(*two_strategies(pool)).assemble(parent_request, corpus.backends())
    focus = [pool[15].uko_node]  # HTTPBasicAuth
    inheritance = PlanContextInheritance(skeleton_ratio=0.1)
    render = RenderContext(COUNTER, corpus.graph.render)
    request, plan_context = inheritance.compute_child_context(
        parent, parent_request, focus, child_budget=3000, plan="https://cleveragents.ai/id/plan/child", render=render
    )
    assert (request.breadth, request.depth, request.focus, request.max_tokens) == (2, 9, focus, 3000)
    assert plan_context.parent_context_hash == parent.context_hash
    skeleton = plan_context.parent_skeleton
    assert skeleton and all(f.detail_depth <= 1 for f in skeleton)
    assert sum(f.token_count + 1 for f in skeleton) <= 300
    child_strategy = FixedFragmentsStrategy("breadth-depth-navigator", [pool[15], pool[16]], quality=0.85)
    child = assembler(child_strategy).assemble(request, corpus.backends(), plan_context)
    assert child.total_tokens <= 3000
    assert child.fragments[0].metadata.get("skeleton") is True
    assert focus[0] in {f.uko_node for f in child.fragments if not f.metadata.get("skeleton")}
    assert [f.uko_node for f in child.fragments].count(focus[0]) == 1  # the detailed one supersedes the skeleton's


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(0, 16_000),
    picks=st.lists(st.integers(0, 29), min_size=0, max_size=20),
    relevance=st.lists(st.floats(0.0, 1.0), min_size=20, max_size=20),
    ratio=st.floats(0.0, 0.5),
)
def test_never_over_budget(
    corpus: Corpus, pool: list[ContextFragment], budget: int, picks: list[int], relevance: list[float], ratio: float
) -> None:
    # The strategy under-declares every token count, so all of it passes its allocation and the
    # packer must downgrade, truncate or drop to fit.
    chosen = [
        pool[i].model_copy(update={"relevance_score": r, "token_count": 1})
        for i, r in zip(picks, relevance, strict=False)
    ]
    greedy = FixedFragmentsStrategy("simple-keyword", chosen)
    greedy.assemble = lambda request, backends, budget_, plan_context: chosen  # type: ignore[method-assign]
    honest = FixedFragmentsStrategy("breadth-depth-navigator", pool[::4], quality=0.85)
    skeleton = [f.model_copy(update={"metadata": {"skeleton": True}}) for f in pool[2::3]]
    plan = PlanContext(parent_skeleton=skeleton, skeleton_ratio=ratio)
    result = assembler(greedy, honest).assemble(ContextRequest(query="x", max_tokens=budget), corpus.backends(), plan)
    assert result.total_tokens == COUNTER.count(result.render()) <= budget


def test_tokens_a_strategy_leaves_unused_flow_to_one_that_filled_its_share(
    corpus: Corpus, pool: list[ContextFragment]
) -> None:
    finds_nothing = FixedFragmentsStrategy("breadth-depth-navigator", [], quality=0.85, confidence=0.9)
    fills = FixedFragmentsStrategy("simple-keyword", pool[1::3] + pool[2::3], quality=0.3, confidence=0.7)
    # Shares of the budget itself (no larger candidate pool), so the pool's fragments fill one.
    exact = resolve_pipeline(plan_overrides={"budget-packer": {"candidate-pool-factor": 1.0}})
    result = ContextAssembler(exact, [finds_nothing, fills], COUNTER).assemble(
        ContextRequest(query="x", max_tokens=2000), corpus.backends()
    )
    first, second = fills.budgets
    assert second > first and finds_nothing.budgets == [result.explanation["allocations"][0]["tokens"]]
    assert result.explanation["reflow"] == [{"strategy": "simple-keyword", "tokens": second, "answered": True}]
    assert first + result.explanation["allocations"][0]["tokens"] == second <= result.explanation["budget"]["fragments"]
    no_reflow = ContextAssembler(exact, [finds_nothing, fills], COUNTER, reflow=False)
    without = no_reflow.assemble(ContextRequest(query="x", max_tokens=2000), corpus.backends())
    assert without.total_tokens < result.total_tokens <= 2000
    assert "reflow" not in without.explanation
