"""Phase 3, context finalization: the provenance preamble and the skeleton a child plan
inherits (architecture.md "Built-in Default Implementations", Phase 3)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

from cleveragents.context.model import AssembledContext, ContextFragment
from cleveragents.context.tokens import TokenCounter, counter_for

from .fusion import SEPARATOR_TOKENS
from .protocols import RenderContext

CHARS_PER_TOKEN = 3  # a generous bound for a first cut; the assembler truncates exactly


def payload_hash(payload: str) -> str:
    return "sha256:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def fit_payload(
    fragments: list[ContextFragment], preamble: str | None, budget: int, counter: TokenCounter
) -> tuple[list[ContextFragment], str | None, int]:
    """The final guard of the hard ceiling: counts the payload exactly as delivered (the
    markdown, headers, fences and elision marks included) and drops the least relevant
    fragments (the packer's score, else the strategy's relevance), then the preamble,
    until it fits."""
    fragments = list(fragments)
    while True:
        probe = AssembledContext(
            fragments=fragments,
            total_tokens=0,
            budget=budget,
            budget_used=0.0,
            strategies_used=[],
            context_hash="",
            preamble=preamble,
        )
        tokens = counter.count(probe.render())
        if tokens <= budget:
            return fragments, preamble, tokens
        if fragments:
            weakest = min(range(len(fragments)), key=lambda i: (_score(fragments[i]), -i))
            fragments.pop(weakest)
        else:
            preamble = None


def _score(fragment: ContextFragment) -> float:
    return float(fragment.metadata.get("score", fragment.relevance_score))


def build_context(
    fragments: list[ContextFragment],
    preamble: str | None,
    budget: int,
    strategies_used: list[str],
    counter: TokenCounter,
    explanation: dict[str, Any] | None = None,
) -> AssembledContext:
    fragments, preamble, tokens = fit_payload(fragments, preamble, budget, counter)
    context = AssembledContext(
        fragments=fragments,
        total_tokens=tokens,
        budget=budget,
        budget_used=tokens / budget if budget else 0.0,
        strategies_used=strategies_used,
        context_hash="",
        preamble=preamble,
        provenance_map={f.uko_node: f.provenance for f in fragments},
        encoding=counter.encoding,
        explanation=explanation or {},
    )
    return context.model_copy(update={"context_hash": payload_hash(context.render())})


def _line_ranges(fragments: Sequence[ContextFragment]) -> str:
    spans = sorted({f.provenance.line_range for f in fragments if f.provenance.line_range})
    return ", ".join(f"L{a}-{b}" for a, b in spans[:6]) + (" ..." if len(spans) > 6 else "")


class ProvenancePreambleGenerator:
    """A short map of what follows: counts, strategies, budget use, then each resource with
    its files and line ranges. Its tokens count against the budget (the assembler reserves
    at most ``max_tokens`` of it and truncates exactly)."""

    def __init__(self, enabled: bool = True, max_tokens: int = 200) -> None:
        self.enabled = enabled
        self.max_tokens = max_tokens

    def generate(
        self, fragments: list[ContextFragment], strategies_used: list[str], budget_used: float, max_tokens: int
    ) -> str | None:
        if not self.enabled or max_tokens <= 0 or not fragments:
            return None
        lines = [
            f"# Context: {len(fragments)} fragment(s); strategies: {', '.join(strategies_used) or 'none'}; "
            f"budget {budget_used:.0%} used"
        ]
        by_resource: dict[str, dict[str, list[ContextFragment]]] = {}
        for fragment in fragments:
            path = fragment.provenance.path or fragment.uko_node
            by_resource.setdefault(fragment.provenance.resource, {}).setdefault(path, []).append(fragment)
        limit = max_tokens * CHARS_PER_TOKEN
        for resource, paths in by_resource.items():
            lines.append(f"resource {resource}:")
            for path, group in paths.items():
                ranges = _line_ranges(group)
                lines.append(f"  {path}" + (f" {ranges}" if ranges else ""))
                if sum(len(line) + 1 for line in lines) > limit:
                    lines.append("  ...")
                    return "\n".join(lines)
        return "\n".join(lines)


class DepthReductionCompressor:
    """The parent's fragments re-rendered at depth 1, else 0 (names and member names),
    closest to the child's focus first, within ``skeleton_budget`` tokens. Without a
    renderer, or after ``max_renders`` renders, a fragment's first line stands for its
    depth-0 rendering."""

    def __init__(self, skeleton_depths: Sequence[int] = (1, 0), max_renders: int = 32) -> None:
        self.depths = sorted({int(d) for d in skeleton_depths}, reverse=True)
        self.max_renders = max_renders

    def compress(
        self,
        parent_context: AssembledContext,
        child_focus: list[str],
        skeleton_budget: int,
        render: RenderContext | None = None,
    ) -> AssembledContext:
        counter = render.counter if render else counter_for(parent_context.encoding)
        ranked = sorted(
            enumerate(parent_context.fragments), key=lambda pair: (_closeness(pair[1], child_focus), pair[0])
        )
        remaining = max(0, skeleton_budget)
        renders = [0]
        out: list[ContextFragment] = []
        for _, fragment in ranked:
            room = remaining - SEPARATOR_TOKENS
            if room <= 0:
                break
            candidates = self._reductions(fragment, render, counter, renders)
            reduced = next((f for f in candidates if f.token_count <= room), None)
            if reduced is None:
                continue
            out.append(reduced)
            remaining -= reduced.token_count + SEPARATOR_TOKENS
        return build_context(out, None, max(0, skeleton_budget), list(parent_context.strategies_used), counter)

    def _reductions(
        self, fragment: ContextFragment, render: RenderContext | None, counter: TokenCounter, renders: list[int]
    ) -> Iterator[ContextFragment]:
        """Skeleton versions of a fragment, deepest first, rendered only when asked for."""
        produced = False
        for depth in (d for d in self.depths if d <= fragment.detail_depth):
            text, used = (fragment.content, depth) if depth == fragment.detail_depth else (None, depth)
            if text is None and render is not None and render.render is not None and renders[0] < self.max_renders:
                renders[0] += 1
                try:
                    rendered = render.render(fragment.uko_node, depth)
                except Exception:  # a node the renderer cannot show at this depth: try the next
                    rendered = None
                if rendered is not None:
                    text, used = rendered
            if text:
                produced = True
                yield _skeleton(fragment, text, used, counter)
        if not produced:  # the first non-empty line is the name or signature
            first = next((line for line in fragment.content.splitlines() if line.strip()), "")
            if first:
                yield _skeleton(fragment, first, 0, counter)


def _skeleton(fragment: ContextFragment, text: str, depth: int, counter: TokenCounter) -> ContextFragment:
    metadata = {**fragment.metadata, "skeleton": True, "parent_depth": fragment.detail_depth}
    return fragment.model_copy(
        update={"content": text, "detail_depth": depth, "token_count": counter.count(text), "metadata": metadata}
    )


def _closeness(fragment: ContextFragment, focus: list[str]) -> int:
    """0: a focus node; 1: in a focus node's file or path; 2: same resource path prefix; 3: other."""
    node = fragment.uko_node
    if node in focus:
        return 0
    file_iri = node.split("#", 1)[0]
    path = fragment.provenance.path or ""
    for item in focus:
        if item.split("#", 1)[0] == file_iri or (path and (item == path or item.endswith("/" + path))):
            return 1
    directories = {item.rsplit("/", 1)[0] for item in focus if "/" in item}
    return 2 if any(file_iri.startswith(d) or (path and path.startswith(d)) for d in directories) else 3
