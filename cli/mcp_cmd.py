"""``agents mcp serve``: the MCP server over stdio (for a coding agent that launches it)
or streamable HTTP on 127.0.0.1."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.services import serving

from .invocation import get_context

app = typer.Typer(help="Serve the graph to MCP clients (Claude Code, Cursor, any MCP client).", no_args_is_help=True)


@app.command("serve")
def serve(
    ctx: typer.Context,
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio (the client launches this command) or http.")
    ] = "stdio",
    host: Annotated[
        str | None, typer.Option("--host", help="HTTP bind address. Default: config server.host (127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="HTTP port. Default: config server.port.")] = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Limit symbol search and context to this project's resources.")
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only/--read-write",
            help="Read-only (default) refuses SPARQL updates and records no context assemblies.",
        ),
    ] = True,
) -> None:
    """Run the MCP server until the client disconnects (stdio) or Ctrl+C (http).

    Over HTTP a bearer token (config server.token or $CLEVERAGENTS_SERVER_TOKEN) is
    required when binding beyond 127.0.0.1, and checked whenever one is set."""
    app_ctx = get_context(ctx)
    if transport not in ("stdio", "http"):
        from cleveragents.errors import UsageError

        raise UsageError(f"unknown --transport '{transport}'; choose stdio or http")
    config = app_ctx.config
    settings = serving.server_settings(config, host=host, port=port, read_only=read_only)
    ops = serving.workspace_operations(app_ctx.data_dir, config, project=project, read_only=read_only)
    if transport == "http":
        mode = "read-only" if read_only else "read-write"
        typer.echo(f"MCP server ({mode}) on http://{settings.host}:{settings.port}/mcp", err=True)
    serving.serve_mcp(ops, settings, transport=transport)
