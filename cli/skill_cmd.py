"""``agents skill add|list|show|tools|remove``: the skill registry.

The registry loads the Agent Skills support (and with it the actor runtime's types), so it
is imported when a skill command runs, not at every command's start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef, OutputSession

from .graph_cmd import agent_name, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, render_commit, render_retraction, reporting_violations

app = typer.Typer(help="Skills: collections of tools, and Agent Skill (SKILL.md) folders.", no_args_is_help=True)

SkillRef = Annotated[str, typer.Argument(help="Skill name (namespace/name), ULID or IRI.")]


def _show(out: OutputSession, app_ctx: AppContext, info: Any) -> None:
    structured = is_structured(app_ctx)
    record(out, app_ctx, f"Skill {info.name}", "skill", [
        ("name", "Name", info.name),
        ("description", "Description", info.description),
        ("tools", "Tools", listed(info.tools, structured, empty="none")),
        ("includes", "Includes", listed(info.includes, structured, empty="none")),
        ("definition", "Definition", info.definition),
        ("created", "Created", info.created),
        ("iri", "IRI", info.iri),
    ])


@app.command("add")
def add(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="An Agent Skill folder (with SKILL.md).")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="A skill YAML file (skill: ...).")] = None,
    namespace: Annotated[str, typer.Option("--namespace", help="Namespace of a folder's skill.")] = "local",
    update: Annotated[bool, typer.Option("--update", help="Replace a registered skill of that name.")] = False,
) -> None:
    """Register a skill: an Agent Skill folder, or a skill YAML naming tools, skills and folders."""
    from cleveragents.services import skill_registry

    if (path is None) == (config is None):
        raise UsageError("give an Agent Skill folder (PATH) or --config SKILL.yaml")
    source = path if path is not None else config
    assert source is not None
    app_ctx = get_context(ctx)
    with app_ctx.session("skill add") as out, reporting_violations(out, app_ctx):
        info, result = skill_registry.add(workspace(app_ctx), source, namespace=namespace, update=update,
                                          agent=agent_name(app_ctx))
        _show(out, app_ctx, info)
        render_commit(out, result, f"skill add {info.name}")
        out.status(f"Skill added: {info.name}", "ok")


@app.command("list")
def list_skills(ctx: typer.Context) -> None:
    """Every registered skill."""
    from cleveragents.services import skill_registry

    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    with app_ctx.session("skill list") as out:
        rows = []
        for info in skill_registry.list_all(workspace(app_ctx)):
            row = info.as_dict()
            if not structured:
                row |= {"tools": listed(info.tools, False), "includes": listed(info.includes, False)}
            rows.append(row)
        columns = [ColumnDef("name", "Name"), ColumnDef("tools", "Tools"), ColumnDef("includes", "Includes"),
                   ColumnDef("description", "Description"), ColumnDef("definition", hidden=True),
                   ColumnDef("created", hidden=True), ColumnDef("iri", hidden=True)]
        out.table(f"Skills ({len(rows)})", columns, rows=rows, key="skills")


@app.command("show")
def show(ctx: typer.Context, name: SkillRef) -> None:
    """One skill's details."""
    from cleveragents.services import skill_registry

    app_ctx = get_context(ctx)
    with app_ctx.session("skill show") as out:
        _show(out, app_ctx, skill_registry.show(workspace(app_ctx), name))


@app.command("tools")
def tools(ctx: typer.Context, name: SkillRef) -> None:
    """Every tool the skill gives an actor, its included skills' flattened in."""
    from cleveragents.services import skill_registry

    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    with app_ctx.session("skill tools") as out:
        info, found = skill_registry.tools(workspace(app_ctx), name)
        rows = [t.as_dict() | ({} if structured else {"read_only": "yes" if t.read_only else "no"}) for t in found]
        columns = [ColumnDef("name", "Name"), ColumnDef("source", "Source"), ColumnDef("read_only", "Read-only"),
                   ColumnDef("description", "Description"), ColumnDef("kind", hidden=True),
                   ColumnDef("checkpointable", hidden=True), ColumnDef("wraps", hidden=True),
                   ColumnDef("mode", hidden=True), ColumnDef("definition", hidden=True), ColumnDef("iri", hidden=True)]
        out.table(f"Tools of {info.name} ({len(rows)})", columns, rows=rows, key="tools")


@app.command("remove")
def remove(ctx: typer.Context, name: SkillRef) -> None:
    """Retract a skill (history keeps it)."""
    from cleveragents.services import skill_registry

    app_ctx = get_context(ctx)
    with app_ctx.session("skill remove") as out, reporting_violations(out, app_ctx):
        info, result = skill_registry.remove(workspace(app_ctx), name, agent=agent_name(app_ctx))
        render_retraction(out, result, info, key="skill", command="skill remove", done="Skill removed:")
