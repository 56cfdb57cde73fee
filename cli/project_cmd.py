"""``agents project create | link-resource | unlink-resource | list | show | delete``."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import projects
from cleveragents.services.projects import ProjectInfo

from . import sandbox_cmd
from .graph_cmd import agent_name, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, render_commit, render_retraction, reporting_violations

app = typer.Typer(help="Create projects and link resources to them.", no_args_is_help=True)

ProjectRef = Annotated[str, typer.Argument(help="Project name, ULID or IRI.")]
ResourceRef = Annotated[str, typer.Argument(help="Resource name, ULID or IRI.")]


def _project_id(iri: str) -> str:
    """The ULID that ends a project IRI, shown as the project's ID."""
    return iri.rsplit("/", 1)[-1]


def _show(out: OutputSession, app_ctx: AppContext, info: ProjectInfo) -> None:
    record(
        out,
        app_ctx,
        f"Project {info.name}",
        "project",
        [
            ("name", "Name", info.name),
            ("id", "ID", _project_id(info.iri)),
            ("description", "Description", info.description),
            ("created", "Created", info.created),
            ("resources", "Resources", listed(info.resources, is_structured(app_ctx), empty="none")),
            ("iri", "IRI", info.iri),
        ],
    )


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Project name, e.g. local/api-service (a bare name gets local/).")],
    description: Annotated[str | None, typer.Option("--description", "-d", help="Optional description.")] = None,
) -> None:
    """Create a project."""
    app_ctx = get_context(ctx)
    with app_ctx.session("project create") as out, reporting_violations(out, app_ctx):
        info, result = projects.create(workspace(app_ctx), name, description=description, agent=agent_name(app_ctx))
        _show(out, app_ctx, info)
        render_commit(out, result, f"project create {info.name}")


def _link(ctx: typer.Context, project: str, resource: str, *, unlink: bool) -> None:
    app_ctx = get_context(ctx)
    verb = "unlink-resource" if unlink else "link-resource"
    with app_ctx.session(f"project {verb}") as out, reporting_violations(out, app_ctx):
        info, result = projects.link(workspace(app_ctx), project, resource, unlink=unlink, agent=agent_name(app_ctx))
        _show(out, app_ctx, info)
        render_commit(out, result, f"project {verb}")


@app.command("link-resource")
def link_resource(ctx: typer.Context, project: ProjectRef, resource: ResourceRef) -> None:
    """Link a registered resource to a project."""
    _link(ctx, project, resource, unlink=False)


@app.command("unlink-resource")
def unlink_resource(ctx: typer.Context, project: ProjectRef, resource: ResourceRef) -> None:
    """Unlink a resource from a project (the resource stays registered)."""
    _link(ctx, project, resource, unlink=True)


@app.command("list")
def list_projects(ctx: typer.Context) -> None:
    """Every current project."""
    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    with app_ctx.session("project list") as out:
        rows = [
            {
                **p.as_dict(),
                "id": _project_id(p.iri),
                "resource_count": len(p.resources),
                "resources": listed(p.resources, structured),
            }
            for p in projects.list_all(workspace(app_ctx))
        ]
        columns = [
            ColumnDef("name", "Name"),
            ColumnDef("resource_count", "Count", alignment="right"),
            ColumnDef("resources", "Resources"),
            ColumnDef("description", "Description"),
            ColumnDef("id", "ID"),
            ColumnDef("created", hidden=True),
            ColumnDef("iri", hidden=True),
        ]
        out.table(f"Projects ({len(rows)})", columns, rows=rows, key="projects")


@app.command("show")
def show(ctx: typer.Context, project: ProjectRef) -> None:
    """One project's details and linked resources."""
    app_ctx = get_context(ctx)
    with app_ctx.session("project show") as out:
        _show(out, app_ctx, projects.show(workspace(app_ctx), project))


@app.command("delete")
def delete(ctx: typer.Context, project: ProjectRef) -> None:
    """Retract a project and its links (its resources stay; history keeps the project)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("project delete") as out, reporting_violations(out, app_ctx):
        info, result = projects.delete(workspace(app_ctx), project, agent=agent_name(app_ctx))
        render_retraction(out, result, info, key="project", command="project delete", done="Deleted project")


# The sandbox's project verbs (set-validation) are defined beside the other sandbox verbs.
sandbox_cmd.register_project_commands(app)
