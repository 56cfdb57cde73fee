"""How a child plan inherits its parent's context (architecture.md "Context Inheritance
Mechanism", "Skeleton Context Propagation"): the parent's assembly compressed to a depth
0/1 skeleton within ``skeleton_ratio`` of the child's budget, and a narrower, deeper
request around the child's focus."""

from __future__ import annotations

from collections.abc import Sequence

from cleveragents.errors import UsageError

from .model import AssembledContext, ContextRequest, PlanContext
from .pipeline import DepthReductionCompressor, RenderContext, SkeletonCompressor

DETAIL_STEP = 4  # depth added per plan level (root 0 -> subplan 4 -> sub-subplan 9 in the spec)


class PlanContextInheritance:
    def __init__(
        self, compressor: SkeletonCompressor | None = None, skeleton_ratio: float = 0.15, detail_step: int = DETAIL_STEP
    ) -> None:
        if not 0.0 <= skeleton_ratio <= 1.0:
            raise UsageError(f"skeleton_ratio must be between 0 and 1, got {skeleton_ratio}")
        self.compressor = compressor or DepthReductionCompressor()
        self.skeleton_ratio = skeleton_ratio
        self.detail_step = detail_step

    def skeleton(
        self,
        parent_context: AssembledContext,
        child_focus: Sequence[str],
        child_budget: int,
        render: RenderContext | None = None,
    ) -> AssembledContext:
        """The parent's context at depth 0/1 within ``skeleton_ratio`` of ``child_budget``."""
        budget = int(max(0, child_budget) * self.skeleton_ratio)
        return self.compressor.compress(parent_context, list(child_focus), budget, render)

    def compute_child_context(
        self,
        parent_context: AssembledContext,
        parent_request: ContextRequest,
        child_focus: Sequence[str],
        *,
        child_budget: int | None = None,
        depth_delta: int = 1,
        plan: str | None = None,
        ancestors: Sequence[str] = (),
        project: str | None = None,
        render: RenderContext | None = None,
    ) -> tuple[ContextRequest, PlanContext]:
        """The child's request (focused, narrower, deeper) and the PlanContext that carries
        the parent skeleton; pass both to ``ContextAssembler.assemble``."""
        if depth_delta < 0:
            raise UsageError("a child plan is deeper than its parent: depth_delta must be >= 0")
        budget = child_budget if child_budget is not None else (parent_request.max_tokens or parent_context.budget)
        skeleton = self.skeleton(parent_context, child_focus, budget, render)
        depth = parent_request.depth
        if isinstance(depth, int):
            depth = depth + self.detail_step * depth_delta  # named levels stay as named
        request = parent_request.model_copy(
            update={
                "focus": list(child_focus) or parent_request.focus,
                "breadth": max(1, parent_request.breadth - depth_delta),
                "depth": depth,
                "depth_gradient": True,
                "max_tokens": budget,
            }
        )
        plan_context = PlanContext(
            plan=plan,
            ancestors=list(ancestors),
            project=project,
            parent_skeleton=skeleton.fragments,
            skeleton_ratio=self.skeleton_ratio,
            parent_context_hash=parent_context.context_hash,
        )
        return request, plan_context
