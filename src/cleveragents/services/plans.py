"""Application services for actions, plans, decisions, corrections and invariants: each
opens the store (a writer for changes, after taking the plan's lock where a phase may run),
builds the lifecycle engine with the actors and the sandbox/tool hooks, and returns plain
records for the presentation layer."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import DependencyMissingError, ValidationError
from cleveragents.graph.workspace import Workspace, WriteSession
from cleveragents.plans import actions, corrections, decisions, invariants, lifecycle, provenance, records
from cleveragents.plans import tools as plan_tools
from cleveragents.plans.actions import ActionDefinition
from cleveragents.plans.actor import Actor, AwaitingApproval
from cleveragents.plans.corrections import CorrectionResult
from cleveragents.plans.decisions import Decision
from cleveragents.plans.engine import ApplyOutcome, EngineHooks, PlanEngine
from cleveragents.plans.invariants import Invariant
from cleveragents.plans.lock import plan_lock
from cleveragents.plans.records import PlanRecord
from cleveragents.services import sandboxes, validation_commands
from cleveragents.services.plan_progress import ObservedWriter, PlanObserver
from cleveragents.tools import ToolResult


def resolve_actor(ref: str) -> Actor:
    """The scripted actor (``scripted:PATH``); registered and built-in LLM actors are
    resolved by services/plan_actors.py, which falls back to this for scripted ones."""
    if ref.startswith("scripted:"):
        from cleveragents.actors.scripted import ScriptedActor

        return ScriptedActor(Path(ref.removeprefix("scripted:")))
    raise DependencyMissingError(
        f"actor '{ref}' cannot run here: only scripted actors ('scripted:PATH') are available "
        "until LLM actors are registered",
        suggestions=["use strategy_actor: scripted:PATH in the action YAML"],
    )


def hooks(ws: Workspace, session: WriteSession, *, agent: str) -> EngineHooks:
    """What sandbox/ and tools/ lend the engine: Execute's tool router bound to the plan's
    sandboxes (with ``record_decision`` registered), and Apply's merge of each sandbox."""
    router = plan_tools.register(sandboxes.router())

    def tools(plan: PlanRecord, phase: str, extras: dict[str, Any]) -> Any:
        ctx = sandboxes.tool_context(ws, session, plan.node, read_only=plan.read_only, agent=agent)
        ctx.handler_scope = extras.pop(plan_tools.HANDLER_SCOPE, None)
        ctx.extras.update(extras)

        def call(name: str, arguments: dict[str, Any]) -> ToolResult:
            ctx.decision = arguments.pop("_decision", None)
            result = router.call(name, arguments, ctx)
            if result.error_code == AwaitingApproval.category:
                raise AwaitingApproval(result.error or "awaiting approval")
            return result

        return call

    def apply(plan: PlanRecord) -> ApplyOutcome:
        results = sandboxes.apply(ws, plan.id)
        changed = tuple(f"{r.resource}:{c.path}" for r in results if r.status == "applied" for c in r.changed_files)
        conflicts = tuple(f"{r.resource}:{path}" for r in results for path in r.conflicts)
        refused = [r for r in results if r.status == "refused"]
        if conflicts:
            return ApplyOutcome("constrained", changed, conflicts, "the real resources changed in conflicting ways")
        if refused:
            dirty = ", ".join(f"{r.resource}:{d}" for r in refused for d in r.dirty_files)
            return ApplyOutcome("errored", message=f"uncommitted changes in the real checkout: {dirty}")
        return ApplyOutcome("applied", changed, message=f"{len(changed)} files changed")

    def before_spawn(plan: PlanRecord, decision: Decision) -> None:
        """The parent's work so far, checkpointed at the spawn decision: the children fork
        from it, and a correction of that decision rolls the parent back to it."""
        sandboxes.checkpoint_in(
            ws,
            session,
            plan.node,
            label=f"before subplans of {decision.id}",
            kind="workspace_snapshot",
            decision=decision.iri,
            agent=agent,
        )

    def validate(plan: PlanRecord) -> str:
        """The project's validation commands in the sandboxes Execute used, each run
        recorded (ca:ValidationRun); what failed, with its output's tail."""
        runs, _ = validation_commands.run_in(ws, session, plan.node, agent=agent, used_only=True)
        failed = [r for r in runs if not r.passed]
        return "; ".join(
            f"{r.kind} `{r.command}` in {r.resource} "
            + ("timed out" if r.timed_out else f"exited with {r.exit_code}")
            + (f": {r.output_tail[-500:]}" if r.output_tail else "")
            for r in failed
        )

    return EngineHooks(apply=apply, tools=tools, before_spawn=before_spawn, validate=validate)


