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
from .vocabulary import PHASE_IRI, Writer, ca, integer, prov


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
