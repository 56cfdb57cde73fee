"""``agents graph``: SPARQL query and update, validation, import/export and history.

Terms are shown compactly (``uko-code:Module``) in human formats, as full N-Triples
(``<https://...>``, ``"42"^^<...#integer>``) in json/yaml, and as plain values (full IRIs,
lexical forms) in csv and tsv, as the SPARQL 1.1 CSV result format does.

The helpers at the top (workspace, commit agent, query input, options and results) are
shared by the other store commands (init, query, resource, project); rendering shared
beyond queries lives in ``rendering``.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any

import pyoxigraph as ox
import typer

from cleveragents.errors import NotFoundError, UsageError
from cleveragents.graph.workspace import Workspace
from cleveragents.iris import parse_iri
from cleveragents.output import ColumnDef, OutputSession, available_formats
from cleveragents.services import classification, graph_service
from cleveragents.services.query_runner import QueryOutcome
from cleveragents.terms import PREFIXES, compact

from .invocation import AppContext, get_context
from .rendering import (
    is_structured,
    is_violation,
    listed,
    record,
    render_commit,
    reporting_violations,
    term_mode,
    term_text,
    violations_table,
)

app = typer.Typer(
    help="Query, update, validate, import and export the graph; read its history.",
    no_args_is_help=True,
)

TURTLE = "turtle"

# --- shared helpers ---------------------------------------------------------------------


def workspace(app_ctx: AppContext) -> Workspace:
    """The data dir's workspace, validating commits unless store.validate_on_commit is off,
    with the SPARQL SERVICE endpoints config allows; a writer waits its turn for
    store.writer_wait seconds (``agents --wait``), saying so on a terminal."""
    config = app_ctx.config
    return Workspace(
        app_ctx.data_dir,
        validate_on_commit=bool(config.value("store.validate_on_commit")),
        service_allowlist=config.value("query.service_allowlist"),
        writer_wait=float(config.value("store.writer_wait")),
        on_wait=_say_waiting if sys.stderr.isatty() else None,
    )


def confirmed(out: OutputSession, question: str, yes: bool, declined: str) -> bool:
    """Whether a destructive command may go on: --yes, or a "y" at a terminal. Off a
    terminal without --yes it is a usage error naming what would happen."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(f"{question} Confirm with --yes when not at a terminal")
    if typer.confirm(question, default=False, err=True):
        return True
    out.status(declined, "warn")
    return False


def _say_waiting(holder: str) -> None:
    typer.echo(f"waiting for {holder}", err=True)


def agent_name(app_ctx: AppContext) -> str:
    """The commit agent: config user.name."""
    return str(app_ctx.config.value("user.name") or "cleveragents")


def read_text(text: str | None, file: Path | None, what: str, flag: str = "-f FILE") -> str:
    """The text given inline or in a file (``-`` reads stdin); exactly one is required."""
    if (text is None) == (file is None):
        raise UsageError(f"give the {what} either inline or with {flag}, not both or neither")
    if file is None:
        return text or ""
    if str(file) == "-":
        return sys.stdin.read()
    try:
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise NotFoundError(f"cannot read {file}: {exc.strerror}") from None


def use_format(app_ctx: AppContext, requested: str | None) -> bool:
    """Apply a command's own ``--format`` (which may be ``turtle``); True for turtle."""
    if requested is None:
        return False
    name = requested.strip().lower()
    if name == TURTLE:
        app_ctx.format = "plain"
        return True
    if name not in available_formats():
        choices = ", ".join([*available_formats(), TURTLE])
        raise UsageError(f"unknown --format '{requested}'; choose from {choices}")
    app_ctx.format = name
    return False


def _used_prefixes(terms: Iterable[str]) -> dict[str, str]:
    iris = set(terms)
    return {p: base for p, base in PREFIXES.items() if any(i.startswith(base) for i in iris)}


