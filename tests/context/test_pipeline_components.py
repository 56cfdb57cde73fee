"""The ten pipeline components' built-in defaults, each on fragments rendered from a real
store (three files of requests 2.32.3) with real token counts."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from cleveragents.context.model import AssembledContext, ContextFragment, ContextRequest, PlanContext
from cleveragents.context.pipeline import (
    COMPONENTS,
    BudgetAllocator,
    BudgetPacker,
    CircuitBreaker,
    ConfidenceWeightedSelector,
    ContentHashDeduplicator,
    DepthReductionCompressor,
    DetailDepthResolver,
    FragmentDeduplicator,
    FragmentOrderer,
    FragmentScorer,
    GreedyKnapsackPacker,
    MaxDepthResolver,
    ParallelStrategyExecutor,
    PreambleGenerator,
    ProportionalBudgetAllocator,
    ProvenancePreambleGenerator,
    RelevanceCoherenceOrderer,
    RenderContext,
    SkeletonCompressor,
    StrategyExecutor,
    StrategySelector,
    WeightedCompositeScorer,
    collecting,
    note,
    resolve_pipeline,
)
from cleveragents.context.protocols import BackendSet
from cleveragents.context.tokens import counter_for
from cleveragents.errors import UsageError

from .pipeline_support import Corpus, FakeClock, FixedFragmentsStrategy, RaisingStrategy, SlowStrategy, build_corpus

COUNTER = counter_for()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    corpus = build_corpus(tmp_path_factory.mktemp("pipeline-components"))
    yield corpus
    corpus.graph.close()


def node(corpus: Corpus, suffix: str) -> str:
    return next(n for n, _, _ in corpus.nodes if n.endswith("#" + suffix))


def test_every_default_satisfies_its_protocol() -> None:
    config = resolve_pipeline()
    protocols = (
        StrategySelector, BudgetAllocator, StrategyExecutor, FragmentDeduplicator, DetailDepthResolver,
        FragmentScorer, BudgetPacker, FragmentOrderer, PreambleGenerator, SkeletonCompressor,
    )  # fmt: skip
    for (field, (_, protocol)), expected in zip(COMPONENTS.items(), protocols, strict=True):
        assert protocol is expected
        assert isinstance(getattr(config, field), protocol), field


# -- Phase 1 ---------------------------------------------------------------------------------


def strategies() -> list[FixedFragmentsStrategy]:
    return [
        FixedFragmentsStrategy(
            "arce", [], quality=0.95, confidence=0.5, uses_text=True, uses_vector=True, uses_graph=True
        ),
        FixedFragmentsStrategy("breadth-depth-navigator", [], quality=0.85, confidence=0.9, uses_graph=True),
        FixedFragmentsStrategy("simple-keyword", [], quality=0.3, confidence=0.7, uses_text=True),
        FixedFragmentsStrategy("never", [], quality=0.9, confidence=0.0, uses_graph=True),
    ]


def test_the_selector_ranks_by_confidence_times_quality_and_drops_zero() -> None:
    with collecting() as notes:
        chosen = ConfidenceWeightedSelector().select(strategies(), ContextRequest(query="x"), BackendSet())
    assert [(s.name, c) for s, c in chosen] == [
        ("breadth-depth-navigator", 0.9),  # 0.765
        ("arce", 0.5),  # 0.475
        ("simple-keyword", 0.7),  # 0.21
    ]
    assert notes["excluded"] == [
        {"strategy": "never", "reason": "confidence 0: cannot handle this request or backends"}
    ]


def test_preferred_strategies_are_boosted_and_lead() -> None:
    request = ContextRequest(query="x", preferred_strategies=["simple-keyword"])
    chosen = ConfidenceWeightedSelector().select(strategies(), request, BackendSet())
    assert chosen[0][0].name == "simple-keyword" and chosen[0][1] == pytest.approx(0.95)
    only = ConfidenceWeightedSelector(preferred_only=True).select(strategies(), request, BackendSet())
    assert [s.name for s, _ in only] == ["simple-keyword"]


def test_a_preferred_strategy_that_cannot_run_falls_back_in_the_spec_order() -> None:
    request = ContextRequest(query="x", preferred_strategies=["never"])
    with collecting() as notes:
        chosen = ConfidenceWeightedSelector().select(strategies(), request, BackendSet())
    assert notes["fallback"] == [
        {"preferred": ["never"], "reason": "no preferred strategy can run", "falling_back_to": "arce"}
    ]
    assert [s.name for s, _ in chosen] == ["arce", "breadth-depth-navigator", "simple-keyword"]  # arce leads
    with pytest.raises(UsageError, match="unknown strategy nope; known: arce, breadth-depth-navigator"):
        ConfidenceWeightedSelector().select(strategies(), ContextRequest(preferred_strategies=["nope"]), BackendSet())


def test_required_backends_filter_the_strategies(corpus: Corpus) -> None:
    request = ContextRequest(query="x", required_backends=["graph"])
    with collecting() as notes:
        chosen = ConfidenceWeightedSelector().select(strategies(), request, corpus.backends())
    assert [s.name for s, _ in chosen] == ["breadth-depth-navigator", "arce"]
    assert {"strategy": "simple-keyword", "reason": "does not use required backend(s) ['graph']"} in notes["excluded"]
    with collecting() as notes:  # the text backend is missing: nothing can satisfy the request
        assert (
            ConfidenceWeightedSelector().select(strategies(), ContextRequest(required_backends=["text"]), BackendSet())
            == []
        )
    assert all("not available" in row["reason"] for row in notes["excluded"])


def test_the_allocator_is_proportional_and_never_over_budget() -> None:
    chosen = ConfidenceWeightedSelector().select(strategies(), ContextRequest(query="x"), BackendSet())
    allocator = ProportionalBudgetAllocator(min_useful_budget=64)
    allocations = allocator.allocate(chosen, 4000, ContextRequest())
    tokens = {s.name: t for s, _, t in allocations}
    assert sum(tokens.values()) == 4000
    weights = {"breadth-depth-navigator": 0.9 * 0.85, "arce": 0.5 * 0.95, "simple-keyword": 0.7 * 0.3}
    for name, weight in weights.items():
        assert abs(tokens[name] - 4000 * weight / sum(weights.values())) <= 2
    with collecting() as notes:  # at 200 tokens simple-keyword's share (~30) is below the minimum
        small = allocator.allocate(chosen, 200, ContextRequest())
    assert [s.name for s, _, _ in small] == ["breadth-depth-navigator", "arce"]
    assert sum(t for _, _, t in small) == 200
    assert "min-useful-budget 64" in notes["excluded"][0]["reason"]
    assert [t for _, _, t in allocator.allocate(chosen[:1], 10, ContextRequest())] == [10]  # the lead always stays


@pytest.mark.serial
def test_the_executor_records_failures_and_timeouts_and_keeps_the_rest(corpus: Corpus) -> None:
    good = FixedFragmentsStrategy("fixed", [corpus.fragment(node(corpus, "HTTPBasicAuth"), 5, 0.9)])
    slow = SlowStrategy(delay=5.0)
    executor = ParallelStrategyExecutor(timeout_seconds=0.3, breaker=CircuitBreaker(threshold=3))
    allocations = [(good, 0.8, 1000), (RaisingStrategy(), 0.8, 1000), (slow, 0.8, 1000)]
    started = time.monotonic()
    with collecting() as notes:
        fragments = executor.execute(allocations, ContextRequest(query="auth"), corpus.backends(), PlanContext())
    slow.release.set()
    assert time.monotonic() - started < 2.0
    assert [f.provenance.strategy for f in fragments] == ["fixed"]
    assert fragments[0].metadata["strategy_quality"] == 0.5
    failures = {row["strategy"]: row for row in notes["failures"]}
    assert failures["raising"]["kind"] == "error" and "deliberate failure" in failures["raising"]["message"]
    assert failures["slow"] == {"strategy": "slow", "kind": "timeout", "message": "no answer within 0.3 s"}


class NotingStrategy(FixedFragmentsStrategy):
    """Notes a decision of its own into the running assembly's explanation."""

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        note("strategy_notes", strategy=self.name, said="skipped 3 vendored files")
        return super().assemble(request, backends, budget, plan_context)


