"""``agents tool add|list|show|remove`` and ``agents validation add|list|show|remove``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import tool_registry
from cleveragents.services.tool_registry import ToolInfo

from .graph_cmd import agent_name, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, record, render_commit, render_retraction, reporting_violations

app = typer.Typer(help="The tool registry: YAML tools, wrapped tools and MCP servers' tools.", no_args_is_help=True)
validation_app = typer.Typer(help="Validations: read-only tools that check work.", no_args_is_help=True)

ToolRef = Annotated[str, typer.Argument(help="Tool name (namespace/name), ULID or IRI.")]


def _show(out: OutputSession, app_ctx: AppContext, info: ToolInfo) -> None:
    structured = is_structured(app_ctx)
    record(out, app_ctx, f"{info.kind.capitalize()} {info.name}", info.kind, [
        ("name", "Name", info.name),
        ("kind", "Kind", info.kind),
        ("description", "Description", info.description),
        ("source", "Source", info.source),
        ("read_only", "Read-only", info.read_only if structured else ("yes" if info.read_only else "no")),
        ("checkpointable", "Checkpointable", info.checkpointable if structured else
         ("yes" if info.checkpointable else "no")),
        ("wraps", "Wraps", info.wraps),
        ("mode", "Mode", info.mode),
        ("definition", "Definition", info.definition),
        ("iri", "IRI", info.iri),
    ])


def _table(out: OutputSession, app_ctx: AppContext, infos: list[ToolInfo], title: str, key: str) -> None:
    structured = is_structured(app_ctx)
    rows = []
    for info in infos:
        row = info.as_dict()
        if not structured:
            row |= {"read_only": "yes" if info.read_only else "no"}
        rows.append(row)
    columns = [ColumnDef("name", "Name"), ColumnDef("kind", "Kind"), ColumnDef("source", "Source"),
               ColumnDef("read_only", "Read-only"), ColumnDef("wraps", "Wraps"), ColumnDef("mode", "Mode"),
               ColumnDef("description", "Description"), ColumnDef("checkpointable", hidden=True),
               ColumnDef("definition", hidden=True), ColumnDef("iri", hidden=True)]
    out.table(f"{title} ({len(rows)})", columns, rows=rows, key=key)


@app.command("add")
def add(
    ctx: typer.Context,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="Tool YAML (tool: ...).")] = None,
    mcp: Annotated[str | None, typer.Option("--mcp", help="An MCP server: a command (stdio) or an http(s) URL; "
                                            "every tool it lists is registered.")] = None,
    namespace: Annotated[str, typer.Option("--namespace", help="Namespace of the MCP server's tools.")] = "local",
    update: Annotated[bool, typer.Option("--update", help="Replace a registered tool of the same name.")] = False,
) -> None:
    """Register a tool from its YAML, or every tool of an MCP server."""
    if (config is None) == (mcp is None):
        raise UsageError("give --config FILE or --mcp 'COMMAND' (one of them)")
    app_ctx = get_context(ctx)
    with app_ctx.session("tool add") as out, reporting_violations(out, app_ctx):
        ws = workspace(app_ctx)
        if config is not None:
            infos, result = tool_registry.add_config(ws, config, update=update, agent=agent_name(app_ctx))
        else:
            infos, result = tool_registry.add_mcp(ws, str(mcp), namespace=namespace, update=update,
                                                  agent=agent_name(app_ctx))
        _table(out, app_ctx, infos, "Registered", "tools")
        render_commit(out, result, "tool add")


@app.command("list")
def list_tools(
    ctx: typer.Context,
    kind: Annotated[str | None, typer.Option("--type", help="tool or validation.")] = None,
) -> None:
    """Every registered tool (and validation)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("tool list") as out:
        _table(out, app_ctx, tool_registry.list_all(workspace(app_ctx), kind), "Tools", "tools")


@app.command("show")
def show(ctx: typer.Context, name: ToolRef) -> None:
    """One tool: schema, capability, source."""
    app_ctx = get_context(ctx)
    with app_ctx.session("tool show") as out:
        _show(out, app_ctx, tool_registry.show(workspace(app_ctx), name))


@app.command("remove")
def remove(ctx: typer.Context, name: ToolRef) -> None:
    """Retract a tool (refused while a validation or tool wraps it)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("tool remove") as out, reporting_violations(out, app_ctx):
        info, result = tool_registry.remove(workspace(app_ctx), name, agent=agent_name(app_ctx))
        render_retraction(out, result, info, key="tool", command="tool remove", done="Tool removed:")


@validation_app.command("add")
def validation_add(
    ctx: typer.Context,
    config: Annotated[Path, typer.Option("--config", "-c", help="Validation YAML (validation: ...).")],
    update: Annotated[bool, typer.Option("--update", help="Replace a registered one of the same name.")] = False,
) -> None:
    """Register a validation (it must wrap a read-only tool)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("validation add") as out, reporting_violations(out, app_ctx):
        infos, result = tool_registry.add_config(workspace(app_ctx), config, update=update, agent=agent_name(app_ctx))
        if infos[0].kind != "validation":
            raise UsageError(f"{config} defines a tool, not a validation: use `agents tool add`")
        _show(out, app_ctx, infos[0])
        render_commit(out, result, "validation add")


@validation_app.command("list")
def validation_list(ctx: typer.Context) -> None:
    """Every registered validation."""
    app_ctx = get_context(ctx)
    with app_ctx.session("validation list") as out:
        _table(out, app_ctx, tool_registry.list_all(workspace(app_ctx), "validation"), "Validations", "validations")


validation_app.command("show", help="One validation.")(show)
validation_app.command("remove", help="Retract a validation.")(remove)