def turtle(triples: Sequence[ox.Triple]) -> str:
    """Triples as Turtle with the known prefixes they use."""
    terms = [t for tr in triples for t in tr]
    iris = [t.value for t in terms if isinstance(t, ox.NamedNode)]
    iris += [t.datatype.value for t in terms if isinstance(t, ox.Literal)]
    body = ox.serialize(triples, format=ox.RdfFormat.TURTLE, prefixes=_used_prefixes(iris))
    return (body or b"").decode("utf-8")


def _triple_key(triple: Any) -> tuple[str, str, str]:
    s, p, o = triple
    return str(s), str(p), str(o)


def _triple_row(triple: Any, mode: str, **extra: Any) -> dict[str, Any]:
    s, p, o = triple
    return {**extra, "subject": term_text(s, mode), "predicate": term_text(p, mode), "object": term_text(o, mode)}


_HAS_LIMIT = re.compile(r"\bLIMIT\s+\d+", re.IGNORECASE)


def render_outcome(
    out: OutputSession,
    app_ctx: AppContext,
    outcome: QueryOutcome,
    *,
    as_turtle: bool = False,
    query_text: str = "",
    bound: Iterable[str] = (),
) -> None:
    """Render a query's answer in the session's format (see the module docstring).
    ``bound`` names parameters bound by substitution: constant columns, hidden on screen."""
    fmt = app_ctx.format or "plain"
    mode = term_mode(app_ctx.format)
    out.data("form", outcome.form, hidden=True)
    out.data("revision", outcome.revision, hidden=True)
    if outcome.form != "graph" and as_turtle:
        raise UsageError("--format turtle applies to CONSTRUCT and DESCRIBE queries only")
    if outcome.form == "select":
        rows = outcome.rows
        limit = int(app_ctx.config.value("query.default_limit") or 0)
        truncated = bool(limit and len(rows) > limit and not _HAS_LIMIT.search(query_text))
        if truncated:
            rows = rows[:limit]
        out.data("variables", outcome.variables, hidden=True)
        constant = set(bound)
        columns = [ColumnDef(v, hidden=v in constant) for v in outcome.variables]
        shown = [{v: term_text(row.get(v), mode) for v in outcome.variables} for row in rows]
        out.table(None, columns, rows=shown, key="results", empty_message="No results.")
        if truncated:
            out.status(
                f"showing the first {limit} of {len(outcome.rows)} rows (query.default_limit); "
                "add LIMIT to the query or raise the limit",
                "warn",
            )
        out.status(f"{len(rows)} row(s) at revision {outcome.revision}")
    elif outcome.form == "ask":
        answer = bool(outcome.boolean)
        if fmt in ("csv", "tsv"):
            out.table(None, ["boolean"], rows=[{"boolean": answer}], key="boolean")
        else:
            out.data("boolean", answer, display="yes" if answer else "no")
    else:
        triples = sorted(outcome.triples, key=_triple_key)
        if as_turtle or mode == "compact":
            out.code(turtle(triples), "turtle", key="turtle")
        else:
            columns = [ColumnDef("subject"), ColumnDef("predicate"), ColumnDef("object")]
            out.table(None, columns, rows=[_triple_row(t, mode) for t in triples], key="triples")
        if not as_turtle:
            out.status(f"{len(triples)} triple(s) at revision {outcome.revision}")


def timeout_of(app_ctx: AppContext, timeout: float | None) -> float:
    return float(app_ctx.config.value("query.timeout")) if timeout is None else timeout


# --- options shared by several commands -------------------------------------------------

AsOf = Annotated[
    str | None,
    typer.Option("--as-of", help="Revision number, ISO timestamp or external id (e.g. git sha)."),
]
Timeout = Annotated[
    float | None,
    typer.Option("--timeout", help="Seconds before the query is cancelled (config query.timeout).", show_default=False),
]
QueryFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="table, json, csv, tsv, turtle (CONSTRUCT/DESCRIBE) or any output format; overrides the global --format.",
        show_default=False,
    ),
]
CommitMessage = Annotated[str, typer.Option("-m", "--message", help="Commit message.")]
NodeIri = Annotated[str, typer.Argument(help="Node IRI: <...>, full, or prefixed (uko:...).")]

