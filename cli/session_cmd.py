"""``agents session create|list|show|delete|export|import|tell``.

The session services load LangChain and LangGraph, so they are imported when a session
command runs, not at every command's start-up.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cleveragents.errors import UsageError, ValidationError
from cleveragents.output import ColumnDef, OutputSession

from .graph_cmd import agent_name, confirmed, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, record, render_commit, reporting_violations

app = typer.Typer(help="Sessions: conversations with the orchestrator actor, kept in the graph.",
                  no_args_is_help=True)

SessionRef = Annotated[str, typer.Argument(help="Session name, ULID or IRI.")]


def _show(out: OutputSession, app_ctx: AppContext, info: Any) -> None:
    structured = is_structured(app_ctx)
    cost = info.cost_usd if structured or info.cost_usd is None else f"${info.cost_usd:.6f}"
    record(out, app_ctx, f"Session {info.name}", "session", [
        ("name", "Name", info.name),
        ("id", "ID", info.id),
        ("actor", "Actor", info.actor or ("" if structured else "(default actor)")),
        ("metadata", "Metadata", info.metadata if structured else
         ", ".join(f"{k}={v}" for k, v in info.metadata.items())),
        ("messages", "Messages", info.messages),
        ("input_tokens", "Input tokens", info.input_tokens),
        ("output_tokens", "Output tokens", info.output_tokens),
        ("calls", "Model calls", info.calls),
        ("cost_usd", "Cost", cost if cost is not None else ("" if not structured else None)),
        ("thread", "Thread", info.thread),
        ("created", "Created", info.created),
        ("updated", "Updated", info.updated),
        ("iri", "IRI", info.iri),
    ])


def _metadata(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--metadata '{pair}': expected KEY=VALUE")
        out[key.strip()] = value
    return out


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option("--name", help="Session name (default: session-<id>).")] = None,
    actor: Annotated[str | None, typer.Option("--actor", help="Orchestrator actor for `session tell`.")] = None,
    metadata: Annotated[list[str] | None, typer.Option("--metadata", help="KEY=VALUE (repeatable).")] = None,
) -> None:
    """Create a session."""
    from cleveragents.actors import sessions

    app_ctx = get_context(ctx)
    with app_ctx.session("session create") as out, reporting_violations(out, app_ctx):
        info, result = sessions.create(workspace(app_ctx), name=name, actor=actor or "",
                                       metadata=_metadata(metadata or []), agent=agent_name(app_ctx))
        _show(out, app_ctx, info)
        render_commit(out, result, f"session create {info.name}")
        out.status(f"Session created: {info.name}", "ok")


@app.command("list")
def list_sessions(ctx: typer.Context) -> None:
    """Every session, the most recently used first."""
    from cleveragents.actors import sessions

    app_ctx = get_context(ctx)
    with app_ctx.session("session list") as out:
        rows = [s.as_dict() for s in sessions.list_all(workspace(app_ctx))]
        columns = [
            ColumnDef("id", "ID"), ColumnDef("name", "Name"), ColumnDef("actor", "Actor"),
            ColumnDef("messages", "Messages", alignment="right"), ColumnDef("updated", "Updated"),
            ColumnDef("input_tokens", hidden=True), ColumnDef("output_tokens", hidden=True),
            ColumnDef("calls", hidden=True), ColumnDef("cost_usd", hidden=True), ColumnDef("metadata", hidden=True),
            ColumnDef("thread", hidden=True), ColumnDef("created", hidden=True), ColumnDef("iri", hidden=True),
        ]
        out.table(f"Sessions ({len(rows)})", columns, rows=rows, key="sessions")


@app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Session name, ULID or IRI (default: the latest).")] = None,
    last: Annotated[int, typer.Option("--last", help="How many recent messages to show (0: all).")] = 20,
) -> None:
    """A session's details and its recent messages."""
    from cleveragents.actors import sessions

    app_ctx = get_context(ctx)
    with app_ctx.session("session show") as out:
        info, found = sessions.show(workspace(app_ctx), name)
        _show(out, app_ctx, info)
        shown = found[-last:] if last > 0 else found
        rows = [m.as_dict() for m in shown]
        if not is_structured(app_ctx):
            for row in rows:
                row["tool_calls"] = ", ".join(c["name"] + ("" if c["ok"] else " (failed)") for c in row["tool_calls"])
        columns = [
            ColumnDef("index", "#", alignment="right"), ColumnDef("role", "Role"), ColumnDef("text", "Text"),
            ColumnDef("tool_calls", "Tools"), ColumnDef("created", hidden=True), ColumnDef("model", hidden=True),
            ColumnDef("input_tokens", hidden=True), ColumnDef("output_tokens", hidden=True),
            ColumnDef("calls", hidden=True), ColumnDef("cost_usd", hidden=True),
        ]
        out.table(f"Messages ({len(shown)} of {len(found)})", columns, rows=rows, key="messages")