def test_a_timed_out_strategy_frees_its_worker_and_strategies_can_note(corpus: Corpus) -> None:
    slow = SlowStrategy(delay=5.0)
    noting = NotingStrategy("noting", [corpus.fragment(node(corpus, "HTTPProxyAuth"), 5, 0.9)])
    executor = ParallelStrategyExecutor(timeout_seconds=0.3, max_workers=1, breaker=CircuitBreaker())
    with collecting() as notes:
        allocations = [(slow, 0.9, 500), (noting, 0.5, 500)]
        fragments = executor.execute(allocations, ContextRequest(), BackendSet(), PlanContext())
    slow.release.set()
    assert [f.provenance.strategy for f in fragments] == ["noting"]
    assert notes["strategy_notes"] == [{"strategy": "noting", "said": "skipped 3 vendored files"}]
    assert notes["failures"][0]["kind"] == "timeout"


def test_the_circuit_breaker_opens_after_n_failures_and_retries_after_the_cool_down() -> None:
    clock = FakeClock()
    executor = ParallelStrategyExecutor(breaker=CircuitBreaker(threshold=2, cooldown=60.0, clock=clock))
    raising = RaisingStrategy()
    plan = PlanContext(plan="https://cleveragents.ai/id/plan/p1")

    def run() -> list[dict[str, object]]:
        with collecting() as notes:
            assert executor.execute([(raising, 0.5, 100)], ContextRequest(), BackendSet(), plan) == []
        return notes["failures"]

    assert [run()[0]["kind"] for _ in range(2)] == ["error", "error"]
    assert run()[0]["kind"] == "circuit-open" and raising.calls == 2  # skipped, not called
    other_plan = PlanContext(plan="https://cleveragents.ai/id/plan/p2")  # the breaker is per plan
    with collecting():
        executor.execute([(raising, 0.5, 100)], ContextRequest(), BackendSet(), other_plan)
    assert raising.calls == 3
    clock.now = 61.0  # cool-down over: one trial call, which fails and re-opens the circuit
    assert run()[0]["kind"] == "error" and raising.calls == 4
    assert run()[0]["kind"] == "circuit-open" and raising.calls == 4