# --- commands ---------------------------------------------------------------------------


@app.command("query")
def query_cmd(
    ctx: typer.Context,
    sparql: Annotated[str | None, typer.Argument(help="SPARQL query text.", show_default=False)] = None,
    file: Annotated[
        Path | None, typer.Option("-f", "--file", help="Read the query from a .rq file ('-' = stdin).")
    ] = None,
    as_of: AsOf = None,
    timeout: Timeout = None,
    output_format: QueryFormat = None,
) -> None:
    """Run a SPARQL SELECT, ASK, CONSTRUCT or DESCRIBE over the current (or an earlier) state."""
    app_ctx = get_context(ctx)
    as_turtle = use_format(app_ctx, output_format)
    with app_ctx.session("graph query") as out:
        text = read_text(sparql, file, "query")
        outcome = graph_service.query(workspace(app_ctx), text, as_of=as_of, timeout=timeout_of(app_ctx, timeout))
        render_outcome(out, app_ctx, outcome, as_turtle=as_turtle, query_text=text)


@app.command("update")
def update_cmd(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="SPARQL Update text.", show_default=False)] = None,
    file: Annotated[
        Path | None, typer.Option("-f", "--file", help="Read the update from a .ru file ('-' = stdin).")
    ] = None,
    message: CommitMessage = "",
    timeout: Timeout = None,
) -> None:
    """Apply a SPARQL Update (INSERT/DELETE DATA, DELETE/INSERT WHERE) as one validated commit."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph update") as out, reporting_violations(out, app_ctx):
        body = read_text(text, file, "update")
        result = graph_service.update(
            workspace(app_ctx), body, message=message, agent=agent_name(app_ctx), timeout=timeout_of(app_ctx, timeout)
        )
        render_commit(out, result, "update")


@app.command("clear")
def clear_cmd(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    message: CommitMessage = "",
) -> None:
    """Remove ALL content from the current state, as one commit in the log.

    History stays (earlier revisions remain queryable with --as-of), as do the commit
    log, the ontology and the shapes. Asks first unless --yes."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph clear") as out, reporting_violations(out, app_ctx):
        ws = workspace(app_ctx)
        nodes, triples = graph_service.clear_preview(ws)
        question = (
            f"Remove all {triples} triple(s) of {nodes} node(s) from the current state? History, the "
            "commit log, the ontology and the shapes are kept; the removal is a commit."
        )
        if not confirmed(out, question, yes, "Nothing removed"):
            return
        result = graph_service.clear(ws, message=message, agent=agent_name(app_ctx))
        render_commit(out, result, "clear")


@app.command("backup")
def backup_cmd(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="New (or empty) directory to write the backup into.")],
) -> None:
    """Back up the store (Oxigraph's own backup, taken beside running writers) and the
    stored file contents into PATH."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph backup") as out:
        info = graph_service.backup(workspace(app_ctx), path)
        out.data("backup", {"path": str(info.path), "head": info.head, "blobs": info.blobs}, hidden=True)
        out.status(f"Backed up revision {info.head} ({info.blobs} content blob(s)) to {info.path}", "ok")


@app.command("restore")
def restore_cmd(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A directory written by 'agents graph backup'.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Replace the store with a backup (the current graph and its history are replaced;
    stored file contents are only added). Asks first unless --yes."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph restore") as out:
        info = graph_service.inspect_backup(path)
        question = f"Replace the store in {app_ctx.data_dir} with the backup of revision {info.head} ({info.created})?"
        if not confirmed(out, question, yes, "Nothing restored"):
            return
        restored = graph_service.restore(workspace(app_ctx), path)
        out.data("restore", {"path": str(path), "head": restored.head}, hidden=True)
        out.status(f"Restored revision {restored.head} from {path}", "ok")


@app.command("validate")
def validate_cmd(ctx: typer.Context) -> None:
    """Audit the whole current state against the SHACL shapes (exit 1 on violations)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph validate") as out:
        results = graph_service.validate_all(workspace(app_ctx))
        violations_table(out, app_ctx, results, show_severity=True)
        errors = [r for r in results if is_violation(r)]
        out.data("conforms", not errors, hidden=True)
        if errors:
            out.status(f"{len(errors)} SHACL violation(s)", "error")
            out.exit_code = 1
        elif results:
            out.status(f"The graph conforms; {len(results)} warning(s)", "warn")
        else:
            out.status("The graph conforms to the shapes", "ok")


