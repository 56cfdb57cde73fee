"""``agents action create | list | show | available | archive``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cleveragents.output import ColumnDef, OutputSession
from cleveragents.plans.actions import ActionDefinition
from cleveragents.plans.arguments import spec_from_cli
from cleveragents.services import plans

from .graph_cmd import agent_name, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, reporting_violations

app = typer.Typer(help="Reusable plan templates (actions).", no_args_is_help=True)

ActionRef = Annotated[str, typer.Argument(help="Action name, ULID or IRI.")]


def _show(out: OutputSession, app_ctx: AppContext, action: ActionDefinition) -> None:
    structured = is_structured(app_ctx)
    args = [
        f"{a.name}: {a.expected()}{' (required)' if a.required else ''}"
        + (f" - {a.description}" if a.description else "")
        for a in action.arguments
    ]
    data = action.as_dict()
    record(
        out,
        app_ctx,
        f"Action {action.name}",
        "action",
        [
            *(
                (k, k.replace("_", " ").capitalize(), v)
                for k, v in data.items()
                if k not in {"arguments", "invariants", "tags"}
            ),
            ("arguments", "Arguments", data["arguments"] if structured else listed(args, False, empty="none")),
            ("invariants", "Invariants", listed(action.invariants, structured, empty="none")),
            ("tags", "Tags", listed(action.tags, structured, empty="none")),
        ],
    )


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Namespaced action name (overrides the YAML's name).")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML file that defines the action.")] = None,
    strategy_actor: Annotated[str | None, typer.Option("--strategy-actor", "-s")] = None,
    execution_actor: Annotated[str | None, typer.Option("--execution-actor", "-e")] = None,
    definition_of_done: Annotated[str | None, typer.Option("--definition-of-done", "-d")] = None,
    description: Annotated[str | None, typer.Option("--description")] = None,
    long_description: Annotated[str | None, typer.Option("--long-description")] = None,
    arg: Annotated[list[str] | None, typer.Option("--arg", "-a", help="name:type[:required[:description]]")] = None,
    reusable: Annotated[bool | None, typer.Option("--reusable/--no-reusable")] = None,
    read_only: Annotated[bool | None, typer.Option("--read-only/--no-read-only")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t")] = None,
    available: Annotated[bool | None, typer.Option("--available/--draft", help="State after creation.")] = None,
    estimation_actor: Annotated[str | None, typer.Option("--estimation-actor")] = None,
    invariant_actor: Annotated[str | None, typer.Option("--invariant-actor")] = None,
    invariant: Annotated[list[str] | None, typer.Option("--invariant", help="Action invariant (repeatable).")] = None,
    automation_level: Annotated[str | None, typer.Option("--automation-level", help="manual, review or auto")] = None,
) -> None:
    """Create an action from --config (flags override the YAML's values)."""
    app_ctx = get_context(ctx)
    overrides = {
        "name": name,
        "strategy_actor": strategy_actor,
        "execution_actor": execution_actor,
        "definition_of_done": definition_of_done,
        "description": description,
        "long_description": long_description,
        "args": [spec_from_cli(a) for a in arg] if arg else None,
        "reusable": reusable,
        "read_only": read_only,
        "tags": tag,
        "state": None if available is None else ("available" if available else "draft"),
        "estimation_actor": estimation_actor,
        "invariant_actor": invariant_actor,
        "invariants": invariant,
        "automation_level": automation_level,
    }
    with app_ctx.session("action create") as out, reporting_violations(out, app_ctx):
        action = plans.create_action(workspace(app_ctx), config, overrides, agent=agent_name(app_ctx))
        out.status(f"Action created: {action.name} ({action.state})", "ok")
        _show(out, app_ctx, action)


@app.command("list")
def list_actions(
    ctx: typer.Context,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n")] = None,
    state: Annotated[str | None, typer.Option("--state", "-s", help="draft, available or archived")] = None,
    available: Annotated[bool, typer.Option("--available", help="Only available actions.")] = False,
) -> None:
    """Actions, by name."""
    app_ctx = get_context(ctx)
    with app_ctx.session("action list") as out:
        found = plans.list_actions(workspace(app_ctx), namespace=namespace, state="available" if available else state)
        rows = [a.as_dict() for a in found]
        columns = [
            ColumnDef("name", "Name"),
            ColumnDef("state", "State"),
            ColumnDef("strategy_actor", "Strategy Actor"),
            ColumnDef("execution_actor", "Execution Actor"),
            ColumnDef("id", "ID"),
        ]
        out.table(f"Actions ({len(rows)})", columns, rows=rows, key="actions")


@app.command("show")
def show(ctx: typer.Context, action: ActionRef) -> None:
    """One action with its arguments and invariants."""
    app_ctx = get_context(ctx)
    with app_ctx.session("action show") as out:
        _show(out, app_ctx, plans.show_action(workspace(app_ctx), action))


def _set_state(ctx: typer.Context, action: str, state: str) -> None:
    app_ctx = get_context(ctx)
    with app_ctx.session(f"action {state}") as out, reporting_violations(out, app_ctx):
        found = plans.set_action_state(workspace(app_ctx), action, state, agent=agent_name(app_ctx))
        out.data("action", found.as_dict(), hidden=True)
        out.status(f"Action {found.name} is {state}", "ok")


@app.command("available")
def make_available(ctx: typer.Context, action: ActionRef) -> None:
    """Mark a draft (or archived) action as available."""
    _set_state(ctx, action, "available")


@app.command("archive")
def archive(ctx: typer.Context, action: ActionRef) -> None:
    """Archive an action (it can no longer be used; history keeps it)."""
    _set_state(ctx, action, "archived")
