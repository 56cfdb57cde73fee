"""``agents plan use | execute | apply | status | list | show | cancel | resume | prompt |
tree | explain | correct | diff``: the plan lifecycle and its decision tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.plans import tree as decision_tree
from cleveragents.plans.arguments import parse_pairs
from cleveragents.plans.records import PlanRecord
from cleveragents.plans.vocabulary import ulid_of
from cleveragents.services import plans

from . import sandbox_cmd
from .graph_cmd import agent_name, read_text, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, reporting_violations

app = typer.Typer(help="Plans: Action -> Strategize -> Execute -> Apply, and their decisions.", no_args_is_help=True)

PlanRef = Annotated[str, typer.Argument(help="Plan ULID or IRI.")]
OptionalPlan = Annotated[str | None, typer.Argument(help="Plan ULID or IRI (default: the most recent plan).")]


def show_plan(out: OutputSession, app_ctx: AppContext, plan: PlanRecord, allowed: tuple[str, ...] = ()) -> None:
    structured = is_structured(app_ctx)
    data = plan.as_dict()
    fields: list[tuple[str, str, Any]] = [
        ("id", "Plan", plan.id),
        ("phase", "Phase", plan.phase),
        ("state", "State", plan.state),
        ("attempt", "Attempt", plan.attempt),
        ("action", "Action", plan.action or ""),
        ("projects", "Projects", listed(plan.projects, structured)),
        ("automation_level", "Automation Level", plan.automation_level),
        ("read_only", "Read Only", plan.read_only),
        ("awaiting_decision", "Awaiting Approval", data["awaiting_decision"] or ""),
        ("description", "Description", plan.description),
        ("definition_of_done", "Definition of Done", plan.definition_of_done),
        (
            "arguments",
            "Arguments",
            plan.arguments if structured else ", ".join(f"{k}={v}" for k, v in plan.arguments.items()),
        ),
        ("parent", "Parent", data["parent"] or ""),
        ("root", "Root", data["root"]),
        ("error", "Error", plan.error),
        ("created", "Created", plan.created),
        ("updated", "Updated", plan.updated),
        ("completed", "Completed", plan.completed),
        ("created_by", "Created By", plan.created_by),
        ("allowed_verbs", "Verbs Allowed Now", listed(allowed, structured, empty="none")),
        ("iri", "IRI", plan.iri),
    ]
    record(out, app_ctx, f"Plan {plan.id}", "plan", [f for f in fields if structured or f[2] not in ("", None)])


def _after(out: OutputSession, app_ctx: AppContext, plan: PlanRecord, what: str) -> None:
    level = "ok" if plan.state not in {"errored", "constrained"} else "error"
    if plan.awaiting:
        out.status(f"{what}; waiting for approval of decision {plan.as_dict()['awaiting_decision']}", "warn")
    else:
        out.status(f"{what}: plan {plan.id} is in {plan.phase}, {plan.state}", level)
    _, allowed = plans.status(workspace(app_ctx), plan.id)
    show_plan(out, app_ctx, plan, allowed)


@app.command("use")
def use(
    ctx: typer.Context,
    action: Annotated[str, typer.Argument(help="Action name.")],
    projects: Annotated[list[str] | None, typer.Argument(help="Projects to use it on.")] = None,
    project: Annotated[list[str] | None, typer.Option("--project", "-p", help="Project (repeatable).")] = None,
    arg: Annotated[list[str] | None, typer.Option("--arg", "-a", help="name=value (repeatable).")] = None,
    invariant: Annotated[list[str] | None, typer.Option("--invariant", help="Plan invariant (repeatable).")] = None,
    automation_level: Annotated[str | None, typer.Option("--automation-level", help="manual, review or auto")] = None,
) -> None:
    """Use an action on projects: a new plan enters Strategize (and runs as far as its
    automation level allows)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan use") as out, reporting_violations(out, app_ctx):
        plan = plans.use(
            workspace(app_ctx),
            action,
            [*(projects or []), *(project or [])],
            parse_pairs(arg or []),
            invariant_texts=invariant or [],
            automation_level=automation_level,
            default_level=str(app_ctx.config.value("automation-level")),
            agent=agent_name(app_ctx),
        )
        _after(out, app_ctx, plan, f"Plan created: {plan.id}")


@app.command("execute")
def execute(ctx: typer.Context, plan: OptionalPlan = None) -> None:
    """Run Execute (from Strategize complete)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan execute") as out, reporting_violations(out, app_ctx):
        _after(out, app_ctx, plans.execute(workspace(app_ctx), plan, agent=agent_name(app_ctx)), "Execute ran")


@app.command("apply")
def apply(
    ctx: typer.Context,
    plan: PlanRef,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Skip confirmation.")] = False,
) -> None:
    """Apply the sandbox changes to the real resources."""
    app_ctx = get_context(ctx)
    if not yes and not typer.confirm(f"Apply changes for plan {plan}?", default=False):
        raise typer.Exit(1)
    with app_ctx.session("plan apply") as out, reporting_violations(out, app_ctx):
        _after(out, app_ctx, plans.apply(workspace(app_ctx), plan, agent=agent_name(app_ctx)), "Apply ran")


@app.command("resume")
def resume(ctx: typer.Context, plan: OptionalPlan = None) -> None:
    """Approve the awaited decision, retry an errored or interrupted phase, or revert a
    constrained plan to Strategize."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan resume") as out, reporting_violations(out, app_ctx):
        _after(out, app_ctx, plans.resume(workspace(app_ctx), plan, agent=agent_name(app_ctx)), "Resumed")


