"""``agents context assemble | simulate | show``: context assembly (ACMS) from the command line.

``assemble`` prints the context an LLM would get (``--format markdown``: only that), with
``--explain`` the pipeline's reasoning: strategies and confidences, allocations, what each
produced, and what was deduplicated, downgraded, truncated or dropped. Assemblies are
recorded in the graph; ``show HASH`` re-renders one at its recorded revision.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cleveragents.errors import UsageError
from cleveragents.iris import split_iri
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.terms import compact

from .graph_cmd import agent_name, use_format, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, listed, record, render_commit

if TYPE_CHECKING:
    from types import ModuleType

    from cleveragents.context.model import AssembledContext, ContextRequest


def _service() -> ModuleType:
    """The context service, imported on first use: with the strategies and pydantic models
    behind it, every other command would pay ~0.13 s for it at start-up."""
    from cleveragents.services import context

    return context


app = typer.Typer(
    help="Assemble context for a question within a token budget; simulate an assembly; show a recorded one.",
    no_args_is_help=True,
)

MARKDOWN = "markdown"

Project = Annotated[str | None, typer.Option("--project", "-p", help="Only this project's resources (default: all).")]
Query = Annotated[str | None, typer.Option("--query", "-q", help="What the context is for, in words.")]
Focus = Annotated[
    list[str] | None,
    typer.Option("--focus", help="An IRI, path or symbol to center on (repeatable)."),
]
Breadth = Annotated[int, typer.Option("--breadth", help="Dependency hops outward from the focus (0-10).")]
Depth = Annotated[
    str,
    typer.Option(
        "--depth",
        help="The deepest detail shown: an integer, or a level name such as SIGNATURES. The default shows the "
        "most relevant code in full, its dependencies as signatures and the rest as an outline.",
    ),
]
Budget = Annotated[
    int | None,
    typer.Option("--budget", help="Token budget, a hard ceiling (default: config context.default_budget).", min=None),
]
Strategy = Annotated[
    list[str] | None, typer.Option("--strategy", "-s", help="Prefer this strategy (repeatable), e.g. arce.")
]
AsOf = Annotated[str | None, typer.Option("--as-of", help="Revision number, ISO time or external id (git sha).")]
Format = Annotated[
    str | None,
    typer.Option("--format", help="rich, plain, json, markdown (the context as an LLM gets it), ...; overrides -f."),
]

STRATEGY_COLUMNS = [
    ColumnDef("strategy", "Strategy"),
    ColumnDef("confidence", "Confidence"),
    ColumnDef("quality", "Quality"),
    ColumnDef("tokens", "Allocated"),
    ColumnDef("produced", "Produced"),
    ColumnDef("produced_tokens", "Produced tokens"),
    ColumnDef("packed", "Packed"),
]
FRAGMENT_COLUMNS = [
    ColumnDef("index", "#"),
    ColumnDef("where", "Where"),
    ColumnDef("node", "Node"),
    ColumnDef("depth", "Depth"),
    ColumnDef("tokens", "Tokens"),
    ColumnDef("score", "Score"),
    ColumnDef("strategy", "Strategy"),
]
# With --explain: which strategies found each fragment and why it got its depth.
EXPLAIN_FRAGMENT_COLUMNS = [*FRAGMENT_COLUMNS, ColumnDef("found_by", "Found by"), ColumnDef("why", "Why this depth")]
NOTE_COLUMNS = [ColumnDef("kind", "What"), ColumnDef("node", "Node"), ColumnDef("detail", "Why")]
NOTE_KINDS = ("deduplicated", "depth_conflicts", "downgraded", "truncated", "dropped", "excluded", "fallback")


def _format(app_ctx: AppContext, requested: str | None) -> bool:
    """Apply the command's ``--format``; True for markdown (printed as plain text)."""
    name = (requested or app_ctx.format or "").strip().lower()
    if name == MARKDOWN:
        app_ctx.format = "plain"
        return True
    if use_format(app_ctx, requested):
        raise UsageError(f"--format turtle is for RDF; choose rich, plain, json or {MARKDOWN}")
    return False


def _depth(text: str) -> int | str:
    value = text.strip()
    if value.lstrip("-").isdigit():
        number = int(value)
        if number < 0:
            raise UsageError(f"--depth must be a non-negative integer or a level name, got {number}")
        return number
    return value


