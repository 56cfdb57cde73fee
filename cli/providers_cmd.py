"""``agents providers list``: every model provider, configured or what it is missing."""

from __future__ import annotations

import typer

from cleveragents.output import ColumnDef
from cleveragents.services import providers

from .invocation import get_context

app = typer.Typer(help="Model providers (LangChain chat models) and their configuration.", no_args_is_help=True)


@app.command("list")
def list_providers(ctx: typer.Context) -> None:
    """Each provider: installed, configured (its key set), its endpoint, or what is missing."""
    app_ctx = get_context(ctx)
    with app_ctx.session("providers list") as out:
        rows = [
            {**p.as_dict(), "state": "configured" if p.configured else "unavailable" if not p.available else "missing"}
            for p in providers.list_providers(app_ctx.config)
        ]
        columns = [
            ColumnDef("name", "Provider"),
            ColumnDef("state", "State"),
            ColumnDef("key_env", "Key variable"),
            ColumnDef("base_url", "Endpoint"),
            ColumnDef("problem", "Missing"),
            ColumnDef("description", "Description"),
            ColumnDef("available", hidden=True),
            ColumnDef("configured", hidden=True),
        ]
        out.table(f"Providers ({len(rows)})", columns, rows=rows, key="providers")
