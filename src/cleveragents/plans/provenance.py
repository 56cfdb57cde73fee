"""The "why" link: after a plan is applied and its resources re-indexed, every entity
revision that the re-index produced in a file the plan changed is linked to the decision
whose tool calls changed that file (``ca:producedRevision``) and to the plan's Apply run
(``prov:generated``). The links are new triples about the decision and the run; revision
nodes themselves are never rewritten (the audit trail forbids it)."""

from __future__ import annotations

from typing import Any

from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.iris import commit_iri

from .records import PlanRecord
from .vocabulary import PHASE_IRI, Writer, ca, integer, prov, ulid_of


def link_applied_changes(writer: Writer, plan: PlanRecord, revision: int, *, agent: str) -> CommitResult:
    """Links for the revisions made at ``revision`` (the re-index commit after apply)."""
    store = writer.store
    rows = store.query(
        f"""SELECT DISTINCT ?decision ?rev ?entity ?run WHERE {{
          ?call a ca:ToolCall ; ca:forPlan {plan.node} ; ca:duringDecision ?decision .
          ?change prov:wasGeneratedBy ?call ; ca:changedPath ?path ; ca:changedResource ?resource .
          ?entity uko:sourcePath ?path ; uko:sourceResource ?resource .
          ?rev ca:revisionOf ?entity ; prov:wasGeneratedBy <{commit_iri(revision)}> .
          ?run ca:runOfPlan {plan.node} ; ca:runPhase {PHASE_IRI["apply"]} ; ca:attempt {integer(plan.attempt)} .
        }}"""
    )
    triples: list[tuple[Any, Any, Any]] = []
    for row in rows:
        triples += [
            (row["decision"], ca("producedRevision"), row["rev"]),
            (row["decision"], ca("producedChange"), row["entity"]),
            (row["run"], prov("generated"), row["rev"]),
        ]
    return writer.commit(
        CommitRequest(
            add=triples,
            message=f"plan {plan.id}: link the applied revisions to their decisions",
            cause="plan-provenance",
            agent=agent,
        )
    )


def deciding_decisions(store: Any, entity: str) -> dict[int, tuple[str, str]]:
    """Commit revision -> (plan ULID, decision ULID) for each revision of ``entity`` that an
    applied plan produced (``ca:producedRevision``): what ``graph blame`` shows beside the
    commit that asserted a triple."""
    rows = store.query(
        f"""SELECT ?n ?plan ?decision WHERE {{
          ?rev ca:revisionOf <{entity}> ; prov:wasGeneratedBy ?commit .
          ?commit ca:revision ?n .
          ?decision ca:producedRevision ?rev ; ca:belongsToPlan ?plan .
        }} ORDER BY ?n ?decision"""
    )
    out: dict[int, tuple[str, str]] = {}
    for row in rows:
        out.setdefault(int(row["n"].value), (ulid_of(row["plan"].value), ulid_of(row["decision"].value)))
    return out
