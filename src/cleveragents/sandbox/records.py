"""Sandbox facts as graph triples: checkpoints (``ca:Checkpoint``) and validation runs
(``ca:ValidationRun``). Callers commit them through the commit engine."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyoxigraph as ox
from ulid import ULID

from cleveragents.terms import CA, ID, RDF_TYPE, RDFS, XSD

from .core import Checkpoint, Sandbox
from .validation import ValidationRun

Triple = tuple[Any, Any, Any]
_TYPE = ox.NamedNode(RDF_TYPE)


def _p(name: str) -> ox.NamedNode:
    return ox.NamedNode(CA + name)


def _typed(value: str, datatype: str) -> ox.Literal:
    return ox.Literal(value, datatype=ox.NamedNode(XSD + datatype))


def checkpoint_triples(
    plan: ox.NamedNode, sandbox: Sandbox, checkpoint: Checkpoint, *, decision: ox.NamedNode | None = None
) -> tuple[ox.NamedNode, list[Triple]]:
    """A ``ca:Checkpoint`` of the sandbox's resource (its IRI and triples). ``sandboxRef``
    is the commit id that ``rollback`` takes; ``checkpointType`` the kind."""
    node = ox.NamedNode(f"{ID}checkpoint/{ULID()}")
    triples: list[Triple] = [
        (node, _TYPE, _p("Checkpoint")),
        (node, _p("forPlan"), plan),
        (node, _p("checkpointType"), ox.Literal(checkpoint.kind)),
        (node, _p("sandboxRef"), ox.Literal(checkpoint.id)),
        (node, _p("location"), ox.Literal(str(sandbox.tree))),
        (node, _p("createdAt"), _typed(checkpoint.created, "dateTime")),
        (node, ox.NamedNode(RDFS + "label"), ox.Literal(checkpoint.label or f"checkpoint {checkpoint.sequence}")),
    ]
    if sandbox.resource.iri:
        triples.append((node, _p("checkpointOf"), ox.NamedNode(sandbox.resource.iri)))
    if checkpoint.label:
        triples.append((node, _p("reason"), ox.Literal(checkpoint.label)))
    if decision is not None:
        triples.append((node, _p("atDecision"), decision))
    return node, triples


def validation_run_triples(
    plan: ox.NamedNode,
    run: ValidationRun,
    *,
    resource: ox.NamedNode | None = None,
    decision: ox.NamedNode | None = None,
) -> tuple[ox.NamedNode, list[Triple]]:
    node = ox.NamedNode(f"{ID}validationrun/{ULID()}")
    triples: list[Triple] = [
        (node, _TYPE, _p("ValidationRun")),
        (node, _p("forPlan"), plan),
        (node, _p("validationKind"), ox.Literal(run.kind)),
        (node, _p("commandLine"), ox.Literal(run.command)),
        (node, _p("succeeded"), _typed("true" if run.passed else "false", "boolean")),
        (node, _p("timedOut"), _typed("true" if run.timed_out else "false", "boolean")),
        (node, _p("durationMs"), _typed(format(Decimal(str(run.duration_s * 1000)).normalize(), "f"), "decimal")),
        (node, _p("outputTail"), ox.Literal(run.output_tail)),
    ]
    if run.exit_code is not None:
        triples.append((node, _p("exitCode"), _typed(str(run.exit_code), "integer")))
    if resource is not None:
        triples.append((node, _p("forResource"), resource))
    if decision is not None:
        triples.append((node, _p("duringDecision"), decision))
    return node, triples
