"""Which verbs a plan's phase and state allow (the CLI contract of core-concepts.md "Phase
Transition Verbs"); a verb not allowed now is a 409 naming the phase, the state and the
verbs that are."""

from __future__ import annotations

from typing import Final

from cleveragents.errors import ConflictError

from .records import PlanRecord

# (phase, state) -> verbs that change the plan. A paused plan (queued, awaiting approval of
# a decision) is resumed (approve) or prompted (override). `resume` from `constrained`
# approves the reversion to Strategize (core-concepts.md "Apply -> Strategize").
_VERBS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("strategize", "queued"): ("resume", "cancel"),
    ("strategize", "processing"): ("resume", "cancel"),
    ("strategize", "complete"): ("execute", "correct", "prompt", "cancel"),
    ("strategize", "errored"): ("resume", "prompt", "correct", "cancel"),
    ("execute", "queued"): ("resume", "cancel"),
    ("execute", "processing"): ("resume", "cancel"),
    ("execute", "complete"): ("apply", "correct", "prompt", "cancel"),
    ("execute", "errored"): ("resume", "prompt", "correct", "cancel"),
    ("apply", "queued"): ("resume", "cancel"),
    ("apply", "processing"): ("resume", "cancel"),
    ("apply", "errored"): ("resume", "cancel"),
    ("apply", "constrained"): ("resume", "correct", "cancel"),
}


def allowed_verbs(plan: PlanRecord) -> tuple[str, ...]:
    verbs = _VERBS.get((plan.phase, plan.state), ())
    if plan.awaiting and plan.state == "queued":
        verbs = ("resume", "prompt", "correct", "cancel")
    return verbs


def require(plan: PlanRecord, verb: str) -> None:
    verbs = allowed_verbs(plan)
    if verb not in verbs:
        now = ", ".join(verbs) if verbs else "none (the plan is terminal)"
        raise ConflictError(
            f"cannot {verb} plan {plan.id}: it is in phase {plan.phase}, state {plan.state}; verbs allowed now: {now}",
            data={"phase": plan.phase, "state": plan.state, "allowed": list(verbs)},
        )
