"""The lifecycle engine: ``use`` turns an action into a plan, and the verbs (execute,
apply, resume, prompt, cancel) move it through Strategize, Execute and Apply by running
its actors. Every transition and every decision is one commit. The automation level says
which transitions follow by themselves (review: Strategize and Execute; auto: Apply too)
and which decisions pause the plan for approval (confidence below the threshold)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import CleverAgentsError, ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest

from . import actions, corrections, decisions, invariants, lifecycle, records, subplans
from . import tools as plan_tools
from .actor import ActorResolver, AwaitingApproval, PhaseOutcome, PlanContext
from .arguments import bind, substitute
from .corrections import CorrectionResult
from .decisions import Decision, DecisionInput
from .lock import is_locked, plan_lock
from .records import PlanRecord
from .subplans import ChildOutcome, StoreTurn, SubplanConfig
from .vocabulary import (
    AUTOMATION_LEVELS,
    DEFAULT_THRESHOLDS,
    PHASE_IRI,
    SYSTEM_DECISIONS,
    TYPE,
    Writer,
    boolean,
    ca,
    decimal,
    new_ulid,
    plan_iri,
    text,
    time_literal,
    ulid_of,
)


@dataclass(frozen=True)
class ApplyOutcome:
    """What merging a plan's sandboxes into the real resources gave: ``applied``,
    ``constrained`` (conflicts; the real resources untouched) or ``errored``."""

    status: str
    changed_files: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    message: str = ""


@dataclass
class EngineHooks:
    """What the layers beside plans/ lend the engine: merging sandboxes at Apply, the tool
    router bound to a plan for Execute (given the ToolContext extras plans' tools need:
    the recorder, the spawner, the handler scope), and a checkpoint of the plan's
    sandboxes before its subplans fork from them (all from sandbox/ and tools/)."""

    apply: Callable[[PlanRecord], ApplyOutcome] | None = None
    tools: Callable[[PlanRecord, str, dict[str, Any]], Callable[[str, dict[str, Any]], Any]] | None = None
    after_apply: Callable[[PlanRecord, ApplyOutcome], None] | None = None
    before_spawn: Callable[[PlanRecord, Decision], None] | None = None
    # The validation commands of the plan's projects, run in its sandboxes when Execute
    # completes: "" when they pass (or there are none), else what failed.
    validate: Callable[[PlanRecord], str] | None = None
    extras: dict[str, Any] = field(default_factory=dict)


class PlanEngine:
    def __init__(
        self,
        writer: Writer,
        data_dir: Path,
        resolve_actor: ActorResolver,
        *,
        agent: str = "cleveragents",
        hooks: EngineHooks | None = None,
        default_level: str = "manual",
    ) -> None:
        self.writer = writer
        self.data_dir = data_dir
        self.resolve_actor = resolve_actor
        self.agent = agent
        self.hooks = hooks or EngineHooks()
        self.default_level = default_level
        # Parallel subplans share the store one thread at a time (subplans.py).
        self.turn = StoreTurn()

    @property
    def store(self) -> Any:
        return self.writer.store

    def plan(self, ref: str | None) -> PlanRecord:
        return records.read(self.store, records.resolve(self.store, ref))

    # ── use ────────────────────────────────────────────────────────
    def create(
        self,
        action_ref: str,
        projects: Sequence[str],
        arguments: dict[str, Any],
        *,
        invariant_texts: Sequence[str] = (),
        automation_level: str | None = None,
    ) -> PlanRecord:
        """``plan use`` up to the plan's creation: the plan (Strategize, queued), its bound
        arguments, its plan-level invariants and its root prompt_definition, in one commit."""
        if not projects:
            raise ValidationError("plan use needs at least one project")
        project_nodes = [_project(self.store, p) for p in projects]
        return self._new_plan(
            action_ref, project_nodes, arguments, invariant_texts=invariant_texts, automation_level=automation_level
        )

    def create_child(self, parent: PlanRecord, spawn: Decision) -> PlanRecord:
        """The child plan a subplan_spawn decision names: the same projects as its parent,
        its parent's automation level (but never ``auto``: the parent merges it), and a
        root prompt influenced by the spawn decision, so correcting that decision reaches
        into the child."""
        if spawn.type != "subplan_spawn" or not spawn.subplan_action:
            raise ValidationError(
                f"decision {spawn.id} is a {spawn.type}"
                + ("" if spawn.type != "subplan_spawn" else " without a subplan action")
                + ": only a subplan_spawn decision naming an action spawns a child plan"
            )
        query = f"SELECT ?p WHERE {{ {parent.node} ca:targetsProject ?p }} ORDER BY ?p"
        projects = [row["p"] for row in self.store.query(query)]
        level = "review" if parent.automation_level == "auto" else parent.automation_level
        return self._new_plan(
            spawn.subplan_action,
            projects,
            spawn.subplan_arguments,
            automation_level=level,
            parent=parent,
            spawned_by=spawn,
        )

    def _new_plan(
        self,
        action_ref: str,
        project_nodes: Sequence[ox.NamedNode],
        arguments: dict[str, Any],
        *,
        invariant_texts: Sequence[str] = (),
        automation_level: str | None = None,
        parent: PlanRecord | None = None,
        spawned_by: Decision | None = None,
    ) -> PlanRecord:
        store = self.store
        action_node = actions.find(store, action_ref)
        action = actions.read(store, action_node)
        if action.state != "available":
            raise ConflictError(
                f"action {action.name} is {action.state}; only an available action can be used",
                suggestions=[f"agents action available {action.name}"],
            )
        values = bind(action.name, action.arguments, arguments)
        description = substitute(action.description or action.name, values, what="description")
        done = substitute(action.definition_of_done, values, what="definition of done")
        level = automation_level or action.automation_level or self.default_level
        if level not in AUTOMATION_LEVELS:
            raise ValidationError(f"automation level '{level}' is not one of {', '.join(AUTOMATION_LEVELS)}")
        ulid = new_ulid()
        node = plan_iri(ulid)
        triples: list[tuple[Any, Any, Any]] = [
            (node, TYPE, ca("Plan")),
            (node, ca("ulid"), text(ulid)),
            (node, ca("fromAction"), action_node),
            (node, ca("phase"), PHASE_IRI["strategize"]),
            (node, ca("state"), ca("queued")),
            (node, ca("attempt"), _int(1)),
            (node, ca("rootPlan"), ox.NamedNode(parent.root) if parent else node),
            (node, ca("createdAt"), time_literal()),
            (node, ca("createdBy"), text(self.agent)),
            (node, ca("description"), text(description)),
            (node, ca("definitionOfDone"), text(done)),
            (node, ca("automationLevel"), text(level)),
            (node, ca("approvalThreshold"), decimal(DEFAULT_THRESHOLDS[level])),
            (node, ca("readOnly"), boolean(action.read_only or bool(parent and parent.read_only))),
            (node, ca("strategyActorRef"), text(action.strategy_actor)),
            (node, ca("executionActorRef"), text(action.execution_actor)),
        ]
        if parent is not None:
            triples.append((node, ca("parentPlan"), parent.node))
        if spawned_by is not None:
            triples.append((node, ca("spawnedBy"), ox.NamedNode(spawned_by.iri)))
        if action.invariant_actor:
            triples.append((node, ca("invariantActorRef"), text(action.invariant_actor)))
        triples += [(node, ca("targetsProject"), p) for p in project_nodes]
        for name, value in values.items():
            arg = ox.NamedNode(f"{node.value}/arg/{name}")
            triples += [
                (node, ca("boundArgument"), arg),
                (arg, TYPE, ca("PlanArgument")),
                (arg, ca("argName"), text(name)),
                (arg, ca("argValue"), _typed(value)),
            ]
        for invariant in [*action.invariants, *invariant_texts]:
            triples += invariants.invariant_triples(invariant, "plan", node, agent=self.agent)[1]
        args_text = ", ".join(f"{k}={v}" for k, v in values.items())
        prompt = DecisionInput(
            type="prompt_definition",
            chosen=description,
            question="What is this plan to do?",
            rationale=f"From action {action.name}"
            + (f" with {args_text}" if args_text else "")
            + (f", spawned by decision {spawned_by.id} of plan {parent.id}" if spawned_by and parent else "")
            + f"; done when: {done}",
            influenced_by=(spawned_by.iri,) if spawned_by else (),
        )
        _, root = decisions.decision_triples(store, node, prompt, run=None, sequence=0)
        triples += root
        remove: list[tuple[Any, Any, Any]] = []
        if not action.reusable:  # a single-use action archives itself on first use
            remove.append((action_node, ca("actionState"), text("available")))
            triples.append((action_node, ca("actionState"), text("archived")))
        verb = f"subplan of {parent.id}: {action.name}" if parent else f"plan use {action.name}"
        self.writer.commit(CommitRequest(add=triples, remove=remove, message=verb, cause="plan-use", agent=self.agent))
        return records.read(store, node)

    # ── verbs ──────────────────────────────────────────────────────
    def strategize(self, plan: PlanRecord) -> PlanRecord:
        """Run Strategize (after use, or after a reversion), then whatever the automation
        level lets follow."""
        plan = self._run_phase(plan, "strategize")
        return self._follow(plan)

    def execute(self, ref: str | None) -> PlanRecord:
        plan = self.plan(ref)
        lifecycle.require(plan, "execute")
        plan = self._run_phase(plan, "execute")
        return self._follow(plan)

    def apply(self, ref: str | None) -> PlanRecord:
        plan = self.plan(ref)
        lifecycle.require(plan, "apply")
        return self._apply(plan)

    def cancel(self, ref: str | None, reason: str = "") -> PlanRecord:
        plan = self.plan(ref)
        lifecycle.require(plan, "cancel")
        remove = [(plan.node, ca("awaitingDecision"), ox.NamedNode(plan.awaiting))] if plan.awaiting else []
        records.transition(
            self.writer,
            plan,
            state="cancelled",
            message=f"plan cancel {plan.id}" + (f": {reason}" if reason else ""),
            agent=self.agent,
            end_run=True,
            error=f"cancelled: {reason}" if reason else "",
            remove=remove,
        )
        return self.plan(plan.id)

    def resume(self, ref: str | None) -> PlanRecord:
        plan = self.plan(ref)
        lifecycle.require(plan, "resume")
        if plan.awaiting:
            pending = ox.NamedNode(plan.awaiting)
            self.writer.commit(
                CommitRequest(
                    remove=[
                        (pending, ca("approvalStatus"), text("pending")),
                        (plan.node, ca("awaitingDecision"), pending),
                    ],
                    add=[(pending, ca("approvalStatus"), text("approved"))],
                    message=f"approve decision {ulid_of(pending.value)}",
                    cause="decision-approval",
                    agent=self.agent,
                )
            )
            plan = self.plan(plan.id)
        if plan.phase == "apply" and plan.state == "constrained":
            return self._revert(plan, plan.error or "apply was constrained")
        if plan.phase == "apply":
            return self._apply(plan)
        plan = self._run_phase(plan, plan.phase)
        return self._follow(plan)

    def prompt(self, ref: str | None, guidance: str) -> tuple[PlanRecord, Decision]:
        """User guidance: a user_intervention decision (under the awaiting decision, which
        it overrides, or under the root); a paused or errored phase then runs again."""
        if not guidance.strip():
            raise ValidationError("plan prompt needs the guidance text")
        plan = self.plan(ref)
        lifecycle.require(plan, "prompt")
        extra: list[tuple[Any, Any, Any]] = []
        remove: list[tuple[Any, Any, Any]] = []
        parent = None
        if plan.awaiting:
            pending = ox.NamedNode(plan.awaiting)
            parent = plan.awaiting
            remove = [(pending, ca("approvalStatus"), text("pending")), (plan.node, ca("awaitingDecision"), pending)]
            extra = [(pending, ca("approvalStatus"), text("overridden"))]
        run = records.open_run(self.store, plan.node, plan.phase, plan.attempt)
        node, _ = decisions.record(
            self.writer,
            plan.node,
            DecisionInput(
                type="user_intervention", chosen=guidance, question="What does the user want instead?", parent=parent
            ),
            run=run,
            agent=self.agent,
            extra=extra,
            remove=remove,
        )
        decision = decisions.load(self.store, [plan.node])[node.value]
        plan = self.plan(plan.id)
        if plan.state in {"queued", "errored"}:
            plan = self._run_phase(plan, plan.phase, guidance=[guidance])
            plan = self._follow(plan)
        return plan, decision

    def correct(self, decision: str, mode: str, guidance: str) -> CorrectionResult:
        """Record the correction; a revert also sends the plan back to Strategize (a new
        attempt) for the strategy actor to re-decide the superseded part. The caller rolls
        the sandboxes back, then continues the plan (``continue_after_correction``)."""
        node = decisions.resolve(self.store, decision)
        plan = self.plan(decisions.require_current(self.store, node, role="decision"))
        lifecycle.require(plan, "correct")
        run = records.open_run(self.store, plan.node, plan.phase, plan.attempt)
        result = corrections.correct(self.writer, decision, mode, guidance, agent=self.agent, run=run)
        plan = self.plan(plan.id)
        remove = [(plan.node, ca("awaitingDecision"), ox.NamedNode(plan.awaiting))] if plan.awaiting else []
        if mode == "revert":
            records.transition(
                self.writer,
                plan,
                phase="strategize",
                state="queued",
                attempt=plan.attempt + 1,
                message=f"plan {plan.id}: correction {result.attempt} reverts it to strategize",
                agent=self.agent,
                end_run=True,
                findings=f"correction of {ulid_of(result.impact.decision)}: {guidance}",
                remove=remove,
            )
        return result

    def continue_after_correction(self, result: CorrectionResult) -> PlanRecord:
        plan = self.plan(result.plan)
        if result.mode == "revert":
            return self.strategize(plan)
        if plan.phase in {"strategize", "execute"} and plan.state in {"complete", "errored"}:
            plan = self._run_phase(plan, plan.phase)
            return self._follow(plan)
        return plan

    # ── phases ─────────────────────────────────────────────────────
    def _follow(self, plan: PlanRecord) -> PlanRecord:
        """The transitions the automation level makes by itself after a completed phase."""
        while plan.state == "complete" and not plan.awaiting:
            if plan.phase == "strategize" and plan.automation_level in {"review", "auto"}:
                plan = self._run_phase(plan, "execute")
            elif plan.phase == "execute" and plan.automation_level == "auto":
                return self._apply(plan)
            else:
                break
        return plan

    def _run_phase(self, plan: PlanRecord, phase: str, *, guidance: Sequence[str] = ()) -> PlanRecord:
        findings = self._findings(plan) if phase == "strategize" else ""
        run = records.open_run(self.store, plan.node, phase, plan.attempt)
        if plan.phase != phase or plan.state != "processing" or run is None:
            _, run = records.transition(
                self.writer,
                plan,
                phase=phase,
                state="processing",
                message=f"plan {plan.id}: {phase} started (attempt {plan.attempt})",
                agent=self.agent,
                start_run=run is None or plan.phase != phase,
                end_run=plan.phase != phase,
            )
            run = run or records.open_run(self.store, plan.node, phase, plan.attempt)
        plan = self.plan(plan.id)
        assert run is not None
        try:
            if phase == "strategize":
                self._enforce_invariants(plan, run)
            ctx = self._context(plan, phase, run, findings, guidance)
            actor_ref = plan.strategy_actor if phase == "strategize" else plan.execution_actor
            actor = self.resolve_actor(actor_ref)
            outcome = actor.strategize(ctx) if phase == "strategize" else actor.execute(ctx)
        except AwaitingApproval:
            return self.plan(plan.id)
        except CleverAgentsError as exc:
            outcome = PhaseOutcome(status="error", error=exc.headline())
        except Exception as exc:  # an actor bug ends the phase as errored, with its message
            outcome = PhaseOutcome(status="error", error=f"{type(exc).__name__}: {exc}")
        plan = self.plan(plan.id)
        if phase == "execute" and outcome.status == "complete" and self.hooks.validate is not None:
            failed = self.hooks.validate(plan)
            if failed:
                outcome = PhaseOutcome(status="error", error=f"validation failed: {failed}")
        if outcome.status == "revert":
            if phase != "execute":
                outcome = PhaseOutcome(status="error", error="only Execute (or Apply) may revert to Strategize")
            else:
                return self._revert(plan, outcome.findings)
        state = "complete" if outcome.status == "complete" else "errored"
        records.transition(
            self.writer,
            plan,
            state=state,
            message=f"plan {plan.id}: {phase} {state}",
            agent=self.agent,
            end_run=True,
            error=outcome.error,
        )
        return self.plan(plan.id)

    def _revert(self, plan: PlanRecord, findings: str) -> PlanRecord:
        """Back to Strategize with the attempt counter incremented; the findings go to the
        strategy actor of the new attempt."""
        records.transition(
            self.writer,
            plan,
            phase="strategize",
            state="queued",
            attempt=plan.attempt + 1,
            message=f"plan {plan.id}: reverted from {plan.phase} to strategize",
            agent=self.agent,
            end_run=True,
            findings=findings or "constraints too restrictive",
        )
        return self.strategize(self.plan(plan.id))

    def _findings(self, plan: PlanRecord) -> str:
        rows = self.store.query(
            f"SELECT ?f WHERE {{ ?r ca:runOfPlan {plan.node} ; ca:findings ?f ; prov:endedAtTime ?e }} "
            "ORDER BY DESC(?e) LIMIT 1"
        )
        for row in rows:
            return row["f"].value
        return ""

    def _apply(self, plan: PlanRecord) -> PlanRecord:
        return self._apply_outcome(plan)[0]

    def _apply_outcome(self, plan: PlanRecord) -> tuple[PlanRecord, ApplyOutcome]:
        records.transition(
            self.writer,
            plan,
            phase="apply",
            state="processing",
            message=f"plan {plan.id}: apply started",
            agent=self.agent,
            start_run=plan.phase != "apply" or records.open_run(self.store, plan.node, "apply", plan.attempt) is None,
            end_run=plan.phase != "apply",
        )
        plan = self.plan(plan.id)
        try:
            outcome = (
                self.hooks.apply(plan) if self.hooks.apply else ApplyOutcome("applied", message="nothing to merge")
            )
        except CleverAgentsError as exc:
            outcome = ApplyOutcome("errored", message=exc.headline())
        error = outcome.message if outcome.status != "applied" else ""
        if outcome.conflicts:
            error = "conflicts in " + ", ".join(outcome.conflicts)
        records.transition(
            self.writer,
            plan,
            state=outcome.status,
            message=f"plan {plan.id}: apply {outcome.status}",
            agent=self.agent,
            end_run=True,
            error=error,
        )
        plan = self.plan(plan.id)
        if outcome.status == "applied" and self.hooks.after_apply:
            self.hooks.after_apply(plan, outcome)
        return plan, outcome

    # ── subplans ───────────────────────────────────────────────────
    def spawn_subplans(
        self,
        plan: PlanRecord,
        decision_ref: str,
        *,
        fail_fast: bool = False,
        retry_failed: bool = True,
        max_retries: int = 2,
    ) -> list[ChildOutcome]:
        """Realize a subplan_spawn or subplan_parallel_spawn decision of ``plan`` (subplans.py)."""
        node = decisions.resolve(self.store, decision_ref)
        decisions.require_current(self.store, node, role="spawn decision")
        loaded = decisions.load(self.store, [plan.node])
        group = loaded.get(node.value)
        if group is None:
            raise ValidationError(f"decision {ulid_of(node.value)} belongs to another plan than {plan.id}")
        if group.type not in subplans.SPAWN_TYPES:
            raise ValidationError(
                f"decision {group.id} is a {group.type}; subplans come from a subplan_spawn or "
                "subplan_parallel_spawn decision"
            )
        config = SubplanConfig(
            max_parallel=group.max_parallel or 5,
            fail_fast=fail_fast,
            retry_failed=retry_failed,
            max_retries=max_retries,
        )
        children = subplans.children_of(group, [d for d in loaded.values() if d.current])
        if children and self.hooks.before_spawn is not None:
            self.hooks.before_spawn(plan, group)
        return subplans.realize(
            group,
            children,
            config,
            run_child=lambda spawn: self._run_child(plan, spawn, config),
            merge_child=self._merge_child,
            turn=self.turn,
        )

    def _child_of(self, spawn: Decision) -> PlanRecord | None:
        for row in self.store.query(f"SELECT ?p WHERE {{ ?p ca:spawnedBy <{spawn.iri}> }} LIMIT 1"):
            return records.read(self.store, row["p"])
        return None

    def _run_child(self, parent: PlanRecord, spawn: Decision, config: SubplanConfig) -> ChildOutcome:
        """Create the child (or find the one this decision spawned before) and run it until
        its Execute is complete (``ready`` to merge), it fails, or a decision pauses it."""
        try:
            child = self._child_of(spawn) or self.create_child(self.plan(parent.id), spawn)
        except CleverAgentsError as exc:
            return ChildOutcome(spawn.iri, "failed", message=exc.headline())
        runs = retries = 0
        try:
            with plan_lock(self.data_dir, child.id):
                while True:
                    child = self.plan(child.id)
                    settled = _settled(spawn, child, runs)
                    if settled is not None:
                        if settled.status != "failed" or child.state != "errored":
                            return settled
                        if not config.retry_failed or retries >= config.max_retries:
                            return settled
                        retries += 1
                    elif runs >= 10 * (config.max_retries + 1):  # a script that keeps reverting
                        stuck = f"subplan {child.id} made no progress in {runs} runs"
                        return ChildOutcome(spawn.iri, "failed", child.iri, child.phase, child.state, runs, stuck)
                    phase = "execute" if child.phase == "strategize" and child.state == "complete" else child.phase
                    self._run_phase(child, phase)
                    runs += 1
        except CleverAgentsError as exc:
            child = self.plan(child.id)
            return ChildOutcome(spawn.iri, "failed", child.iri, child.phase, child.state, runs, exc.headline())

    def _merge_child(self, outcome: ChildOutcome) -> ChildOutcome:
        """The child's Apply: its sandboxes merged into its parent's."""
        assert outcome.plan is not None
        with plan_lock(self.data_dir, ulid_of(outcome.plan)):
            child, applied = self._apply_outcome(self.plan(outcome.plan))
        outcome.phase, outcome.state = child.phase, child.state
        outcome.changed_files = list(applied.changed_files)
        if child.state == "applied":
            outcome.status = "merged" if applied.changed_files else "unchanged"
            outcome.message = applied.message
        else:
            outcome.status = "failed"
            outcome.message = child.error or applied.message
        return outcome

    def _enforce_invariants(self, plan: PlanRecord, run: ox.NamedNode) -> None:
        """The reconciled invariant view as invariant_enforced decisions (each one once per
        plan; a corrected, superseded one is not re-added). A child plan inherits its
        parent's reconciled view; a root plan's Invariant Reconciliation Actor, if it has
        one, names the conflicting pairs and the precedence settles each pair."""
        enforced = {
            row["i"].value
            for row in self.store.query(
                f"SELECT ?i WHERE {{ ?d ca:belongsToPlan {plan.node} ; ca:enforcesInvariant ?i }}"
            )
        }
        overridden: dict[str, tuple[invariants.Invariant, str]] = {}
        if plan.parent:
            candidates = kept = invariants.inherited(self.store, plan.node, ox.NamedNode(plan.parent))
        else:
            candidates = invariants.effective(self.store, plan.node)
            conflicts = self._invariant_conflicts(plan, candidates) if len(candidates) > 1 else []
            kept, overridden = invariants.resolve_conflicts(candidates, conflicts)
        losers = {inv.iri: inv for inv in candidates}
        for inv in kept:
            if inv.iri in enforced:
                continue
            beaten = [(loser, reason) for loser, (winner, reason) in overridden.items() if winner.iri == inv.iri]
            rationale = f"{inv.scope} invariant {inv.id}" + (f" of {ulid_of(inv.target)}" if inv.target else "")
            for loser, reason in beaten:
                rationale += f"; overrides {losers[loser].scope} invariant {ulid_of(loser)}" + (
                    f" ({reason})" if reason else ""
                )
            decisions.record(
                self.writer,
                plan.node,
                DecisionInput(
                    type="invariant_enforced",
                    chosen=inv.text,
                    question="Which constraints bind this plan?",
                    alternatives=tuple(losers[loser].text for loser, _ in beaten),
                    rationale=rationale,
                    invariant=inv.iri,
                ),
                run=run,
                agent=self.agent,
            )

    def _invariant_conflicts(
        self, plan: PlanRecord, candidates: list[invariants.Invariant]
    ) -> list[invariants.InvariantConflict]:
        """The conflicting pairs the plan's Invariant Reconciliation Actor finds (none
        without one)."""
        if not plan.invariant_actor:
            return []
        actor = self.resolve_actor(plan.invariant_actor)
        judge = getattr(actor, "find_invariant_conflicts", None)
        if judge is None:
            raise ValidationError(
                f"actor '{plan.invariant_actor}' cannot reconcile invariants (it has no find_invariant_conflicts)"
            )
        return list(judge(plan, candidates))

    def _context(
        self, plan: PlanRecord, phase: str, run: ox.NamedNode, findings: str, guidance: Sequence[str]
    ) -> PlanContext:
        threshold = Decimal(str(plan.threshold))

        def record(inp: DecisionInput) -> Decision:
            """One decision in one commit; below the threshold the same commit pauses the
            plan (queued, awaiting this decision) and the actor is stopped."""
            confidence = Decimal(str(inp.confidence)) if inp.confidence is not None else Decimal(1)
            pause = inp.type not in SYSTEM_DECISIONS and confidence < threshold
            node, triples = decisions.decision_triples(
                self.store, plan.node, inp, run=run, approval="pending" if pause else "auto"
            )
            remove: list[tuple[Any, Any, Any]] = []
            if pause:
                current = self.plan(plan.id)
                remove = [(plan.node, ca("state"), ca(current.state))]
                triples += [(plan.node, ca("state"), ca("queued")), (plan.node, ca("awaitingDecision"), node)]
            self.writer.commit(
                CommitRequest(
                    add=triples,
                    remove=remove,
                    message=f"decision {inp.type} in plan {plan.id}" + (" (awaiting approval)" if pause else ""),
                    cause="record-decision",
                    agent=self.agent,
                )
            )
            if pause:
                raise AwaitingApproval(
                    f"decision {ulid_of(node.value)} ({inp.type}, confidence {confidence}) "
                    "is below the plan's threshold "
                    f"{threshold}: approve it with 'agents plan resume {plan.id}' or override it with "
                    f"'agents plan prompt {plan.id} TEXT'"
                )
            return decisions.load(self.store, [plan.node])[node.value]

        def phase_decisions() -> list[Decision]:
            loaded = decisions.load(self.store, [plan.node]).values()
            return sorted((d for d in loaded if d.current), key=lambda d: d.sequence)

        def query(sparql: str) -> list[dict[str, Any]]:
            result = self.store.query(sparql)
            if isinstance(result, bool | ox.QueryBoolean):
                return [{"result": bool(result)}]
            names = [variable.value for variable in result.variables]
            return [{k: (row[k].value if row[k] is not None else None) for k in names} for row in result]

        ctx = PlanContext(
            plan=plan,
            phase=phase,
            attempt=plan.attempt,
            record=record,
            decisions=phase_decisions,
            query=query,
            findings=findings,
            guidance=list(guidance) or self._guidance(plan),
        )

        def spawn(decision: str, **options: Any) -> list[ChildOutcome]:
            return self.spawn_subplans(self.plan(plan.id), decision, **options)

        if phase == "execute":
            ctx.spawn_subplan = spawn
        if phase == "execute" and self.hooks.tools is not None:
            extras = {
                plan_tools.RECORDER: record,
                plan_tools.SPAWNER: spawn,
                plan_tools.HANDLER_SCOPE: plan_tools.handler_scope(self.turn),
            }
            ctx.call_tool = self.hooks.tools(plan, phase, extras)
        return ctx

    def _guidance(self, plan: PlanRecord) -> list[str]:
        return [
            row["g"].value
            for row in self.store.query(
                f"SELECT ?g WHERE {{ ?d ca:belongsToPlan {plan.node} ; ca:decisionType ca:user_intervention ; "
                "ca:chosenOption ?g ; ca:sequenceNumber ?s FILTER NOT EXISTS { ?d ca:supersededBy ?x } "
                "FILTER NOT EXISTS { ?d prov:wasInvalidatedBy ?y } } ORDER BY ?s"
            )
        ]

    def interrupted(self, plan: PlanRecord) -> bool:
        return plan.state == "processing" and not is_locked(self.data_dir, plan.id)


def _settled(spawn: Decision, child: PlanRecord, runs: int) -> ChildOutcome | None:
    """Where a running child stops: ready to merge, merged already, paused or failed."""

    def outcome(status: str, message: str = "") -> ChildOutcome:
        return ChildOutcome(spawn.iri, status, child.iri, child.phase, child.state, runs, message or child.error)

    if child.awaiting:
        return outcome(
            "awaiting",
            f"subplan {child.id} awaits approval of decision {ulid_of(child.awaiting)}: "
            f"agents plan resume {child.id}, then resume this plan",
        )
    if child.phase == "execute" and child.state == "complete":
        return outcome("ready")
    if child.phase == "apply" and child.state == "applied":
        return outcome("merged", "merged before")
    if child.state in {"errored", "cancelled", "constrained"}:
        return outcome("failed", child.error or f"subplan {child.id} is {child.state} in {child.phase}")
    return None


def _project(store: Any, ref: str) -> ox.NamedNode:
    names = {ref, ref if "/" in ref else f"local/{ref}"}
    values = " ".join(str(text(n)) for n in names)
    for row in store.query(f"SELECT ?p WHERE {{ VALUES ?n {{ {values} }} ?p a ca:Project ; ca:name ?n }} LIMIT 1"):
        return row["p"]
    raise NotFoundError(
        f"project '{ref}' not found", suggestions=["agents project list", f"agents project create {ref}"]
    )


def _int(value: int) -> ox.Literal:
    from .vocabulary import integer

    return integer(value)


def _typed(value: Any) -> ox.Literal:
    from .vocabulary import integer

    if isinstance(value, bool):
        return boolean(value)
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, float):
        return decimal(value)
    return text(str(value))
