"""Phase 1, strategy orchestration: which strategies run, with how many tokens, and how
they are invoked (architecture.md "Built-in Default Implementations", Phase 1)."""

from __future__ import annotations

import contextvars
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext
from cleveragents.context.protocols import BackendSet, ContextStrategy
from cleveragents.errors import UsageError

from .diagnostics import note

# The spec's degradation path: the most capable strategy that can run leads.
FALLBACK_ORDER: Final = ("arce", "breadth-depth-navigator", "semantic-embedding", "simple-keyword")
BACKENDS: Final = ("text", "vector", "graph")


def quality(strategy: ContextStrategy) -> float:
    return float(strategy.capabilities.quality_score)


def _uses(strategy: ContextStrategy) -> set[str]:
    caps = strategy.capabilities
    flags = {"text": caps.uses_text, "vector": caps.uses_vector, "graph": caps.uses_graph}
    return {name for name, used in flags.items() if used}


class ConfidenceWeightedSelector:
    """Asks every strategy ``can_handle``; drops confidence 0 and strategies that do not
    use a required backend; boosts the preferred ones; sorts by confidence x quality."""

    def __init__(
        self,
        preferred_boost: float = 0.25,
        preferred_only: bool = False,
        fallback_order: Sequence[str] = FALLBACK_ORDER,
    ) -> None:
        self.preferred_boost = preferred_boost
        self.preferred_only = preferred_only
        self.fallback_order = tuple(fallback_order)

    def select(
        self, strategies: Sequence[ContextStrategy], request: ContextRequest, backends: BackendSet
    ) -> list[tuple[ContextStrategy, float]]:
        names = sorted(s.name for s in strategies)
        unknown = sorted(set(request.preferred_strategies) - set(names))
        if unknown:
            raise UsageError(f"unknown strategy {', '.join(unknown)}; known: {', '.join(names)}", data={"known": names})
        required = set(request.required_backends)
        if required - set(BACKENDS):
            bad = ", ".join(sorted(required - set(BACKENDS)))
            raise UsageError(f"unknown backend {bad} in required_backends; known: {', '.join(BACKENDS)}")
        missing = required - backends.available()
        rows: list[tuple[ContextStrategy, float]] = []
        for strategy in sorted(strategies, key=lambda s: s.name):
            if missing:
                note("excluded", strategy=strategy.name, reason=f"required backend(s) {sorted(missing)} not available")
                continue
            if not required <= _uses(strategy):
                note("excluded", strategy=strategy.name, reason=f"does not use required backend(s) {sorted(required)}")
                continue
            try:
                confidence = float(strategy.can_handle(request, backends))
            except Exception as exc:  # a plugin's bug must not stop the assembly
                note("failures", strategy=strategy.name, kind="can_handle", message=f"{type(exc).__name__}: {exc}")
                continue
            confidence = min(1.0, max(0.0, confidence)) if math.isfinite(confidence) else 0.0
            if confidence <= 0.0:
                note("excluded", strategy=strategy.name, reason="confidence 0: cannot handle this request or backends")
                continue
            rows.append((strategy, confidence))
        preferred = set(request.preferred_strategies)
        chosen = [row for row in rows if row[0].name in preferred]
        first = set(preferred)
        if preferred and not chosen:
            lead = self._fallback_lead(rows)
            note(
                "fallback",
                preferred=sorted(preferred),
                reason="no preferred strategy can run",
                falling_back_to=lead.name if lead else None,
            )
            first = {lead.name} if lead else set()  # the degradation path's choice leads instead
        if self.preferred_only and chosen:
            rows = chosen
        boosted = [(s, min(1.0, c + self.preferred_boost) if s.name in preferred else c) for s, c in rows]
        return sorted(boosted, key=lambda row: self._rank(row, first))

    def _rank(self, row: tuple[ContextStrategy, float], preferred: set[str]) -> tuple[int, float, int, str]:
        strategy, confidence = row
        chain = self.fallback_order
        order = chain.index(strategy.name) if strategy.name in chain else len(chain)
        return (0 if strategy.name in preferred else 1, -confidence * quality(strategy), order, strategy.name)

    def _fallback_lead(self, rows: list[tuple[ContextStrategy, float]]) -> ContextStrategy | None:
        by_name = {s.name: s for s, _ in rows}
        for name in self.fallback_order:
            if name in by_name:
                return by_name[name]
        return rows[0][0] if rows else None


