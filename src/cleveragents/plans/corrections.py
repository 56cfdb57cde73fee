"""Corrections (``plan correct``): the affected set of a decision is its transitive
closure in the influence DAG (across child plans, whose root prompts are influenced by the
parent's spawn decisions). Revert supersedes the original and everything it affected,
never deleting (``ca:supersededBy`` the replacement, ``prov:wasInvalidatedBy`` the
``ca:CorrectionAttempt`` at ``prov:invalidatedAtTime``), and puts the replacement where
the original was. Append records a ``user_intervention`` decision that is a
``prov:wasRevisionOf`` the original and leaves the tree as it is."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import ValidationError
from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.store import GraphStore

from . import decisions
from .decisions import Decision, DecisionInput
from .vocabulary import TYPE, Writer, ca, correction_iri, new_ulid, prov, text, time_literal, ulid_of

MODES = ("revert", "append")


@dataclass
class Impact:
    decision: str
    affected: list[str]  # decision IRIs, the corrected one first
    subplans: list[str]
    artifacts: int
    checkpoint: str | None = None  # the checkpoint of the earliest affected Execute decision

    def summary(self) -> str:
        return f"{len(self.affected)} decisions, {len(self.subplans)} subplans, {self.artifacts} artifacts"

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": ulid_of(self.decision),
            "affected": [ulid_of(a) for a in self.affected],
            "subplans": [ulid_of(p) for p in self.subplans],
            "artifacts": self.artifacts,
            "checkpoint": self.checkpoint,
            "summary": self.summary(),
        }


@dataclass
class CorrectionResult:
    attempt: str
    mode: str
    impact: Impact
    produced: str
    plan: str
    extra: dict[str, Any] = field(default_factory=dict)


def current_edges(store: GraphStore, root_plan: str) -> dict[str, list[str]]:
    """upstream -> its direct downstream decisions, over the current decisions of every
    plan under ``root_plan``."""
    asserted = store.asserted_view()
    family = f"?p ca:rootPlan <{root_plan}> . ?d ca:belongsToPlan ?p"
    # Two plain reads and a filter here: FILTER NOT EXISTS per edge took seconds on 10,000.
    gone = {
        row["d"].value
        for row in store.query(
            f"SELECT ?d WHERE {{ {family} . {{ ?d ca:supersededBy ?x }} UNION {{ ?d prov:wasInvalidatedBy ?y }} }}",
            view=asserted,
        )
    }
    edges: dict[str, list[str]] = defaultdict(list)
    for row in store.query(f"SELECT ?d ?u WHERE {{ {family} ; ca:influencedBy ?u }}", view=asserted):
        if row["d"].value not in gone:
            edges[row["u"].value].append(row["d"].value)
    return edges


def impact(store: GraphStore, ref: str) -> Impact:
    node = decisions.resolve(store, ref)
    plan = decisions.require_current(store, node, role="decision")
    root = next(iter(store.query(f"SELECT ?r WHERE {{ <{plan}> ca:rootPlan ?r }}")))["r"].value
    affected = [node.value, *decisions.downstream_closure(current_edges(store, root), node.value)]
    # What hangs off the affected decisions, read for the whole plan family and matched
    # here: a VALUES list of thousands of decisions is slow to join.
    hit = set(affected)
    asserted = store.asserted_view()
    family = f"?p ca:rootPlan <{root}>"
    subplans = sorted(
        {
            row["child"].value
            for row in store.query("SELECT ?child ?d WHERE { ?child ca:spawnedBy ?d }", view=asserted)
            if row["d"].value in hit
        }
    )
    artifacts = sum(
        int(row["n"].value)
        for row in store.query(
            f"SELECT ?d (COUNT(DISTINCT ?c) AS ?n) WHERE {{ {family} . ?call ca:forPlan ?p ; ca:duringDecision ?d . "
            "?c prov:wasGeneratedBy ?call ; ca:inChangeSet ?set . ?set ca:forPlan ?p } GROUP BY ?d",
            view=asserted,
        )
        if row["d"].value in hit
    )
    taken = [
        (row["t"].value, row["cp"].value)
        for row in store.query("SELECT ?cp ?d ?t WHERE { ?cp ca:atDecision ?d ; ca:createdAt ?t }", view=asserted)
        if row["d"].value in hit
    ]
    checkpoint = min(taken)[1] if taken else None
    return Impact(node.value, affected, subplans, artifacts, checkpoint)


def correct(
    writer: Writer, ref: str, mode: str, guidance: str, *, agent: str, run: ox.NamedNode | None = None
) -> CorrectionResult:
    """One commit: the attempt, the replacement (revert) or intervention (append), and the
    supersession of the affected set."""
    if mode not in MODES:
        raise ValidationError(f"--mode '{mode}' is not one of revert, append")
    if not guidance.strip():
        raise ValidationError("a correction needs guidance (--guidance TEXT, --guidance-file FILE or -)")
    store = writer.store
    found = impact(store, ref)
    original_node = ox.NamedNode(found.decision)
    plan_iri = decisions.require_current(store, original_node, role="decision")
    plan = ox.NamedNode(plan_iri)
    original: Decision = decisions.load(store, [plan])[found.decision]
    ulid = new_ulid()
    attempt = correction_iri(ulid)
    stamp = time_literal()
    triples: list[tuple[Any, Any, Any]] = [
        (attempt, TYPE, ca("CorrectionAttempt")),
        (attempt, ca("ulid"), text(ulid)),
        (attempt, ca("forPlan"), plan),
        (attempt, ca("correctsDecision"), original_node),
        (attempt, ca("correctionMode"), text(mode)),
        (attempt, ca("guidance"), text(guidance)),
        (attempt, ca("correctionStatus"), text("complete")),
        (attempt, ca("createdAt"), stamp),
        (attempt, ca("completedAt"), stamp),
        (attempt, prov("startedAtTime"), stamp),
    ]
    if mode == "revert":
        upstream = tuple(u for u in original.influenced_by if u not in found.affected and u != original.parent)
        new, added = decisions.decision_triples(
            store,
            plan,
            DecisionInput(
                type=original.type,
                chosen=guidance,
                question=original.question,
                parent=original.parent,
                influenced_by=upstream,
                rationale=f"Correction of {original.id} by the user",
            ),
            run=run,
            supersedes=original_node,
        )
        triples += added
        for iri in found.affected:
            node = ox.NamedNode(iri)
            triples += [
                (node, ca("supersededBy"), new),
                (node, prov("wasInvalidatedBy"), attempt),
                (node, prov("invalidatedAtTime"), stamp),
            ]
    else:
        new, added = decisions.decision_triples(
            store,
            plan,
            DecisionInput(
                type="user_intervention",
                chosen=guidance,
                question=f"What should change about: {original.chosen}",
                parent=original.iri,
            ),
            run=run,
        )
        triples += [*added, (new, prov("wasRevisionOf"), original_node)]
    triples.append((attempt, ca("producedDecision"), new))
    writer.commit(
        CommitRequest(
            add=triples,
            message=f"plan correct {original.id} --mode {mode}: {found.summary()}",
            cause="plan-correct",
            agent=agent,
        )
    )
    return CorrectionResult(ulid, mode, found, new.value, plan_iri)


@dataclass
class CorrectionDiff:
    attempt: str
    mode: str
    guidance: str
    superseded: list[Decision]
    replacements: list[Decision]

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "mode": self.mode,
            "guidance": self.guidance,
            "superseded": [d.as_dict() for d in self.superseded],
            "replacements": [d.as_dict() for d in self.replacements],
        }


def diff(store: GraphStore, ref: str) -> CorrectionDiff:
    """What a correction replaced and what replaced it: the superseded decisions and the
    decisions recorded since (the replacement and the re-decided part)."""
    node = ox.NamedNode(ref) if "://" in ref else correction_iri(ref.strip())
    rows = list(
        store.query(
            f"SELECT ?plan ?mode ?g ?new WHERE {{ {node} a ca:CorrectionAttempt ; ca:forPlan ?plan ; "
            "ca:correctionMode ?mode ; ca:guidance ?g ; ca:producedDecision ?new }"
        )
    )
    if not rows:
        from cleveragents.errors import NotFoundError

        raise NotFoundError(f"correction attempt '{ref}' not found")
    row = rows[0]
    plan = row["plan"]
    family = [r["p"] for r in store.query(f"SELECT ?p WHERE {{ ?p ca:parentPlan* {plan} }}")]
    loaded = decisions.load(store, family)
    superseded = sorted((d for d in loaded.values() if d.invalidated_by == node.value), key=lambda d: d.sequence)
    produced = loaded[row["new"].value]
    replacements = sorted(
        (d for d in loaded.values() if d.current and d.plan == produced.plan and d.sequence >= produced.sequence),
        key=lambda d: d.sequence,
    )
    return CorrectionDiff(ulid_of(node.value), row["mode"].value, row["g"].value, superseded, replacements)
