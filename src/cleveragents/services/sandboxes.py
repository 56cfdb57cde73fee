"""Application services of a plan's sandboxes: open them, bind the tool router to them,
checkpoint, roll back, list what they changed, diff and apply.

The logic lives in sandbox/ and tools/; these functions find the plan and its resources
in the graph (the resources of the projects the plan targets) and record what happened
(checkpoints) through the commit engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace, WriteSession
from cleveragents.sandbox import ApplyResult, Checkpoint, FileChange, Sandbox, recover
from cleveragents.sandbox.core import SUPPORTED, SandboxResource
from cleveragents.sandbox.records import checkpoint_triples
from cleveragents.services import resources
from cleveragents.services.resources import ResourceInfo
from cleveragents.terms import CA, ID
from cleveragents.tools import GraphRecorder, ToolContext, ToolRouter, default_router


def plan_node(store: GraphStore, ref: str) -> ox.NamedNode:
    """The plan named by its IRI or ULID; NotFoundError when there is no such ca:Plan."""
    iri = ref if "://" in ref else f"{ID}plan/{ref.strip()}"
    node = ox.NamedNode(iri)
    if not store.query(f"ASK {{ {node} a <{CA}Plan> }}"):
        raise NotFoundError(f"plan '{ref}' not found", suggestions=["agents plan list"])
    return node


def plan_ulid(node: ox.NamedNode) -> str:
    return node.value.rstrip("/").rsplit("/", 1)[-1]


def plan_resources(store: GraphStore, plan: ox.NamedNode) -> list[ResourceInfo]:
    """The resources of the projects the plan targets, by name."""
    rows = store.query(f"SELECT DISTINCT ?r WHERE {{ {plan} ca:targetsProject ?p . ?p ca:linksResource ?r }}")
    found = [resources.describe(store, row["r"]) for row in rows]
    return sorted(found, key=lambda r: r.name)


def open_sandboxes(ws: Workspace, store: GraphStore, plan: ox.NamedNode) -> dict[str, Sandbox]:
    """The plan's sandbox of each of its resources that can have one (created on first use).
    A child plan's sandbox forks from its parent's sandbox, not from the real resource:
    the child's Apply merges into the parent's sandbox."""
    parent = next(iter(store.query(f"SELECT ?p WHERE {{ {plan} ca:parentPlan ?p }}")), None)
    if parent is not None:
        return {
            name: Sandbox.open(
                ws.data_dir,
                plan_ulid(plan),
                SandboxResource(name, above.resource.type, str(above.root), above.resource.iri),
            )
            for name, above in open_sandboxes(ws, store, parent["p"]).items()
        }
    return {
        info.name: Sandbox.open(ws.data_dir, plan_ulid(plan), info)
        for info in plan_resources(store, plan)
        if info.type in SUPPORTED
    }


def tool_context(
    ws: Workspace,
    session: WriteSession,
    plan: ox.NamedNode,
    *,
    read_only: bool = False,
    allowed_tools: Iterable[str] | None = None,
    decision: str | None = None,
    agent: str = "cleveragents",
) -> ToolContext:
    """A ToolContext of the plan: its sandboxes, its access policy, and a recorder that
    commits each call and its changes through ``session``."""
    return ToolContext(
        plan=plan.value,
        sandboxes=open_sandboxes(ws, session.store, plan),
        read_only=read_only,
        allowed_tools=frozenset(allowed_tools) if allowed_tools is not None else None,
        recorder=GraphRecorder(session.commit, agent=agent),
        decision=decision,
    )


def router() -> ToolRouter:
    """A tool router with the built-in resource tools (plans registers its own on it)."""
    return default_router()


def _used(ws: Workspace, plan: ox.NamedNode) -> list[Sandbox]:
    return Sandbox.existing(ws.data_dir, plan_ulid(plan))


# -- checkpoints --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedCheckpoint:
    resource: str
    checkpoint: Checkpoint
    iri: str

    def as_dict(self) -> dict[str, Any]:
        return {"resource": self.resource, "iri": self.iri, **self.checkpoint.as_dict()}


def checkpoint(
    ws: Workspace,
    plan_ref: str,
    *,
    label: str = "",
    kind: str = "manual",
    decision: str | None = None,
    agent: str = "cleveragents",
) -> tuple[list[RecordedCheckpoint], CommitResult]:
    """Checkpoint every sandbox the plan has used, recorded as ca:Checkpoint in one commit."""
    with ws.writer() as session:
        plan = plan_node(session.store, plan_ref)
        if not _used(ws, plan):
            raise ValidationError(
                f"plan {plan_ulid(plan)} has no sandbox yet: nothing to checkpoint",
                detail="a sandbox is created when a tool first uses the resource during Execute",
            )
        recorded, result = checkpoint_in(
            ws, session, plan, label=label, kind=kind, decision=decision, agent=agent, every=False
        )
        assert result is not None  # the plan has used sandboxes, so there was something to record
        return recorded, result


def checkpoint_in(
    ws: Workspace,
    session: WriteSession,
    plan: ox.NamedNode,
    *,
    label: str = "",
    kind: str = "manual",
    decision: str | None = None,
    agent: str = "cleveragents",
    every: bool = True,
) -> tuple[list[RecordedCheckpoint], CommitResult | None]:
    """``checkpoint`` in a writer session already open. ``every``: each sandbox the plan
    can have (created now if need be), not only the ones it has used."""
    sandboxes = list(open_sandboxes(ws, session.store, plan).values()) if every else _used(ws, plan)
    recorded: list[RecordedCheckpoint] = []
    triples: list[tuple[Any, Any, Any]] = []
    at = ox.NamedNode(decision) if decision else None
    for sandbox in sandboxes:
        taken = sandbox.checkpoint(label, kind=kind)
        node, added = checkpoint_triples(plan, sandbox, taken, decision=at)
        triples += added
        recorded.append(RecordedCheckpoint(sandbox.resource.name, taken, node.value))
    if not triples:
        return recorded, None
    result = session.commit(
        CommitRequest(
            add=triples,
            message=f"plan checkpoint {plan_ulid(plan)}" + (f" ({label})" if label else ""),
            cause="plan-checkpoint",
            agent=agent,
        )
    )
    return recorded, result


def checkpoints(ws: Workspace, plan_ref: str) -> list[RecordedCheckpoint]:
    """Every checkpoint of the plan's sandboxes, with its graph node where it was recorded."""
    with ws.reader() as store:
        plan = plan_node(store, plan_ref)
        query = f"SELECT ?c ?ref WHERE {{ ?c a ca:Checkpoint ; ca:forPlan {plan} ; ca:sandboxRef ?ref }}"
        nodes = {row["ref"].value: row["c"].value for row in store.query(query)}
    return [
        RecordedCheckpoint(sandbox.resource.name, taken, nodes.get(taken.id, ""))
        for sandbox in _used(ws, plan)
        for taken in sandbox.checkpoints()
    ]


