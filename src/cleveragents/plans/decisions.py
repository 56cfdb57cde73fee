"""Decisions: recording them (one commit each, SHACL-checked), the structural tree
(``ca:parentDecision``) and the influence DAG (``ca:influencedBy``, many upstreams per
decision), kept apart as the spec says.

A decision nested under a parent is also influenced by it: correcting a decision then
invalidates its whole structural subtree through the DAG alone, so the current tree stays
connected (reachability) after any correction."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

import pyoxigraph as ox

from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore

from . import actions
from .vocabulary import (
    DECISION_TYPES,
    TYPE,
    Writer,
    ca,
    decimal,
    decision_iri,
    integer,
    new_ulid,
    prov,
    text,
    time_literal,
    ulid_of,
)


@dataclass(frozen=True)
class DecisionInput:
    """What an actor (or the engine) decides; ``parent`` and ``influenced_by`` are decision
    IRIs or ULIDs. ``context_hash`` names a recorded context assembly (ca:ContextAssembly)."""

    type: str
    chosen: str
    question: str = ""
    alternatives: tuple[str, ...] = ()
    confidence: float | None = None
    rationale: str = ""
    reasoning: str = ""
    parent: str | None = None
    influenced_by: tuple[str, ...] = ()
    context_hash: str | None = None
    relevant: tuple[str, ...] = ()
    invariant: str | None = None
    max_parallel: int | None = None
    # A subplan_spawn decision names the child plan's action and its arguments.
    subplan_action: str | None = None
    subplan_arguments: dict[str, Any] | None = None


@dataclass
class Decision:
    iri: str
    plan: str
    type: str
    sequence: int
    chosen: str
    question: str = ""
    alternatives: list[str] = field(default_factory=list)
    confidence: float | None = None
    rationale: str = ""
    reasoning: str = ""
    parent: str | None = None
    influenced_by: list[str] = field(default_factory=list)
    superseded_by: str | None = None
    invalidated_by: str | None = None
    supersedes: str | None = None
    approval: str = "auto"
    created: str = ""
    phase: str | None = None
    context_hash: str | None = None
    context_ref: str | None = None
    relevant: list[str] = field(default_factory=list)
    spawned: list[str] = field(default_factory=list)
    max_parallel: int | None = None
    subplan_action: str | None = None  # the action's IRI
    subplan_arguments: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return ulid_of(self.iri)

    @property
    def current(self) -> bool:
        return self.superseded_by is None and self.invalidated_by is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "plan": ulid_of(self.plan),
            "type": self.type,
            "sequence": self.sequence,
            "question": self.question,
            "chosen": self.chosen,
            "alternatives": self.alternatives,
            "confidence": self.confidence,
            "rationale": self.rationale,
            "parent": ulid_of(self.parent) if self.parent else None,
            "influenced_by": [ulid_of(i) for i in self.influenced_by],
            "superseded_by": ulid_of(self.superseded_by) if self.superseded_by else None,
            "supersedes": ulid_of(self.supersedes) if self.supersedes else None,
            "current": self.current,
            "approval": self.approval,
            "phase": self.phase,
            "created": self.created,
            "context_hash": self.context_hash,
            "spawned_plans": [ulid_of(p) for p in self.spawned],
            **(
                {"subplan_action": self.subplan_action, "subplan_arguments": self.subplan_arguments}
                if self.subplan_action
                else {}
            ),
            **({"max_parallel": self.max_parallel} if self.max_parallel is not None else {}),
        }


def resolve(store: GraphStore, ref: str) -> ox.NamedNode:
    """A decision by IRI or ULID."""
    node = ox.NamedNode(ref) if "://" in ref else decision_iri(ref.strip())
    if not store.query(f"ASK {{ {node} a ca:Decision }}"):
        raise NotFoundError(f"decision '{ref}' not found", suggestions=["agents plan tree PLAN_ID"])
    return node


def _status(store: GraphStore, node: ox.NamedNode) -> tuple[str | None, str | None, str]:
    """(superseded_by, invalidated_by, plan) of a decision."""
    rows = list(
        store.query(
            f"SELECT ?plan ?by ?inv WHERE {{ {node} ca:belongsToPlan ?plan . "
            f"OPTIONAL {{ {node} ca:supersededBy ?by }} OPTIONAL {{ {node} prov:wasInvalidatedBy ?inv }} }}"
        )
    )
    row = rows[0]
    by, inv = row["by"], row["inv"]
    return (by.value if by else None, inv.value if inv else None, row["plan"].value)


def require_current(store: GraphStore, node: ox.NamedNode, *, role: str) -> str:
    """The decision's plan; a superseded decision is refused, naming its superseder."""
    by, inv, plan = _status(store, node)
    if by or inv:
        successor = f"decision {ulid_of(by)}" if by else f"correction {ulid_of(inv or '')}"
        raise ConflictError(
            f"{role} {ulid_of(node.value)} is superseded by {successor}; use the current one",
            suggestions=[f"agents plan explain {ulid_of(by)}" if by else "agents plan tree --show-superseded"],
        )
    return plan