# -- Phase 2 ---------------------------------------------------------------------------------


def test_dedup_keeps_the_most_relevant_copy_of_equal_content(corpus: Corpus) -> None:
    iri = node(corpus, "HTTPDigestAuth")
    a = corpus.fragment(iri, 5, 0.4, strategy="simple-keyword")
    b = corpus.fragment(iri, 5, 0.8, strategy="arce")
    deeper = corpus.fragment(iri, 9, 0.6, strategy="breadth-depth-navigator")
    with collecting() as notes:
        out = ContentHashDeduplicator().deduplicate([a, b, deeper])
    assert [(f.provenance.strategy, f.detail_depth) for f in out] == [("arce", 5), ("breadth-depth-navigator", 9)]
    assert out[0].metadata["also_from"] == ["simple-keyword"]
    assert notes["deduplicated"][0]["kept_from"] == "arce"
    assert len(ContentHashDeduplicator(mode="uko-identity").deduplicate([a, b, deeper])) == 1
    with pytest.raises(UsageError, match="semantic"):
        ContentHashDeduplicator(mode="semantic")


def test_the_depth_resolver_keeps_the_highest_depth_that_fits(corpus: Corpus) -> None:
    iri = node(corpus, "Session")
    full, signatures = corpus.fragment(iri, 13, 0.5), corpus.fragment(iri, 5, 0.9)
    assert signatures.token_count < 1000 < full.token_count
    small = MaxDepthResolver().resolve([full, signatures], 1000)
    assert [(f.detail_depth, f.relevance_score) for f in small] == [(5, 0.9)]
    large = MaxDepthResolver().resolve([signatures, full], 10_000)
    assert [f.detail_depth for f in large] == [13]
    assert [f.detail_depth for f in large[0].metadata["_alternatives"]] == [5]


