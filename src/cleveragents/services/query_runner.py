"""Running a read query with a time limit.

Oxigraph cannot cancel a query from Python (signals are not seen while it runs), so a
query with a limit runs in a forked child on a read-only open of the store; the parent
kills the child when the limit passes. Results cross back as SPARQL JSON / N-Triples
and are parsed into ordinary pyoxigraph terms.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents import errors
from cleveragents.errors import CleverAgentsError, DatabaseError, QueryTimeoutError
from cleveragents.graph.history import resolve_revision
from cleveragents.graph.store import GraphStore
from cleveragents.terms import PREFIXES


@dataclass
class QueryOutcome:
    """A query's answer: rows for SELECT, a boolean for ASK, triples for CONSTRUCT/DESCRIBE."""

    form: str  # "select" | "ask" | "graph"
    revision: int
    variables: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[ox.Triple] = field(default_factory=list)


def check_syntax(sparql: str) -> None:
    """Raise QuerySyntaxError with line and column before any store is touched."""
    from cleveragents.graph.store import syntax_error

    try:
        ox.Store().query(sparql, prefixes=PREFIXES)
    except SyntaxError as exc:
        raise syntax_error(exc, "SPARQL") from None


Substitutions = dict[str, Any] | None


def evaluate(store: GraphStore, sparql: str, as_of: str | None, bindings: Substitutions = None) -> QueryOutcome:
    """Run the query in this process (no time limit)."""
    revision = resolve_revision(store, as_of)
    result = store.query(sparql, view=store.view(revision), bindings=bindings)
    return _outcome(result, revision)


def _outcome(result: Any, revision: int) -> QueryOutcome:
    if isinstance(result, ox.QueryBoolean):
        return QueryOutcome("ask", revision, boolean=bool(result))
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        rows = [{n: row[n] for n in names} for row in result]
        return QueryOutcome("select", revision, variables=names, rows=rows)
    return QueryOutcome("graph", revision, triples=list(result))


def run_with_timeout(
    store_dir: Path, sparql: str, as_of: str | None, timeout: float, bindings: Substitutions = None
) -> QueryOutcome:
    check_syntax(sparql)
    if timeout <= 0:
        with GraphStore.open_read_only(store_dir) as store:
            return evaluate(store, sparql, as_of, bindings)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, store_dir, sparql, as_of, bindings), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout):
            raise QueryTimeoutError(
                f"query cancelled after {timeout:g} s",
                suggestions=[
                    "add LIMIT or narrow the patterns",
                    "raise it: --timeout or 'agents config set query.timeout N'",
                ],
            )
        payload = parent.recv_bytes()
    except EOFError:
        raise DatabaseError(f"the query process died (exit code {proc.exitcode})") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
    return _decode(payload)


def _child(conn: Connection, store_dir: Path, sparql: str, as_of: str | None, bindings: Substitutions) -> None:
    try:
        store = GraphStore.open_read_only(store_dir)
        revision = resolve_revision(store, as_of)
        result = store.query(sparql, view=store.view(revision), bindings=bindings)
        if isinstance(result, ox.QueryTriples):
            body = ("graph", revision, result.serialize(format=ox.RdfFormat.N_TRIPLES))
        else:
            body = ("results", revision, result.serialize(format=ox.QueryResultsFormat.JSON))
        conn.send_bytes(pickle.dumps(("ok", body)))
    except CleverAgentsError as exc:
        conn.send_bytes(pickle.dumps(("error", (type(exc).__name__, exc.message, exc.suggestions))))
    except Exception as exc:  # reported to the parent, which owns the error output
        conn.send_bytes(pickle.dumps(("error", ("DatabaseError", str(exc), []))))
    finally:
        conn.close()


def _decode(payload: bytes) -> QueryOutcome:
    status, data = pickle.loads(payload)
    if status == "error":
        name, message, suggestions = data
        cls = getattr(errors, name, DatabaseError)
        raise cls(message, suggestions=suggestions)
    form, revision, body = data
    if form == "graph":
        return QueryOutcome("graph", revision, triples=[q.triple for q in ox.parse(body, ox.RdfFormat.N_TRIPLES)])
    return _outcome(ox.parse_query_results(body, ox.QueryResultsFormat.JSON), revision)
