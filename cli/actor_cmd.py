"""``agents actor add|update|remove|list|show|set-default|run`` and ``agents actor context ...``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import actor_registry, actor_runs
from cleveragents.services.actor_registry import ActorInfo

from .graph_cmd import agent_name, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, render_commit, render_retraction, reporting_violations

app = typer.Typer(help="Register actors (YAML/JSON v3 files) and run them.", no_args_is_help=True)
context_app = typer.Typer(help="Named manual contexts (files) for `agents actor run`.", no_args_is_help=True)
app.add_typer(context_app, name="context")

ActorRef = Annotated[str, typer.Argument(help="Actor name (e.g. local/reviewer), ULID or IRI.")]
ConfigFile = Annotated[Path, typer.Option("--config", "-c", help="Actor file (YAML or JSON, v3 schema).")]
Options = Annotated[list[str] | None, typer.Option("--option", "-o", help="Option override key=value (repeatable).")]


def _show(out: OutputSession, app_ctx: AppContext, info: ActorInfo) -> None:
    record(
        out,
        app_ctx,
        f"Actor {info.name}",
        "actor",
        [
            ("name", "Name", info.name),
            ("description", "Description", info.description),
            ("type", "Type", info.type),
            ("provider", "Provider", info.provider),
            ("model", "Model", info.model),
            ("default", "Default", info.default if is_structured(app_ctx) else ("yes" if info.default else "no")),
            ("unsafe", "Unsafe", info.unsafe if is_structured(app_ctx) else ("yes" if info.unsafe else "no")),
            ("options", "Options", info.options),
            ("actors", "Actors", listed(info.actors, is_structured(app_ctx), empty="none")),
            ("created", "Created", info.created),
            ("iri", "IRI", info.iri),
        ],
    )


@app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Actor name, e.g. local/reviewer (a bare name gets local/).")],
    config: ConfigFile,
    unsafe: Annotated[bool, typer.Option("--unsafe", help="Mark the actor as unsafe.")] = False,
    set_default: Annotated[bool, typer.Option("--set-default", help="Make it the default actor.")] = False,
    option: Options = None,
) -> None:
    """Register an actor from its file (validated as a run would validate it)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor add") as out, reporting_violations(out, app_ctx):
        info, result = actor_registry.add(
            workspace(app_ctx),
            name,
            config,
            unsafe=unsafe,
            set_default=set_default,
            options=actor_registry.parse_options(option or []),
            agent=agent_name(app_ctx),
        )
        _show(out, app_ctx, info)
        render_commit(out, result, f"actor add {info.name}")
        out.status(f"Actor added: {info.name}", "ok")


@app.command("update")
def update(
    ctx: typer.Context,
    name: ActorRef,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="The updated actor file.")] = None,
    unsafe: Annotated[bool | None, typer.Option("--unsafe/--safe", help="Mark the actor unsafe or safe.")] = None,
    set_default: Annotated[bool, typer.Option("--set-default", help="Make it the default actor.")] = False,
    option: Options = None,
) -> None:
    """Re-read an actor's file, change its flags or override options."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor update") as out, reporting_violations(out, app_ctx):
        info, result = actor_registry.update(
            workspace(app_ctx),
            name,
            config=config,
            unsafe=unsafe,
            set_default=set_default,
            options=actor_registry.parse_options(option or []),
            agent=agent_name(app_ctx),
        )
        _show(out, app_ctx, info)
        render_commit(out, result, f"actor update {info.name}")
        out.status(f"Actor updated: {info.name}", "ok")


@app.command("remove")
def remove(ctx: typer.Context, name: ActorRef) -> None:
    """Retract a registered actor (history keeps it)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor remove") as out, reporting_violations(out, app_ctx):
        info, result = actor_registry.remove(workspace(app_ctx), name, agent=agent_name(app_ctx))
        render_retraction(out, result, info, key="actor", command="actor remove", done="Actor removed:")