def current_root(store: GraphStore, plan: ox.NamedNode) -> ox.NamedNode | None:
    for row in store.query(
        f"SELECT ?d WHERE {{ ?d ca:belongsToPlan {plan} ; ca:decisionType ca:prompt_definition . "
        "FILTER NOT EXISTS { ?d ca:parentDecision ?p } FILTER NOT EXISTS { ?d ca:supersededBy ?s } "
        "FILTER NOT EXISTS { ?d prov:wasInvalidatedBy ?c } }"
    ):
        return row["d"]
    return None


def next_sequence(store: GraphStore, plan: ox.NamedNode) -> int:
    for row in store.query(f"SELECT (MAX(?s) AS ?m) WHERE {{ ?d ca:belongsToPlan {plan} ; ca:sequenceNumber ?s }}"):
        if row["m"] is not None:
            return int(row["m"].value) + 1
    return 0


def _context(store: GraphStore, context_hash: str) -> tuple[ox.NamedNode, list[ox.NamedNode]]:
    """The recorded assembly with this hash and the UKO nodes it contained."""
    rows = list(
        store.query(
            f"SELECT ?a ?node WHERE {{ ?a a ca:ContextAssembly ; ca:contextHash {text(context_hash)} . "
            "OPTIONAL { ?a ca:hasFragment ?f . ?f ca:fragmentNode ?node } }"
        )
    )
    if not rows:
        raise ValidationError(f"no recorded context assembly has the hash {context_hash}")
    return rows[0]["a"], sorted({r["node"] for r in rows if r["node"] is not None}, key=lambda n: n.value)


def decision_triples(
    store: GraphStore,
    plan: ox.NamedNode,
    decision: DecisionInput,
    *,
    run: ox.NamedNode | None,
    approval: str = "auto",
    supersedes: ox.NamedNode | None = None,
    sequence: int | None = None,
    check_current: bool = True,
) -> tuple[ox.NamedNode, list[tuple[Any, Any, Any]]]:
    """The triples of a new decision, after checking it against the plan's current tree."""
    if decision.type not in DECISION_TYPES:
        raise ValidationError(f"decision type '{decision.type}' is not one of {', '.join(DECISION_TYPES)}")
    if not decision.chosen.strip():
        raise ValidationError("a decision needs its chosen option")
    if decision.confidence is not None and not 0 <= decision.confidence <= 1:
        raise ValidationError(f"confidence {decision.confidence} is not between 0 and 1")
    parent: ox.NamedNode | None = None
    if decision.parent:
        parent = resolve(store, decision.parent)
    elif decision.type != "prompt_definition" or (supersedes is None and current_root(store, plan) is not None):
        parent = current_root(store, plan)
        if parent is None:
            raise ConflictError(
                f"plan {ulid_of(plan.value)} has no current prompt_definition to hang the decision under"
            )
    if parent is not None:
        parent_plan = require_current(store, parent, role="parent decision") if check_current else None
        if parent_plan is not None and parent_plan != plan.value:
            raise ValidationError(f"parent decision {ulid_of(parent.value)} belongs to another plan")
    upstream = [resolve(store, ref) for ref in decision.influenced_by]
    if check_current:
        for node in upstream:
            require_current(store, node, role="upstream decision")
    ulid = new_ulid()
    node = decision_iri(ulid)
    seq = next_sequence(store, plan) if sequence is None else sequence
    triples: list[tuple[Any, Any, Any]] = [
        (node, TYPE, ca("Decision")),
        (node, ca("ulid"), text(ulid)),
        (node, ca("belongsToPlan"), plan),
        (node, ca("decisionType"), ca(decision.type)),
        (node, ca("sequenceNumber"), integer(seq)),
        (node, ca("chosenOption"), text(decision.chosen)),
        (node, ca("approvalStatus"), text(approval)),
        (node, ca("createdAt"), time_literal()),
    ]
    if run is not None:
        triples.append((node, prov("wasGeneratedBy"), run))
    if parent is not None:
        triples.append((node, ca("parentDecision"), parent))
        upstream.append(parent)
    triples += [(node, ca("influencedBy"), u) for u in dict.fromkeys(upstream)]
    if decision.question:
        triples.append((node, ca("question"), text(decision.question)))
    triples += [(node, ca("alternativeConsidered"), text(a)) for a in dict.fromkeys(decision.alternatives) if a]
    if decision.confidence is not None:
        triples.append((node, ca("confidence"), decimal(decision.confidence)))
    if decision.rationale:
        triples.append((node, ca("rationale"), text(decision.rationale)))
    if decision.reasoning:
        triples.append((node, ca("actorReasoning"), text(decision.reasoning)))
    if decision.context_hash:
        assembly, nodes = _context(store, decision.context_hash)
        triples.append((node, ca("hotContextHash"), text(decision.context_hash)))
        triples.append((node, ca("contextSnapshotRef"), text(assembly.value)))
        triples += [(node, ca("relevantResource"), n) for n in nodes]
    triples += [(node, ca("relevantResource"), ox.NamedNode(r)) for r in decision.relevant]
    if decision.invariant:
        triples.append((node, ca("enforcesInvariant"), ox.NamedNode(decision.invariant)))
    if decision.max_parallel is not None:
        triples.append((node, ca("subplanMaxParallel"), integer(decision.max_parallel)))
    if decision.subplan_action or decision.subplan_arguments:
        if decision.type != "subplan_spawn":
            raise ValidationError(f"only a subplan_spawn decision names a subplan action, not a {decision.type}")
        if not decision.subplan_action:
            raise ValidationError("a subplan_spawn decision with arguments needs its subplan action")
        triples.append((node, ca("subplanAction"), actions.find(store, decision.subplan_action)))
        triples.append((node, ca("subplanArguments"), text(json.dumps(decision.subplan_arguments or {}))))
    if supersedes is not None:
        triples.append((node, ca("supersedes"), supersedes))
    return node, triples


