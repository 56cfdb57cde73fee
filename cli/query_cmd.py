"""``agents query list | show NAME | run NAME --param k=v ...``: the named queries in queries/."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.errors import UsageError
from cleveragents.graph import named_queries
from cleveragents.output import ColumnDef
from cleveragents.services import query_runner

from .graph_cmd import AsOf, QueryFormat, Timeout, render_outcome, timeout_of, use_format, workspace
from .invocation import get_context
from .rendering import is_structured, record

app = typer.Typer(help="List, show and run the named SPARQL queries.", no_args_is_help=True)


def _params_text(query: named_queries.NamedQuery) -> str:
    return ", ".join(f"{p.name}:{p.type}" for p in query.params)


@app.command("list")
def list_queries(ctx: typer.Context) -> None:
    """Every named query with its parameters."""
    app_ctx = get_context(ctx)
    with app_ctx.session("query list") as out:
        rows = [
            {**q.as_dict(), "params": _params_text(q), "param_list": q.as_dict()["params"]}
            for q in named_queries.catalog().values()
        ]
        columns = [
            ColumnDef("name", "Name"),
            ColumnDef("params", "Parameters"),
            ColumnDef("description", "Description"),
            ColumnDef("param_list", hidden=True),
            ColumnDef("file", hidden=True),
        ]
        out.table("Named queries", columns, rows=rows, key="queries")


@app.command("show")
def show_query(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="Query name (see 'agents query list').")]
) -> None:
    """A named query's description, parameters and SPARQL text."""
    app_ctx = get_context(ctx)
    with app_ctx.session("query show") as out:
        query = named_queries.get(name)
        details = query.as_dict()
        record(
            out,
            app_ctx,
            f"Query {query.name}",
            "query",
            [
                ("name", "Name", query.name),
                ("description", "Description", query.description),
                (
                    "params",
                    "Parameters",
                    details["params"]
                    if is_structured(app_ctx)
                    else "\n".join(f"{p.name} ({p.type}): {p.description}" for p in query.params) or "none",
                ),
                ("file", "File", str(query.path)),
            ],
        )
        out.code(query.text, "sparql", key="sparql")


def _parse_params(items: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param takes NAME=VALUE, got '{item}'")
        params[key.strip()] = value
    return params


@app.command("run")
def run_query(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Query name (see 'agents query list').")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE (repeatable).")] = None,
    as_of: AsOf = None,
    timeout: Timeout = None,
    output_format: QueryFormat = None,
) -> None:
    """Run a named query with typed parameters (bound, never pasted into the text)."""
    app_ctx = get_context(ctx)
    as_turtle = use_format(app_ctx, output_format)
    with app_ctx.session("query run") as out:
        query = named_queries.get(name)
        bindings = named_queries.bind(query, _parse_params(param or []))
        ws = workspace(app_ctx)
        ws.require()
        outcome = query_runner.run_with_timeout(
            ws.store_dir,
            query.text,
            as_of,
            timeout_of(app_ctx, timeout),
            bindings,
            allowed_services=ws.service_allowlist,
        )
        render_outcome(out, app_ctx, outcome, as_turtle=as_turtle, query_text=query.text, bound=bindings)