@app.command("list")
def list_actors(ctx: typer.Context) -> None:
    """Every registered actor."""
    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    with app_ctx.session("actor list") as out:
        rows = []
        for info in actor_registry.list_all(workspace(app_ctx)):
            row = info.as_dict()
            if not structured:
                row |= {
                    "default": "yes" if info.default else "no",
                    "unsafe": "yes" if info.unsafe else "no",
                    "actors": listed(info.actors, False),
                }
            rows.append(row)
        columns = [
            ColumnDef("name", "Name"),
            ColumnDef("type", "Type"),
            ColumnDef("provider", "Provider"),
            ColumnDef("model", "Model"),
            ColumnDef("default", "Default"),
            ColumnDef("unsafe", "Unsafe"),
            ColumnDef("description", "Description"),
            ColumnDef("actors", hidden=True),
            ColumnDef("options", hidden=True),
            ColumnDef("created", hidden=True),
            ColumnDef("iri", hidden=True),
        ]
        out.table(f"Actors ({len(rows)})", columns, rows=rows, key="actors")


@app.command("show")
def show(ctx: typer.Context, name: ActorRef) -> None:
    """One actor's details."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor show") as out:
        _show(out, app_ctx, actor_registry.show(workspace(app_ctx), name))


@app.command("set-default")
def set_default(ctx: typer.Context, name: ActorRef) -> None:
    """Make an actor the default one."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor set-default") as out, reporting_violations(out, app_ctx):
        info, result = actor_registry.set_default(workspace(app_ctx), name, agent=agent_name(app_ctx))
        if result is not None:
            render_commit(out, result, f"actor set-default {info.name}")
        out.data("actor", info.as_dict(), hidden=True)
        out.status(f"Default actor set to {info.name}", "ok")