def build_request(
    *,
    query: str | None,
    focus: list[str] | None,
    breadth: int,
    depth: str,
    budget: int | None,
    strategies: list[str] | None,
    as_of: str | None,
) -> ContextRequest:
    """The request the options describe; bad values are usage errors naming the option."""
    if budget is not None and budget <= 0:
        raise UsageError(f"--budget must be a positive number of tokens, got {budget}")
    from pydantic import ValidationError as PydanticValidationError

    from cleveragents.context.model import ContextRequest

    options = {"breadth": "--breadth", "max_tokens": "--budget", "depth": "--depth"}
    try:
        return ContextRequest(
            query=query,
            focus=list(focus or []),
            breadth=breadth,
            depth=_depth(depth),
            max_tokens=budget,
            preferred_strategies=list(strategies or []),
            as_of=as_of,
        )
    except PydanticValidationError as exc:
        error = exc.errors(include_url=False)[0]
        option = options.get(str(error["loc"][0]) if error["loc"] else "", str(error["loc"]))
        raise UsageError(f"{option}: {error['msg'][:1].lower()}{error['msg'][1:]}") from None


# --- rendering -------------------------------------------------------------------------------


def _node(iri: str) -> str:
    """A source node as ``path#key`` (its resource is in the preamble); other IRIs compacted."""
    parts = split_iri(iri)
    if parts is None:
        return compact(iri)
    _, path, key = parts
    return f"{path}#{key}" if key else path


def _where(fragment: Any) -> str:
    prov = fragment.provenance
    where = prov.path or _node(fragment.uko_node)
    return f"{where}:{prov.line_range[0]}-{prov.line_range[1]}" if prov.line_range else where


def _summary(context: AssembledContext) -> str:
    strategies = ", ".join(context.strategies_used) or "none"
    return (
        f"{len(context.fragments)} fragments, {context.total_tokens}/{context.budget} tokens "
        f"({context.budget_used:.0%}, {context.encoding}); strategies: {strategies}; {context.context_hash}"
    )


def _fragment_rows(context: AssembledContext) -> list[dict[str, Any]]:
    return [
        {
            "index": index,
            "where": _where(f),
            "node": _node(f.uko_node),
            "depth": f.detail_depth,
            "tokens": f.token_count,
            "score": round(float(f.metadata.get("score", f.relevance_score)), 3),
            "strategy": f.provenance.strategy or "",
            "found_by": ", ".join(sorted({f.provenance.strategy or "?", *f.metadata.get("also_from", [])})),
            "why": f.metadata.get("depth_reason") or f.metadata.get("level") or "",
        }
        for index, f in enumerate(context.fragments)
    ]


def _note_detail(note: dict[str, Any]) -> str:
    shown = {k: v for k, v in note.items() if k not in ("node", "uko_node", "kind")}
    return ", ".join(f"{k}={v}" for k, v in shown.items())


def _explain(out: OutputSession, explanation: dict[str, Any]) -> None:
    """The pipeline's reasoning in human formats (json carries the explanation as data)."""
    budget = explanation.get("budget") or {}
    if budget:
        out.panel("Budget", {k.replace("_", " ").capitalize(): v for k, v in budget.items()}, key="budget")
    produced = explanation.get("produced", {})
    packed = explanation.get("packed", {})
    rows = [
        {
            **row,
            "produced": produced.get(row["strategy"], {}).get("fragments", 0),
            "produced_tokens": produced.get(row["strategy"], {}).get("tokens", 0),
            "packed": packed.get(row["strategy"], 0),
        }
        for row in explanation.get("allocations", [])
    ]
    allocated = {row["strategy"] for row in rows}
    rows += [
        {**row, "tokens": 0, "produced": 0, "produced_tokens": 0, "packed": 0}
        for row in explanation.get("selection", [])
        if row["strategy"] not in allocated
    ]
    out.table("Strategies", STRATEGY_COLUMNS, rows=rows, key="strategies", empty_message="no strategy was selected")
    notes = [
        {"kind": kind, "node": _node(str(n.get("node") or n.get("uko_node") or "")), "detail": _note_detail(n)}
        for kind in NOTE_KINDS
        for n in explanation.get(kind, [])
        if isinstance(n, dict)
    ]
    failures = [
        {"kind": "failed", "node": str(f.get("strategy", "")), "detail": _note_detail(f)}
        for f in explanation.get("failures", [])
        if isinstance(f, dict)
    ]
    out.table(
        "Deduplicated, downgraded, dropped",
        NOTE_COLUMNS,
        rows=notes + failures,
        key="notes",
        empty_message="nothing was deduplicated, downgraded or dropped",
    )
    for warning in explanation.get("warnings", []):
        out.status(str(warning), "warn")
    for note in explanation.get("backends", []):  # indexes built, updated or unavailable, and why
        out.status(f"Backends: {note}")
    if explanation.get("reflow"):  # budget left by strategies that failed or under-used it, handed on
        out.status(f"Reflow: {json.dumps(explanation['reflow'], default=str)}")
    if explanation.get("timings_ms"):
        out.status("Timings: " + ", ".join(f"{k} {v} ms" for k, v in explanation["timings_ms"].items()))
    if explanation.get("empty_reason"):
        out.status(f"Empty: {explanation['empty_reason']}", "warn")


