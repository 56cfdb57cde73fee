"""The decision tree of a plan as a nested structure (``plan tree``): decisions under their
structural parents in sequence order, child plans under the decision that spawned them,
superseded branches left out or annotated."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .decisions import Decision
from .records import PlanRecord
from .vocabulary import ulid_of


@dataclass
class TreeNode:
    label: str
    decision: Decision | None = None
    plan: PlanRecord | None = None
    children: list[TreeNode] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label}
        if self.decision is not None:
            out["decision"] = self.decision.as_dict()
        if self.plan is not None:
            out["plan"] = {"id": self.plan.id, "phase": self.plan.phase, "state": self.plan.state}
        out["children"] = [c.as_dict() for c in self.children]
        return out


def _label(d: Decision) -> str:
    text = d.chosen if len(d.chosen) <= 100 else d.chosen[:97] + "..."
    label = f'[{d.type}] "{text}" id={d.id}'
    if d.approval == "pending":
        label += " (awaiting approval)"
    if not d.current:
        by = (
            f"decision {ulid_of(d.superseded_by)}"
            if d.superseded_by
            else f"correction {ulid_of(d.invalidated_by or '')}"
        )
        label += f" (superseded by {by})"
    return label


def build(
    plan: PlanRecord, decisions: dict[str, Decision], plans: dict[str, PlanRecord], *, show_superseded: bool = False
) -> TreeNode:
    children: dict[str | None, list[Decision]] = defaultdict(list)
    by_plan: dict[str, list[Decision]] = defaultdict(list)
    for d in decisions.values():
        if d.current or show_superseded:
            by_plan[d.plan].append(d)
            children[d.parent].append(d)
    for items in children.values():
        items.sort(key=lambda d: d.sequence)
    spawned: dict[str, list[PlanRecord]] = defaultdict(list)
    for p in plans.values():
        if p.spawned_by:
            spawned[p.spawned_by].append(p)

    def plan_node(p: PlanRecord) -> TreeNode:
        node = TreeNode(f"Plan {p.id} ({p.phase}, {p.state})", plan=p)
        roots = sorted((d for d in by_plan[p.iri] if d.parent is None), key=lambda d: d.sequence)
        node.children = [decision_node(d) for d in roots]
        return node

    def decision_node(d: Decision) -> TreeNode:
        node = TreeNode(_label(d), decision=d)
        node.children = [decision_node(c) for c in children.get(d.iri, [])]
        node.children += [plan_node(p) for p in sorted(spawned.get(d.iri, []), key=lambda p: p.created)]
        return node

    return plan_node(plan)


def flat(root: TreeNode) -> list[dict[str, Any]]:
    """One row per decision, depth first, with its depth."""
    rows: list[dict[str, Any]] = []

    def walk(node: TreeNode, depth: int) -> None:
        if node.decision is not None:
            d = node.decision
            rows.append({"depth": depth, **d.as_dict()})
        for child in node.children:
            walk(child, depth + 1)

    walk(root, 0)
    return rows
