"""Phase 2, fragment fusion: merge the strategies' outputs into one ranked, budget-fitting
list (architecture.md "Built-in Default Implementations", Phase 2).

Fragment metadata keys read here (all optional, set by strategies): ``distance`` (hops
from the focus), ``revision_age`` (revisions behind the head), ``strategy_quality`` (set
by the executor). Keys starting with ``_`` are internal and removed by the packer.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any, Final

from cleveragents.context.model import ContextFragment, PlanContext, ScoredFragment
from cleveragents.errors import UsageError

from .diagnostics import note
from .protocols import RenderContext

ALTERNATIVES: Final = "_alternatives"  # lower-depth renderings kept by the depth resolver
EVIDENCE: Final = "_evidence"  # strategy -> relevance x quality, for each strategy that found the node
SEPARATOR_TOKENS: Final = 1  # "\n\n" between fragments in the rendered payload


def evidence_of(fragment: ContextFragment) -> dict[str, float]:
    """What each strategy that found this fragment's node said about it: its relevance
    times the strategy's quality."""
    found = fragment.metadata.get(EVIDENCE)
    if found is not None:
        return dict(found)
    quality = float(fragment.metadata.get("strategy_quality", 0.5))
    return {fragment.provenance.strategy or "?": fragment.relevance_score * quality}


def merged_evidence(fragments: Sequence[ContextFragment]) -> dict[str, float]:
    out: dict[str, float] = {}
    for fragment in fragments:
        for strategy, value in evidence_of(fragment).items():
            out[strategy] = max(out.get(strategy, 0.0), value)
    return out


def node_view(fragment: ContextFragment) -> tuple[str, str]:
    """What a fragment shows: its node, and whether as the node's content or its history
    (temporal-archaeology's summaries name the file they are about but are no rendering of
    it, so they are never depth alternatives of one)."""
    return (fragment.uko_node, "history" if fragment.metadata.get("history") else "content")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fragment_key(fragment: ContextFragment) -> tuple[str, int, str]:
    """A total order for ties, so that equal inputs always give the same output."""
    return (fragment.uko_node, -fragment.detail_depth, content_hash(fragment.content))


