"""``agents index``: incremental indexing of resources, git history replay, watching."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import typer

from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.git_history import GitCommit
from cleveragents.indexing.indexer import IndexSummary, Progress
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import indexing
from cleveragents.services.resources import ResourceInfo
from cleveragents.vocabulary import uko_code

from .graph_cmd import agent_name, workspace
from .invocation import AppContext, get_context
from .rendering import is_structured, record, reporting_violations

SKIPPED_COLUMNS = [ColumnDef("reason", "Reason"), ColumnDef("files", "Files"), ColumnDef("example", "Example")]
ERROR_COLUMNS = [ColumnDef("path", "File"), ColumnDef("message", "Error")]
SHOWN_ERRORS = 20
CALLS = uko_code.calls


def progress_reporter(out: OutputSession) -> Progress:
    """A progress bar per phase (rich on a TTY; the plain renderers stay quiet)."""
    bars: dict[str, object] = {}

    def report(phase: str, done: int, total: int) -> None:
        bar = bars.get(phase)
        if bar is None:
            bar = bars[phase] = out.progress(f"{phase} files", total)
        bar.set_progress(done, total)  # type: ignore[attr-defined]
        if done >= total:
            bar.close()  # type: ignore[attr-defined]
            del bars[phase]

    return report


def render_summary(out: OutputSession, app_ctx: AppContext, summary: IndexSummary) -> None:
    if is_structured(app_ctx):
        return  # the caller puts every summary under data.index
    by_reason = Counter(s.reason for s in summary.skipped)
    examples = {s.reason: s.path for s in reversed(summary.skipped)}
    record(
        out,
        app_ctx,
        f"Indexed {summary.resource}",
        "index",
        [
            ("files", "Files seen", summary.files_seen),
            ("analyzed", "Analyzed", summary.analyzed),
            ("unchanged", "Unchanged", summary.unchanged),
            ("deleted", "Deleted", summary.deleted),
            ("skipped", "Skipped", sum(by_reason.values())),
            (
                "entities",
                "Entities",
                f"+{summary.entities_added} ~{summary.entities_changed} -{summary.entities_removed}",
            ),
            ("triples", "Triples", f"+{summary.triples_added} closed {summary.triples_closed}"),
            ("edges", "Edges resolved", f"{summary.edges} ({summary.unresolved} references unresolved)"),
            ("parse", "Files with syntax errors", len(summary.parse_problems)),
            ("errors", "Errors", len(summary.errors)),
            ("revision", "Revision", summary.revision if summary.revision is not None else "no commit (no change)"),
            ("time", "Time", f"{summary.seconds:.2f} s"),
        ],
    )
    if by_reason:
        rows = [{"reason": r, "files": n, "example": examples[r]} for r, n in by_reason.most_common()]
        out.table("Skipped files", SKIPPED_COLUMNS, rows=rows, key="skipped")
    if summary.errors:
        rows = [{"path": e.path, "message": e.message} for e in summary.errors[:SHOWN_ERRORS]]
        more = len(summary.errors) - len(rows)
        out.table("Errors" + (f" (first {SHOWN_ERRORS}; {more} more)" if more else ""), ERROR_COLUMNS, rows=rows)
    for path, reason in sorted(summary.cut_off.items())[:SHOWN_ERRORS]:
        out.status(f"{path}: analysis cut off, file node only: {reason}", "warn")
    for path, names in sorted(summary.hidden_entities.items())[:SHOWN_ERRORS]:
        out.status(f"{path}: a syntax error hides {', '.join(names)}", "warn")
    for report in summary.enrichment:
        _render_enrichment(out, app_ctx, summary, report)


def _render_enrichment(out: OutputSession, app_ctx: AppContext, summary: IndexSummary, report: dict[str, Any]) -> None:
    server = report["server"]
    if report["unavailable"]:
        out.status(f"LSP {server} not used: {report['unavailable']}; name-match edges kept", "warn")
        return
    calls = summary.resolution.get(CALLS)
    record(
        out,
        app_ctx,
        f"LSP {server}",
        "lsp",
        [
            ("files", "Files enriched", report["files"]),
            ("requests", "Requests", report["requests"]),
            ("resolved", "References resolved", f"{report['resolved']} ({report['external']} outside the resource)"),
            ("unanswered", "No answer (name match kept)", report["unanswered"]),
            (
                "calls",
                "Call edges vs name match",
                f"{calls.confirmed} confirmed, {calls.corrected} corrected, {calls.added} added, "
                f"{calls.unresolved} unresolved"
                if calls
                else "none",
            ),
            ("diagnostics", "Diagnostics", report["diagnostics"]),
            ("typed", "Return types inferred", report["typed"]),
            ("typed_parameters", "Parameter types inferred", report["typed_parameters"]),
            ("time", "Time", f"{report['seconds']:.2f} s"),
        ],
    )
    for path in report["rejected"][:SHOWN_ERRORS]:
        out.status(f"LSP {server} rejected {path}", "warn")


def index_command(
    ctx: typer.Context,
    resources: Annotated[list[str] | None, typer.Argument(help="Resources (name, ULID or IRI); default: all.")] = None,
    project: Annotated[str | None, typer.Option("--project", "-p", help="Index the resources of this project.")] = None,
    full: Annotated[bool, typer.Option("--full", help="Re-analyze every file, not only changed ones.")] = False,
    watch: Annotated[bool, typer.Option("--watch", help="Keep indexing as files change, until Ctrl+C.")] = False,
    history: Annotated[
        bool, typer.Option("--history", help="Replay the git history: one graph commit per git commit.")
    ] = False,
    max_commits: Annotated[
        int | None, typer.Option("--max-commits", min=1, help="With --history: only the last N commits.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="With --history: only commits after this git ref.")
    ] = None,
    lsp: Annotated[
        bool | None,
        typer.Option(
            "--lsp/--no-lsp",
            help="Resolve references with the registered language servers (default: config lsp.enrich).",
        ),
    ] = None,
) -> None:
    """Index resources incrementally: only changed files are re-analyzed; no change, no commit."""
    app_ctx = get_context(ctx)
    if project and resources:
        raise typer.BadParameter("give resources or --project, not both")
    if (max_commits or since) and not history:
        raise typer.BadParameter("--max-commits and --since go with --history")
    if history and (watch or full):
        raise typer.BadParameter("--history cannot be combined with --watch or --full")
    if history and lsp:
        raise typer.BadParameter("--lsp resolves the working tree; it cannot be combined with --history")
    use_lsp = bool(app_ctx.config.value("lsp.enrich")) if lsp is None else lsp
    options = {
        "analyzers": indexing.analyzer_set(str(app_ctx.config.value("analyzers.path"))),
        "options": indexing.options_from(app_ctx.config),
    }
    with app_ctx.session("index") as out, reporting_violations(out, app_ctx):
        ws = workspace(app_ctx)
        infos = indexing.resources_to_index(ws, resources or [], project)
        if history:
            summaries = _history(out, app_ctx, ws, infos, max_commits, since, options)
        else:
            summaries = indexing.index(
                ws,
                infos,
                full=full,
                agent=agent_name(app_ctx),
                progress=progress_reporter(out),
                lsp=use_lsp and not history,
                lsp_timeout=float(app_ctx.config.value("lsp.request_timeout")),
                **options,
            )
            for summary in summaries:
                render_summary(out, app_ctx, summary)
        if is_structured(app_ctx):
            out.data("index", [s.as_dict() for s in summaries])
        if any(s.errors for s in summaries):
            out.status("some files could not be analyzed; the rest was indexed", "warn")
        if watch:
            out.status(f"watching {len(infos)} resource(s); Ctrl+C stops")
            indexing.watch(ws, infos, lambda summary: _one_line(out, summary), agent=agent_name(app_ctx), **options)


def _history(
    out: OutputSession,
    app_ctx: AppContext,
    ws: Workspace,
    infos: list[ResourceInfo],
    max_commits: int | None,
    since: str | None,
    options: dict[str, Any],
) -> list[IndexSummary]:
    summaries: list[IndexSummary] = []
    for info in infos:
        bar = out.progress(f"replaying {info.name}", None)

        def on_commit(commit: GitCommit, summary: IndexSummary | None, bar: Any = bar) -> None:
            bar.increment()
            if summary is None:
                out.status(f"{commit.sha[:12]} already imported", "info")

        found = indexing.import_history(ws, info, max_commits=max_commits, since=since, on_commit=on_commit, **options)
        summaries += found
        if not is_structured(app_ctx):
            seconds = sum(s.seconds for s in found)
            out.status(
                f"{info.name}: {len(found)} git commit(s) replayed in {seconds:.1f} s"
                + (f" ({len(found) / seconds:.1f} commits/s)" if seconds else ""),
                "ok",
            )
    return summaries


def _one_line(out: OutputSession, summary: IndexSummary) -> None:
    if summary.revision is None:
        return
    out.status(
        f"{summary.resource}: revision {summary.revision}, {summary.analyzed} file(s) analyzed, "
        f"entities +{summary.entities_added} ~{summary.entities_changed} -{summary.entities_removed}",
        "ok",
    )
