"""Running a read query with a time limit.

Oxigraph cannot cancel a query from Python (signals are not seen while it runs), so
every query runs in a forked child on a read-only open of the store; the parent kills
the child when the limit passes or at Ctrl+C. Results cross back as SPARQL JSON / N-Triples
and are parsed into ordinary pyoxigraph terms.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents import errors
from cleveragents.errors import CleverAgentsError, DatabaseError, QuerySyntaxError, QueryTimeoutError
from cleveragents.graph.history import resolve_revision
from cleveragents.graph.sparql_guard import refuse_services
from cleveragents.graph.store import GraphStore
from cleveragents.processes import ChildDied, ChildTimedOut, run_in_child
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
    store_dir: Path,
    sparql: str,
    as_of: str | None,
    timeout: float | None,
    bindings: Substitutions = None,
    *,
    allowed_services: frozenset[str] = frozenset(),
) -> QueryOutcome:
    """Evaluate in a killable child (see processes.py): stopped ``timeout`` seconds in
    (None or <= 0: no limit) or at Ctrl+C, whatever the query's shape. Syntax errors
    come back from the child too: nothing is evaluated in this process."""
    refuse_services(sparql, allowed_services, PREFIXES)
    try:
        payload = run_in_child(_child, (store_dir, sparql, as_of, bindings, allowed_services), timeout)
    except ChildTimedOut:
        raise QueryTimeoutError(
            f"query cancelled after {timeout:g} s",
            suggestions=[
                "add LIMIT or narrow the patterns",
                "raise it: --timeout or 'agents config set query.timeout N'",
            ],
        ) from None
    except ChildDied as exc:
        raise DatabaseError(f"the query process died (exit code {exc.exitcode})") from None
    return _decode(payload)


def _child(
    store_dir: Path, sparql: str, as_of: str | None, bindings: Substitutions, allowed_services: frozenset[str]
) -> bytes:
    try:
        store = GraphStore.open_read_only(store_dir)
        store.allowed_services = allowed_services
        revision = resolve_revision(store, as_of)
        result = store.query(sparql, view=store.view(revision), bindings=bindings)
        if isinstance(result, ox.QueryTriples):
            body = ("graph", revision, result.serialize(format=ox.RdfFormat.N_TRIPLES))
        else:
            body = ("results", revision, result.serialize(format=ox.QueryResultsFormat.JSON))
        return pickle.dumps(("ok", body))
    except QuerySyntaxError as exc:
        return pickle.dumps(("syntax", (exc.message, exc.line, exc.column)))
    except CleverAgentsError as exc:
        return pickle.dumps(("error", (type(exc).__name__, exc.message, exc.suggestions)))
    except Exception as exc:  # reported to the parent, which owns the error output
        return pickle.dumps(("error", ("DatabaseError", str(exc), [])))


def _decode(payload: bytes) -> QueryOutcome:
    status, data = pickle.loads(payload)
    if status == "syntax":
        message, line, column = data
        raise QuerySyntaxError(message, line=line, column=column)
    if status == "error":
        name, message, suggestions = data
        cls = getattr(errors, name, DatabaseError)
        raise cls(message, suggestions=suggestions)
    form, revision, body = data
    if form == "graph":
        return QueryOutcome("graph", revision, triples=[q.triple for q in ox.parse(body, ox.RdfFormat.N_TRIPLES)])
    return _outcome(ox.parse_query_results(body, ox.QueryResultsFormat.JSON), revision)
