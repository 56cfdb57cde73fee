"""Render helpers shared by the command modules: structured vs human output, lists, RDF
terms, records, commit summaries and SHACL violation tables.

json and yaml get fixed keys with real lists and full N-Triples terms, so scripts can rely
on them; the human formats get panels, comma-separated lists and compact names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import pyoxigraph as ox

from cleveragents.errors import ShapeViolationError
from cleveragents.graph.commit import CommitResult
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.services import graph_service
from cleveragents.terms import compact

from .invocation import AppContext

STRUCTURED = ("json", "yaml")


def is_structured(app_ctx: AppContext) -> bool:
    """True for json/yaml, where output is data for scripts rather than a display."""
    return (app_ctx.format or "") in STRUCTURED


def listed(values: Iterable[str], structured: bool, *, empty: str = "") -> list[str] | str:
    """A list as it is (json/yaml) or comma-separated, ``empty`` when there is nothing (human formats)."""
    items = list(values)
    return items if structured else ", ".join(items) or empty


# --- RDF terms --------------------------------------------------------------------------


def term_mode(fmt: str | None) -> str:
    """How terms are written for an output format (None: not resolved, as plain): nt, value or compact."""
    if fmt in STRUCTURED:
        return "nt"
    return "value" if fmt in ("csv", "tsv") else "compact"


def term_text(term: Any, mode: str = "compact") -> str | None:
    """One RDF term as text (None stays None, for unbound variables)."""
    if term is None:
        return None
    if mode == "nt":
        return str(term)
    if isinstance(term, ox.NamedNode):
        return compact(term.value) if mode == "compact" else term.value
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Literal):
        if mode == "compact" and term.language:
            return f'"{term.value}"@{term.language}'
        return term.value
    if isinstance(term, ox.Triple):
        parts = (term_text(t, mode) for t in (term.subject, term.predicate, term.object))
        return "<< " + " ".join(p or "" for p in parts) + " >>"
    return str(term)


# --- records and commits ----------------------------------------------------------------


def record(
    out: OutputSession,
    app_ctx: AppContext,
    title: str,
    key: str,
    fields: Sequence[tuple[str, str, Any]],
) -> None:
    """A record: ``{name: value}`` under ``key`` in json/yaml, a panel of labels otherwise."""
    if is_structured(app_ctx):
        out.data(key, {name: value for name, _, value in fields})
    else:
        out.panel(title, {label: value for _, label, value in fields}, key=key)


def render_commit(out: OutputSession, result: CommitResult, what: str) -> None:
    """The commit's revision and counts (``data.commit`` in json)."""
    summary = graph_service.commit_summary(result)
    out.data("commit", summary, hidden=True)
    if result.empty:
        out.status(f"No change: {what} left the graph as it was (revision {result.revision})")
        return
    inferred = ""
    if result.inferred_added or result.inferred_removed:
        inferred = f"; inferred +{result.inferred_added} -{result.inferred_removed}"
    out.status(
        f"Committed revision {result.revision} ({what}): +{result.added} -{result.removed} triples{inferred}",
        "ok",
    )


class NamedEntity(Protocol):
    """A resource or project as the services return it."""

    @property
    def name(self) -> str: ...

    def as_dict(self) -> dict[str, object]: ...


def render_retraction(
    out: OutputSession, result: CommitResult, entity: NamedEntity, *, key: str, command: str, done: str
) -> None:
    """A retracted resource or project: its last state (json only), the commit, then
    ``done NAME`` as the confirmation."""
    out.data(key, entity.as_dict(), hidden=True)
    render_commit(out, result, f"{command} {entity.name}")
    out.status(f"{done} {entity.name}", "ok")


# --- SHACL violations -------------------------------------------------------------------


def _field(item: Any, name: str) -> Any:
    # Violations come as report objects from the validator or as plain dicts.
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


_IRI_IN_PATH = re.compile(r"<([^<>\s]+)>")


def _display_value(value: Any) -> Any:
    """A report cell on screen: terms and IRIs compacted, everything else as it is."""
    if isinstance(value, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple):
        return term_text(value)
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        return compact(value)
    if isinstance(value, str) and "<" in value:  # a SPARQL path: compact each IRI in it
        return _IRI_IN_PATH.sub(lambda m: compact(m.group(1)), value)
    return value


def is_violation(result: Any) -> bool:
    """True for sh:Violation (the default severity); False for warnings and info."""
    severity = str(_field(result, "severity") or "Violation").lower()
    return "warning" not in severity and "info" not in severity


def _violation_columns(show_severity: bool) -> list[ColumnDef]:
    return [
        ColumnDef("focus_node", "Focus node"),
        ColumnDef("result_path", "Path"),
        ColumnDef("constraint", "Constraint"),
        ColumnDef("severity", "Severity", hidden=not show_severity),
        ColumnDef("message", "Message"),
        ColumnDef("value", "Value"),
        ColumnDef("shape", hidden=True),
    ]


def violations_table(
    out: OutputSession, app_ctx: AppContext, violations: Iterable[Any], *, show_severity: bool = False
) -> None:
    """SHACL report rows: a readable table on screen, ``data.violations`` in json."""
    if is_structured(app_ctx):
        rows = [v.to_dict() if hasattr(v, "to_dict") else dict(v) for v in violations]
        out.data("violations", rows)
        return
    columns = _violation_columns(show_severity)
    rows = [{c.name: _display_value(_field(v, c.name)) for c in columns} for v in violations]
    out.table("SHACL report", columns, rows=rows, key="violations")


@contextmanager
def reporting_violations(out: OutputSession, app_ctx: AppContext) -> Iterator[None]:
    """Show the report of a rejected commit before its error line."""
    try:
        yield
    except ShapeViolationError as exc:
        violations_table(out, app_ctx, exc.violations)
        raise