@app.command("export")
def export_cmd(
    ctx: typer.Context,
    rdf_format: Annotated[str, typer.Option("--format", help="nq, trig, ttl or nt.")] = "nq",
    as_of: AsOf = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to FILE instead of stdout.")] = None,
) -> None:
    """Serialize the store to stdout or a file (binary safe).

    nq/trig without --as-of keep every graph (history included); ttl/nt, or --as-of, give
    the asserted state at one revision."""
    app_ctx = get_context(ctx)
    ws = workspace(app_ctx)
    if output is not None:
        with app_ctx.session("graph export") as out:
            partial = output.with_name(output.name + ".part")  # FILE appears only when complete
            try:
                with partial.open("wb") as handle:
                    count = graph_service.export(ws, handle, fmt=rdf_format, as_of=as_of)
                partial.replace(output)
            except OSError as exc:
                raise NotFoundError(f"cannot write {output}: {exc.strerror}") from None
            finally:
                partial.unlink(missing_ok=True)
            out.data("export", {"file": str(output), "format": rdf_format, "count": count}, hidden=True)
            unit = "quads" if rdf_format in ("nq", "trig") and as_of is None else "triples"
            out.status(f"Exported {count} {unit} to {output}", "ok")
        return
    # RDF goes to stdout, so the session (errors, json envelope) writes to stderr.
    app_ctx.command = "graph export"
    with OutputSession("graph export", app_ctx.format or "plain", stdout=sys.stderr):
        sys.stdout.flush()
        sink = getattr(sys.stdout, "buffer", None)
        if sink is None:  # a text-only stream (embedding, some test runners)
            buffer = io.BytesIO()
            graph_service.export(ws, buffer, fmt=rdf_format, as_of=as_of)
            sys.stdout.write(buffer.getvalue().decode("utf-8"))
        else:
            graph_service.export(ws, sink, fmt=rdf_format, as_of=as_of)
            sink.flush()


@app.command("import")
def import_cmd(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="RDF file (ttl, nt, nq, trig, rdf, jsonld, n3).")],
    rdf_format: Annotated[
        str | None, typer.Option("--rdf-format", help="Override the format the file extension implies.")
    ] = None,
    message: CommitMessage = "",
) -> None:
    """Load an RDF file as one validated commit (graph names in the file are ignored)."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph import") as out, reporting_violations(out, app_ctx):
        result = graph_service.import_file(
            workspace(app_ctx), file, fmt=rdf_format, message=message, agent=agent_name(app_ctx)
        )
        render_commit(out, result, f"import {file.name}")


@app.command("stats")
def stats_cmd(ctx: typer.Context) -> None:
    """Triple counts (asserted, inferred, historical), graphs, ontology, shapes, disk use."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph stats") as out:
        s = graph_service.stats(workspace(app_ctx))
        record(
            out,
            app_ctx,
            "Graph statistics",
            "stats",
            [
                ("head", "Head revision", s.head),
                ("asserted", "Asserted triples", s.asserted),
                ("inferred", "Inferred triples", s.inferred),
                ("historical", "Historical triples", s.historical),
                ("graphs", "Interval graphs", s.graphs),
                ("ontology", "Ontology triples", s.ontology),
                ("shapes", "Shape triples", s.shapes),
                ("disk_bytes", "Disk bytes", s.disk_bytes),
            ],
        )


