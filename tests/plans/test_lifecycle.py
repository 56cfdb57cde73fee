"""The plan lifecycle on a real store: use -> Strategize -> Execute -> Apply through the
scripted actor, the verbs each phase/state allows, pauses for approval, reversion."""

from __future__ import annotations

from pathlib import Path

from cleveragents.errors import ConflictError, ValidationError
from cleveragents.graph.workspace import Workspace
from cleveragents.services import plans

from .conftest import AGENT, error_of, write_action

SCRIPT = """
strategize:
  - key: approach
    decision: strategy_choice
    question: How to rename?
    chosen: "Rename {{ old }} to {{ new }} and every caller"
    alternatives: [Rename the definition only]
    confidence: 0.9
    rationale: Callers would break otherwise
  - key: files
    decision: resource_selection
    question: Which files?
    chosen: every file that calls {{ old }}
    confidence: 0.6
    influenced_by: [approach]
execute:
  - decision: implementation_choice
    question: How to edit?
    chosen: textual replacement of the identifier
    confidence: 0.95
    influenced_by: [files]
"""


def _use(ws: Workspace, tmp_path: Path, level: str, script: str = SCRIPT, **fields: object):
    config = write_action(tmp_path, script, **fields)
    plans.create_action(ws, config, {}, agent=AGENT)
    return plans.use(ws, "local/demo-action", ["demo"], {"old": "f", "new": "g"}, automation_level=level, agent=AGENT)


def test_auto_runs_every_phase_and_records_the_decisions(ws: Workspace, tmp_path: Path) -> None:
    plan = _use(ws, tmp_path, "auto")
    assert (plan.phase, plan.state) == ("apply", "applied")
    assert plan.description == "Rename f to g" and plan.definition_of_done == "No f is left"
    _, found, _ = plans.tree(ws, plan.id)
    kinds = sorted((d.type, d.phase) for d in found.values())
    assert kinds == [
        ("implementation_choice", "execute"),
        ("prompt_definition", None),
        ("resource_selection", "strategize"),
        ("strategy_choice", "strategize"),
    ]
    by_type = {d.type: d for d in found.values()}
    # The structural parent defaults to the root prompt, which also influences the decision.
    prompt = by_type["prompt_definition"]
    assert by_type["strategy_choice"].parent == prompt.iri
    assert by_type["resource_selection"].influenced_by == sorted([prompt.iri, by_type["strategy_choice"].iri])
    assert [d.sequence for d in sorted(found.values(), key=lambda d: d.sequence)] == [0, 1, 2, 3]


def test_review_stops_before_apply_and_a_wrong_verb_is_a_409(ws: Workspace, tmp_path: Path) -> None:
    plan = _use(ws, tmp_path, "review", SCRIPT.replace("confidence: 0.6", "confidence: 0.8"))
    assert (plan.phase, plan.state) == ("execute", "complete")
    message = error_of(ConflictError, plans.execute, ws, plan.id, agent=AGENT)
    assert "phase execute, state complete" in message
    assert "verbs allowed now: apply, correct, prompt, cancel" in message
    after, _ = plans.status(ws, plan.id)
    assert (after.phase, after.state, after.updated) == ("execute", "complete", plan.updated)
    applied = plans.apply(ws, plan.id, agent=AGENT)
    assert (applied.phase, applied.state) == ("apply", "applied")
    assert "none (the plan is terminal)" in error_of(ConflictError, plans.cancel, ws, plan.id, "late", agent=AGENT)


def test_a_doubtful_decision_pauses_until_approved(ws: Workspace, tmp_path: Path) -> None:
    plan = _use(ws, tmp_path, "review")  # threshold 0.7; the resource_selection has 0.6
    assert (plan.phase, plan.state) == ("strategize", "queued")
    assert plan.awaiting is not None
    resumed = plans.resume(ws, plan.id, agent=AGENT)
    assert (resumed.phase, resumed.state) == ("execute", "complete")
    _, found, _ = plans.tree(ws, plan.id)
    statuses = sorted((d.type, d.approval) for d in found.values())
    assert ("resource_selection", "approved") in statuses
    assert len([d for d in found.values() if d.type == "resource_selection"]) == 1


def test_prompt_overrides_the_awaiting_decision(ws: Workspace, tmp_path: Path) -> None:
    plan = _use(ws, tmp_path, "review")
    after, intervention = plans.prompt(ws, plan.id, "only the files under src/", agent=AGENT)
    assert intervention.type == "user_intervention" and intervention.parent == plan.awaiting
    _, found, _ = plans.tree(ws, plan.id)
    assert found[plan.awaiting].approval == "overridden"
    assert after.state == "complete"


def test_manual_stops_after_strategize_and_pauses_on_every_actor_decision(ws: Workspace, tmp_path: Path) -> None:
    plan = _use(ws, tmp_path, "manual")
    assert (plan.phase, plan.state) == ("strategize", "queued")
    plan = plans.resume(ws, plan.id, agent=AGENT)
    plan = plans.resume(ws, plan.id, agent=AGENT)
    assert (plan.phase, plan.state) == ("strategize", "complete")


def test_execute_reverts_to_strategize_with_findings(ws: Workspace, tmp_path: Path) -> None:
    script = SCRIPT.replace("confidence: 0.6", "confidence: 0.8") + (
        "  - revert: the files are generated; edit the generator instead\n    on_attempt: [1]\n"
    )
    plan = _use(ws, tmp_path, "review", script)
    assert (plan.phase, plan.state, plan.attempt) == ("execute", "complete", 2)
    with ws.reader() as store:
        rows = list(store.query(f"SELECT ?f WHERE {{ ?r ca:runOfPlan <{plan.iri}> ; ca:findings ?f }}"))
    assert [r["f"].value for r in rows] == ["the files are generated; edit the generator instead"]


def test_arguments_are_checked_in_one_error(ws: Workspace, tmp_path: Path) -> None:
    config = write_action(
        tmp_path,
        SCRIPT,
        args={"old": {"type": "string", "required": True}, "count": {"type": "int", "min": 1, "max": 5}},
    )
    plans.create_action(ws, config, {}, agent=AGENT)
    message = error_of(
        ValidationError, plans.use, ws, "local/demo-action", ["demo"], {"count": "many", "extra": "1"}, agent=AGENT
    )
    assert "extra: not an argument of local/demo-action" in message
    assert "count: 'many' is not an int (expected int in [1, 5])" in message
    assert "old: missing (expected string)" in message
    assert plans.list_plans(ws) == []


def test_an_actor_failure_errors_the_phase(ws: Workspace, tmp_path: Path) -> None:
    plan = _use(ws, tmp_path, "auto", "strategize:\n  - fail: cannot read the project\n")
    assert (plan.phase, plan.state) == ("strategize", "errored")
    assert plan.error == "cannot read the project"
