"""Invariants: constraints attached at global, project, action or plan scope, and their
reconciliation into a plan's effective view (plan > project > global; action invariants
are carried forward as plan-level ones when the action is used; a child plan inherits its
parent's reconciled view).

The same constraint stated at several scopes is enforced once, from the narrowest scope.
Whether two different texts contradict each other is judged by the plan's Invariant
Reconciliation Actor (``invariant_actor``), which names the conflicting pairs; the
precedence then decides which of each pair is enforced (``resolve_conflicts``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore

from .vocabulary import TYPE, Writer, boolean, ca, invariant_iri, new_ulid, text, time_literal, ulid_of

SCOPES: Final = ("global", "project", "action", "plan")
# Narrower scopes win (core-concepts.md "Layer 3: Invariant Enforcement").
PRECEDENCE: Final = {"plan": 0, "action": 0, "project": 1, "global": 2}


@dataclass(frozen=True)
class Invariant:
    iri: str
    text: str
    scope: str
    target: str | None
    created: str
    retired: bool = False

    @property
    def id(self) -> str:
        return ulid_of(self.iri)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "scope": self.scope,
            "target": self.target,
            "created": self.created,
            "retired": self.retired,
            "iri": self.iri,
        }


def invariant_triples(
    description: str, scope: str, target: ox.NamedNode | None, *, agent: str
) -> tuple[ox.NamedNode, list[tuple[Any, Any, Any]]]:
    if scope not in SCOPES:
        raise ValidationError(f"invariant scope '{scope}' is not one of {', '.join(SCOPES)}")
    if not description.strip():
        raise ValidationError("an invariant needs a text")
    if (scope == "global") != (target is None):
        raise ValidationError("a global invariant has no target; the other scopes name one")
    ulid = new_ulid()
    node = invariant_iri(ulid)
    triples: list[tuple[Any, Any, Any]] = [
        (node, TYPE, ca("Invariant")),
        (node, ca("ulid"), text(ulid)),
        (node, ca("description"), text(description.strip())),
        (node, ca("invariantScope"), text(scope)),
        (node, ca("createdAt"), time_literal()),
        (node, ca("createdBy"), text(agent)),
    ]
    if target is not None:
        triples.append((node, ca("appliesTo"), target))
    return node, triples


def add(
    writer: Writer, description: str, scope: str, target: ox.NamedNode | None, *, agent: str
) -> tuple[Invariant, CommitResult]:
    node, triples = invariant_triples(description, scope, target, agent=agent)
    result = writer.commit(
        CommitRequest(add=triples, message=f"invariant add --{scope}", cause="invariant-add", agent=agent)
    )
    return read(writer.store, node), result


def find(store: GraphStore, ref: str) -> ox.NamedNode:
    for row in store.query(
        f"SELECT ?i WHERE {{ ?i a ca:Invariant . "
        f"FILTER(STR(?i) = {text(ref)} || STRENDS(STR(?i), {text('/' + ref)})) }}"
    ):
        return row["i"]
    raise NotFoundError(f"invariant '{ref}' not found", suggestions=["agents invariant list"])


def read(store: GraphStore, node: ox.NamedNode) -> Invariant:
    values: dict[str, Any] = {}
    for quad in store.live_quads(node):
        if not isinstance(quad.object, ox.Triple):  # an invariant's values are IRIs and literals
            values.setdefault(quad.predicate.value.rsplit("#", 1)[-1], quad.object.value)
    return Invariant(
        iri=node.value,
        text=values.get("description", ""),
        scope=values.get("invariantScope", ""),
        target=values.get("appliesTo"),
        created=values.get("createdAt", ""),
        retired=values.get("retired") == "true",
    )


def remove(writer: Writer, ref: str, *, agent: str) -> tuple[Invariant, CommitResult]:
    """Retire an invariant: new plans no longer see it; decisions that enforced it keep
    their link and history keeps the invariant."""
    node = find(writer.store, ref)
    current = read(writer.store, node)
    if current.retired:
        return current, CommitResult(revision=writer.store.head, commit=None)
    result = writer.commit(
        CommitRequest(
            add=[(node, ca("retired"), boolean(True))],
            message=f"invariant remove {current.id}",
            cause="invariant-remove",
            agent=agent,
        )
    )
    return read(writer.store, node), result


def list_scope(store: GraphStore, scope: str | None = None, target: ox.NamedNode | None = None) -> list[Invariant]:
    """Live invariants of a scope (and target), oldest first; every live one without filters."""
    filters = ""
    if scope:
        filters += f" ?i ca:invariantScope {text(scope)} ."
    if target is not None:
        filters += f" ?i ca:appliesTo {target} ."
    rows = store.query(
        f"SELECT ?i WHERE {{ ?i a ca:Invariant ; ca:createdAt ?c .{filters} "
        "FILTER NOT EXISTS { ?i ca:retired true } } ORDER BY ?c"
    )
    return [read(store, row["i"]) for row in rows]


def effective(store: GraphStore, plan: ox.NamedNode) -> list[Invariant]:
    """The reconciled view for a plan: its own and its ancestors' plan-level invariants
    (a child inherits), the invariants of the projects it targets and the global ones;
    one per distinct text, from the narrowest scope."""
    rows = store.query(
        f"""SELECT DISTINCT ?i WHERE {{
          {{ {plan} ca:parentPlan* ?p . ?i ca:appliesTo ?p }}
          UNION {{ {plan} ca:parentPlan* ?p . ?p ca:targetsProject ?proj . ?i ca:appliesTo ?proj }}
          UNION {{ ?i ca:invariantScope "global" }}
          ?i a ca:Invariant .
          FILTER NOT EXISTS {{ ?i ca:retired true }}
        }}"""
    )
    found = [read(store, row["i"]) for row in rows]
    found.sort(key=lambda i: (PRECEDENCE.get(i.scope, 3), i.created))
    chosen: dict[str, Invariant] = {}
    for inv in found:
        chosen.setdefault(" ".join(inv.text.lower().split()), inv)
    return sorted(chosen.values(), key=lambda i: (PRECEDENCE.get(i.scope, 3), i.created))


@dataclass(frozen=True)
class InvariantConflict:
    """Two invariants (IRIs) an Invariant Reconciliation Actor judged contradictory."""

    first: str
    second: str
    reason: str = ""


def resolve_conflicts(
    candidates: Sequence[Invariant], conflicts: Sequence[InvariantConflict]
) -> tuple[list[Invariant], dict[str, tuple[Invariant, str]]]:
    """The invariants still enforced, and each overridden one (IRI) -> (the one that
    overrides it, the reason). Of a conflicting pair the narrower scope wins (plan >
    project > global); at the same scope the newer one, as a later statement of intent."""
    by_iri = {inv.iri: inv for inv in candidates}
    overridden: dict[str, tuple[Invariant, str]] = {}
    for conflict in conflicts:
        missing = [ref for ref in (conflict.first, conflict.second) if ref not in by_iri]
        if missing:
            raise ValidationError(
                f"the invariant conflict names {', '.join(ulid_of(m) for m in missing)}, "
                "not among the invariants that apply to the plan"
            )
        a, b = by_iri[conflict.first], by_iri[conflict.second]
        if a.iri == b.iri:
            continue
        winner, loser = (a, b) if _outranks(a, b) else (b, a)
        overridden.setdefault(loser.iri, (winner, conflict.reason))
    return [inv for inv in candidates if inv.iri not in overridden], overridden


def _outranks(a: Invariant, b: Invariant) -> bool:
    rank_a, rank_b = PRECEDENCE.get(a.scope, 3), PRECEDENCE.get(b.scope, 3)
    return rank_a < rank_b if rank_a != rank_b else a.created >= b.created


def enforced(store: GraphStore, plan: ox.NamedNode) -> list[Invariant]:
    """The invariants the plan's current invariant_enforced decisions enforce: its
    reconciled view once Strategize has run."""
    rows = store.query(
        f"""SELECT DISTINCT ?i WHERE {{
          ?d ca:belongsToPlan {plan} ; ca:decisionType ca:invariant_enforced ; ca:enforcesInvariant ?i .
          FILTER NOT EXISTS {{ ?d ca:supersededBy ?x }} FILTER NOT EXISTS {{ ?d prov:wasInvalidatedBy ?y }}
        }}"""
    )
    found = [read(store, row["i"]) for row in rows]
    return sorted(found, key=lambda i: (PRECEDENCE.get(i.scope, 3), i.created))


def inherited(store: GraphStore, plan: ox.NamedNode, parent: ox.NamedNode) -> list[Invariant]:
    """A child plan's view: its parent's reconciled (enforced) view, not reconciled again,
    plus the child's own plan-level invariants (its action's)."""
    chosen: dict[str, Invariant] = {}
    for inv in [*enforced(store, parent), *list_scope(store, "plan", plan)]:
        chosen.setdefault(" ".join(inv.text.lower().split()), inv)
    return list(chosen.values())
