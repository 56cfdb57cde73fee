"""The Context Assembly Pipeline's mediator (architecture.md "Pipeline Orchestrator"):
runs the ten components in their three phases and keeps the budget a hard ceiling.

Budget layout, in tokens of the counter's encoding: an inherited parent skeleton (at most
``skeleton_ratio`` of the budget), a reserve for the preamble, and the rest for the
strategies' fragments. The final payload is counted as rendered and trimmed if the joins
cost more than the parts, so ``total_tokens <= budget`` whatever a component does.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from cleveragents.errors import UsageError

from . import markdown
from .depth import validate_depth
from .model import AssembledContext, ContextFragment, ContextRequest, PlanContext
from .pipeline import (
    PipelineConfig,
    RenderContext,
    build_context,
    collecting,
    resolve_pipeline,
    resolved_names,
)
from .pipeline.fusion import SEPARATOR_TOKENS
from .protocols import BackendSet, ContextStrategy
from .tokens import TokenCounter, counter_for

DEFAULT_BUDGET: Final = 8000
DEFAULT_PREAMBLE_TOKENS: Final = 200
MIN_PREAMBLE_TOKENS: Final = 16  # below this a preamble says nothing useful: omit it
PREAMBLE_SHARE: Final = 5  # the preamble may take at most 1/5 of the budget
REFLOW_FILL: Final = 0.8  # a strategy that used this much of its share may want more
REFLOW_MIN_TOKENS: Final = 64  # less spare than this is not worth a second round
REFLOW_SPARE_SHARE: Final = 4  # ... nor less than 1/4 of the budget (a second round costs a strategy run)
NOTE_KINDS: Final = ("excluded", "fallback", "failures", "deduplicated", "depth_conflicts", "downgraded", "truncated")


def candidate_pool(packer: object, fragment_budget: int) -> int:
    """The tokens the strategies share in phase 1. A packer that chooses each fragment's
    depth itself (``candidate_pool_factor`` > 1) wants more candidates than fit: a strategy
    renders at the requested depth, so one module or class in full would otherwise use up
    its share and end its ranking after a handful of nodes. The packer keeps the budget."""
    factor = float(getattr(packer, "candidate_pool_factor", 1.0) or 1.0)
    return max(fragment_budget, int(fragment_budget * factor))


class ContextAssembler:
    """``assemble`` runs the pipeline; ``simulate`` shows what it would ask of whom."""

    def __init__(
        self,
        components: PipelineConfig | None,
        strategies: Sequence[ContextStrategy],
        counter: TokenCounter | None = None,
        *,
        default_budget: int = DEFAULT_BUDGET,
        reflow: bool = True,
    ) -> None:
        self.components = components or resolve_pipeline()
        self.strategies = tuple(strategies)
        self.counter = counter or counter_for()
        if default_budget < 0:
            raise UsageError(f"the default context budget must be >= 0, got {default_budget}")
        self.default_budget = default_budget
        self.reflow = reflow

    # -- public -------------------------------------------------------------------------

    def budget_for(self, request: ContextRequest) -> int:
        return self.default_budget if request.max_tokens is None else request.max_tokens

    def assemble(
        self, request: ContextRequest, backends: BackendSet, plan_context: PlanContext | None = None
    ) -> AssembledContext:
        plan_context = plan_context or PlanContext()
        validate_depth(request.depth)
        budget = self.budget_for(request)
        c = self.components
        with collecting() as notes:
            explanation: dict[str, Any] = {
                "encoding": self.counter.encoding,
                "components": resolved_names(c),
                "timings_ms": {},
            }
            if getattr(backends, "notes", None):  # indexes rebuilt or left out, and why
                explanation["backends"] = list(backends.notes)
            if budget <= 0:
                return self._empty(budget, "the budget is 0 tokens: nothing can be assembled", explanation, notes)
            skeleton = self._skeleton(plan_context, budget)
            skeleton_tokens = sum(f.token_count + SEPARATOR_TOKENS for f in skeleton)
            reserve = self._preamble_reserve(budget - skeleton_tokens, explanation)
            fragment_budget = budget - skeleton_tokens - reserve
            explanation["budget"] = {
                "total": budget,
                "skeleton": skeleton_tokens,
                "preamble_reserve": reserve,
                "fragments": fragment_budget,
            }
            if fragment_budget <= 0:
                reason = f"the budget of {budget} tokens leaves no room after the skeleton and preamble"
                return self._empty(budget, reason, explanation, notes)

            # Phase 1: strategy orchestration
            start = time.perf_counter()
            candidates = c.strategy_selector.select(self.strategies, request, backends)
            pool = candidate_pool(c.budget_packer, fragment_budget)
            explanation["budget"]["candidate_pool"] = pool
            allocations = c.budget_allocator.allocate(candidates, pool, request)
            self._check_allocations(allocations, pool, explanation)
            raw = [
                self._recounted(f) for f in c.strategy_executor.execute(allocations, request, backends, plan_context)
            ]
            if self.reflow:
                failed = {row.get("strategy") for row in notes.get("failures", [])}
                raw = self._reflow(allocations, raw, failed, pool, request, backends, plan_context, explanation)
            explanation["timings_ms"]["phase1"] = _ms(start)

            # Phase 2: fragment fusion
            start = time.perf_counter()
            graph_render = backends.graph.render if backends.graph is not None else None
            render = RenderContext(self.counter, graph_render, request.depth)
            deduped = c.fragment_deduplicator.deduplicate(raw)
            resolved = c.detail_depth_resolver.resolve(deduped, fragment_budget)
            scored = c.fragment_scorer.score(resolved, plan_context)
            packed = c.budget_packer.pack(scored, fragment_budget, render)
            ordered = [self._recounted(f) for f in c.fragment_orderer.order(packed)]
            explanation["timings_ms"]["phase2"] = _ms(start)

            # Phase 3: context finalization
            start = time.perf_counter()
            focus_nodes = {f.uko_node for f in ordered}
            skeleton = [f for f in skeleton if f.uko_node not in focus_nodes]  # the detailed one supersedes
            fragments = skeleton + ordered
            used_names = {f.provenance.strategy for f in ordered}
            strategies_used = [s.name for s, _, _ in allocations if s.name in used_names]
            preamble = self._preamble(fragments, strategies_used, budget, explanation)
            self._explain(explanation, notes, candidates, allocations, raw, ordered, scored)
            if not fragments:
                smallest = int(getattr(c.budget_packer, "min_fragment_tokens", 1))
                explanation["empty_reason"] = self._why_empty(candidates, raw, fragment_budget, smallest)
            explanation["timings_ms"]["phase3"] = _ms(start)
            return build_context(fragments, preamble, budget, strategies_used, self.counter, explanation)

    def simulate(
        self, request: ContextRequest, backends: BackendSet, plan_context: PlanContext | None = None
    ) -> dict[str, Any]:
        """Selection and allocation, and what each strategy would be asked; nothing runs."""
        plan_context = plan_context or PlanContext()
        validate_depth(request.depth)
        budget = self.budget_for(request)
        with collecting() as notes:
            skeleton_tokens = sum(f.token_count + SEPARATOR_TOKENS for f in self._skeleton(plan_context, budget))
            out: dict[str, Any] = {"encoding": self.counter.encoding, "components": resolved_names(self.components)}
            reserve = self._preamble_reserve(budget - skeleton_tokens, out) if budget > 0 else 0
            fragment_budget = max(0, budget - skeleton_tokens - reserve)
            out["budget"] = {
                "total": budget,
                "skeleton": skeleton_tokens,
                "preamble_reserve": reserve,
                "fragments": fragment_budget,
            }
            candidates = self.components.strategy_selector.select(self.strategies, request, backends)
            pool = candidate_pool(self.components.budget_packer, fragment_budget)
            out["budget"]["candidate_pool"] = pool
            allocations = self.components.budget_allocator.allocate(candidates, pool, request)
            asked = request.model_dump(mode="json", exclude_defaults=True)
            out["selection"] = [_selected(s, conf) for s, conf in candidates]
            out["allocations"] = [
                {**_selected(s, conf), "tokens": tokens, "asked": {**asked, "budget": tokens}, "about": _about(s)}
                for s, conf, tokens in allocations
            ]
            for kind in ("excluded", "fallback", "failures"):
                if notes.get(kind):
                    out[kind] = notes[kind]
        return out

    # -- steps --------------------------------------------------------------------------

    def _reflow(
        self,
        allocations: list[tuple[ContextStrategy, float, int]],
        raw: list[ContextFragment],
        failed: set[str | None],
        budget: int,
        request: ContextRequest,
        backends: BackendSet,
        plan_context: PlanContext,
        explanation: dict[str, Any],
    ) -> list[ContextFragment]:
        """One second round: tokens that strategies left unused (one found little) go to
        the strategies that filled their share, which run again with the larger share.
        Allocations still sum to at most the budget; a strategy that fails or finds
        nothing in the second round keeps its first answer."""
        used = Counter[str]()
        for fragment in raw:
            used[fragment.provenance.strategy or "?"] += fragment.token_count
        filled = [
            (s, conf, tokens)
            for s, conf, tokens in allocations
            if tokens > 0 and s.name not in failed and used[s.name] >= REFLOW_FILL * tokens
        ]
        names = {s.name for s, _, _ in filled}
        others = sum(tokens for name, tokens in used.items() if name not in names)
        spare = budget - others - sum(tokens for _, _, tokens in filled)
        if not filled or spare < max(REFLOW_MIN_TOKENS, budget // REFLOW_SPARE_SHARE):
            return raw
        extra = self.components.budget_allocator.allocate([(s, conf) for s, conf, _ in filled], spare, request)
        share = {s.name: tokens for s, _, tokens in extra}
        grown = [(s, conf, tokens + share.get(s.name, 0)) for s, conf, tokens in filled if share.get(s.name, 0) > 0]
        if not grown:
            return raw
        again = self.components.strategy_executor.execute(grown, request, backends, plan_context)
        answered = {f.provenance.strategy for f in again}
        explanation["reflow"] = [
            {"strategy": s.name, "tokens": tokens, "answered": s.name in answered} for s, _, tokens in grown
        ]
        kept = [f for f in raw if f.provenance.strategy not in answered]
        return kept + [self._recounted(f) for f in again]

    def _recounted(self, fragment: ContextFragment) -> ContextFragment:
        """The budget holds under our counter, whatever count a strategy declared."""
        tokens = self.counter.count(fragment.content)
        return fragment if tokens == fragment.token_count else fragment.model_copy(update={"token_count": tokens})

    def _skeleton(self, plan_context: PlanContext, budget: int) -> list[ContextFragment]:
        """The inherited parent skeleton, cut to ``skeleton_ratio`` of the budget."""
        room = int(budget * plan_context.skeleton_ratio)
        out: list[ContextFragment] = []
        for fragment in plan_context.parent_skeleton:
            fragment = self._recounted(fragment)
            cost = fragment.token_count + SEPARATOR_TOKENS
            if cost <= room:
                out.append(fragment)
                room -= cost
        return out

    def _preamble_reserve(self, budget: int, explanation: dict[str, Any]) -> int:
        generator = self.components.preamble_generator
        if not getattr(generator, "enabled", True):
            return 0
        reserve = min(int(getattr(generator, "max_tokens", DEFAULT_PREAMBLE_TOKENS)), budget // PREAMBLE_SHARE)
        if reserve < MIN_PREAMBLE_TOKENS:
            explanation.setdefault("warnings", []).append(
                f"the budget of {budget} tokens is too small for a preamble; it is omitted"
            )
            return 0
        return reserve

    def _preamble(
        self, fragments: list[ContextFragment], strategies_used: list[str], budget: int, explanation: dict[str, Any]
    ) -> str | None:
        payload = self.counter.count(markdown.render(fragments))
        room = budget - payload - SEPARATOR_TOKENS
        generator = self.components.preamble_generator
        limit = min(room, int(getattr(generator, "max_tokens", DEFAULT_PREAMBLE_TOKENS)))
        if limit < MIN_PREAMBLE_TOKENS:
            return None
        text = generator.generate(fragments, strategies_used, payload / budget, limit)
        if not text:
            return None
        cut = self.counter.truncate(text, limit)
        if cut != text:
            # Routine for a wide context (the file list outgrows its share): explained, not a warning.
            explanation["preamble_cut_to"] = limit
        return cut or None

    @staticmethod
    def _check_allocations(
        allocations: list[tuple[ContextStrategy, float, int]], budget: int, explanation: dict[str, Any]
    ) -> None:
        total = sum(tokens for _, _, tokens in allocations)
        if total > budget:  # a custom allocator's bug; the packer still holds the ceiling
            explanation.setdefault("warnings", []).append(
                f"the budget allocator handed out {total} tokens of {budget}; the packer enforces the budget"
            )

    @staticmethod
    def _explain(
        explanation: dict[str, Any],
        notes: dict[str, list[dict[str, Any]]],
        candidates: list[tuple[ContextStrategy, float]],
        allocations: list[tuple[ContextStrategy, float, int]],
        raw: list[ContextFragment],
        ordered: list[ContextFragment],
        scored: list[Any],
    ) -> None:
        explanation["selection"] = [_selected(s, conf) for s, conf in candidates]
        explanation["allocations"] = [{**_selected(s, conf), "tokens": tokens} for s, conf, tokens in allocations]
        produced: dict[str, dict[str, int]] = {}
        for fragment in raw:
            row = produced.setdefault(fragment.provenance.strategy or "?", {"fragments": 0, "tokens": 0})
            row["fragments"] += 1
            row["tokens"] += fragment.token_count
        explanation["produced"] = produced
        own = explanation.setdefault("timings_ms", {}).setdefault("strategies", {})
        for row in notes.get("strategy_ms", []):  # each run's wall time (a reflowed strategy ran twice)
            own[row["strategy"]] = round(own.get(row["strategy"], 0.0) + float(row["ms"]), 2)
        explanation["packed"] = dict(Counter(f.provenance.strategy or "?" for f in ordered))
        kept = {f.uko_node for f in ordered}
        explanation["dropped"] = notes.get("dropped", [])
        explanation["scores"] = {
            s.fragment.uko_node: round(s.composite_score, 4) for s in scored if s.fragment.uko_node in kept
        }
        for kind in NOTE_KINDS:
            explanation[kind] = notes.get(kind, [])
        for kind, rows in notes.items():  # what custom components and strategies noted
            if kind != "strategy_ms":
                explanation.setdefault(kind, rows)

    def _empty(
        self, budget: int, reason: str, explanation: dict[str, Any], notes: dict[str, list[dict[str, Any]]]
    ) -> AssembledContext:
        explanation["empty_reason"] = reason
        for kind in NOTE_KINDS:
            explanation.setdefault(kind, notes.get(kind, []))
        return build_context([], None, max(budget, 0), [], self.counter, explanation)

    @staticmethod
    def _why_empty(
        candidates: list[tuple[ContextStrategy, float]], raw: list[ContextFragment], room: int, smallest: int
    ) -> str:
        if not candidates:
            return "no strategy can handle this request with the available backends"
        if room < smallest:
            return f"{room} token(s) are left for fragments, fewer than the smallest fragment ({smallest} tokens)"
        if not raw:
            return "the selected strategies found nothing (or failed; see failures)"
        return "no fragment fits the budget"


def _selected(strategy: ContextStrategy, confidence: float) -> dict[str, Any]:
    return {
        "strategy": strategy.name,
        "confidence": round(confidence, 4),
        "quality": strategy.capabilities.quality_score,
    }


def _about(strategy: ContextStrategy) -> str:
    try:
        return strategy.explain()
    except Exception as exc:  # a plugin's explain() must not break a simulation
        return f"(explain() failed: {type(exc).__name__})"


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)
