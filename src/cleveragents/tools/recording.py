"""Recording tool calls and their changes in the graph: one commit per call.

A call becomes a ``ca:ToolCall`` (a prov:Activity of the plan); each change it made
becomes a ``ca:Change`` in the plan's ``ca:ChangeSet``, ``prov:wasGeneratedBy`` the call.
The commit goes through the commit engine like every write, so SHACL checks it and
``--as-of`` sees the ChangeSet grow call by call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyoxigraph as ox
from ulid import ULID

from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.terms import CA, ID, PROV, RDF_TYPE, XSD

from .model import ToolCallRecord, plan_iri

Commit = Callable[[CommitRequest], CommitResult]
_TYPE = ox.NamedNode(RDF_TYPE)


def _p(name: str) -> ox.NamedNode:
    return ox.NamedNode(CA + name)


def _literal(value: Any) -> ox.Literal:
    if isinstance(value, bool):
        return ox.Literal("true" if value else "false", datatype=ox.NamedNode(XSD + "boolean"))
    if isinstance(value, int):
        return ox.Literal(str(value), datatype=ox.NamedNode(XSD + "integer"))
    if isinstance(value, float | Decimal):
        return ox.Literal(format(Decimal(str(value)).normalize(), "f"), datatype=ox.NamedNode(XSD + "decimal"))
    return ox.Literal(str(value))


def change_set_iri(plan: str) -> ox.NamedNode:
    """The plan's ChangeSet (one per plan, named after the plan's ULID)."""
    return ox.NamedNode(f"{ID}changeset/{plan_iri(plan).rstrip('/').rsplit('/', 1)[-1]}")


class GraphRecorder:
    """A ``CallRecorder`` that commits each call (and its changes) through ``commit``
    (a WriteSession's commit)."""

    def __init__(self, commit: Commit, *, agent: str = "cleveragents") -> None:
        self._commit = commit
        self._agent = agent
        self.last: CommitResult | None = None

    def record(self, call: ToolCallRecord) -> None:
        triples = call_triples(call)
        verdict = "ok" if call.result.ok else f"refused: {call.result.error_code}"
        self.last = self._commit(
            CommitRequest(
                add=triples,
                message=f"tool {call.tool} ({verdict})",
                cause="tool-call",
                agent=self._agent,
            )
        )


def call_triples(call: ToolCallRecord) -> list[tuple[Any, Any, Any]]:
    node = ox.NamedNode(f"{ID}toolcall/{ULID()}")
    plan = ox.NamedNode(plan_iri(call.plan))
    result = call.result
    triples: list[tuple[Any, Any, Any]] = [
        (node, _TYPE, _p("ToolCall")),
        (node, _p("forPlan"), plan),
        (node, _p("toolName"), ox.Literal(call.tool)),
        (node, _p("toolArguments"), ox.Literal(json.dumps(dict(call.arguments), sort_keys=True, default=str))),
        (node, _p("succeeded"), _literal(result.ok)),
        (node, ox.NamedNode(PROV + "startedAtTime"), ox.Literal(call.started, datatype=ox.NamedNode(XSD + "dateTime"))),
        (node, _p("durationMs"), _literal(call.duration_ms)),
    ]
    if result.error:
        triples.append((node, _p("errorMessage"), ox.Literal(result.error)))
    if result.error_code:
        triples.append((node, _p("errorCode"), ox.Literal(result.error_code)))
    if call.decision:
        triples.append((node, _p("duringDecision"), ox.NamedNode(call.decision)))
    if result.changes:
        change_set = change_set_iri(call.plan)
        triples += [(change_set, _TYPE, _p("ChangeSet")), (change_set, _p("forPlan"), plan)]
        for index, change in enumerate(result.changes):
            item = ox.NamedNode(f"{node.value}/change/{index}")
            triples += [
                (item, _TYPE, _p("Change")),
                (item, _p("inChangeSet"), change_set),
                (item, _p("changeKind"), ox.Literal(change.kind)),
                (item, _p("changedPath"), ox.Literal(change.path)),
                (item, _p("changeIndex"), _literal(index)),
                (item, ox.NamedNode(PROV + "wasGeneratedBy"), node),
            ]
            if change.resource in call.resources:
                triples.append((item, _p("changedResource"), ox.NamedNode(call.resources[change.resource])))
            if change.previous_path:
                triples.append((item, _p("previousPath"), ox.Literal(change.previous_path)))
            if change.before:
                triples.append((item, _p("contentHashBefore"), ox.Literal(change.before)))
            if change.after:
                triples.append((item, _p("contentHashAfter"), ox.Literal(change.after)))
    return triples