@contextmanager
def _engine(
    ws: Workspace, *, agent: str, level: str = "manual", observer: PlanObserver | None = None, plan: str | None = None
) -> Iterator[PlanEngine]:
    """The engine in a writer session; with an ``observer``, each plan commit is reported
    to it (services/plan_progress.py), and the observer may stop the plan."""
    # LLM actors bring langgraph and langchain (~3 s of imports): loaded when a plan runs,
    # not at the start of every command that merely imports this service.
    from cleveragents.services import plan_actors

    with ws.writer() as session:
        yield PlanEngine(
            session if observer is None else ObservedWriter(session, observer, plan),
            ws.data_dir,
            plan_actors.resolver(ws, session, agent=agent, fallback=resolve_actor),
            agent=agent,
            hooks=hooks(ws, session, agent=agent),
            default_level=level,
        )


def _plan_id(ws: Workspace, ref: str | None) -> str:
    with ws.reader() as store:
        return records.read(store, records.resolve(store, ref)).id


# ── actions ────────────────────────────────────────────────────────
def create_action(ws: Workspace, config: Path | None, overrides: dict[str, Any], *, agent: str) -> ActionDefinition:
    definition = actions.load_definition(config, overrides)
    with ws.writer() as session:
        return actions.create(session, definition, agent=agent)[0]


def list_actions(ws: Workspace, *, namespace: str | None = None, state: str | None = None) -> list[ActionDefinition]:
    with ws.reader() as store:
        return actions.list_all(store, namespace=namespace, state=state)


def show_action(ws: Workspace, ref: str) -> ActionDefinition:
    with ws.reader() as store:
        return actions.read(store, actions.find(store, ref))


def set_action_state(ws: Workspace, ref: str, state: str, *, agent: str) -> ActionDefinition:
    with ws.writer() as session:
        return actions.set_state(session, ref, state, agent=agent)[0]


# ── plans ──────────────────────────────────────────────────────────
def use(
    ws: Workspace,
    action: str,
    projects: Sequence[str],
    arguments: dict[str, Any],
    *,
    invariant_texts: Sequence[str] = (),
    automation_level: str | None = None,
    default_level: str = "manual",
    agent: str,
    observer: PlanObserver | None = None,
) -> PlanRecord:
    """Create the plan, then run Strategize (and what the automation level lets follow)
    under the plan's lock."""
    with _engine(ws, agent=agent, level=default_level, observer=observer) as engine:
        plan = engine.create(
            action, projects, arguments, invariant_texts=invariant_texts, automation_level=automation_level
        )
        with plan_lock(ws.data_dir, plan.id):
            return engine.strategize(plan)


def _verb(
    ws: Workspace, ref: str | None, verb: str, *, agent: str, observer: PlanObserver | None = None, **kwargs: Any
) -> Any:
    plan_id = _plan_id(ws, ref)
    with plan_lock(ws.data_dir, plan_id), _engine(ws, agent=agent, observer=observer, plan=plan_id) as engine:
        return getattr(engine, verb)(plan_id, **kwargs)


def execute(ws: Workspace, ref: str | None, *, agent: str, observer: PlanObserver | None = None) -> PlanRecord:
    return _verb(ws, ref, "execute", agent=agent, observer=observer)


def apply(ws: Workspace, ref: str, *, agent: str, observer: PlanObserver | None = None) -> PlanRecord:
    """Apply, then re-index the plan's resources in the same store and link each entity
    revision the plan's changes produced to the decision behind it."""
    plan = _verb(ws, ref, "apply", agent=agent, observer=observer)
    if plan.state == "applied":
        reindex_and_link(ws, plan, agent=agent)
    return plan


def reindex_and_link(ws: Workspace, plan: PlanRecord, *, agent: str) -> None:
    from cleveragents.services import indexing

    with ws.reader() as store:
        infos = sandboxes.plan_resources(store, plan.node)
    summaries = indexing.index(ws, infos, agent=agent)
    with ws.writer() as session:
        for summary in summaries:
            revision = getattr(summary, "revision", None)
            if revision:
                provenance.link_applied_changes(session, plan, int(revision), agent=agent)


def resume(ws: Workspace, ref: str | None, *, agent: str, observer: PlanObserver | None = None) -> PlanRecord:
    return _verb(ws, ref, "resume", agent=agent, observer=observer)


def cancel(ws: Workspace, ref: str, reason: str, *, agent: str) -> PlanRecord:
    return _verb(ws, ref, "cancel", agent=agent, reason=reason)


def prompt(
    ws: Workspace, ref: str, guidance: str, *, agent: str, observer: PlanObserver | None = None
) -> tuple[PlanRecord, Decision]:
    return _verb(ws, ref, "prompt", agent=agent, guidance=guidance, observer=observer)


def status(ws: Workspace, ref: str | None) -> tuple[PlanRecord, tuple[str, ...]]:
    with ws.reader() as store:
        plan = records.read(store, records.resolve(store, ref))
        return plan, lifecycle.allowed_verbs(plan)


