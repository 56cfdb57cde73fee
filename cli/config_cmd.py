"""``agents config get | set | list``."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.config import ConfigValue, Source
from cleveragents.output import ColumnDef
from cleveragents.output.human import cell_text

from .invocation import get_context

app = typer.Typer(
    help="Read and write configuration (global, or per project with --project).",
    no_args_is_help=True,
)


def _where(item: ConfigValue) -> str:
    return f"{item.source.value} {item.origin}" if item.origin else item.source.value


@app.command("get")
def get_value(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. query.timeout.")],
) -> None:
    """Show a key's effective value and where it came from."""
    app_ctx = get_context(ctx)
    with app_ctx.session("config get") as out:
        item = app_ctx.config.get(key)
        line = f"{key} {cell_text(item.value)} (source: {_where(item)})"
        out.data("config", item.to_dict(), display=line)


@app.command("set")
def set_value(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. query.timeout.")],
    value: Annotated[str, typer.Argument(help="New value; parsed by the key's type.")],
    project: Annotated[
        bool,
        typer.Option(
            "--project",
            help="Write the project config (.cleveragents/config.toml here or in the "
            "nearest ancestor) instead of the global one.",
        ),
    ] = False,
) -> None:
    """Validate and store a value in the global (default) or project config file."""
    app_ctx = get_context(ctx)
    with app_ctx.session("config set") as out:
        scope = "project" if project else "global"
        stored = app_ctx.config.set(key, value, scope)
        out.data(
            "config",
            {"key": key, "value": stored.to_dict()["value"], "scope": scope, "file": stored.origin},
            hidden=True,
        )
        out.status(f"{key} set to {cell_text(stored.value)} in {scope} config {stored.origin}", "ok")
        effective = app_ctx.config.get(key)
        if effective.source in (Source.FLAG, Source.ENV) or (effective.source is Source.PROJECT and scope == "global"):
            out.status(f"{key} is currently overridden by {_where(effective)}", "warn")


@app.command("list")
def list_values(ctx: typer.Context) -> None:
    """List every known key with its effective value and source."""
    app_ctx = get_context(ctx)
    with app_ctx.session("config list") as out:
        columns = [
            ColumnDef("key", "Key"),
            ColumnDef("value", "Value"),
            ColumnDef("source", "Source"),
            ColumnDef("origin", hidden=True),
            ColumnDef("type", hidden=True),
            ColumnDef("env_var", hidden=True),
            ColumnDef("description", hidden=True),
        ]
        rows = [item.to_dict() for item in app_ctx.config.list()]
        out.table("Config", columns, rows=rows, key="config")
