"""``agents resource add | list | show | remove``: resources as graph data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import resources
from cleveragents.services.resources import ResourceInfo

from .context import AppContext, get_context
from .graph_cmd import agent_name, is_structured, record, render_commit, reporting_violations, workspace

app = typer.Typer(help="Register, list, show and remove resources.", no_args_is_help=True)

COLUMNS = [
    ColumnDef("name", "Name"),
    ColumnDef("type", "Type"),
    ColumnDef("location", "Location"),
    ColumnDef("projects", "Projects"),
    ColumnDef("ulid", "ID"),
    ColumnDef("iri", hidden=True),
    ColumnDef("content_hash", hidden=True),
    ColumnDef("created", hidden=True),
]


def _show(out: OutputSession, app_ctx: AppContext, info: ResourceInfo) -> None:
    record(
        out,
        app_ctx,
        f"Resource {info.name}",
        "resource",
        [
            ("name", "Name", info.name),
            ("ulid", "ID", info.ulid),
            ("type", "Type", info.type),
            ("location", "Location", info.location),
            ("content_hash", "Content hash", info.content_hash),
            ("created", "Created", info.created),
            (
                "projects",
                "Projects",
                list(info.projects) if is_structured(app_ctx) else ", ".join(info.projects) or "none",
            ),
            ("iri", "IRI", info.iri),
        ],
    )


@app.command("add")
def add(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="Directory to register.")],
    type_name: Annotated[str, typer.Option("--type", "-t", help="fs-directory or git-checkout.")],
    name: Annotated[
        str | None, typer.Option("--name", "-n", help="Name, e.g. local/api-repo (default: from the directory).")
    ] = None,
) -> None:
    """Register a directory or git checkout as a resource."""
    app_ctx = get_context(ctx)
    with app_ctx.session("resource add") as out, reporting_violations(out, app_ctx):
        info, result = resources.add(
            workspace(app_ctx), path, type_name=type_name, name=name, agent=agent_name(app_ctx)
        )
        _show(out, app_ctx, info)
        render_commit(out, result, f"resource add {info.name}")


@app.command("list")
def list_resources(ctx: typer.Context) -> None:
    """Every current resource."""
    app_ctx = get_context(ctx)
    with app_ctx.session("resource list") as out:
        items = resources.list_all(workspace(app_ctx))
        structured = is_structured(app_ctx)
        rows = [{**r.as_dict(), "projects": list(r.projects) if structured else ", ".join(r.projects)} for r in items]
        out.table(f"Resources ({len(rows)})", COLUMNS, rows=rows, key="resources")


@app.command("show")
def show(ctx: typer.Context, ref: Annotated[str, typer.Argument(help="Name, ULID or IRI.")]) -> None:
    """One resource's details."""
    app_ctx = get_context(ctx)
    with app_ctx.session("resource show") as out:
        _show(out, app_ctx, resources.show(workspace(app_ctx), ref))


@app.command("remove")
def remove(ctx: typer.Context, ref: Annotated[str, typer.Argument(help="Name, ULID or IRI.")]) -> None:
    """Retract a resource and its project links (history keeps them)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("resource remove") as out, reporting_violations(out, app_ctx):
        info, result = resources.remove(workspace(app_ctx), ref, agent=agent_name(app_ctx))
        out.data("resource", info.as_dict(), hidden=True)
        render_commit(out, result, f"resource remove {info.name}")
        out.status(f"Removed resource {info.name}", "ok")