class ProportionalBudgetAllocator:
    """Tokens proportional to confidence x quality; a strategy whose share would fall below
    ``min_useful_budget`` is dropped and its share redistributed (the lead always stays)."""

    def __init__(self, min_useful_budget: int = 64) -> None:
        if min_useful_budget < 0:
            raise UsageError("budget-allocator min-useful-budget must be >= 0")
        self.min_useful_budget = min_useful_budget

    def allocate(
        self, candidates: list[tuple[ContextStrategy, float]], total_budget: int, request: ContextRequest
    ) -> list[tuple[ContextStrategy, float, int]]:
        pool = list(candidates)
        budget = max(0, total_budget)
        while pool:
            shares = self._shares(pool, budget)
            small = [i for i, share in enumerate(shares) if share < self.min_useful_budget]
            if not small or len(pool) == 1:
                return [(s, c, share) for (s, c), share in zip(pool, shares, strict=True)]
            dropped = max(small)  # the lowest-priority strategy that gets too little
            strategy = pool.pop(dropped)[0]
            note(
                "excluded",
                strategy=strategy.name,
                reason=f"share {shares[dropped]} tokens < min-useful-budget {self.min_useful_budget}",
            )
        return []

    @staticmethod
    def _shares(pool: list[tuple[ContextStrategy, float]], budget: int) -> list[int]:
        weights = [c * quality(s) for s, c in pool]
        total = sum(weights)
        if total <= 0:
            weights, total = [1.0] * len(pool), float(len(pool))
        shares = [math.floor(budget * w / total) for w in weights]
        shares[0] += budget - sum(shares)  # rounding leftovers go to the lead
        return shares