class ContentHashDeduplicator:
    """Groups by UKO node (and view: content or history); within a group, equal content is
    one fragment (the most relevant is kept). ``uko-identity`` mode keeps one fragment per
    node and view whatever its content."""

    MODES: Final = ("content-hash", "uko-identity")

    def __init__(self, mode: str = "content-hash") -> None:
        if mode not in self.MODES:
            known = ", ".join(self.MODES)
            raise UsageError(f"fragment-deduplicator mode {mode!r} is not supported; use one of {known}")
        self.mode = mode

    def deduplicate(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        kept: dict[tuple[str, str, str], ContextFragment] = {}
        for fragment in fragments:
            key = (*node_view(fragment), "" if self.mode == "uko-identity" else content_hash(fragment.content))
            other = kept.get(key)
            if other is None:
                kept[key] = fragment
                continue
            winner, loser = (fragment, other) if _better(fragment, other) else (other, fragment)
            also = sorted({*winner.metadata.get("also_from", []), loser.provenance.strategy or "?"})
            metadata = {**winner.metadata, "also_from": also, EVIDENCE: merged_evidence([winner, loser])}
            kept[key] = winner.model_copy(update={"metadata": metadata})
            note(
                "deduplicated",
                uko_node=loser.uko_node,
                strategy=loser.provenance.strategy,
                kept_from=winner.provenance.strategy,
                reason="same node and content" if self.mode == "content-hash" else "same node",
            )
        return list(kept.values())


def _better(a: ContextFragment, b: ContextFragment) -> bool:
    """Higher relevance wins; then the better strategy, then the name, for determinism."""
    qa, qb = a.metadata.get("strategy_quality", 0.5), b.metadata.get("strategy_quality", 0.5)
    return (a.relevance_score, qa, b.provenance.strategy or "") > (b.relevance_score, qb, a.provenance.strategy or "")


class MaxDepthResolver:
    """One fragment per UKO node: the highest depth whose tokens fit the budget (the
    lowest one if none fits). It carries the group's best relevance, and the lower
    renderings go along for the packer's depth fallback."""

    def resolve(self, fragments: list[ContextFragment], budget: int) -> list[ContextFragment]:
        groups: dict[tuple[str, str], list[ContextFragment]] = defaultdict(list)
        for fragment in fragments:
            groups[node_view(fragment)].append(fragment)
        out: list[ContextFragment] = []
        for (node, _), group in groups.items():
            if len(group) == 1:
                out.append(group[0])
                continue
            group.sort(key=lambda f: (-f.detail_depth, f.token_count, fragment_key(f)))
            winner = next((f for f in group if f.token_count <= budget), group[-1])
            lower = [f for f in group if f.detail_depth < winner.detail_depth]
            relevance = max(f.relevance_score for f in group)
            metadata: dict[str, Any] = {**winner.metadata, ALTERNATIVES: lower, EVIDENCE: merged_evidence(group)}
            distances = [int(f.metadata["distance"]) for f in group if f.metadata.get("distance") is not None]
            if distances:  # the node is as close to the focus as any strategy found it
                metadata["distance"] = min(distances)
            out.append(winner.model_copy(update={"relevance_score": relevance, "metadata": metadata}))
            note(
                "depth_conflicts",
                uko_node=node,
                kept_depth=winner.detail_depth,
                other_depths=sorted({f.detail_depth for f in group if f is not winner}, reverse=True),
                reason="highest depth that fits the budget",
            )
        return out


class WeightedCompositeScorer:
    """composite = relevance^wr x quality^wq x hierarchy^wh x recency^wt (weights normalized
    to sum 1): the spec's product of dimensions, with its configurable weights as exponents,
    so a zero in any dimension still zeroes the score and the result stays in 0..1.

    With ``evidence = "noisy-or"`` (the default) the relevance of a node several strategies
    found is 1 - prod(1 - relevance_i x quality_i) over them: independent findings add up,
    so what BM25, the embeddings and the graph all found ranks above what one of them found
    first. ``"max"`` keeps the deduplicated fragment's own relevance (the spec's literal
    reading)."""

    EVIDENCE_MODES: Final = ("noisy-or", "max")

    def __init__(
        self,
        relevance_weight: float = 0.4,
        hierarchy_weight: float = 0.3,
        quality_weight: float = 0.2,
        recency_weight: float = 0.1,
        recency_decay: float = 0.9,
        unknown_distance_hierarchy: float = 0.6,
        evidence: str = "noisy-or",
    ) -> None:
        if evidence not in self.EVIDENCE_MODES:
            known = ", ".join(self.EVIDENCE_MODES)
            raise UsageError(f"fragment-scorer evidence {evidence!r} is not supported; use one of {known}")
        self.evidence = evidence
        weights = {
            "relevance": relevance_weight,
            "hierarchy": hierarchy_weight,
            "quality": quality_weight,
            "recency": recency_weight,
        }
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise UsageError("fragment-scorer weights must be >= 0 and not all 0")
        total = sum(weights.values())
        self.weights = {name: w / total for name, w in weights.items()}
        self.recency_decay = recency_decay
        self.unknown_distance_hierarchy = unknown_distance_hierarchy

    def score(self, fragments: list[ContextFragment], plan_context: PlanContext) -> list[ScoredFragment]:
        scored = []
        for fragment in fragments:
            components = {
                "relevance": self._relevance(fragment),
                "quality": float(fragment.metadata.get("strategy_quality", 0.5)),
                "hierarchy": self._hierarchy(fragment),
                "recency": self.recency_decay ** max(0, int(fragment.metadata.get("revision_age", 0))),
            }
            composite = math.prod(max(v, 0.0) ** self.weights[k] for k, v in components.items())
            scored.append(ScoredFragment(fragment=fragment, composite_score=composite, score_components=components))
        return sorted(scored, key=lambda s: (-s.composite_score, fragment_key(s.fragment)))

    def _relevance(self, fragment: ContextFragment) -> float:
        if self.evidence == "max":
            return fragment.relevance_score
        found = evidence_of(fragment).values()
        return 1.0 - math.prod(1.0 - min(1.0, max(0.0, float(v))) for v in found)

    def _hierarchy(self, fragment: ContextFragment) -> float:
        distance = fragment.metadata.get("distance")
        if distance is None:
            return self.unknown_distance_hierarchy
        return 1.0 / (1.0 + max(0, int(distance)))


class GreedyKnapsackPacker:
    """Takes fragments by score while they fit. One that does not fit is tried at lower
    depths (kept alternatives first, then re-rendered through the render callback, down
    the ``depth_fallback_steps``), and as a last resort cut on a token boundary. Each
    fragment also pays for its separator, so the payload can never exceed the budget.
    A render reads the store, so at most ``max_renders`` happen per packing; after that
    fragments that do not fit are truncated."""

    def __init__(
        self, depth_fallback_steps: Sequence[int] = (9, 4, 2, 0), min_fragment_tokens: int = 10, max_renders: int = 12
    ) -> None:
        self.steps = sorted({int(s) for s in depth_fallback_steps}, reverse=True)
        self.min_fragment_tokens = min_fragment_tokens  # a truncated piece smaller than this is not worth it
        self.max_renders = max_renders

    def pack(self, scored_fragments: list[ScoredFragment], budget: int, render: RenderContext) -> list[ContextFragment]:
        render = self._limited(render)
        remaining = max(0, budget)
        packed: list[ContextFragment] = []
        for scored in scored_fragments:
            fragment = scored.fragment
            room = remaining - SEPARATOR_TOKENS
            fitted = self._fit(fragment, room, render) if room > 0 else None
            if fitted is None:
                note("dropped", uko_node=fragment.uko_node, tokens=fragment.token_count, reason="no room in the budget")
                continue
            packed.append(fitted)
            remaining -= fitted.token_count + SEPARATOR_TOKENS
        return packed

    def _limited(self, render: RenderContext) -> RenderContext:
        inner = render.render
        if inner is None:
            return render
        calls = [0]

        def limited(uko_node: str, depth: int) -> tuple[str, int] | None:
            calls[0] += 1
            if calls[0] > self.max_renders:
                if calls[0] == self.max_renders + 1:
                    note("limits", reason=f"depth fallback stopped after {self.max_renders} renders; truncating")
                return None
            return inner(uko_node, depth)

        return RenderContext(render.counter, limited)

    def _fit(self, fragment: ContextFragment, room: int, render: RenderContext) -> ContextFragment | None:
        alternatives: list[ContextFragment] = fragment.metadata.get(ALTERNATIVES, [])
        clean = _clean(fragment)
        if clean.token_count <= room:
            return clean
        for lower in self._lower_versions(clean, alternatives, render):
            if lower.token_count <= room:
                note(
                    "downgraded",
                    uko_node=fragment.uko_node,
                    from_depth=fragment.detail_depth,
                    to_depth=lower.detail_depth,
                    reason=f"{fragment.token_count} tokens did not fit in {room}",
                )
                return lower
        if room < self.min_fragment_tokens:
            return None
        text = render.counter.truncate(clean.content, room)
        tokens = render.counter.count(text)
        if not text or tokens > room:
            return None
        note(
            "truncated",
            uko_node=fragment.uko_node,
            from_tokens=fragment.token_count,
            to_tokens=tokens,
            reason="no lower depth fits; cut on a token boundary",
        )
        metadata = {**clean.metadata, "truncated_from": clean.token_count}
        return clean.model_copy(update={"content": text, "token_count": tokens, "metadata": metadata})

    def _lower_versions(
        self, fragment: ContextFragment, alternatives: list[ContextFragment], render: RenderContext
    ) -> Iterator[ContextFragment]:
        """Lower renderings, highest depth first, rendered only when asked for (a render
        reads the store): the depth resolver's alternatives, then the fallback steps."""
        kept = {alt.detail_depth: alt for alt in alternatives if alt.detail_depth < fragment.detail_depth}
        steps = {s for s in self.steps if s < fragment.detail_depth} if render.render is not None else set()
        seen: set[int] = set()
        for depth in sorted(set(kept) | steps, reverse=True):
            if depth in seen:
                continue
            if depth in kept:
                seen.add(depth)
                yield _mark(_clean(kept[depth]), fragment.detail_depth)
                continue
            if render.render is None:  # only steps need a renderer, and there are none without one
                continue
            try:
                rendered = render.render(fragment.uko_node, depth)
            except Exception as exc:  # e.g. a depth beyond this node's deepest level: try the next one
                note("failures", strategy="render", kind="render", message=f"{fragment.uko_node} at {depth}: {exc}")
                continue
            if rendered is None:  # no stored content: no lower rendering at all
                return
            text, used = rendered
            if used in seen or used >= fragment.detail_depth:
                continue
            seen.add(used)
            lower = fragment.model_copy(
                update={"content": text, "detail_depth": used, "token_count": render.counter.count(text)}
            )
            yield _mark(lower, fragment.detail_depth)


def _clean(fragment: ContextFragment) -> ContextFragment:
    if not any(k.startswith("_") for k in fragment.metadata):
        return fragment
    metadata = {k: v for k, v in fragment.metadata.items() if not k.startswith("_")}
    return fragment.model_copy(update={"metadata": metadata})


def _mark(fragment: ContextFragment, from_depth: int) -> ContextFragment:
    return fragment.model_copy(update={"metadata": {**fragment.metadata, "downgraded_from": from_depth}})


class RelevanceCoherenceOrderer:
    """Groups fragments by resource and file; groups keep the rank of their best fragment
    (the input is in score order), fragments within a group follow source position,
    containers before their members. ``relevance`` mode keeps strict score order."""

    MODES: Final = ("relevance-coherence", "relevance")

    def __init__(self, mode: str = "relevance-coherence") -> None:
        if mode not in self.MODES:
            raise UsageError(f"fragment-orderer mode {mode!r} is not supported; use one of {', '.join(self.MODES)}")
        self.mode = mode

    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        if self.mode == "relevance":
            return list(fragments)
        groups: dict[tuple[str, str], list[ContextFragment]] = {}
        for fragment in fragments:
            groups.setdefault(self._group_key(fragment), []).append(fragment)
        return [f for group in groups.values() for f in sorted(group, key=self._intra_group_sort)]

    @staticmethod
    def _group_key(fragment: ContextFragment) -> tuple[str, str]:
        provenance = fragment.provenance
        return (provenance.resource, provenance.path or fragment.uko_node)

    @staticmethod
    def _intra_group_sort(fragment: ContextFragment) -> tuple[int, int, str]:
        start, end = fragment.provenance.line_range or (0, 0)
        return (start, -end, fragment.uko_node)