def _render_context(
    out: OutputSession,
    app_ctx: AppContext,
    context: AssembledContext,
    *,
    markdown: bool,
    explain: bool,
    extra: dict[str, Any],
) -> None:
    if markdown:
        out.text(_service().markdown(context), key="context")
        return
    if is_structured(app_ctx):
        for key, value in extra.items():
            out.data(key, value)
        out.data("context", context.model_dump(mode="json", exclude={"explanation"} if not explain else None))
        return
    if explain:
        _explain(out, context.explanation)
    columns = EXPLAIN_FRAGMENT_COLUMNS if explain else FRAGMENT_COLUMNS
    out.table("Fragments", columns, rows=_fragment_rows(context), key="fragments", empty_message="none")
    out.text(_service().markdown(context), key="context")


# --- commands --------------------------------------------------------------------------------


@app.command("assemble")
def assemble(
    ctx: typer.Context,
    project: Project = None,
    query: Query = None,
    focus: Focus = None,
    breadth: Breadth = 2,
    depth: Depth = "FULL_SOURCE",
    budget: Budget = None,
    strategy: Strategy = None,
    as_of: AsOf = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show strategies, allocations, and what was dropped or downgraded.")
    ] = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not record the assembly in the graph.")] = False,
    output_format: Format = None,
) -> None:
    """Assemble context for a query and/or focus within a token budget, and record it."""
    app_ctx = get_context(ctx)
    markdown = _format(app_ctx, output_format)
    with app_ctx.session("context assemble") as out:
        request = build_request(
            query=query, focus=focus, breadth=breadth, depth=depth, budget=budget, strategies=strategy, as_of=as_of
        )
        if not request.query and not request.focus:
            raise UsageError("give a --query, a --focus, or both: there is nothing to assemble context for")
        done = _service().assemble_detailed(
            workspace(app_ctx),
            request,
            project=project,
            explain=explain,
            record=not no_record,
            config=app_ctx.config,
            agent=agent_name(app_ctx),
        )
        if not markdown and not is_structured(app_ctx):
            out.status(f"Assembled {_summary(done.context)}", "ok" if done.context.fragments else "warn")
            if not explain:
                for warning in done.context.explanation.get("warnings", []):
                    out.status(str(warning), "warn")
            if not done.context.fragments and not explain:
                out.status(f"Nothing assembled: {done.context.explanation.get('empty_reason', 'no fragments')}", "warn")
        _render_context(
            out,
            app_ctx,
            done.context,
            markdown=markdown,
            explain=explain,
            extra={"scope": _service().scope_dict(done.scope), "recorded": done.recorded},
        )
        if done.commit is not None and not markdown:
            render_commit(out, done.commit, f"context assemble {done.context.context_hash[:19]}")


