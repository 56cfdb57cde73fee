"""Invariant reconciliation on a real store: the plan's Invariant Reconciliation Actor (a
scripted one) names two contradicting invariants, precedence keeps the narrower one as an
invariant_enforced decision that records what it overrode, `invariant list --effective`
shows the reconciled view, and a child plan inherits that view without reconciling again."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from cleveragents.graph.workspace import Workspace
from cleveragents.services import plans

from .conftest import AGENT

ALIAS = "Public names keep a deprecated alias"
REMOVE = "Remove old names completely"
PARENT = """
invariants:
  - conflict: ["public names keep a deprecated ALIAS", "Remove old names completely"]
    reason: an alias is an old name
  - conflict: ["A rule no plan has", "Remove old names completely"]
strategize:
  - key: child
    decision: subplan_spawn
    question: Who does the rest?
    chosen: a subplan
    confidence: 0.9
    action: local/child
execute:
  - tool: create-subplan
    decision_key: child
    required: true
"""
CHILD = """
invariants:
  - conflict: ["Remove old names completely", "Child rule"]
strategize:
  - decision: strategy_choice
    question: How?
    chosen: directly
    confidence: 0.9
"""


def _action(folder: Path, name: str, script: str, **fields: object) -> Path:
    (folder / f"{name}.yaml").write_text(textwrap.dedent(script))
    actor = f"scripted:{folder / f'{name}.yaml'}"
    body = {
        "name": f"local/{name}",
        "description": name,
        "definition_of_done": "done",
        "strategy_actor": actor,
        "execution_actor": actor,
        "invariant_actor": actor,
        "automation_level": "review",
        **fields,
    }
    path = folder / f"{name}-action.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def _enforced(found: dict, plan_iri: str) -> dict[str, object]:
    return {d.chosen: d for d in found.values() if d.plan == plan_iri and d.type == "invariant_enforced" and d.current}


def test_precedence_settles_a_conflict_the_actor_finds_and_a_child_inherits_the_view(
    ws: Workspace, tmp_path: Path
) -> None:
    plans.create_action(ws, _action(tmp_path, "child", CHILD, invariants=["Child rule"]), {}, agent=AGENT)
    plans.create_action(ws, _action(tmp_path, "parent", PARENT), {}, agent=AGENT)
    plans.add_invariant(ws, ALIAS, "global", None, agent=AGENT)
    plans.add_invariant(ws, REMOVE, "project", "local/demo", agent=AGENT)
    plans.add_invariant(ws, "Tests pass", "global", None, agent=AGENT)

    plan = plans.use(ws, "local/parent", ["demo"], {}, agent=AGENT)
    assert (plan.phase, plan.state) == ("execute", "complete"), plan.error
    root, found, family = plans.tree(ws, plan.id)

    enforced = _enforced(found, root.iri)
    assert sorted(enforced) == [REMOVE, "Tests pass"]  # the global alias rule lost to the project's
    winner = enforced[REMOVE]
    assert winner.alternatives == [ALIAS]
    assert "overrides global invariant" in winner.rationale and "(an alias is an old name)" in winner.rationale
    assert [i.text for i in plans.list_invariants(ws, "plan", plan.id, effective=True)] == [REMOVE, "Tests pass"]

    # The child inherits the parent's reconciled view plus its action's own invariant; its
    # own reconciliation rule (REMOVE vs "Child rule") is not applied: it does not reconcile.
    (child,) = [p for p in family.values() if p.parent == root.iri]
    assert sorted(_enforced(found, child.iri)) == ["Child rule", REMOVE, "Tests pass"]


def test_without_a_conflict_each_scope_is_enforced_once(ws: Workspace, tmp_path: Path) -> None:
    script = "strategize:\n  - decision: strategy_choice\n    question: How?\n    chosen: directly\n"
    plans.create_action(ws, _action(tmp_path, "solo", script, invariants=[ALIAS]), {}, agent=AGENT)
    plans.add_invariant(ws, ALIAS.upper(), "global", None, agent=AGENT)
    plans.add_invariant(ws, REMOVE, "project", "local/demo", agent=AGENT)
    plan = plans.use(ws, "local/solo", ["demo"], {}, agent=AGENT)
    _, found, _ = plans.tree(ws, plan.id)
    enforced = _enforced(found, plan.iri)
    # No rule of the script names both texts that apply: nothing is overridden; the same text
    # at plan and global scope is enforced once, from the plan.
    assert sorted(enforced) == [ALIAS, REMOVE]
    assert all(d.alternatives == [] for d in enforced.values())
