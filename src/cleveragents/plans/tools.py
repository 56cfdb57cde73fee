"""The tools plans registers into the tool router: ``record_decision`` (every actor records
its decisions through it; the context snapshot is captured by the recorder, not passed in
by the actor) and ``add_influence``. Their handler finds the plan's recorder in
``ToolContext.extras`` (set by the lifecycle engine for the running phase)."""

from __future__ import annotations

from typing import Any, Final

from cleveragents.tools import READ_ONLY, ToolContext, ToolRouter, ToolSpec

from .decisions import DecisionInput
from .vocabulary import DECISION_TYPES

RECORDER: Final = "plans.record_decision"

RECORD_DECISION: Final = ToolSpec(
    name="record_decision",
    description=(
        "Record a decision of the running plan: its type, the question, the chosen option, the alternatives "
        "considered, a confidence from 0 to 1 and the rationale; optionally the decisions that influenced it and "
        "its structural parent. A confidence below the plan's approval threshold pauses the plan for the user."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "decision_type": {"type": "string", "enum": list(DECISION_TYPES)},
            "question": {"type": "string"},
            "chosen_option": {"type": "string", "minLength": 1},
            "alternatives_considered": {"type": "array", "items": {"type": "string"}},
            "confidence_score": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string"},
            "actor_reasoning": {"type": "string"},
            "influenced_by": {"type": "array", "items": {"type": "string"}},
            "parent_decision": {"type": "string"},
            "context_hash": {"type": "string"},
            "max_parallel": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "required": ["decision_type", "chosen_option"],
        "additionalProperties": False,
    },
    # It writes the plan's decision tree, never a resource: read-only for the sandbox policy.
    capability=READ_ONLY,
    source="plans",
)


def record_decision(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    recorder = ctx.extras.get(RECORDER)
    if recorder is None:
        raise RuntimeError("record_decision is called outside a running plan phase")
    decision = recorder(
        DecisionInput(
            type=arguments["decision_type"],
            chosen=arguments["chosen_option"],
            question=arguments.get("question", ""),
            alternatives=tuple(arguments.get("alternatives_considered", ())),
            confidence=arguments.get("confidence_score"),
            rationale=arguments.get("rationale", ""),
            reasoning=arguments.get("actor_reasoning", ""),
            influenced_by=tuple(arguments.get("influenced_by", ())),
            parent=arguments.get("parent_decision"),
            context_hash=arguments.get("context_hash") or ctx.extras.get("plans.context_hash"),
            max_parallel=arguments.get("max_parallel"),
        )
    )
    return {"decision_id": decision.id, "sequence_number": decision.sequence, "type": decision.type}


def register(router: ToolRouter) -> ToolRouter:
    """Add plans' tools to a router (once)."""
    if "record_decision" not in {spec.name for spec in router.specs()}:
        router.register(RECORD_DECISION, record_decision)
    return router
