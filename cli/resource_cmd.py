"""``agents resource add | list | show | remove``: resources as graph data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import indexing, resources
from cleveragents.services.resources import ResourceInfo

from .graph_cmd import agent_name, workspace
from .index_cmd import progress_reporter, render_summary
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, render_commit, render_retraction, reporting_violations

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
            ("projects", "Projects", listed(info.projects, is_structured(app_ctx), empty="none")),
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
    index: Annotated[bool, typer.Option("--index/--no-index", help="Index the resource's files right away.")] = True,
) -> None:
    """Register a directory or git checkout as a resource, and index it."""
    app_ctx = get_context(ctx)
    with app_ctx.session("resource add") as out, reporting_violations(out, app_ctx):
        ws = workspace(app_ctx)
        info, result = resources.add(ws, path, type_name=type_name, name=name, agent=agent_name(app_ctx))
        _show(out, app_ctx, info)
        render_commit(out, result, f"resource add {info.name}")
        if index:
            summary = indexing.index(
                ws,
                [info],
                agent=agent_name(app_ctx),
                analyzers=indexing.analyzer_set(str(app_ctx.config.value("analyzers.path"))),
                options=indexing.options_from(app_ctx.config),
                progress=progress_reporter(out),
            )[0]
            render_summary(out, app_ctx, summary)
            if is_structured(app_ctx):
                out.data("index", summary.as_dict())


@app.command("list")
def list_resources(ctx: typer.Context) -> None:
    """Every current resource."""
    app_ctx = get_context(ctx)
    with app_ctx.session("resource list") as out:
        items = resources.list_all(workspace(app_ctx))
        structured = is_structured(app_ctx)
        rows = [{**r.as_dict(), "projects": listed(r.projects, structured)} for r in items]
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
        render_retraction(out, result, info, key="resource", command="resource remove", done="Removed resource")