def list_plans(ws: Workspace, **filters: str | None) -> list[PlanRecord]:
    with ws.reader() as store:
        return records.list_plans(store, **filters)


def correction_impact(ws: Workspace, decision: str) -> corrections.Impact:
    with ws.reader() as store:
        return corrections.impact(store, decision)


def correct(
    ws: Workspace, decision: str, mode: str, guidance: str, *, agent: str
) -> tuple[CorrectionResult, PlanRecord]:
    """Record the correction, roll the sandboxes back to the checkpoint of the earliest
    affected Execute decision (revert), and continue the plan."""
    with ws.reader() as store:
        node = decisions.resolve(store, decision)
        plan_id = records.read(store, ox.NamedNode(decisions.require_current(store, node, role="decision"))).id
    with plan_lock(ws.data_dir, plan_id):
        # Each writer session in its own call: the engine of one must be gone (and the
        # store closed) before the next opens the store.
        result = _with_engine(ws, agent, lambda engine: engine.correct(decision, mode, guidance))
        if mode == "revert" and result.impact.checkpoint:
            rolled = sandboxes.rollback(ws, plan_id, result.impact.checkpoint)
            result.extra["rolled_back"] = [r.as_dict() for r in rolled]
        return result, _with_engine(ws, agent, lambda engine: engine.continue_after_correction(result))


def _with_engine(ws: Workspace, agent: str, work: Any) -> Any:
    with _engine(ws, agent=agent) as engine:
        return work(engine)


def correction_diff(ws: Workspace, attempt: str) -> corrections.CorrectionDiff:
    with ws.reader() as store:
        return corrections.diff(store, attempt)


# ── decisions ──────────────────────────────────────────────────────
def tree(ws: Workspace, ref: str | None) -> tuple[PlanRecord, dict[str, Decision], dict[str, PlanRecord]]:
    """A plan, its decisions and those of its descendant plans (by IRI), and those plans."""
    with ws.reader() as store:
        plan = records.read(store, records.resolve(store, ref))
        nodes = [
            records.resolve(store, row["p"].value)
            for row in store.query(f"SELECT ?p WHERE {{ ?p ca:parentPlan* {plan.node} }}")
        ]
        plans = {n.value: records.read(store, n) for n in nodes}
        return plan, decisions.load(store, nodes), plans


def explain(ws: Workspace, ref: str) -> tuple[Decision, list[dict[str, Any]]]:
    """A decision and, for --show-context, the UKO nodes of its context snapshot."""
    with ws.reader() as store:
        node = decisions.resolve(store, ref)
        plan = store.query(f"SELECT ?p WHERE {{ {node} ca:belongsToPlan ?p }}")
        plan_node = next(iter(plan))["p"]
        decision = decisions.load(store, [plan_node])[node.value]
        context = [
            {"node": row["n"].value, "revision": int(row["rev"].value) if row["rev"] is not None else None}
            for row in store.query(
                f"SELECT ?n ?rev WHERE {{ {node} ca:relevantResource ?n . "
                f"OPTIONAL {{ {node} ca:contextSnapshotRef ?ref . ?a ca:hasFragment ?f . "
                "?f ca:fragmentNode ?n ; ca:fragmentRevision ?rev FILTER(STR(?a) = ?ref) } } ORDER BY ?n"
            )
        ]
        return decision, context


# ── invariants ─────────────────────────────────────────────────────
def _scope_target(store: Any, scope: str, ref: str | None) -> Any:
    from cleveragents.plans.engine import _project

    if scope == "global":
        return None
    if ref is None:
        raise ValidationError(f"--{scope} needs a {scope}")
    if scope == "project":
        return _project(store, ref)
    if scope == "action":
        return actions.find(store, ref)
    return records.resolve(store, ref)


def add_invariant(ws: Workspace, text: str, scope: str, ref: str | None, *, agent: str) -> Invariant:
    with ws.writer() as session:
        target = _scope_target(session.store, scope, ref)
        return invariants.add(session, text, scope, target, agent=agent)[0]


def list_invariants(ws: Workspace, scope: str | None, ref: str | None, *, effective: bool) -> list[Invariant]:
    with ws.reader() as store:
        if effective:
            if scope != "plan":
                raise ValidationError("--effective shows a plan's reconciled view: give --plan ID")
            node = records.resolve(store, ref)
            # Once Strategize has reconciled them, the view is what the plan enforces.
            return invariants.enforced(store, node) or invariants.effective(store, node)
        target = _scope_target(store, scope, ref) if scope else None
        return invariants.list_scope(store, scope, target)


def remove_invariant(ws: Workspace, ref: str, *, agent: str) -> Invariant:
    with ws.writer() as session:
        return invariants.remove(session, ref, agent=agent)[0]
