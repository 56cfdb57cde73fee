"""The IRIs and closed vocabularies of the plan model (ontology/ca.ttl, plans block)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Final, Protocol

import pyoxigraph as ox
from ulid import ULID

from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.terms import CA, ID, PROV, RDF_TYPE, XSD


def ca(name: str) -> ox.NamedNode:
    return ox.NamedNode(CA + name)


def prov(name: str) -> ox.NamedNode:
    return ox.NamedNode(PROV + name)


TYPE: Final = ox.NamedNode(RDF_TYPE)
PHASES: Final = ("action", "strategize", "execute", "apply")
PHASE_IRI: Final = {p: ca(p.capitalize() + "Phase") for p in PHASES}
STATES: Final = (
    "available",
    "archived",
    "queued",
    "processing",
    "errored",
    "complete",
    "cancelled",
    "applied",
    "constrained",
)
TERMINAL_STATES: Final = frozenset({"errored", "complete", "cancelled", "applied", "constrained"})
# The spec's tables (core-concepts.md "Plan States (Per Phase)"); SHACL enforces the same.
ALLOWED_STATES: Final = {
    "action": ("available", "archived"),
    "strategize": ("queued", "processing", "errored", "complete", "cancelled"),
    "execute": ("queued", "processing", "errored", "complete", "cancelled"),
    "apply": ("queued", "processing", "errored", "applied", "constrained", "cancelled"),
}
DECISION_TYPES: Final = (
    "prompt_definition",
    "invariant_enforced",
    "strategy_choice",
    "implementation_choice",
    "resource_selection",
    "subplan_spawn",
    "subplan_parallel_spawn",
    "tool_invocation",
    "error_recovery",
    "validation_response",
    "user_intervention",
)
# Who records each type (core-concepts.md "Decision Recording Protocol").
SYSTEM_DECISIONS: Final = frozenset({"prompt_definition", "user_intervention", "invariant_enforced"})
ACTION_STATES: Final = ("draft", "available", "archived")
AUTOMATION_LEVELS: Final = ("manual", "review", "auto")
# A decision whose confidence is below its plan's threshold pauses the plan for approval.
# Manual: every actor decision (1.01 is above any confidence); review and auto escalate
# only doubtful ones ("Semantic Escalation": even full automation asks below its threshold).
DEFAULT_THRESHOLDS: Final = {"manual": Decimal("1.01"), "review": Decimal("0.7"), "auto": Decimal("0.5")}


def new_ulid() -> str:
    return str(ULID())


def plan_iri(ulid: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}plan/{ulid}")


def decision_iri(ulid: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}decision/{ulid}")


def action_iri(ulid: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}action/{ulid}")


def invariant_iri(ulid: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}invariant/{ulid}")


def correction_iri(ulid: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}correction/{ulid}")


def run_iri(plan_ulid: str, phase: str, attempt: int, n: int) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}plan/{plan_ulid}/run/{attempt}-{phase}-{n}")


def ulid_of(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1]


def now() -> datetime:
    return datetime.now(UTC)


def time_literal(when: datetime | None = None) -> ox.Literal:
    stamp = (when or now()).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return ox.Literal(stamp, datatype=ox.NamedNode(XSD + "dateTime"))


def integer(value: int) -> ox.Literal:
    return ox.Literal(str(int(value)), datatype=ox.NamedNode(XSD + "integer"))


def decimal(value: float | Decimal) -> ox.Literal:
    return ox.Literal(str(Decimal(str(value))), datatype=ox.NamedNode(XSD + "decimal"))


def boolean(value: bool) -> ox.Literal:
    return ox.Literal("true" if value else "false", datatype=ox.NamedNode(XSD + "boolean"))


def text(value: str) -> ox.Literal:
    return ox.Literal(value)


class Writer(Protocol):
    """A writer's handle: the store and its one commit path (services' WriteSession)."""

    @property
    def store(self) -> GraphStore: ...  # read-only: a wrapper may pass its session's store through

    def commit(self, request: CommitRequest) -> CommitResult: ...


Commit = Callable[[CommitRequest], CommitResult]