def record(
    writer: Writer,
    plan: ox.NamedNode,
    decision: DecisionInput,
    *,
    run: ox.NamedNode | None,
    agent: str,
    approval: str = "auto",
    extra: Sequence[tuple[Any, Any, Any]] = (),
    remove: Sequence[tuple[Any, Any, Any]] = (),
) -> tuple[ox.NamedNode, CommitResult]:
    """One decision (and its edges) in one commit."""
    node, triples = decision_triples(writer.store, plan, decision, run=run, approval=approval)
    result = writer.commit(
        CommitRequest(
            add=[*triples, *extra],
            remove=remove,
            message=f"decision {decision.type} in plan {ulid_of(plan.value)}",
            cause="record-decision",
            agent=agent,
        )
    )
    return node, result


def add_influence(writer: Writer, downstream: str, upstream: str, *, agent: str) -> CommitResult:
    """A new influence edge between existing decisions; one that would close a cycle is
    rejected with the cycle printed."""
    store = writer.store
    down, up = resolve(store, downstream), resolve(store, upstream)
    require_current(store, down, role="decision")
    require_current(store, up, role="upstream decision")
    path = influence_path(store, up, down)
    if path is not None:
        cycle = " -> ".join(ulid_of(n) for n in [down.value, *path])
        raise ConflictError(f"the influence {ulid_of(down.value)} <- {ulid_of(up.value)} would close a cycle: {cycle}")
    return writer.commit(
        CommitRequest(
            add=[(down, ca("influencedBy"), up)],
            message=f"influence {ulid_of(down.value)} <- {ulid_of(up.value)}",
            cause="record-decision",
            agent=agent,
        )
    )


def influence_path(store: GraphStore, start: ox.NamedNode, goal: ox.NamedNode) -> list[str] | None:
    """The chain of ca:influencedBy from ``start`` up to ``goal`` (both included), if any."""
    edges = _upstream_edges(store, [start])
    previous: dict[str, str | None] = {start.value: None}
    queue = deque([start.value])
    while queue:
        at = queue.popleft()
        if at == goal.value:
            chain = [at]
            while previous[chain[-1]] is not None:
                chain.append(previous[chain[-1]])  # type: ignore[arg-type]
            return list(reversed(chain))
        for nxt in edges.get(at, ()):
            if nxt not in previous:
                previous[nxt] = at
                queue.append(nxt)
    return None


def _upstream_edges(store: GraphStore, starts: Iterable[ox.NamedNode]) -> dict[str, list[str]]:
    values = " ".join(str(s) for s in starts)
    out: dict[str, list[str]] = defaultdict(list)
    for row in store.query(
        f"SELECT ?a ?b WHERE {{ VALUES ?s {{ {values} }} ?s ca:influencedBy* ?a . ?a ca:influencedBy ?b }}"
    ):
        out[row["a"].value].append(row["b"].value)
    return out


def downstream_closure(edges: dict[str, list[str]], start: str) -> list[str]:
    """Every decision transitively influenced by ``start`` (``edges``: upstream -> its
    direct downstream decisions), breadth first, ``start`` excluded."""
    seen = {start}
    order: list[str] = []
    queue = deque([start])
    while queue:
        for nxt in edges.get(queue.popleft(), ()):
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                queue.append(nxt)
    return order