LOG_COLUMNS = [
    ColumnDef("revision", "Rev", alignment="right"),
    ColumnDef("time", "Time"),
    ColumnDef("agent", "Agent"),
    ColumnDef("cause", "Cause"),
    ColumnDef("message", "Message"),
    ColumnDef("added", "Added", alignment="right"),
    ColumnDef("removed", "Removed", alignment="right"),
    ColumnDef("external_id", hidden=True),
    ColumnDef("commit", hidden=True),
]


@app.command("log")
def log_cmd(
    ctx: typer.Context,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Newest N commits only.")] = None,
) -> None:
    """The commit log, newest first."""
    app_ctx = get_context(ctx)
    with app_ctx.session("graph log") as out:
        commits = graph_service.log(workspace(app_ctx), limit)
        rows = [{**c.__dict__, "commit": c.iri} for c in commits]
        out.table("Commits", LOG_COLUMNS, rows=rows, key="commits", empty_message="No commits yet.")


@app.command("diff")
def diff_cmd(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(help="Older revision (number, time or external id).")],
    new: Annotated[str, typer.Argument(help="Newer revision.")],
    inferred: Annotated[bool, typer.Option("--inferred", help="Include the inferred closure.")] = False,
    bookkeeping: Annotated[bool, typer.Option("--all", help="Include commit records and revision metadata.")] = False,
) -> None:
    """Triples added and removed between two revisions."""
    app_ctx = get_context(ctx)
    mode = term_mode(app_ctx.format)
    with app_ctx.session("graph diff") as out:
        a, b, added, removed = graph_service.diff(
            workspace(app_ctx), old, new, inferred=inferred, bookkeeping=bookkeeping
        )
        record(
            out,
            app_ctx,
            f"Diff r{a} → r{b}",
            "diff",
            [
                ("from", "From revision", a),
                ("to", "To revision", b),
                ("added", "Added", len(added)),
                ("removed", "Removed", len(removed)),
            ],
        )
        rows = [_triple_row(t, mode, change="+") for t in sorted(added, key=_triple_key)]
        rows += [_triple_row(t, mode, change="-") for t in sorted(removed, key=_triple_key)]
        columns = [
            ColumnDef("change", "±"),
            ColumnDef("subject", "Subject"),
            ColumnDef("predicate", "Predicate"),
            ColumnDef("object", "Object"),
        ]
        out.table("Changes", columns, rows=rows, key="changes", empty_message="No changes.")
        out.status(f"r{a} → r{b}: {len(added)} added, {len(removed)} removed")


@app.command("history")
def history_cmd(
    ctx: typer.Context,
    iri: NodeIri,
    incoming: Annotated[bool, typer.Option("--incoming", help="Also triples with the node as object.")] = False,
) -> None:
    """Every triple the node ever had, with the revisions (and times) it was valid."""
    app_ctx = get_context(ctx)
    mode = term_mode(app_ctx.format)
    with app_ctx.session("graph history") as out:
        spans, commits = graph_service.node_history(workspace(app_ctx), iri, incoming=incoming)

        def when(rev: int | None) -> str | None:
            return commits[rev].time if rev in commits else None

        rows = [
            {
                **_triple_row((s.subject, s.predicate, s.object), mode),
                "from": s.start,
                "from_time": when(s.start),
                "until": s.end,
                "until_time": when(s.end),
                "inferred": s.inferred,
            }
            for s in spans
        ]
        columns = [
            ColumnDef("subject", "Subject", hidden=not incoming),
            ColumnDef("predicate", "Predicate"),
            ColumnDef("object", "Object"),
            ColumnDef("from", "From", alignment="right"),
            ColumnDef("from_time", "From time"),
            ColumnDef("until", "Until", alignment="right"),
            ColumnDef("until_time", "Until time"),
            ColumnDef("inferred", "Inferred"),
        ]
        out.table(f"History of {compact(parse_iri(iri).value)}", columns, rows=rows, key="history")
        out.status(f"{len(rows)} triple span(s); an empty 'until' means still current")