def test_the_scorer_combines_relevance_quality_distance_and_recency(corpus: Corpus) -> None:
    iri = node(corpus, "HTTPBasicAuth")
    near = corpus.fragment(iri, 5, 0.8, distance=0, strategy_quality=0.85)
    far = near.model_copy(update={"uko_node": iri + "x", "metadata": {"distance": 3, "strategy_quality": 0.85}})
    old = near.model_copy(update={"uko_node": iri + "y", "metadata": {**near.metadata, "revision_age": 10}})
    scored = WeightedCompositeScorer().score([far, old, near], PlanContext())
    assert [s.fragment.uko_node for s in scored] == [iri, iri + "y", iri + "x"]
    assert all(0.0 <= s.composite_score <= 1.0 for s in scored)
    # The relevance dimension is the evidence: relevance x quality of each strategy that found it.
    assert scored[0].score_components == pytest.approx(
        {"relevance": 0.8 * 0.85, "quality": 0.85, "hierarchy": 1.0, "recency": 1.0}
    )
    literal = WeightedCompositeScorer(evidence="max").score([near], PlanContext())[0]
    assert literal.score_components["relevance"] == 0.8
    zero = near.model_copy(update={"relevance_score": 0.0})
    assert WeightedCompositeScorer().score([zero], PlanContext())[0].composite_score == 0.0
    with pytest.raises(UsageError, match="evidence"):
        WeightedCompositeScorer(evidence="sum")


def test_what_several_strategies_found_outranks_one_strategys_best(corpus: Corpus) -> None:
    iri, other = node(corpus, "HTTPBasicAuth"), node(corpus, "HTTPDigestAuth")
    alone = corpus.fragment(other, 5, 1.0, "simple-keyword", strategy_quality=0.6)
    by_keyword = corpus.fragment(iri, 5, 0.7, "simple-keyword", strategy_quality=0.6)
    by_semantic = corpus.fragment(iri, 5, 0.7, "semantic-embedding", strategy_quality=0.6)
    merged = ContentHashDeduplicator().deduplicate([alone, by_keyword, by_semantic])
    assert len(merged) == 2
    ranked = WeightedCompositeScorer().score(merged, PlanContext())
    assert ranked[0].fragment.uko_node == iri  # 1 - (1 - 0.42)^2 = 0.66 > 0.6
    assert ranked[0].score_components["relevance"] == pytest.approx(1 - (1 - 0.7 * 0.6) ** 2)
    literal = WeightedCompositeScorer(evidence="max").score(merged, PlanContext())
    assert literal[0].fragment.uko_node == other


