"""A2A tasks as graph data (``ca:A2ATask``): saved by commits, so a restarted server
still answers for old tasks and a task's states have history like everything else.

The payload is the task as the protocol's JSON; the state and context id sit beside it
so that SPARQL can list tasks without parsing JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyoxigraph as ox

from cleveragents.errors import ValidationError
from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.plans.vocabulary import plan_iri
from cleveragents.services.entities import TYPE
from cleveragents.terms import ID
from cleveragents.vocabulary import ca

TASK_CLASS = ox.NamedNode(ca.A2ATask)
STATE = ox.NamedNode(ca.taskState)
CONTEXT = ox.NamedNode(ca.a2aContextId)
PAYLOAD = ox.NamedNode(ca.taskPayload)
PLAN = ox.NamedNode(ca.taskPlan)
_TASK_ID = re.compile(r"^[A-Za-z0-9._~-]{1,128}$")


def task_iri(task_id: str) -> ox.NamedNode:
    if not _TASK_ID.match(task_id):
        raise ValidationError(f"not a task id: '{task_id[:80]}'")
    return ox.NamedNode(f"{ID}a2a-task/{task_id}")


@dataclass(frozen=True)
class TaskRecord:
    """One A2A task as saved: ``plan`` (a ULID) links a task of the run-action skill to
    its plan (``ca:taskPlan``)."""

    task_id: str
    context_id: str
    state: str
    payload: str
    plan: str | None = None

    def triples(self) -> list[tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode | ox.Literal]]:
        node = task_iri(self.task_id)
        triples: list[tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode | ox.Literal]] = [
            (node, TYPE, TASK_CLASS),
            (node, STATE, ox.Literal(self.state)),
            (node, PAYLOAD, ox.Literal(self.payload)),
        ]
        if self.context_id:
            triples.append((node, CONTEXT, ox.Literal(self.context_id)))
        if self.plan:
            triples.append((node, PLAN, plan_iri(self.plan)))
        return triples


def save(
    ws: Workspace, task_id: str, context_id: str, state: str, payload: str, *, agent: str, plan: str | None = None
) -> int:
    """Replace the task's record in one commit; returns the revision."""
    return save_many(ws, [TaskRecord(task_id, context_id, state, payload, plan)], agent=agent)


def save_many(ws: Workspace, tasks: list[TaskRecord], *, agent: str) -> int:
    """Replace several tasks' records in one commit (a server's group commit); returns the
    revision."""
    nodes = [task_iri(t.task_id) for t in tasks]
    ids = ", ".join(t.task_id for t in tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
    with ws.writer() as session:
        result = session.commit(
            CommitRequest(
                add=[triple for t in tasks for triple in t.triples()],
                retract_subjects=nodes,
                message=f"a2a task {ids}: " + ", ".join(sorted({t.state for t in tasks})),
                cause="a2a-task",
                agent=agent,
            )
        )
    return result.revision


def load(ws: Workspace, task_id: str) -> str | None:
    node = task_iri(task_id)
    with ws.reader() as store:
        for row in store.query(f"SELECT ?p WHERE {{ {node} {PAYLOAD} ?p }}"):
            return row["p"].value
    return None


def list_payloads(ws: Workspace, context_id: str | None = None) -> list[str]:
    """Every task's payload (of one context), oldest IRI first."""
    where = f'?t {CONTEXT} "{_escaped(context_id)}" .' if context_id else ""
    with ws.reader() as store:
        rows = store.query(f"SELECT ?t ?p WHERE {{ ?t a {TASK_CLASS} ; {PAYLOAD} ?p . {where} }} ORDER BY ?t")
        return [row["p"].value for row in rows]


def delete(ws: Workspace, task_id: str, *, agent: str) -> None:
    with ws.writer() as session:
        session.commit(
            CommitRequest(retract_subjects=[task_iri(task_id)], message=f"a2a task {task_id}: deleted", agent=agent)
        )


def _escaped(text: str) -> str:
    return str(ox.Literal(text))[1:-1]