@app.command("simulate")
def simulate(
    ctx: typer.Context,
    project: Project = None,
    query: Query = None,
    focus: Focus = None,
    breadth: Breadth = 2,
    depth: Depth = "FULL_SOURCE",
    budget: Budget = None,
    strategy: Strategy = None,
    as_of: AsOf = None,
    output_format: Format = None,
) -> None:
    """What an assembly would do (strategies, confidences, allocations), without running it."""
    app_ctx = get_context(ctx)
    if _format(app_ctx, output_format):
        app_ctx.format = "json"  # a simulation has no context to print: its plan is data
    with app_ctx.session("context simulate") as out:
        request = build_request(
            query=query, focus=focus, breadth=breadth, depth=depth, budget=budget, strategies=strategy, as_of=as_of
        )
        result = _service().simulate(workspace(app_ctx), request, project=project, config=app_ctx.config)
        if is_structured(app_ctx):
            out.data("simulation", result)
            return
        plan = result["plan"]
        scope = result["scope"]
        focus_text = "; ".join(f"{k} -> {', '.join(_node(i) for i in v)}" for k, v in scope["focus"].items())
        out.panel(
            "Request",
            {
                "Query": result["request"].get("query") or "",
                "Focus": focus_text or "none",
                "Breadth": result["request"]["breadth"],
                "Depth": result["request"]["depth"],
                "Revision": scope["revision"],
                "Resources": listed(scope["resources"], False, empty="all"),
            },
            key="request",
        )
        budget_row = plan.get("budget", {})
        out.panel("Budget", {k.replace("_", " ").capitalize(): v for k, v in budget_row.items()}, key="budget")
        rows = [{**row, "about": row.get("about", "")} for row in plan.get("allocations", [])]
        allocated = {row["strategy"] for row in rows}
        rows += [
            {**row, "tokens": 0, "about": ""} for row in plan.get("selection", []) if row["strategy"] not in allocated
        ]
        columns = [*STRATEGY_COLUMNS[:4], ColumnDef("about", "What it does")]
        out.table("Strategies", columns, rows=rows, key="strategies", empty_message="no strategy can handle this")
        for kind in ("excluded", "fallback", "failures"):
            for note in plan.get(kind, []):
                out.status(f"{kind}: {json.dumps(note, default=str)}")


@app.command("show")
def show(
    ctx: typer.Context,
    context_hash: Annotated[str, typer.Argument(help="The assembly's hash (sha256:<hex>, or a unique prefix).")],
    output_format: Format = None,
) -> None:
    """A recorded assembly, re-rendered from the content stored at its revision."""
    app_ctx = get_context(ctx)
    markdown = _format(app_ctx, output_format)
    with app_ctx.session("context show") as out:
        shown = _service().show(workspace(app_ctx), context_hash)
        recorded = shown.recorded
        if not markdown and not is_structured(app_ctx):
            record(
                out,
                app_ctx,
                f"Context assembly {recorded.context_hash}",
                "assembly",
                [
                    ("revision", "Revision", recorded.revision),
                    ("created", "Created", recorded.created),
                    ("query", "Query", recorded.request.query or ""),
                    ("focus", "Focus", listed(recorded.request.focus, False, empty="none")),
                    ("budget", "Tokens", f"{recorded.total_tokens}/{recorded.budget} ({recorded.encoding})"),
                    ("strategies", "Strategies", listed(recorded.strategies, False, empty="none")),
                    ("verified", "Verified", "yes" if shown.verified else "no: " + "; ".join(shown.problems)),
                ],
            )
        _render_context(
            out,
            app_ctx,
            shown.context,
            markdown=markdown,
            explain=False,
            extra={"assembly": recorded.as_dict(), "verified": shown.verified, "problems": shown.problems},
        )
        if not shown.verified and not markdown:
            out.status("The re-rendered context differs from the recorded one", "warn")


@app.command("index")
def index(ctx: typer.Context, project: Project = None) -> None:
    """Build the text and vector indexes of the head revision: every document without an
    embedding is embedded (minutes for a large codebase; assemblies embed at most
    context.vector_inline_limit documents themselves)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("context index") as out:
        bar: list[Any] = []

        def progress(done: int, total: int) -> None:
            if not bar:
                bar.append(out.progress("Embedding documents", total))
            bar[0].set_progress(done, total)

        backends = _service().build_indexes(workspace(app_ctx), project=project, progress=progress)
        if bar:
            bar[0].close()
        vector = "ready" if backends.vector is not None else "unavailable"
        if is_structured(app_ctx):
            out.data("indexes", {"revision": backends.revision, "notes": list(backends.notes), "vector": vector})
        else:
            for note in backends.notes:
                out.status(note)
        out.status(f"Context indexes of revision {backends.revision} are ready (vector: {vector})", "ok")