@app.command("run")
def run(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Option("--prompt", "-p", help="The prompt to send.")],
    config: Annotated[
        list[Path] | None, typer.Option("--config", "-c", help="Actor file(s); later ones see earlier ones' actors.")
    ] = None,
    actor: Annotated[
        str | None,
        typer.Option("--actor", "-a", help="An actor of the files, or a registered actor when no file is given."),
    ] = None,
    context: Annotated[
        list[str] | None, typer.Option("--context", help="A file, a directory or a named actor context (repeatable).")
    ] = None,
    context_dir: Annotated[Path | None, typer.Option("--context-dir", help="Where named contexts are kept.")] = None,
    argument: Annotated[list[str] | None, typer.Option("--arg", help="Actor argument key=value (repeatable).")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", "-t", help="Override temperature.")] = None,
    stream: Annotated[bool, typer.Option("--stream", help="Print the answer as it arrives.")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also write the answer here.")] = None,
) -> None:
    """Run an actor alone: the prompt in, the model's answer out."""
    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    if not config and not actor:
        raise UsageError("give --config FILE (an actor file) or --actor NAME (a registered actor)")
    streamed = stream and not structured

    def on_token(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    with app_ctx.session("actor run") as out:
        answer = actor_runs.run(
            app_ctx.config,
            workspace(app_ctx),
            prompt,
            config_files=list(config or []),
            actor=actor,
            context=list(context or []),
            context_dir=context_dir,
            arguments=actor_registry.parse_options(argument or []),
            overrides={"temperature": temperature},
            on_token=on_token if streamed else None,
        )
        if streamed:
            sys.stdout.write("\n")
        if output:
            output.write_text(answer.text, encoding="utf-8")
        out.data(
            "answer",
            {
                "actor": answer.actor,
                "model": answer.model,
                "text": answer.text,
                "usage": answer.usage.as_dict(),
                "cost_usd": answer.cost_usd,
            },
            hidden=True,
        )
        if not streamed and not structured:
            out.text(answer.text)


# --- actor contexts ------------------------------------------------------------------------

ContextName = Annotated[str, typer.Option("--name", help="Context name.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _contexts(app_ctx: AppContext, context_dir: Path | None = None) -> actor_runs.ActorContexts:
    return actor_runs.contexts(app_ctx.config, context_dir)


@context_app.command("add")
def context_add(
    ctx: typer.Context,
    name: ContextName,
    paths: Annotated[list[Path], typer.Argument(help="Files or directories.")],
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="Add directories recursively.")] = False,
) -> None:
    """Add files (their current content) to a named context."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor context add") as out:
        count = _contexts(app_ctx).add(name, paths, recursive=recursive)
        out.data("added", {"context": name, "count": count}, hidden=True)
        out.status(f"Added {count} item(s) to context {name}", "ok")


context_app.command("load", help="Alias of `actor context add`.")(context_add)


@context_app.command("rm")
def context_rm(
    ctx: typer.Context, name: ContextName, paths: Annotated[list[str], typer.Argument(help="Paths to remove.")]
) -> None:
    """Remove files from a named context."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor context rm") as out:
        count = _contexts(app_ctx).remove(name, paths)
        out.data("removed", {"context": name, "count": count}, hidden=True)
        out.status(f"Removed {count} item(s) from context {name}", "ok")


@context_app.command("list")
def context_list(
    ctx: typer.Context, name: Annotated[str | None, typer.Argument(help="A context (default: all).")] = None
) -> None:
    """The named contexts, or the files of one."""
    app_ctx = get_context(ctx)
    store = _contexts(app_ctx)
    with app_ctx.session("actor context list") as out:
        if name:
            rows = [
                {"path": f.path, "bytes": len(f.content.encode()), "sha256": f.sha256, "added": f.added}
                for f in store.files(name)
            ]
            columns = [
                ColumnDef("path", "Path"),
                ColumnDef("bytes", "Bytes", alignment="right"),
                ColumnDef("added", "Added"),
                ColumnDef("sha256", hidden=True),
            ]
            out.table(f"Context {name} ({len(rows)})", columns, rows=rows, key="files")
        else:
            rows = [{"name": n, "files": len(store.files(n))} for n in store.names()]
            columns = [ColumnDef("name", "Context"), ColumnDef("files", "Files", alignment="right")]
            out.table(f"Actor contexts ({len(rows)})", columns, rows=rows, key="contexts")


@context_app.command("show")
def context_show(
    ctx: typer.Context,
    name: ContextName,
    path: Annotated[str | None, typer.Argument(help="A file of the context (default: a summary).")] = None,
) -> None:
    """A file's content in a context, or the context's summary."""
    app_ctx = get_context(ctx)
    files = _contexts(app_ctx).files(name)
    with app_ctx.session("actor context show") as out:
        if path is None:
            out.data(
                "context",
                {"name": name, "files": [f.path for f in files], "bytes": sum(len(f.content.encode()) for f in files)},
            )
            return
        match = [f for f in files if f.path == path or f.path.endswith("/" + path)]
        if not match:
            raise UsageError(f"context {name} has no file {path}")
        out.data("file", match[0].as_dict(), hidden=True)
        if not is_structured(app_ctx):
            out.text(match[0].content)


@context_app.command("export")
def context_export(
    ctx: typer.Context,
    name: ContextName,
    output: Annotated[Path, typer.Option("--output", "-o", help="JSON file to write.")],
) -> None:
    """Write a context as JSON."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor context export") as out:
        count = _contexts(app_ctx).export(name, output)
        out.data("exported", {"context": name, "files": count, "output": str(output)}, hidden=True)
        out.status(f"Exported context {name} to {output}", "ok")


@context_app.command("import")
def context_import(
    ctx: typer.Context,
    name: ContextName,
    source: Annotated[Path, typer.Option("--input", "-i", help="JSON file written by export.")],
) -> None:
    """Replace (or create) a context from an exported JSON file."""
    app_ctx = get_context(ctx)
    with app_ctx.session("actor context import") as out:
        count = _contexts(app_ctx).import_(name, source)
        out.data("imported", {"context": name, "files": count}, hidden=True)
        out.status(f"Imported context {name}", "ok")


def _confirm(what: str, yes: bool) -> None:
    if not yes and sys.stdin.isatty() and not typer.confirm(what):
        raise typer.Abort()


@context_app.command("delete")
def context_delete(ctx: typer.Context, name: ContextName, yes: Yes = False) -> None:
    """Delete a whole context."""
    app_ctx = get_context(ctx)
    _confirm(f"Delete context {name}?", yes)
    with app_ctx.session("actor context delete") as out:
        _contexts(app_ctx).delete(name)
        out.status("Context deleted", "ok")


@context_app.command("clear")
def context_clear(ctx: typer.Context, name: ContextName, yes: Yes = False) -> None:
    """Remove every file from a context, keeping the context."""
    app_ctx = get_context(ctx)
    _confirm(f"Clear context {name}?", yes)
    with app_ctx.session("actor context clear") as out:
        count = _contexts(app_ctx).clear(name)
        out.status(f"Cleared {count} item(s) from context {name}", "ok")