@app.command("cancel")
def cancel(ctx: typer.Context, plan: PlanRef, reason: Annotated[str, typer.Option("--reason", "-r")] = "") -> None:
    """Cancel a plan that is not terminal."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan cancel") as out, reporting_violations(out, app_ctx):
        _after(out, app_ctx, plans.cancel(workspace(app_ctx), plan, reason, agent=agent_name(app_ctx)), "Cancelled")


@app.command("prompt")
def prompt(ctx: typer.Context, plan: PlanRef, guidance: Annotated[str, typer.Argument(help="Guidance text.")]) -> None:
    """Give a plan guidance (a user_intervention decision); a paused or errored phase runs again."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan prompt") as out, reporting_violations(out, app_ctx):
        found, decision = plans.prompt(workspace(app_ctx), plan, guidance, agent=agent_name(app_ctx))
        out.data("decision", decision.as_dict(), hidden=True)
        _after(out, app_ctx, found, f"Guidance added as decision {decision.id}")


@app.command("status")
def status(ctx: typer.Context, plan: OptionalPlan = None) -> None:
    """A plan's phase, state and the verbs allowed now."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan status") as out:
        found, allowed = plans.status(workspace(app_ctx), plan)
        show_plan(out, app_ctx, found, allowed)


@app.command("show")
def show(ctx: typer.Context, plan: OptionalPlan = None) -> None:
    """A plan's details (as status)."""
    status(ctx, plan)


@app.command("list")
def list_plans(
    ctx: typer.Context,
    phase: Annotated[str | None, typer.Option("--phase")] = None,
    state: Annotated[str | None, typer.Option("--state")] = None,
    project: Annotated[str | None, typer.Option("--project")] = None,
    action: Annotated[str | None, typer.Option("--action")] = None,
) -> None:
    """Plans, oldest first."""
    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    with app_ctx.session("plan list") as out:
        found = plans.list_plans(workspace(app_ctx), phase=phase, state=state, project=project, action=action)
        rows = [{**p.as_dict(), "projects": listed(p.projects, structured)} for p in found]
        columns = [
            ColumnDef("id", "ID"),
            ColumnDef("phase", "Phase"),
            ColumnDef("state", "State"),
            ColumnDef("action", "Action"),
            ColumnDef("projects", "Project"),
            ColumnDef("attempt", "Attempt", alignment="right"),
        ]
        out.table(f"Plans ({len(rows)})", columns, rows=rows, key="plans")


@app.command("tree")
def tree(
    ctx: typer.Context,
    plan: OptionalPlan = None,
    shape: Annotated[str, typer.Option("--format", help="tree, json or flat")] = "tree",
    show_superseded: Annotated[bool, typer.Option("--show-superseded", help="Include superseded decisions.")] = False,
) -> None:
    """The decision tree of a plan (child plans under the decisions that spawned them)."""
    app_ctx = get_context(ctx)
    if shape not in {"tree", "json", "flat"}:
        raise UsageError(f"--format '{shape}' is not one of tree, json, flat")
    with app_ctx.session("plan tree") as out:
        root_plan, found, family = plans.tree(workspace(app_ctx), plan)
        root = decision_tree.build(root_plan, found, family, show_superseded=show_superseded)
        if is_structured(app_ctx) or shape == "json":
            if is_structured(app_ctx):
                out.data("tree", root.as_dict())
            else:
                out.text(json.dumps(root.as_dict(), indent=2))
        elif shape == "flat":
            rows = [{**r, "indent": "  " * r["depth"] + r["type"]} for r in decision_tree.flat(root)]
            columns = [
                ColumnDef("sequence", "Seq", alignment="right"),
                ColumnDef("indent", "Type"),
                ColumnDef("chosen", "Chosen"),
                ColumnDef("id", "ID"),
                ColumnDef("current", "Current"),
            ]
            out.table("Decisions", columns, rows=rows, key="decisions")
        else:
            handle = out.tree(root.label, key="tree", keep_open=True)

            def add(node: decision_tree.TreeNode, parent: str | None) -> None:
                for child in node.children:
                    add(child, handle.add_child(parent, child.label))

            add(root, None)
            handle.close()


