"""Watching a plan as it runs: every phase transition and every decision is one commit, so
the commit path is where a caller (the A2A server streaming a task's status) sees the
plan move, and where it can stop it.

``ObservedWriter`` stands in for the engine's writer: after each plan commit it reads the
plan back in the same writer session and hands it to the observer. An observer that
raises ``Interrupted`` stops the plan at that step (cooperative cancellation: the commit
is already made, so the store stays whole; the engine ends the phase as errored, or the
exception leaves the engine between phases), and the caller then cancels the plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pyoxigraph as ox

from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import WriteSession
from cleveragents.plans import records
from cleveragents.plans.records import PlanRecord
from cleveragents.plans.vocabulary import TYPE, ca

# The commits that move a plan (plan-use creates it, record-decision adds a decision).
PLAN_CAUSES = frozenset({"plan-use", "plan-transition", "record-decision", "decision-approval"})


@dataclass(frozen=True)
class PlanProgress:
    """One step of a plan: the plan as it is after the commit, and the commit's message
    (``plan X: execute started (attempt 1)``, ``decision strategy_choice in plan X``...)."""

    plan: PlanRecord
    cause: str
    message: str
    revision: int


PlanObserver = Callable[[PlanProgress], None]


class ObservedWriter:
    """A ``plans.vocabulary.Writer`` that reports each plan commit to an observer."""

    def __init__(self, session: WriteSession, observer: PlanObserver, plan: str | None = None) -> None:
        self.session = session
        self.observer = observer
        # Known for a verb on an existing plan (its ULID); for `use`, found in the creating commit.
        self.plan_iri = records.resolve(session.store, plan).value if plan else None

    @property
    def store(self) -> GraphStore:
        return self.session.store

    def commit(self, request: CommitRequest) -> CommitResult:
        if request.cause in PLAN_CAUSES and self.plan_iri is None:
            request = replace(request, add=list(request.add))  # read twice: here and by the commit
            self.plan_iri = _created_plan(request)
        result = self.session.commit(request)
        if request.cause in PLAN_CAUSES and self.plan_iri is not None:
            plan = records.read(self.store, ox.NamedNode(self.plan_iri))
            self.observer(PlanProgress(plan, request.cause or "", request.message or "", result.revision))
        return result


def _created_plan(request: CommitRequest) -> str | None:
    plan_class = ca("Plan")
    for s, p, o in request.add or ():
        if p == TYPE and o == plan_class:
            return str(s.value)
    return None