@app.command("blame")
def blame_cmd(
    ctx: typer.Context,
    iri: NodeIri,
    include_retracted: Annotated[bool, typer.Option("--all", help="Include retracted triples.")] = False,
) -> None:
    """For each triple of the node: the commit that asserted it (and retracted it)."""
    app_ctx = get_context(ctx)
    mode = term_mode(app_ctx.format)
    with app_ctx.session("graph blame") as out:
        lines = graph_service.blame(workspace(app_ctx), iri, include_retracted=include_retracted)
        rows = []
        for line in lines:
            by, gone = line.asserted_by, line.retracted_by
            rows.append(
                {
                    **_triple_row((line.span.subject, line.span.predicate, line.span.object), mode),
                    "revision": line.span.start,
                    "time": by.time if by else None,
                    "agent": by.agent if by else None,
                    "message": by.message if by else None,
                    "retracted": line.span.end,
                    "retracted_time": gone.time if gone else None,
                    "plan": line.plan,
                    "decision": line.decision,
                }
            )
        columns = [
            ColumnDef("subject", hidden=True),
            ColumnDef("predicate", "Predicate"),
            ColumnDef("object", "Object"),
            ColumnDef("revision", "Rev", alignment="right"),
            ColumnDef("time", "Time"),
            ColumnDef("agent", "Agent"),
            ColumnDef("message", "Message"),
            ColumnDef("plan", "Plan", hidden=not any(line.plan for line in lines)),
            ColumnDef("decision", "Decision", hidden=not any(line.decision for line in lines)),
            ColumnDef("retracted", "Retracted", alignment="right", hidden=not include_retracted),
            ColumnDef("retracted_time", "Retracted time", hidden=not include_retracted),
        ]
        out.table(f"Blame of {compact(parse_iri(iri).value)}", columns, rows=rows, key="blame")


CLASSIFY_COLUMNS = [
    ColumnDef("direction", "Dir"),
    ColumnDef("predicate", "Predicate"),
    ColumnDef("node", "Node"),
    ColumnDef("confidence", "Confidence", alignment="right"),
    ColumnDef("resolved_by", "Resolved by"),
    ColumnDef("inferred", "Inferred"),
]


@app.command("classify")
def classify_cmd(
    ctx: typer.Context,
    iri: NodeIri,
    as_of: AsOf = None,
    output_format: Annotated[
        str | None,
        typer.Option("--format", help="Any output format; overrides the global --format.", show_default=False),
    ] = None,
) -> None:
    """The UKO classification of a node: layer (0-3), primary type, source resource and
    relationships (asserted, and inferred by the UKO engine, with confidence)."""
    app_ctx = get_context(ctx)
    if use_format(app_ctx, output_format):
        raise UsageError("--format turtle applies to CONSTRUCT and DESCRIBE queries only")
    mode = term_mode(app_ctx.format)
    with app_ctx.session("graph classify") as out:
        result = classification.classify(workspace(app_ctx), iri, as_of=as_of)

        def term(value: str | None) -> str | None:
            return None if value is None else term_text(ox.NamedNode(value), mode)

        record(
            out,
            app_ctx,
            f"Classification of {compact(result.iri)}",
            "classification",
            [
                ("iri", "IRI", term(result.iri)),
                ("revision", "Revision", result.revision),
                ("layer", "Layer", result.layer),
                ("primary_type", "Primary type", term(result.primary_type)),
                ("types", "Types", listed((term(t) or "" for t in result.types), is_structured(app_ctx))),
                ("source_resource", "Source resource", term(result.source_resource)),
            ],
        )
        rows = [{**r.as_dict(), "predicate": term(r.predicate), "node": term(r.node)} for r in result.relationships]
        out.table("Relationships", CLASSIFY_COLUMNS, rows=rows, key="relationships", empty_message="No relationships.")
        inferred = sum(r.inferred for r in result.relationships)
        out.status(f"{len(rows)} relationship(s), {inferred} inferred, at revision {result.revision}")
