"""``agents lsp add | list | show | remove | install``: the LSP Registry; ``agents lsp call |
tools``: LSP capabilities as tools (rendered by ``lsp_tools_view``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cleveragents.errors import LSPUnavailable, UsageError
from cleveragents.output import ColumnDef, OutputSession

from .graph_cmd import agent_name, use_format, workspace
from .invocation import AppContext, get_context
from .lsp_tools_view import call_arguments, render_call, render_tools
from .rendering import is_structured, listed, record, render_commit, render_retraction

if TYPE_CHECKING:
    from types import ModuleType

    from cleveragents.lsp.registry import LSPServerEntry


def _registry() -> ModuleType:
    """The LSP registry service, imported on first use: with the server definitions and
    pydantic behind it, every other command would pay ~70 ms for it at start-up."""
    from cleveragents.services import lsp_registry

    return lsp_registry


app = typer.Typer(
    help="Register, list, show, remove and install language servers; call their capabilities as tools.",
    no_args_is_help=True,
)

COLUMNS = [
    ColumnDef("name", "Name"),
    ColumnDef("languages", "Languages"),
    ColumnDef("command", "Command"),
    ColumnDef("transport", "Transport"),
    ColumnDef("source", "Source"),
    ColumnDef("available", "Available"),
]


def availability(entry: LSPServerEntry) -> str:
    """``yes``, or why the server cannot be started here."""
    return entry.availability() or "yes"


def command_line(entry: LSPServerEntry) -> str:
    return " ".join([entry.command, *entry.args]) if entry.command else f"(connect to {entry.host}:{entry.port})"


LABELS = {
    "name": "Name",
    "description": "Description",
    "command": "Command",
    "args": "Args",
    "transport": "Transport",
    "host": "Host",
    "port": "Port",
    "languages": "Languages",
    "capabilities": "Capabilities",
    "initialization": "Initialization",
    "workspace_settings": "Workspace settings",
    "file_extensions": "File extensions",
    "source": "Source",
    "iri": "IRI",
    "requires": "Requires",
    "npm_packages": "npm packages",
    "available": "Available",
    "resolved_command": "Resolved command",
}
# What an omitted optional field means, on screen.
DEFAULTS = {
    "capabilities": "discovered from the server's initialize reply",
    "file_extensions": "by language",
    "initialization": "none",
    "workspace_settings": "none",
}


def _human(name: str, value: Any) -> Any:
    if value is None or value == {}:
        return DEFAULTS.get(name)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, list):
        return listed(value, False, empty="none")
    return value


def _show(out: OutputSession, app_ctx: AppContext, entry: LSPServerEntry) -> None:
    """Every field: the entry's (as_dict), what a built-in needs, and whether it runs here."""
    try:
        resolved: list[str] | None = entry.resolve_command()
    except LSPUnavailable:
        resolved = None
    from cleveragents.lsp.builtins import BuiltinLSPServer

    builtin = isinstance(entry, BuiltinLSPServer)
    values: dict[str, Any] = {
        **entry.as_dict(),
        "requires": list(entry.requires) if builtin else [],
        "npm_packages": list(entry.npm_packages) if builtin else [],
        "available": availability(entry),
        "resolved_command": resolved,
    }
    if is_structured(app_ctx):
        fields = [(name, LABELS[name], value) for name, value in values.items()]
    else:
        shown = ((name, _human(name, value)) for name, value in values.items())
        fields = [(name, LABELS[name], value) for name, value in shown if value not in (None, "")]
    record(out, app_ctx, f"LSP server {entry.name}", "lsp_server", fields)


@app.command("add")
def add(
    ctx: typer.Context,
    config: Annotated[Path, typer.Option("--config", "-c", help="LSP configuration file (YAML).")],
) -> None:
    """Register a language server from a YAML configuration file."""
    app_ctx = get_context(ctx)
    with app_ctx.session("lsp add") as out:
        entry, result = _registry().add(workspace(app_ctx), config, agent=agent_name(app_ctx))
        _show(out, app_ctx, entry)
        render_commit(out, result, f"lsp add {entry.name}")


@app.command("list")
def list_servers(ctx: typer.Context) -> None:
    """Every language server: built-ins and registered ones, with whether each can run here."""
    app_ctx = get_context(ctx)
    with app_ctx.session("lsp list") as out:
        entries = _registry().list_entries(workspace(app_ctx))
        structured = is_structured(app_ctx)
        rows = [
            {
                "name": entry.name,
                "languages": listed(entry.languages, structured),
                "command": command_line(entry),
                "transport": entry.transport,
                "source": entry.source,
                "available": availability(entry),
            }
            for entry in entries
        ]
        out.table(f"LSP servers ({len(rows)})", COLUMNS, rows=rows, key="lsp_servers")