@dataclass
class CircuitBreaker:
    """Opens after ``threshold`` consecutive failures of one strategy (per plan) and skips
    it for ``cooldown`` seconds; then one trial call decides (half-open)."""

    threshold: int = 3
    cooldown: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _failures: dict[tuple[str, str], int] = field(default_factory=dict)
    _opened: dict[tuple[str, str], float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def allows(self, key: tuple[str, str]) -> bool:
        with self._lock:
            opened = self._opened.get(key)
            if opened is None:
                return True
            if self.clock() - opened >= self.cooldown:
                del self._opened[key]
                self._failures[key] = self.threshold - 1  # half-open: one more failure re-opens
                return True
            return False

    def success(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._failures.pop(key, None)
            self._opened.pop(key, None)

    def failure(self, key: tuple[str, str]) -> None:
        with self._lock:
            count = self._failures.get(key, 0) + 1
            self._failures[key] = count
            if count >= self.threshold:
                self._opened[key] = self.clock()

    def failures(self, key: tuple[str, str]) -> int:
        with self._lock:
            return self._failures.get(key, 0)


_BREAKERS: dict[tuple[int, float], CircuitBreaker] = {}
_BREAKERS_LOCK = threading.Lock()


def shared_breaker(threshold: int, cooldown: float) -> CircuitBreaker:
    """One breaker per setting for the process, so its state survives across assemblies
    even though components are resolved afresh for each one."""
    with _BREAKERS_LOCK:
        return _BREAKERS.setdefault((threshold, cooldown), CircuitBreaker(threshold, cooldown))


class ParallelStrategyExecutor:
    """Runs the strategies in parallel (at most ``max_workers`` at a time), each with its
    own timeout from when it starts. Failures, timeouts, open circuits and contract breaches are noted, never raised."""

    def __init__(
        self,
        timeout_seconds: float = 30.0,
        max_workers: int = 4,
        circuit_breaker_threshold: int = 3,
        cooldown_seconds: float = 60.0,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        if timeout_seconds <= 0 or max_workers < 1 or circuit_breaker_threshold < 1:
            raise UsageError(
                "strategy-executor needs timeout-seconds > 0, max-workers >= 1, circuit-breaker-threshold >= 1"
            )
        self.timeout = float(timeout_seconds)
        self.max_workers = max_workers
        self.breaker = breaker or shared_breaker(circuit_breaker_threshold, float(cooldown_seconds))

    def execute(
        self,
        allocations: list[tuple[ContextStrategy, float, int]],
        request: ContextRequest,
        backends: BackendSet,
        plan_context: PlanContext,
    ) -> list[ContextFragment]:
        plan = plan_context.plan or ""
        runnable: list[tuple[ContextStrategy, int]] = []
        for strategy, _, tokens in allocations:
            if tokens <= 0:
                continue
            if not self.breaker.allows((plan, strategy.name)):
                note(
                    "failures",
                    strategy=strategy.name,
                    kind="circuit-open",
                    message=f"skipped after {self.breaker.threshold} consecutive failures; retried after the cool-down",
                )
                continue
            runnable.append((strategy, tokens))
        if not runnable:
            return []
        outcomes = self._run(runnable, request, backends, plan_context)
        fragments: list[ContextFragment] = []
        for (strategy, tokens), outcome in zip(runnable, outcomes, strict=True):
            key = (plan, strategy.name)
            if isinstance(outcome, BaseException):
                self.breaker.failure(key)
                kind = "timeout" if isinstance(outcome, TimeoutError) else "error"
                message = str(outcome) if kind == "timeout" else f"{type(outcome).__name__}: {outcome}"
                note("failures", strategy=strategy.name, kind=kind, message=message)
                continue
            checked = self._checked(strategy, outcome, tokens)
            if checked is None:
                self.breaker.failure(key)
                continue
            self.breaker.success(key)
            fragments += checked
        return fragments

    def _run(
        self,
        runnable: list[tuple[ContextStrategy, int]],
        request: ContextRequest,
        backends: BackendSet,
        plan_context: PlanContext,
    ) -> list[object]:
        """Each strategy's fragments, or the exception it raised, or a TimeoutError.

        Daemon threads rather than a ThreadPoolExecutor: the pool joins its workers at
        interpreter exit, so one hung strategy would hang the CLI. A strategy that times
        out frees its worker slot at once; its thread finishes in the background, unseen.
        """
        count = len(runnable)
        boxes: list[object] = [None] * count
        seconds: list[float | None] = [None] * count
        finished = [threading.Event() for _ in range(count)]
        wake = threading.Event()
        context = contextvars.copy_context()  # strategies may note() into this assembly too

        def work(index: int, strategy: ContextStrategy, tokens: int) -> None:
            started = time.perf_counter()
            try:
                boxes[index] = context.copy().run(strategy.assemble, request, backends, tokens, plan_context)
            except BaseException as exc:  # reported as the strategy's failure
                boxes[index] = exc
            finally:
                seconds[index] = time.perf_counter() - started
                finished[index].set()
                wake.set()

        outcomes: dict[int, object] = {}
        queue = list(range(count))
        active: dict[int, float] = {}  # index -> start time
        while queue or active:
            while queue and len(active) < self.max_workers:
                index = queue.pop(0)
                strategy, tokens = runnable[index]
                active[index] = time.monotonic()
                threading.Thread(
                    target=work, args=(index, strategy, tokens), name=f"ctx-strategy-{strategy.name}", daemon=True
                ).start()
            wake.wait(0.02)
            wake.clear()
            now = time.monotonic()
            for index, began in list(active.items()):
                if finished[index].is_set():
                    outcomes[index] = boxes[index]
                    del active[index]
                    note("strategy_ms", strategy=runnable[index][0].name, ms=round(1000 * (seconds[index] or 0.0), 2))
                elif now - began > self.timeout:
                    outcomes[index] = TimeoutError(f"no answer within {self.timeout:g} s")
                    del active[index]
        return [outcomes[i] for i in range(count)]

    @staticmethod
    def _checked(strategy: ContextStrategy, outcome: object, tokens: int) -> list[ContextFragment] | None:
        if not isinstance(outcome, list) or not all(isinstance(f, ContextFragment) for f in outcome):
            note(
                "failures",
                strategy=strategy.name,
                kind="contract",
                message=f"assemble returned {type(outcome).__name__}, not a list of ContextFragment",
            )
            return None
        out: list[ContextFragment] = []
        used = 0
        for fragment in outcome:
            if used + fragment.token_count > tokens:
                note(
                    "dropped",
                    uko_node=fragment.uko_node,
                    strategy=strategy.name,
                    tokens=fragment.token_count,
                    reason=f"over the strategy's allocation of {tokens} tokens",
                )
                continue
            used += fragment.token_count
            provenance = fragment.provenance
            if provenance.strategy is None:
                provenance = provenance.model_copy(update={"strategy": strategy.name})
            metadata = {"strategy_quality": quality(strategy), **fragment.metadata}
            out.append(fragment.model_copy(update={"provenance": provenance, "metadata": metadata}))
        return out
