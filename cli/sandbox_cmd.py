"""Sandbox verbs of ``agents plan`` (``checkpoint``, ``rollback``, ``artifacts``) and
``agents project set-validation``.

They are registered onto the ``plan`` and ``project`` groups by ``register_plan_commands``
and ``register_project_commands`` (main.py), so the groups stay owned by their modules.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef
from cleveragents.services import sandboxes, validation_commands

from .graph_cmd import agent_name, workspace
from .invocation import get_context
from .rendering import record, render_commit, reporting_violations

PlanRef = Annotated[str, typer.Argument(help="Plan ULID or IRI.")]


def checkpoint_cmd(
    ctx: typer.Context,
    plan: PlanRef,
    label: Annotated[str, typer.Option("--label", "-l", help="A name for the checkpoint.")] = "",
) -> None:
    """Checkpoint every sandbox of the plan (a commit in each; recorded as ca:Checkpoint)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan checkpoint") as out, reporting_violations(out, app_ctx):
        taken, result = sandboxes.checkpoint(workspace(app_ctx), plan, label=label, agent=agent_name(app_ctx))
        rows = [
            {
                "resource": c.resource,
                "sequence": c.checkpoint.sequence,
                "id": c.checkpoint.id,
                "label": c.checkpoint.label,
                "files": len(c.checkpoint.files),
                "checkpoint": c.iri.rsplit("/", 1)[-1],
                "iri": c.iri,
            }
            for c in taken
        ]
        out.table(f"Checkpoints ({len(rows)})", _checkpoint_columns(), rows=rows, key="checkpoints")
        render_commit(out, result, "plan checkpoint")


def _checkpoint_columns() -> list[ColumnDef]:
    return [
        ColumnDef("resource", "Resource"),
        ColumnDef("sequence", "#", alignment="right"),
        ColumnDef("label", "Label"),
        ColumnDef("files", "Files changed", alignment="right"),
        ColumnDef("checkpoint", "Checkpoint"),
        ColumnDef("id", "Commit"),
        ColumnDef("iri", hidden=True),
    ]


def rollback_cmd(
    ctx: typer.Context,
    plan: PlanRef,
    checkpoint: Annotated[
        str, typer.Argument(help="Checkpoint: its ULID or IRI, its label, its number, or a commit id prefix.")
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Restore the plan's sandboxes to a checkpoint (work since then is discarded)."""
    app_ctx = get_context(ctx)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "rollback discards the sandbox work done since the checkpoint; add --yes to confirm",
                suggestions=[f"agents plan rollback {plan} {checkpoint} --yes"],
            )
        typer.confirm(f"Roll plan {plan} back to checkpoint {checkpoint}?", abort=True)
    with app_ctx.session("plan rollback") as out:
        restored = sandboxes.rollback(workspace(app_ctx), plan, checkpoint)
        rows = [
            {"resource": c.resource, "sequence": c.checkpoint.sequence, "label": c.checkpoint.label,
             "id": c.checkpoint.id, "files": len(c.checkpoint.files), "checkpoint": "", "iri": ""}
            for c in restored
        ]  # fmt: skip
        out.table(f"Rolled back ({len(rows)})", _checkpoint_columns(), rows=rows, key="rolled_back")
        out.status(f"Rolled back {len(rows)} sandbox(es) of plan {plan}", "ok")


def artifacts_cmd(ctx: typer.Context, plan: PlanRef) -> None:
    """What the plan's sandboxes changed since they forked (uncommitted work included)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("plan artifacts") as out:
        found = sandboxes.artifacts(workspace(app_ctx), plan)
        rows = [{"resource": a.resource, "status": c.status, "path": c.path} for a in found for c in a.changes]
        out.data("sandboxes", [a.as_dict() for a in found], hidden=True)
        out.table(
            f"Artifacts ({len(rows)} file(s) in {len(found)} sandbox(es))",
            [ColumnDef("resource", "Resource"), ColumnDef("status", "Change"), ColumnDef("path", "Path")],
            rows=rows,
            key="artifacts",
        )


def set_validation_cmd(
    ctx: typer.Context,
    project_arg: Annotated[str | None, typer.Argument(metavar="PROJECT", help="Project name, ULID or IRI.")] = None,
    project: Annotated[str | None, typer.Option("--project", "-p", help="Project (instead of the argument).")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Only for this resource of the project.")] = None,
    test: Annotated[str | None, typer.Option("--test-command", help="Runs the tests.")] = None,
    lint: Annotated[str | None, typer.Option("--lint-command", help="Runs the linter.")] = None,
    type_check: Annotated[str | None, typer.Option("--type-check-command", help="Runs the type checker.")] = None,
    build: Annotated[str | None, typer.Option("--build-command", help="Builds.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds each command may run.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the validation commands.")] = False,
) -> None:
    """Set the validation commands a plan runs in its sandbox during Execute."""
    app_ctx = get_context(ctx)
    if project_arg and project and project_arg != project:
        raise UsageError(f"two projects given: '{project_arg}' and --project '{project}'")
    name = project_arg or project
    if not name:
        raise UsageError("name the project: agents project set-validation PROJECT ...")
    with app_ctx.session("project set-validation") as out, reporting_violations(out, app_ctx):
        commands, result = validation_commands.set_validation(
            workspace(app_ctx),
            name,
            resource=resource,
            test=test,
            lint=lint,
            type_check=type_check,
            build=build,
            timeout=timeout,
            clear=clear,
            agent=agent_name(app_ctx),
        )
        record(
            out,
            app_ctx,
            f"Validation of {name}" + (f" (resource: {resource})" if resource else ""),
            "validation",
            [
                ("project", "Project", name),
                ("resource", "Resource", resource or "all"),
                ("test", "Test", commands.test or ""),
                ("lint", "Lint", commands.lint or ""),
                ("type_check", "Type check", commands.type_check or ""),
                ("build", "Build", commands.build or ""),
                ("timeout", "Timeout (s)", commands.timeout),
                ("cleared", "Cleared", clear),
            ],
        )
        render_commit(out, result, "project set-validation")


def register_plan_commands(plan_app: typer.Typer) -> None:
    plan_app.command("checkpoint")(checkpoint_cmd)
    plan_app.command("rollback")(rollback_cmd)
    plan_app.command("artifacts")(artifacts_cmd)


def register_project_commands(project_app: typer.Typer) -> None:
    project_app.command("set-validation")(set_validation_cmd)