def load(store: GraphStore, plans: Sequence[ox.NamedNode]) -> dict[str, Decision]:
    """Every decision (current and superseded) of these plans, by IRI.

    One query reads every asserted property of the plans' decisions and Python assembles
    them: a SELECT with an OPTIONAL per property joined each decision once per property
    (2,000 decisions took seconds)."""
    out: dict[str, Decision] = {}
    if not plans:
        return out
    values = " ".join(str(p) for p in plans)
    asserted = store.asserted_view()
    props: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    owner: dict[str, str] = {}
    for row in store.query(
        f"SELECT ?d ?plan ?p ?o WHERE {{ VALUES ?plan {{ {values} }} ?d ca:belongsToPlan ?plan ; ?p ?o }}",
        view=asserted,
    ):
        iri = row["d"].value
        owner[iri] = row["plan"].value
        props[iri][row["p"].value].append(row["o"])
    phases = {
        row["r"].value: row["ph"].value
        for row in store.query(
            f"SELECT ?r ?ph WHERE {{ VALUES ?plan {{ {values} }} ?r ca:runOfPlan ?plan ; ca:runPhase ?ph }}",
            view=asserted,
        )
    }
    keys = {name: ca(name).value for name in _DECISION_PROPERTIES}
    generated, invalidated, kind = prov("wasGeneratedBy").value, prov("wasInvalidatedBy").value, TYPE.value
    for iri, found in props.items():
        if ca("Decision").value not in {t.value for t in found.get(kind, [])}:
            continue

        def one(name: str, where: dict[str, list[Any]] = found) -> str | None:
            terms = where.get(keys.get(name, name))
            return terms[0].value if terms else None

        confidence, phase, max_parallel = one("confidence"), phases.get(one(generated) or ""), one("subplanMaxParallel")
        out[iri] = Decision(
            iri=iri,
            plan=owner[iri],
            type=(one("decisionType") or "").rsplit("#", 1)[-1],
            sequence=int(one("sequenceNumber") or 0),
            chosen=one("chosenOption") or "",
            question=one("question") or "",
            alternatives=sorted(t.value for t in found.get(keys["alternativeConsidered"], [])),
            confidence=float(Decimal(confidence)) if confidence is not None else None,
            rationale=one("rationale") or "",
            reasoning=one("actorReasoning") or "",
            parent=one("parentDecision"),
            influenced_by=sorted(t.value for t in found.get(keys["influencedBy"], [])),
            superseded_by=one("supersededBy"),
            invalidated_by=one(invalidated),
            supersedes=one("supersedes"),
            approval=one("approvalStatus") or "auto",
            created=one("createdAt") or "",
            phase=phase.rsplit("#", 1)[-1].removesuffix("Phase").lower() if phase else None,
            context_hash=one("hotContextHash"),
            context_ref=one("contextSnapshotRef"),
            max_parallel=int(max_parallel) if max_parallel is not None else None,
            subplan_action=one("subplanAction"),
            subplan_arguments=json.loads(one("subplanArguments") or "{}"),
        )
    for row in store.query("SELECT ?d ?child WHERE { ?child ca:spawnedBy ?d }", view=asserted):
        if row["d"].value in out:
            out[row["d"].value].spawned.append(row["child"].value)
    return out


_DECISION_PROPERTIES: Final = (
    "decisionType", "sequenceNumber", "chosenOption", "question", "alternativeConsidered", "confidence",
    "rationale", "actorReasoning", "parentDecision", "influencedBy", "supersededBy", "supersedes",
    "approvalStatus", "createdAt", "hotContextHash", "contextSnapshotRef", "subplanMaxParallel",
    "subplanAction", "subplanArguments",
)  # fmt: skip


def structural_violations(decisions: Iterable[Decision]) -> list[str]:
    """The four structural invariants of a plan's current tree (core-concepts.md
    "Structural Invariants"), checked on loaded decisions; [] when all hold."""
    current = {d.iri: d for d in decisions if d.current}
    problems: list[str] = []
    roots = [d for d in current.values() if d.type == "prompt_definition" and d.parent is None]
    if len(roots) != 1:
        problems.append(f"single root: {len(roots)} current root prompt_definition decisions")
    for d in current.values():
        if d.parent is not None and d.parent not in current:
            problems.append(f"reachability: {d.id}'s parent {ulid_of(d.parent)} is not in the current tree")
        seen: set[str] = set()
        at: Decision | None = d
        while at is not None and at.parent is not None:
            if at.iri in seen:
                problems.append(f"acyclicity: {d.id} is on a parent cycle")
                break
            seen.add(at.iri)
            at = current.get(at.parent)
    sequences = [d.sequence for d in sorted(current.values(), key=lambda d: d.created)]
    if len(set(sequences)) != len(sequences):
        problems.append("monotonic ordering: two current decisions share a sequence number")
    return problems