@app.command("delete")
def delete(
    ctx: typer.Context,
    name: SessionRef,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a session and its messages (graph history keeps them)."""
    from cleveragents.actors import sessions

    app_ctx = get_context(ctx)
    with app_ctx.session("session delete") as out, reporting_violations(out, app_ctx):
        if not confirmed(out, f"Delete session {name}?", yes, "Session kept"):
            return
        info, result = sessions.delete(workspace(app_ctx), name, agent=agent_name(app_ctx))
        out.data("session", info.as_dict(), hidden=True)
        render_commit(out, result, f"session delete {info.name}")
        out.status("Session deleted", "ok")


@app.command("export")
def export(
    ctx: typer.Context,
    name: SessionRef,
    output: Annotated[Path, typer.Option("--output", "-o", help="JSON file to write.")],
) -> None:
    """Write a session and its messages as portable JSON."""
    from cleveragents.actors import sessions

    app_ctx = get_context(ctx)
    with app_ctx.session("session export") as out:
        data = sessions.export(workspace(app_ctx), name)
        output.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        out.data("exported", {"session": data["session"]["name"], "messages": len(data["messages"]),
                              "output": str(output)}, hidden=True)
        out.status(f"Exported session to {output}", "ok")


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[Path, typer.Option("--input", "-i", help="JSON file written by `session export`.")],
    name: Annotated[str | None, typer.Option("--name", help="Name of the new session.")] = None,
) -> None:
    """Create a session from an exported one (a new id; the messages continue the conversation)."""
    from cleveragents.actors import sessions

    app_ctx = get_context(ctx)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValidationError(f"cannot read {source}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{source}: not JSON: line {exc.lineno}: {exc.msg}") from None
    with app_ctx.session("session import") as out, reporting_violations(out, app_ctx):
        info, result = sessions.import_(workspace(app_ctx), data, name=name, source=str(source),
                                        agent=agent_name(app_ctx))
        _show(out, app_ctx, info)
        render_commit(out, result, f"session import {info.name}")
        out.status(f"Session imported: {info.name}", "ok")


@app.command("tell")
def tell(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(help="What to ask the orchestrator.")],
    session: Annotated[str | None, typer.Option("--session", "-s", help="Session (default: the latest).")] = None,
    actor: Annotated[str | None, typer.Option("--actor", help="Override the session's actor for this request.")] = None,
    stream: Annotated[bool, typer.Option("--stream", help="Print the answer as it arrives.")] = False,
) -> None:
    """Ask the orchestrator; it answers by running CleverAgents commands as tools."""
    from cleveragents.services import sessions as session_service

    app_ctx = get_context(ctx)
    structured = is_structured(app_ctx)
    streamed = stream and not structured

    def on_token(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    with app_ctx.session("session tell") as out, reporting_violations(out, app_ctx):
        told = session_service.tell(workspace(app_ctx), app_ctx.config, prompt, session=session, actor=actor,
                                    on_token=on_token if streamed else None, agent=agent_name(app_ctx))
        if streamed:
            sys.stdout.write("\n")
        calls = told.run.tool_calls()
        out.data("answer", {
            "session": told.session.name, "text": told.answer, "tool_calls": calls,
            "resumed_prompt": told.resumed_prompt, "usage": told.run.run_usage,
        }, hidden=True)
        if told.resumed_prompt is not None:
            out.status(f"Finished the interrupted request first: {told.resumed_prompt}", "warn")
        if not structured:
            if calls:
                out.text("Ran: " + ", ".join(c["name"] + ("" if c["ok"] else " (failed)") for c in calls))
            if not streamed:
                out.text(told.answer)
