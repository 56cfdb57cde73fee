"""plan-decision-context: the decisions of the plan and of its ancestors, so a child plan
remembers what its parents decided and why (core-concepts.md "Hierarchical Plan Context").

The named query context-plan-decisions lists the current decisions (superseded ones left
out) up the ca:parentPlan chain; Python ranks them (own plan first, then parent,
grandparent...; the decision that spawned this plan and framing decisions first) and writes
one fragment per decision within the budget.
"""

from __future__ import annotations

import re
from typing import Any

import pyoxigraph as ox

from cleveragents.context import intent as intents
from cleveragents.context import toolkit
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.protocols import BackendSet

NAME = "plan-decision-context"
CA = "https://cleveragents.ai/ontology/ca#"
# Which decisions frame a child's work most (core-concepts.md decision types).
TYPE_WEIGHTS = {
    "prompt_definition": 1.0,
    "invariant_enforced": 0.95,
    "subplan_spawn": 0.9,
    "subplan_parallel_spawn": 0.9,
    "strategy_choice": 0.85,
    "user_intervention": 0.85,
    "implementation_choice": 0.7,
    "resource_selection": 0.6,
    "validation_response": 0.5,
    "error_recovery": 0.45,
    "tool_invocation": 0.3,
}
DISTANCE_DECAY = 0.75  # per plan level up the tree


def distances(rows: list[dict[str, Any]], plan: str) -> dict[str, int]:
    """How many ca:parentPlan steps each owner plan is above ``plan``."""
    parent = {r["owner"]: r.get("ownerParent") for r in rows}
    out, node, level = {}, plan, 0
    while node is not None and node not in out:
        out[node] = level
        node, level = parent.get(node), level + 1
    return out


def render_decision(row: dict[str, Any], level: int) -> str:
    kind = str(row["type"]).removeprefix(CA)
    where = "this plan" if level == 0 else ("the parent plan" if level == 1 else f"an ancestor plan ({level} up)")
    lines = [f"Decision [{kind}] #{row['seq']} of {where} <{row['decision']}>"]
    if row.get("question"):
        lines.append(f"Question: {row['question']}")
    lines.append(f"Chosen: {row['choice']}")
    if row.get("rationale"):
        lines.append(f"Rationale: {row['rationale']}")
    if row.get("alternatives"):
        lines.append(f"Alternatives considered: {row['alternatives']}")
    if row.get("confidence") is not None:
        lines.append(f"Confidence: {row['confidence']}")
    return "\n".join(lines)


class PlanDecisionContext(toolkit.StrategyBase):
    """Decisions of the plan and its ancestors."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(uses_graph=True, supports_plan_hierarchy=True, quality_score=0.7)
    description = "Current decisions of the plan and its ancestors, own plan and framing decisions first."

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        # can_handle does not see the PlanContext: a store without decisions answers 0, so no
        # budget is set aside for a strategy that cannot produce anything.
        if backends.graph is None:
            return 0.0
        [row] = backends.graph.query_sparql(f"ASK {{ ?decision a <{CA}Decision> }}") or [{"result": False}]
        return 0.5 if row.get("result") else 0.0

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        graph = backends.graph
        if graph is None or budget <= 0:
            self._notes.append("no graph backend or no budget")
            return []
        if not plan_context.plan:
            self._notes.append("not assembling for a plan: no decisions to inherit")
            return []
        rows = toolkit.run(graph, "context-plan-decisions", None, {"plan": [ox.NamedNode(plan_context.plan)]})
        if not rows:
            self._notes.append(f"no decisions recorded for {plan_context.plan} or its ancestors")
            return []
        levels = distances(rows, plan_context.plan)
        terms = self._focus_terms(request)
        scored = []
        for row in rows:
            level = levels.get(row["owner"], len(levels))
            weight = TYPE_WEIGHTS.get(str(row["type"]).removeprefix(CA), 0.5)
            score = weight * DISTANCE_DECAY**level
            if row.get("spawned"):
                score = max(score, 0.95)  # the decision that created this plan says what it is for
            text = render_decision(row, level)
            if terms and any(t in text.lower() or t in str(row.get("relevantTo") or "").lower() for t in terms):
                score = min(1.0, score * 1.25)  # it speaks of the child's focus
            scored.append((score, level, int(row["seq"]), row, text))
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        left = toolkit.Budget(budget, backends.encoding)
        fragments = []
        for score, level, _, row, text in scored:
            if left.left < toolkit.MIN_FRAGMENT_TOKENS:
                break
            frag = toolkit.text_fragment(
                NAME, row["decision"], text, left, score, plan=row["owner"], plan_distance=level, decision=True
            )
            if frag is not None:
                fragments.append(frag)
        self._notes.append(f"{len(rows)} decision(s) over {len(levels)} plan level(s), {len(fragments)} packed")
        return fragments

    @staticmethod
    def _focus_terms(request: ContextRequest) -> list[str]:
        """Lower-cased words naming the request's focus, to boost decisions that mention it."""
        intent = intents.analyze(request)
        keys = [*request.focus, *request.entities, *intent.paths, *intent.symbols]
        parts = {p.lower() for k in keys for p in re.split(r"[/.#:]", k) if len(p) >= 3}
        return sorted(parts)


STRATEGIES = [PlanDecisionContext]
