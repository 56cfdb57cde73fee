"""The tools plans registers into the tool router: ``record_decision`` (every actor records
its decisions through it; the context snapshot is captured by the recorder, not passed in
by the actor) and ``create-subplan`` (Execute realizes a subplan_spawn or
subplan_parallel_spawn decision as child plans, subplans.py). Their handlers find the
plan's recorder and spawner in ``ToolContext.extras`` (set by the lifecycle engine for
the running phase)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Final

from cleveragents.tools import BUILTIN_TOOLS, READ_ONLY, Capability, ToolContext, ToolRouter, ToolSpec

from .decisions import DecisionInput
from .subplans import StoreTurn
from .vocabulary import DECISION_TYPES

RECORDER: Final = "plans.record_decision"
SPAWNER: Final = "plans.spawn_subplans"
HANDLER_SCOPE: Final = "plans.handler_scope"

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
            "subplan_action": {"type": "string", "minLength": 1},
            "subplan_arguments": {"type": "object"},
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
            subplan_action=arguments.get("subplan_action"),
            subplan_arguments=arguments.get("subplan_arguments"),
        )
    )
    return {"decision_id": decision.id, "sequence_number": decision.sequence, "type": decision.type}


CREATE_SUBPLAN: Final = ToolSpec(
    name="create-subplan",
    description=(
        "Spawn the child plans of a subplan_spawn decision (one child) or of a subplan_parallel_spawn decision "
        "(each subplan_spawn under it, run concurrently, at most max_parallel at once). Each child runs Strategize "
        "and Execute in its own sandbox, forked from this plan's sandbox, and its changes are merged into this "
        "plan's sandbox. Returns each child's id, status (merged, unchanged, failed, awaiting, skipped) and the "
        "files it changed. The decision defaults to the one the call belongs to."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "decision": {"type": "string", "minLength": 1},
            "fail_fast": {"type": "boolean"},
            "retry_failed": {"type": "boolean"},
            "max_retries": {"type": "integer", "minimum": 0, "maximum": 10},
        },
        "additionalProperties": False,
    },
    # It changes resources only through the children's sandboxes, merged into this plan's.
    capability=Capability(read_only=False, writes=True, side_effects=("spawn_subplan",)),
    source="plans",
)


def create_subplan(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    spawn = ctx.extras.get(SPAWNER)
    if spawn is None:
        raise RuntimeError("create-subplan is called outside a running Execute phase")
    decision = arguments.get("decision") or ctx.decision
    if not decision:
        from cleveragents.errors import ValidationError

        raise ValidationError("create-subplan needs the subplan_spawn or subplan_parallel_spawn decision to realize")
    options = {k: arguments[k] for k in ("fail_fast", "retry_failed", "max_retries") if k in arguments}
    outcomes = spawn(decision, **options)
    return {
        "subplans": [o.as_dict() for o in outcomes],
        "ok": all(o.ok for o in outcomes),
    }


# The built-in resource tools work only in the sandbox: while one runs, a subplan running
# beside others gives up its turn on the store (every other tool may read or write it).
_SANDBOX_ONLY: Final = frozenset(spec.name for spec, _ in BUILTIN_TOOLS)


def handler_scope(turn: StoreTurn) -> Callable[[ToolSpec], AbstractContextManager[object]]:
    def scope(spec: ToolSpec) -> AbstractContextManager[object]:
        return turn.released() if spec.name in _SANDBOX_ONLY else nullcontext()

    return scope


def register(router: ToolRouter) -> ToolRouter:
    """Add plans' tools to a router (once)."""
    names = {spec.name for spec in router.specs()}
    if "record_decision" not in names:
        router.register(RECORD_DECISION, record_decision)
    if "create-subplan" not in names:
        router.register(CREATE_SUBPLAN, create_subplan)
    return router
