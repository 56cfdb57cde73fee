"""The ten pluggable components of the Context Assembly Pipeline (architecture.md "Context
Assembly Pipeline"), as runtime-checkable protocols, plus the resolved PipelineConfig.

Two deviations from the spec's signatures, both because a component must be able to
re-render a node at a lower depth and count tokens exactly: ``BudgetPacker.pack`` takes a
``RenderContext`` (counter + render callback) where the spec passes a DetailLevelMap
registry (rendering resolves named levels through the maps itself), and
``SkeletonCompressor.compress`` takes one as an optional fourth argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Protocol, runtime_checkable

from cleveragents.context.model import (
    AssembledContext,
    ContextFragment,
    ContextRequest,
    PlanContext,
    ScoredFragment,
)
from cleveragents.context.protocols import BackendSet, ContextStrategy
from cleveragents.context.tokens import TokenCounter

# (uko_node, depth) -> (text, depth used), or None when the node has no stored content.
Renderer = Callable[[str, int], "tuple[str, int] | None"]


@dataclass(frozen=True)
class RenderContext:
    """What a component needs to re-render and re-count a fragment."""

    counter: TokenCounter
    render: Renderer | None = None  # e.g. GraphBackend.render; None: truncate instead
    depth: int | str | None = None  # the request's depth: the deepest a packer may render (None: as given)


# -- Phase 1: strategy orchestration ---------------------------------------------------------


@runtime_checkable
class StrategySelector(Protocol):
    def select(
        self, strategies: Sequence[ContextStrategy], request: ContextRequest, backends: BackendSet
    ) -> list[tuple[ContextStrategy, float]]:
        """(strategy, confidence) pairs in priority order; confidence 0 is excluded."""
        ...


@runtime_checkable
class BudgetAllocator(Protocol):
    def allocate(
        self, candidates: list[tuple[ContextStrategy, float]], total_budget: int, request: ContextRequest
    ) -> list[tuple[ContextStrategy, float, int]]:
        """(strategy, confidence, tokens) triples whose tokens sum to at most total_budget."""
        ...


@runtime_checkable
class StrategyExecutor(Protocol):
    def execute(
        self,
        allocations: list[tuple[ContextStrategy, float, int]],
        request: ContextRequest,
        backends: BackendSet,
        plan_context: PlanContext,
    ) -> list[ContextFragment]:
        """All strategies' fragments; a failing strategy is recorded and skipped, never raised."""
        ...


# -- Phase 2: fragment fusion ----------------------------------------------------------------


@runtime_checkable
class FragmentDeduplicator(Protocol):
    def deduplicate(self, fragments: list[ContextFragment]) -> list[ContextFragment]: ...


@runtime_checkable
class DetailDepthResolver(Protocol):
    def resolve(self, fragments: list[ContextFragment], budget: int) -> list[ContextFragment]: ...


@runtime_checkable
class FragmentScorer(Protocol):
    def score(self, fragments: list[ContextFragment], plan_context: PlanContext) -> list[ScoredFragment]: ...


@runtime_checkable
class BudgetPacker(Protocol):
    def pack(self, scored_fragments: list[ScoredFragment], budget: int, render: RenderContext) -> list[ContextFragment]:
        """The fragments that fit, in score order, possibly re-rendered lower; never over budget."""
        ...


@runtime_checkable
class FragmentOrderer(Protocol):
    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]: ...


# -- Phase 3: context finalization -----------------------------------------------------------


@runtime_checkable
class PreambleGenerator(Protocol):
    def generate(
        self, fragments: list[ContextFragment], strategies_used: list[str], budget_used: float, max_tokens: int
    ) -> str | None: ...


@runtime_checkable
class SkeletonCompressor(Protocol):
    def compress(
        self,
        parent_context: AssembledContext,
        child_focus: list[str],
        skeleton_budget: int,
        render: RenderContext | None = None,
    ) -> AssembledContext: ...


@dataclass(frozen=True)
class PipelineConfig:
    """The resolved component instances (scope chain: plan > project > global > built-in)."""

    strategy_selector: StrategySelector
    budget_allocator: BudgetAllocator
    strategy_executor: StrategyExecutor
    fragment_deduplicator: FragmentDeduplicator
    detail_depth_resolver: DetailDepthResolver
    fragment_scorer: FragmentScorer
    budget_packer: BudgetPacker
    fragment_orderer: FragmentOrderer
    preamble_generator: PreambleGenerator
    skeleton_compressor: SkeletonCompressor


# Field -> (config key, protocol). The keys are the spec's [context.pipeline] names.
COMPONENTS: dict[str, tuple[str, type]] = {
    "strategy_selector": ("strategy-selector", StrategySelector),
    "budget_allocator": ("budget-allocator", BudgetAllocator),
    "strategy_executor": ("strategy-executor", StrategyExecutor),
    "fragment_deduplicator": ("fragment-deduplicator", FragmentDeduplicator),
    "detail_depth_resolver": ("detail-depth-resolver", DetailDepthResolver),
    "fragment_scorer": ("fragment-scorer", FragmentScorer),
    "budget_packer": ("budget-packer", BudgetPacker),
    "fragment_orderer": ("fragment-orderer", FragmentOrderer),
    "preamble_generator": ("preamble-generator", PreambleGenerator),
    "skeleton_compressor": ("skeleton-compressor", SkeletonCompressor),
}
assert set(COMPONENTS) == {f.name for f in fields(PipelineConfig)}