@app.command("show")
def show(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="Name (ULID or IRI for registered ones).")]
) -> None:
    """One language server's fields."""
    app_ctx = get_context(ctx)
    with app_ctx.session("lsp show") as out:
        _show(out, app_ctx, _registry().get(workspace(app_ctx), name))


@app.command("remove")
def remove(ctx: typer.Context, name: Annotated[str, typer.Argument(help="Name, ULID or IRI.")]) -> None:
    """Retract a registered language server (history keeps it); built-ins stay."""
    app_ctx = get_context(ctx)
    with app_ctx.session("lsp remove") as out:
        entry, result = _registry().remove(workspace(app_ctx), name, agent=agent_name(app_ctx))
        render_retraction(out, result, entry, key="lsp_server", command="lsp remove", done="Removed LSP server")


@app.command("install")
def install(ctx: typer.Context, name: Annotated[str, typer.Argument(help="A built-in server's name.")]) -> None:
    """Install a built-in language server (npm packages go into the tools dir)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("lsp install") as out:
        result = _registry().install(workspace(app_ctx), name)
        structured = is_structured(app_ctx)
        fields = [
            ("name", "Name", result.name),
            ("method", "Method", result.method),
            ("command", "Command", result.command),
            ("version", "Version", result.version),
            ("tools_dir", "Tools dir", result.tools_dir),
            ("packages", "Packages", listed(result.packages, structured)),
        ]
        if not structured:  # a Python dependency has no tools dir or packages
            fields = [field for field in fields if field[2]]
        record(out, app_ctx, f"Installed {result.name}", "install", fields)
        out.status(f"{result.name} {result.version} is ready", "ok")


# --- LSP capabilities as tools: `agents lsp call` and `agents lsp tools` ---------------------
# The services are imported inside the commands: lsprotocol takes half a second to import,
# and every other command would pay for it.

ToolFormat = Annotated[
    str | None,
    typer.Option("--format", help="Output format (rich, plain, json, yaml, ...); overrides the global --format."),
]


def _use_format(app_ctx: AppContext, requested: str | None) -> None:
    if use_format(app_ctx, requested):
        raise UsageError("--format turtle is for RDF; choose an output format such as json or plain")


@app.command("call")
def call(
    ctx: typer.Context,
    tool: Annotated[str, typer.Argument(help="Tool name, e.g. lsp/definition (see `agents lsp tools`).")],
    file: Annotated[str | None, typer.Option("--file", help="The file (its language picks the server).")] = None,
    line: Annotated[int | None, typer.Option("--line", help="Line, 1-based.")] = None,
    column: Annotated[int | None, typer.Option("--col", "--column", help="Column, 1-based, in characters.")] = None,
    query: Annotated[str | None, typer.Option("--query", help="Search text (lsp/workspace-symbols).")] = None,
    new_name: Annotated[str | None, typer.Option("--new-name", help="New name (lsp/rename).")] = None,
    args_json: Annotated[
        str | None, typer.Option("--args", help="Any of the tool's arguments as a JSON object; options win.")
    ] = None,
    output_format: ToolFormat = None,
) -> None:
    """Run an LSP tool on a file with the language server registered for its language.
    Edits (rename, format, code actions) are shown, never applied."""
    from cleveragents.lsp.runtime import close_shared_runtime
    from cleveragents.services import lsp_tools

    app_ctx = get_context(ctx)
    _use_format(app_ctx, output_format)
    with app_ctx.session("lsp call") as out:
        arguments = call_arguments(args_json, file=file, line=line, column=column, query=query, new_name=new_name)
        try:
            result = lsp_tools.call_tool(
                workspace(app_ctx), tool, arguments, request_timeout=float(app_ctx.config.value("lsp.request_timeout"))
            )
        finally:
            close_shared_runtime()  # no server outlives the command
        render_call(out, app_ctx, result)


@app.command("tools")
def tools(
    ctx: typer.Context,
    file: Annotated[
        Path | None, typer.Option("--file", help="Only the tools the server for this file offers (starts it).")
    ] = None,
    output_format: ToolFormat = None,
) -> None:
    """The LSP tools: name, capability, LSP method, description (json: input schemas)."""
    from cleveragents.lsp.runtime import close_shared_runtime
    from cleveragents.services import lsp_tools

    app_ctx = get_context(ctx)
    _use_format(app_ctx, output_format)
    with app_ctx.session("lsp tools") as out:
        try:
            listing = lsp_tools.list_tools(
                workspace(app_ctx), file, request_timeout=float(app_ctx.config.value("lsp.request_timeout"))
            )
        finally:
            close_shared_runtime()
        render_tools(out, app_ctx, listing)