def test_the_packer_re_renders_lower_then_truncates_and_never_exceeds(corpus: Corpus) -> None:
    session = corpus.fragment(node(corpus, "Session"), 13, 0.9)
    auth = corpus.fragment(node(corpus, "HTTPDigestAuth"), 5, 0.5)
    scored = WeightedCompositeScorer().score([session, auth], PlanContext())
    render = RenderContext(COUNTER, corpus.graph.render)
    with collecting() as notes:
        packed = GreedyKnapsackPacker().pack(scored, 400, render)
    assert sum(f.token_count + 1 for f in packed) <= 400
    first = packed[0]
    assert first.uko_node == session.uko_node and first.detail_depth < 13 and first.metadata["downgraded_from"] == 13
    assert notes["downgraded"][0]["to_depth"] == first.detail_depth
    assert first.content == corpus.graph.render(session.uko_node, first.detail_depth)[0]
    # Without a renderer, the last resort is a cut on a token boundary.
    with collecting() as notes:
        cut = GreedyKnapsackPacker().pack(scored[:1], 120, RenderContext(COUNTER))
    assert cut[0].token_count <= 119 and cut[0].metadata["truncated_from"] == session.token_count
    assert session.content.startswith(cut[0].content)
    assert GreedyKnapsackPacker(min_fragment_tokens=10).pack(scored[:1], 8, RenderContext(COUNTER)) == []
    with collecting() as notes:  # out of renders: truncated, not re-rendered
        capped = GreedyKnapsackPacker(max_renders=0).pack(scored[:1], 400, render)
    assert "truncated_from" in capped[0].metadata and notes["limits"]


def test_the_orderer_groups_by_file_and_follows_source_order(corpus: Corpus) -> None:
    names = ["Session.send", "HTTPDigestAuth", "Session.request", "HTTPBasicAuth", "CaseInsensitiveDict"]
    fragments = [corpus.fragment(node(corpus, n), 1, 0.5) for n in names]
    ordered = RelevanceCoherenceOrderer().order(fragments)
    paths = [f.provenance.path for f in ordered]
    assert paths == ["sessions.py", "sessions.py", "auth.py", "auth.py", "structures.py"]
    assert [f.uko_node.split("#")[1] for f in ordered[:4]] == [
        "Session.request",
        "Session.send",
        "HTTPBasicAuth",
        "HTTPDigestAuth",
    ]
    assert RelevanceCoherenceOrderer(mode="relevance").order(fragments) == fragments


# -- Phase 3 ---------------------------------------------------------------------------------


def test_the_preamble_maps_resources_paths_and_strategies(corpus: Corpus) -> None:
    fragments = [corpus.fragment(node(corpus, n), 1, 0.5) for n in ("Session.send", "HTTPBasicAuth")]
    text = ProvenancePreambleGenerator().generate(fragments, ["arce", "simple-keyword"], 0.42, 200)
    assert text is not None
    assert "2 fragment(s); strategies: arce, simple-keyword; budget 42% used" in text
    assert f"resource {corpus.resource}:" in text and "sessions.py L" in text and "auth.py L" in text
    assert ProvenancePreambleGenerator(enabled=False).generate(fragments, [], 0.1, 200) is None


def test_the_skeleton_is_depth_0_or_1_within_its_budget_focus_first(corpus: Corpus) -> None:
    names = ["Session", "HTTPDigestAuth", "CaseInsensitiveDict", "Session.send", "HTTPBasicAuth"]
    fragments = [corpus.fragment(node(corpus, n), 9, 0.5) for n in names]
    parent = AssembledContext(
        fragments=fragments, total_tokens=0, budget=10_000, budget_used=0.0, strategies_used=["x"], context_hash=""
    )
    focus = [node(corpus, "HTTPBasicAuth")]
    skeleton = DepthReductionCompressor().compress(parent, focus, 60, RenderContext(COUNTER, corpus.graph.render))
    assert skeleton.total_tokens <= 60 and skeleton.fragments
    assert all(f.detail_depth <= 1 and f.metadata["skeleton"] for f in skeleton.fragments)
    assert skeleton.fragments[0].uko_node == focus[0]
    assert skeleton.fragments[1].provenance.path == "auth.py"  # the focus's file next
    assert skeleton.context_hash.startswith("sha256:")
    bare = DepthReductionCompressor().compress(parent, focus, 60)  # no renderer: first lines
    assert bare.fragments[0].content == fragments[4].content.splitlines()[0]
    assert DepthReductionCompressor().compress(parent, focus, 0).fragments == []