@app.command("explain")
def explain(
    ctx: typer.Context,
    decision: Annotated[str, typer.Argument(help="Decision ULID or IRI.")],
    show_context: Annotated[bool, typer.Option("--show-context")] = False,
    show_reasoning: Annotated[bool, typer.Option("--show-reasoning")] = False,
) -> None:
    """One decision: question, choice, alternatives, confidence, rationale, influences."""
    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    with app_ctx.session("plan explain") as out:
        found, context = plans.explain(workspace(app_ctx), decision)
        d = found.as_dict()
        fields: list[tuple[str, str, Any]] = [
            ("id", "Decision", found.id),
            ("type", "Type", found.type),
            ("plan", "Plan", d["plan"]),
            ("sequence", "Sequence", found.sequence),
            ("question", "Question", found.question),
            ("chosen", "Chosen", found.chosen),
            ("alternatives", "Alternatives", listed(found.alternatives, structured, empty="none")),
            ("confidence", "Confidence", found.confidence),
            ("rationale", "Rationale", found.rationale),
            ("parent", "Parent", d["parent"]),
            ("influenced_by", "Influenced By", listed(d["influenced_by"], structured, empty="none")),
            ("current", "Current", found.current),
            ("superseded_by", "Superseded By", d["superseded_by"]),
            ("approval", "Approval", found.approval),
            ("created", "Created", found.created),
        ]
        if show_reasoning:
            fields.append(("reasoning", "Reasoning", found.reasoning or "(none recorded)"))
        if show_context:
            fields.append(("context_hash", "Context Hash", found.context_hash or "(none)"))
            nodes = [f"{c['node']}" + (f" @r{c['revision']}" if c["revision"] is not None else "") for c in context]
            fields.append(("context", "Context Nodes", context if structured else listed(nodes, False, empty="none")))
        record(
            out,
            app_ctx,
            f"Decision {found.id}",
            "decision",
            [f for f in fields if structured or f[2] not in ("", None)],
        )


@app.command("correct")
def correct(
    ctx: typer.Context,
    decision: Annotated[str, typer.Argument(help="Decision ULID or IRI.")],
    mode: Annotated[str, typer.Option("--mode", help="revert (supersede and re-decide) or append (add a fix)")],
    guidance: Annotated[str | None, typer.Option("--guidance", "-g", help="What the decision should be.")] = None,
    guidance_file: Annotated[
        Path | None, typer.Option("--guidance-file", "-f", help="Guidance file, - for stdin.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the impact; change nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Skip confirmation (revert).")] = False,
) -> None:
    """Correct a decision: revert supersedes it and everything it influenced, then the
    strategy actor re-decides; append adds a user_intervention and continues."""
    app_ctx = get_context(ctx)
    if mode not in {"revert", "append"}:
        raise UsageError(f"--mode '{mode}' is not one of revert, append")
    with app_ctx.session("plan correct") as out, reporting_violations(out, app_ctx):
        ws = workspace(app_ctx)
        impact = plans.correction_impact(ws, decision)
        out.data("impact", impact.as_dict(), hidden=True)
        out.status(f"Impact: {impact.summary()}", "info")
        if dry_run:
            out.status("Dry run: nothing changed", "ok")
            return
        text = read_text(guidance, guidance_file, "guidance", "--guidance-file FILE")
        if (
            mode == "revert"
            and not yes
            and not typer.confirm(f"Revert {len(impact.affected)} decisions?", default=False)
        ):
            raise typer.Exit(1)
        result, plan = plans.correct(ws, decision, mode, text, agent=agent_name(app_ctx))
        out.data(
            "correction", {"attempt": result.attempt, "mode": mode, "produced": ulid_of(result.produced)}, hidden=True
        )
        out.status(f"Correction {result.attempt} applied; new decision {ulid_of(result.produced)}", "ok")
        _after(out, app_ctx, plan, "Plan continued")


@app.command("diff")
def diff(
    ctx: typer.Context,
    plan: Annotated[str | None, typer.Option("--plan", help="The sandbox diff of a plan.")] = None,
    correction: Annotated[str | None, typer.Option("--correction", help="What a correction attempt replaced.")] = None,
) -> None:
    """The reviewable diff of a plan's sandboxes, or the decisions a correction replaced."""
    app_ctx = get_context(ctx)
    if (plan is None) == (correction is None):
        raise UsageError("give exactly one of --plan ID or --correction ATTEMPT")
    with app_ctx.session("plan diff") as out:
        ws = workspace(app_ctx)
        if plan is not None:
            from cleveragents.services import sandboxes

            diffs = sandboxes.diff(ws, plan)
            if is_structured(app_ctx):
                out.data("diff", diffs)
            for resource, text in diffs.items():
                out.text(f"Diff {resource}")
                out.code(text or "(no changes)", "diff")
            return
        found = plans.correction_diff(ws, correction or "")
        if is_structured(app_ctx):
            out.data("correction", found.as_dict())
            return
        out.status(f"Correction {found.attempt} ({found.mode}): {found.guidance}")
        lines = [f"- [{d.type}] {d.chosen} ({d.id})" for d in found.superseded]
        lines += [f"+ [{d.type}] {d.chosen} ({d.id})" for d in found.replacements]
        out.code("\n".join(lines) or "(no decisions)", "diff")


# The sandbox verbs of a plan (checkpoint, rollback, artifacts), defined in sandbox_cmd.
sandbox_cmd.register_plan_commands(app)