def rollback(ws: Workspace, plan_ref: str, ref: str) -> list[RecordedCheckpoint]:
    """Roll the plan's sandboxes back to a checkpoint: a checkpoint node (IRI or ULID) rolls
    back its resource; a label, sequence number or commit id every sandbox that has it."""
    with ws.reader() as store:
        plan = plan_node(store, plan_ref)
        iri = ref if "://" in ref else f"{ID}checkpoint/{ref}"
        rows = store.query(
            f"SELECT ?sha ?r WHERE {{ <{iri}> a ca:Checkpoint ; ca:forPlan {plan} ; ca:sandboxRef ?sha . "
            f"OPTIONAL {{ <{iri}> ca:checkpointOf ?r }} }}"
        )
        by_node = [(row["sha"].value, row["r"].value if row["r"] else None) for row in rows]
    sandboxes = _used(ws, plan)
    targets: list[tuple[Sandbox, str]] = []
    if by_node:
        sha, resource = by_node[0]
        targets = [(s, sha) for s in sandboxes if resource is None or s.resource.iri == resource]
    else:
        for sandbox in sandboxes:
            try:
                targets.append((sandbox, sandbox.find_checkpoint(ref).id))
            except NotFoundError:
                continue
    if not targets:
        known = ", ".join(
            f"{c.resource}#{c.checkpoint.sequence} {c.checkpoint.id[:12]}"
            + (f" ({c.checkpoint.label})" if c.checkpoint.label else "")
            for c in checkpoints(ws, plan_ref)
        )
        raise NotFoundError(
            f"no checkpoint '{ref}' in plan {plan_ulid(plan)}", detail=f"checkpoints: {known or 'none'}"
        )
    return [RecordedCheckpoint(s.resource.name, s.rollback(sha), "") for s, sha in targets]


# -- artifacts, diff, apply ---------------------------------------------------------------------


@dataclass(frozen=True)
class SandboxArtifacts:
    resource: str
    kind: str
    root: str
    branch: str
    fork: str
    changes: tuple[FileChange, ...]
    checkpoints: tuple[Checkpoint, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            **{k: v for k, v in self.__dict__.items() if k not in ("changes", "checkpoints")},
            "changes": [c.as_dict() for c in self.changes],
            "checkpoints": [c.as_dict() for c in self.checkpoints],
        }


def artifacts(ws: Workspace, plan_ref: str) -> list[SandboxArtifacts]:
    """What the plan has produced so far: per sandbox, the files changed since the fork."""
    with ws.reader() as store:
        plan = plan_node(store, plan_ref)
    return [
        SandboxArtifacts(
            resource=s.resource.name,
            kind=s.kind,
            root=str(s.tree),
            branch=s.branch,
            fork=s.fork,
            changes=tuple(s.changed_files()),
            checkpoints=tuple(s.checkpoints()),
        )
        for s in _used(ws, plan)
    ]


def diff(ws: Workspace, plan_ref: str) -> dict[str, str]:
    """The reviewable unified diff of each used sandbox against its fork, by resource."""
    with ws.reader() as store:
        plan = plan_node(store, plan_ref)
    return {s.resource.name: s.diff() for s in _used(ws, plan)}


def apply(ws: Workspace, plan_ref: str, *, force: bool = False) -> list[ApplyResult]:
    """Merge each used sandbox into its real resource. A preflight of every resource comes
    first: when any one would conflict or is refused (uncommitted changes), none is applied
    and the preflight results are returned (the others ``ready`` or ``unchanged``). Each
    resource is applied atomically; a process killed between two resources leaves the
    first applied and the second untouched (its journal is per resource). The caller
    re-indexes the resources whose result is ``applied`` (``changed_files``)."""
    with ws.reader() as store:
        plan = plan_node(store, plan_ref)
    used = _used(ws, plan)
    if len(used) > 1:
        checked = [s.preflight(force=force) for s in used]
        if any(r.status not in {"ready", "unchanged"} for r in checked):
            return checked
    return [s.apply(force=force, message=f"cleveragents: apply plan {plan_ulid(plan)}") for s in used]


def recover_interrupted(ws: Workspace) -> list[dict[str, object]]:
    """Finish or roll back applies an earlier process left half done."""
    return recover(ws.data_dir)
