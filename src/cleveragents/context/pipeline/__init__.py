"""The Context Assembly Pipeline's ten components (architecture.md "Context Assembly
Pipeline"): protocols, built-in defaults and their resolution through the scope chain."""

from .diagnostics import collecting, note
from .finalization import DepthReductionCompressor, ProvenancePreambleGenerator, build_context, payload_hash
from .fusion import (
    ContentHashDeduplicator,
    GreedyKnapsackPacker,
    MaxDepthResolver,
    RelevanceCoherenceOrderer,
    WeightedCompositeScorer,
)
from .orchestration import (
    FALLBACK_ORDER,
    CircuitBreaker,
    ConfidenceWeightedSelector,
    ParallelStrategyExecutor,
    ProportionalBudgetAllocator,
)
from .packing import DepthPlanningPacker
from .protocols import (
    COMPONENTS,
    BudgetAllocator,
    BudgetPacker,
    DetailDepthResolver,
    FragmentDeduplicator,
    FragmentOrderer,
    FragmentScorer,
    PipelineConfig,
    PreambleGenerator,
    RenderContext,
    Renderer,
    SkeletonCompressor,
    StrategyExecutor,
    StrategySelector,
)
from .resolver import BUILTINS, import_object, resolve_pipeline, resolved_names

__all__ = [
    "BUILTINS",
    "COMPONENTS",
    "FALLBACK_ORDER",
    "BudgetAllocator",
    "BudgetPacker",
    "CircuitBreaker",
    "ConfidenceWeightedSelector",
    "ContentHashDeduplicator",
    "DepthPlanningPacker",
    "DepthReductionCompressor",
    "DetailDepthResolver",
    "FragmentDeduplicator",
    "FragmentOrderer",
    "FragmentScorer",
    "GreedyKnapsackPacker",
    "MaxDepthResolver",
    "ParallelStrategyExecutor",
    "PipelineConfig",
    "PreambleGenerator",
    "ProportionalBudgetAllocator",
    "ProvenancePreambleGenerator",
    "RelevanceCoherenceOrderer",
    "RenderContext",
    "Renderer",
    "SkeletonCompressor",
    "StrategyExecutor",
    "StrategySelector",
    "WeightedCompositeScorer",
    "build_context",
    "collecting",
    "import_object",
    "note",
    "payload_hash",
    "resolve_pipeline",
    "resolved_names",
]
