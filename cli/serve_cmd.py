"""``agents serve``: the server mode. A2A (agent card, message send and stream, tasks,
the ``_cleveragents/*`` methods) and MCP over one HTTP port."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.services import serving

from .invocation import get_context


def serve_command(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option("--host", help="Bind address. Default: config server.host (127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port. Default: config server.port.")] = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Limit symbol search and context to this project's resources.")
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option("--read-only/--read-write", help="Read-only (default) refuses SPARQL updates."),
    ] = True,
) -> None:
    """Serve A2A at /a2a (agent card at /.well-known/agent-card.json) and MCP at /mcp.

    A bearer token (config server.token or $CLEVERAGENTS_SERVER_TOKEN) is required when
    binding beyond 127.0.0.1, and checked whenever one is set. Tasks are kept in the graph."""
    app_ctx = get_context(ctx)
    config = app_ctx.config
    settings = serving.server_settings(config, host=host, port=port, read_only=read_only)
    ops = serving.workspace_operations(app_ctx.data_dir, config, project=project, read_only=read_only)
    mode = "read-only" if read_only else "read-write"
    base = f"http://{settings.host}:{settings.port}"
    typer.echo(f"CleverAgents server ({mode}): A2A {base}/a2a, MCP {base}/mcp", err=True)
    serving.serve_all(ops, settings)
