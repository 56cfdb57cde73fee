"""Plan records: reading a plan's identity, phase, state and arguments from the graph, and
the writes of its transitions (one commit each, with the phase run they start or end)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, UsageError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore

from .vocabulary import PHASE_IRI, TYPE, Writer, ca, integer, plan_iri, prov, run_iri, text, time_literal, ulid_of


@dataclass
class PlanRecord:
    iri: str
    phase: str
    state: str
    attempt: int
    root: str
    created: str
    created_by: str
    description: str
    definition_of_done: str
    automation_level: str
    threshold: float
    read_only: bool = False
    action: str | None = None
    action_iri: str | None = None
    projects: list[str] = field(default_factory=list)
    parent: str | None = None
    spawned_by: str | None = None
    updated: str = ""
    completed: str = ""
    error: str = ""
    awaiting: str | None = None
    strategy_actor: str = ""
    execution_actor: str = ""
    invariant_actor: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return ulid_of(self.iri)

    @property
    def node(self) -> ox.NamedNode:
        return ox.NamedNode(self.iri)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phase": self.phase,
            "state": self.state,
            "attempt": self.attempt,
            "action": self.action,
            "projects": self.projects,
            "parent": ulid_of(self.parent) if self.parent else None,
            "root": ulid_of(self.root),
            "automation_level": self.automation_level,
            "approval_threshold": self.threshold,
            "awaiting_decision": ulid_of(self.awaiting) if self.awaiting else None,
            "read_only": self.read_only,
            "description": self.description,
            "definition_of_done": self.definition_of_done,
            "arguments": self.arguments,
            "created": self.created,
            "updated": self.updated,
            "completed": self.completed,
            "created_by": self.created_by,
            "error": self.error,
            "iri": self.iri,
        }


def _python(term: ox.Literal) -> Any:
    kind = term.datatype.value.rsplit("#", 1)[-1]
    if kind == "integer":
        return int(term.value)
    if kind == "decimal":
        return float(term.value)
    if kind == "boolean":
        return term.value == "true"
    return term.value


def resolve(store: GraphStore, ref: str | None) -> ox.NamedNode:
    """A plan by ULID or IRI; without one, the most recently created plan."""
    if ref is None:
        for row in store.query("SELECT ?p WHERE { ?p a ca:Plan ; ca:createdAt ?c } ORDER BY DESC(?c) LIMIT 1"):
            return row["p"]
        raise NotFoundError("there is no plan yet", suggestions=["agents plan use ACTION PROJECT"])
    node = ox.NamedNode(ref) if "://" in ref else plan_iri(ref.strip())
    if not store.query(f"ASK {{ {node} a ca:Plan }}"):
        raise NotFoundError(f"plan '{ref}' not found", suggestions=["agents plan list"])
    return node


def read(store: GraphStore, node: ox.NamedNode) -> PlanRecord:
    values: dict[str, list[Any]] = {}
    for quad in store.live_quads(node):
        values.setdefault(quad.predicate.value.rsplit("#", 1)[-1], []).append(quad.object)
    if not values:
        raise NotFoundError(f"plan '{ulid_of(node.value)}' not found")

    def one(key: str, default: str = "") -> str:
        found = values.get(key)
        return found[0].value if found else default

    projects = sorted(
        row["n"].value for row in store.query(f"SELECT ?n WHERE {{ {node} ca:targetsProject ?p . ?p ca:name ?n }}")
    )
    arguments = {
        row["n"].value: _python(row["v"])
        for row in store.query(
            f"SELECT ?n ?v WHERE {{ {node} ca:boundArgument ?a . ?a ca:argName ?n ; ca:argValue ?v }}"
        )
    }
    action = None
    if values.get("fromAction"):
        for row in store.query(f"SELECT ?n WHERE {{ <{one('fromAction')}> ca:name ?n }}"):
            action = row["n"].value
    phase = one("phase").rsplit("#", 1)[-1].removesuffix("Phase").lower()
    return PlanRecord(
        iri=node.value,
        phase=phase,
        state=one("state").rsplit("#", 1)[-1],
        attempt=int(one("attempt", "1")),
        root=one("rootPlan", node.value),
        created=one("createdAt"),
        created_by=one("createdBy"),
        description=one("description"),
        definition_of_done=one("definitionOfDone"),
        automation_level=one("automationLevel", "manual"),
        threshold=float(one("approvalThreshold", "1.01")),
        read_only=one("readOnly") == "true",
        action=action,
        action_iri=one("fromAction") or None,
        projects=projects,
        parent=one("parentPlan") or None,
        spawned_by=one("spawnedBy") or None,
        updated=one("updatedAt"),
        completed=one("completedAt"),
        error=one("errorMessage"),
        awaiting=one("awaitingDecision") or None,
        strategy_actor=one("strategyActorRef"),
        execution_actor=one("executionActorRef"),
        invariant_actor=one("invariantActorRef"),
        arguments=arguments,
    )


def list_plans(
    store: GraphStore,
    *,
    phase: str | None = None,
    state: str | None = None,
    project: str | None = None,
    action: str | None = None,
) -> list[PlanRecord]:
    if phase and phase not in PHASE_IRI:
        raise UsageError(f"--phase '{phase}' is not one of {', '.join(PHASE_IRI)}")
    rows = store.query("SELECT ?p WHERE { ?p a ca:Plan ; ca:createdAt ?c } ORDER BY ?c")
    out = [read(store, row["p"]) for row in rows]
    if phase:
        out = [p for p in out if p.phase == phase]
    if state:
        out = [p for p in out if p.state == state]
    if project:
        wanted = {project, project if "/" in project else f"local/{project}"}
        out = [p for p in out if wanted & set(p.projects)]
    if action:
        wanted = {action, action if "/" in action else f"local/{action}"}
        out = [p for p in out if p.action in wanted]
    return out


def open_run(store: GraphStore, plan: ox.NamedNode, phase: str, attempt: int) -> ox.NamedNode | None:
    for row in store.query(
        f"SELECT ?r WHERE {{ ?r ca:runOfPlan {plan} ; ca:runPhase {PHASE_IRI[phase]} ; ca:attempt {integer(attempt)} . "
        "FILTER NOT EXISTS { ?r prov:endedAtTime ?e } } LIMIT 1"
    ):
        return row["r"]
    return None


def transition(
    writer: Writer,
    plan: PlanRecord,
    *,
    phase: str | None = None,
    state: str,
    message: str,
    agent: str,
    attempt: int | None = None,
    start_run: bool = False,
    end_run: bool = False,
    findings: str = "",
    error: str = "",
    add: list[tuple[Any, Any, Any]] | None = None,
    remove: list[tuple[Any, Any, Any]] | None = None,
) -> tuple[CommitResult, ox.NamedNode | None]:
    """Move a plan to (phase, state) in one commit; optionally end the open phase run
    (with its end state and findings) and start a run of the new phase."""
    node = plan.node
    new_phase = phase or plan.phase
    new_attempt = attempt or plan.attempt
    stamp = time_literal()
    adds: list[tuple[Any, Any, Any]] = list(add or [])
    removes: list[tuple[Any, Any, Any]] = list(remove or [])
    store = writer.store
    if new_phase != plan.phase:
        removes.append((node, ca("phase"), PHASE_IRI[plan.phase]))
        adds.append((node, ca("phase"), PHASE_IRI[new_phase]))
    if state != plan.state or new_phase != plan.phase:
        removes.append((node, ca("state"), ca(plan.state)))
        adds.append((node, ca("state"), ca(state)))
    if new_attempt != plan.attempt:
        removes.append((node, ca("attempt"), integer(plan.attempt)))
        adds.append((node, ca("attempt"), integer(new_attempt)))
    if plan.updated:
        removes.append((node, ca("updatedAt"), _time(store, node, "updatedAt")))
    adds.append((node, ca("updatedAt"), stamp))
    if state in {"applied", "cancelled", "constrained"} or (state == "errored"):
        if not plan.completed:
            adds.append((node, ca("completedAt"), stamp))
    elif plan.completed:
        removes.append((node, ca("completedAt"), _time(store, node, "completedAt")))
    if plan.error:
        removes.append((node, ca("errorMessage"), text(plan.error)))
    if error:
        adds.append((node, ca("errorMessage"), text(error)))
    if end_run:
        run = open_run(store, node, plan.phase, plan.attempt)
        if run is not None:
            adds += [(run, prov("endedAtTime"), stamp), (run, ca("endState"), ca(state))]
            if findings:
                adds.append((run, ca("findings"), text(findings)))
    started = None
    if start_run:
        n = 1 + sum(
            1
            for _ in store.query(
                f"SELECT ?r WHERE {{ ?r ca:runOfPlan {node} ; ca:runPhase {PHASE_IRI[new_phase]} ; "
                f"ca:attempt {integer(new_attempt)} }}"
            )
        )
        started = run_iri(plan.id, new_phase, new_attempt, n)
        adds += [
            (started, TYPE, ca("PhaseRun")),
            (started, ca("runOfPlan"), node),
            (started, ca("runPhase"), PHASE_IRI[new_phase]),
            (started, ca("attempt"), integer(new_attempt)),
            (started, prov("startedAtTime"), stamp),
        ]
    result = writer.commit(
        CommitRequest(add=adds, remove=removes, message=message, cause="plan-transition", agent=agent)
    )
    return result, started


def _time(store: GraphStore, node: ox.NamedNode, key: str) -> ox.Literal:
    for quad in store.live_quads(node):
        if quad.predicate.value == ca(key).value:
            return quad.object  # type: ignore[return-value]
    raise NotFoundError(f"{key} of {node.value}")
