"""``agents invariant add | list | remove``."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef
from cleveragents.services import plans

from .graph_cmd import agent_name, workspace
from .invocation import get_context
from .rendering import reporting_violations

app = typer.Typer(help="Constraints at global, project, action or plan scope.", no_args_is_help=True)

GlobalOpt = Annotated[bool, typer.Option("--global", help="Global scope.")]
ProjectOpt = Annotated[str | None, typer.Option("--project", help="Project scope.")]
ActionOpt = Annotated[str | None, typer.Option("--action", help="Action scope.")]
PlanOpt = Annotated[str | None, typer.Option("--plan", help="Plan scope (its children inherit).")]


def _scope(is_global: bool, project: str | None, action: str | None, plan: str | None, *, required: bool) -> tuple:
    scopes = (("project", project), ("action", action), ("plan", plan))
    given: list[tuple[str, str | None]] = [(s, r) for s, r in scopes if r]
    if is_global:
        given.append(("global", None))
    if len(given) > 1 or (required and not given):
        raise UsageError("give exactly one of --global, --project P, --action A, --plan ID")
    return given[0] if given else (None, None)


@app.command("add")
def add(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The constraint.")],
    is_global: GlobalOpt = False,
    project: ProjectOpt = None,
    action: ActionOpt = None,
    plan: PlanOpt = None,
) -> None:
    """Attach an invariant to a scope."""
    app_ctx = get_context(ctx)
    scope, ref = _scope(is_global, project, action, plan, required=True)
    with app_ctx.session("invariant add") as out, reporting_violations(out, app_ctx):
        inv = plans.add_invariant(workspace(app_ctx), text, scope, ref, agent=agent_name(app_ctx))
        out.data("invariant", inv.as_dict(), hidden=True)
        out.status(f"Invariant {inv.id} added ({scope})", "ok")


@app.command("list")
def list_invariants(
    ctx: typer.Context,
    is_global: GlobalOpt = False,
    project: ProjectOpt = None,
    action: ActionOpt = None,
    plan: PlanOpt = None,
    effective: Annotated[bool, typer.Option("--effective", help="A plan's reconciled view.")] = False,
) -> None:
    """Invariants of a scope (all live ones without a scope)."""
    app_ctx = get_context(ctx)
    scope, ref = _scope(is_global, project, action, plan, required=False)
    with app_ctx.session("invariant list") as out:
        found = plans.list_invariants(workspace(app_ctx), scope, ref, effective=effective)
        columns = [ColumnDef("id", "ID"), ColumnDef("scope", "Scope"), ColumnDef("text", "Invariant")]
        title = "Effective invariants" if effective else "Invariants"
        out.table(f"{title} ({len(found)})", columns, rows=[i.as_dict() for i in found], key="invariants")


@app.command("remove")
def remove(ctx: typer.Context, invariant: Annotated[str, typer.Argument(help="Invariant ULID or IRI.")]) -> None:
    """Retire an invariant (new plans no longer see it; history keeps it)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("invariant remove") as out, reporting_violations(out, app_ctx):
        inv = plans.remove_invariant(workspace(app_ctx), invariant, agent=agent_name(app_ctx))
        out.data("invariant", inv.as_dict(), hidden=True)
        out.status(f"Invariant {inv.id} removed", "ok")
