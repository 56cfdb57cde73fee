"""The actor protocol: what the lifecycle engine asks of a strategy or execution actor.

An actor gets a ``PlanContext``: the plan, the findings of a reversion, the user's
guidance, a decision recorder and (in Execute) the tool router with its context. It records
decisions through ``ctx.record_decision`` (or the ``record_decision`` tool, the same
thing) and acts only through tools, and returns a ``PhaseOutcome``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from cleveragents.errors import CleverAgentsError

from .decisions import Decision, DecisionInput
from .records import PlanRecord


class AwaitingApproval(CleverAgentsError):
    """A decision was recorded below the plan's approval threshold: the plan pauses."""

    code = 202
    category = "AWAITING_APPROVAL"
    exit_code = 0


@dataclass(frozen=True)
class PhaseOutcome:
    """``complete``; ``revert`` (Execute found the strategy's constraints too tight; the
    findings go to the strategy actor); ``error`` (the actor could not finish)."""

    status: Literal["complete", "revert", "error"] = "complete"
    findings: str = ""
    error: str = ""


@dataclass
class PlanContext:
    plan: PlanRecord
    phase: str
    attempt: int
    record: Callable[[DecisionInput], Decision]
    decisions: Callable[[], list[Decision]]
    query: Callable[[str], list[dict[str, Any]]]
    findings: str = ""
    guidance: Sequence[str] = ()
    # The tool router and the ToolContext of this plan (Execute), when the tools package is present.
    call_tool: Callable[[str, dict[str, Any]], Any] | None = None
    spawn_subplan: Callable[..., Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def record_decision(self, decision_type: str, chosen: str, **fields: Any) -> Decision:
        return self.record(DecisionInput(type=decision_type, chosen=chosen, **fields))


class Actor(Protocol):
    """A strategy or execution actor. An actor named as a plan's ``invariant_actor`` also
    has ``find_invariant_conflicts(plan, invariants) -> [InvariantConflict]``: the pairs of
    the plan's applicable invariants that contradict each other (invariants.py settles
    each pair by precedence)."""

    def strategize(self, ctx: PlanContext) -> PhaseOutcome: ...

    def execute(self, ctx: PlanContext) -> PhaseOutcome: ...


ActorResolver = Callable[[str], Actor]
