"""Corrections on a real store: the affected set is the transitive influence closure,
revert supersedes (never deletes) it and keeps the current tree well formed; append adds a
revision; a superseded decision cannot be corrected again; --dry-run changes nothing."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.errors import ConflictError
from cleveragents.graph.workspace import Workspace
from cleveragents.plans import corrections, decisions
from cleveragents.plans.decisions import DecisionInput
from cleveragents.plans.engine import PlanEngine
from cleveragents.services import plans

from .conftest import AGENT, error_of, write_action

SCRIPT = """
strategize:
  - key: approach
    decision: strategy_choice
    question: How to rename?
    chosen: "Rename {{ old }} everywhere"
    confidence: 0.9
  - key: files
    decision: resource_selection
    question: Which files?
    chosen: the callers
    confidence: 0.9
    influenced_by: [approach]
  - key: tests
    decision: implementation_choice
    question: Which tests?
    chosen: none
    confidence: 0.9
"""


def _tree(ws: Workspace, plan: str) -> dict[str, decisions.Decision]:
    return plans.tree(ws, plan)[1]


def test_revert_supersedes_the_closure_and_the_strategy_is_redecided(ws: Workspace, tmp_path: Path) -> None:
    plans.create_action(ws, write_action(tmp_path, SCRIPT), {}, agent=AGENT)
    plan = plans.use(
        ws, "local/demo-action", ["demo"], {"old": "f", "new": "g"}, automation_level="review", agent=AGENT
    )
    before = _tree(ws, plan.id)
    strategy = next(d for d in before.values() if d.type == "strategy_choice")
    impact = plans.correction_impact(ws, strategy.id)
    assert impact.summary() == "2 decisions, 0 subplans, 0 artifacts"  # the strategy and the file selection
    assert _tree(ws, plan.id).keys() == before.keys()  # the dry run wrote nothing
    result, after = plans.correct(ws, strategy.id, "revert", "Rename only the public API", agent=AGENT)
    assert (after.phase, after.state, after.attempt) == ("execute", "complete", 2)
    now = _tree(ws, plan.id)
    assert set(before) <= set(now)  # superseded, never deleted
    superseded = {d.type for d in now.values() if not d.current}
    assert superseded == {"strategy_choice", "resource_selection"}
    replacement = now[result.produced]
    assert (replacement.chosen, replacement.supersedes) == ("Rename only the public API", strategy.iri)
    # The script re-decided the file selection under the replacement (same question, current).
    files = [d for d in now.values() if d.type == "resource_selection" and d.current]
    assert len(files) == 1 and replacement.iri in files[0].influenced_by
    assert decisions.structural_violations(now.values()) == []
    message = error_of(ConflictError, plans.correct, ws, strategy.id, "revert", "again", agent=AGENT)
    assert f"superseded by decision {replacement.id}" in message
    diff = plans.correction_diff(ws, result.attempt)
    assert [d.type for d in diff.superseded] == ["strategy_choice", "resource_selection"]
    assert diff.replacements[0].iri == replacement.iri


def test_append_records_a_revision_and_keeps_the_tree(ws: Workspace, tmp_path: Path) -> None:
    plans.create_action(ws, write_action(tmp_path, SCRIPT), {}, agent=AGENT)
    plan = plans.use(
        ws, "local/demo-action", ["demo"], {"old": "f", "new": "g"}, automation_level="review", agent=AGENT
    )
    strategy = next(d for d in _tree(ws, plan.id).values() if d.type == "strategy_choice")
    result, _ = plans.correct(ws, strategy.id, "append", "Also rename the docs", agent=AGENT)
    now = _tree(ws, plan.id)
    assert all(d.current for d in now.values())
    added = now[result.produced]
    assert (added.type, added.parent) == ("user_intervention", strategy.iri)
    with ws.reader() as store:
        assert store.query(f"ASK {{ <{added.iri}> prov:wasRevisionOf <{strategy.iri}> }}")


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[tuple[int, list[int]]], int]:
    """Decision i (1..n) has a structural parent j < i (0 is the root prompt) and some
    extra upstream decisions among the earlier ones; and the decision to correct."""
    n = draw(st.integers(1, 9))
    nodes = []
    for i in range(1, n + 1):
        parent = draw(st.integers(0, i - 1))
        extra = draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True))
        nodes.append((parent, extra))
    return nodes, draw(st.integers(0, n))


def test_superseded_set_is_the_influence_closure(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "data", writer_wait=0)
    ws.initialize()
    plans_dir = tmp_path / "actions"
    plans_dir.mkdir()
    from cleveragents.services import projects

    projects.create(ws, "local/demo", agent=AGENT)
    plans.create_action(ws, write_action(plans_dir, "strategize: []\n"), {}, agent=AGENT)

    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
    @given(dags())
    def check(case: tuple[list[tuple[int, list[int]]], int]) -> None:
        nodes, target = case
        with ws.writer() as session:
            engine = PlanEngine(session, ws.data_dir, plans.resolve_actor, agent=AGENT)
            plan = engine.create("local/demo-action", ["demo"], {"old": "a", "new": "b"})
            root = decisions.current_root(session.store, plan.node)
            assert root is not None
            ids = [root.value]
            for i, (parent, extra) in enumerate(nodes, start=1):
                node, _ = decisions.record(
                    session,
                    plan.node,
                    DecisionInput(
                        type="implementation_choice",
                        chosen=f"d{i}",
                        parent=ids[parent],
                        influenced_by=tuple(ids[e] for e in extra),
                    ),
                    run=None,
                    agent=AGENT,
                )
                ids.append(node.value)
            downstream: dict[int, set[int]] = {i: set() for i in range(len(ids))}
            for i, (parent, extra) in enumerate(nodes, start=1):
                for up in {parent, *extra}:
                    downstream[up].add(i)
            expected, stack = {target}, [target]
            while stack:
                for nxt in downstream[stack.pop()]:
                    if nxt not in expected:
                        expected.add(nxt)
                        stack.append(nxt)
            result = corrections.correct(session, ids[target], "revert", "better", agent=AGENT)
            loaded = decisions.load(session.store, [ox.NamedNode(plan.iri)])
            superseded = {iri for iri, d in loaded.items() if not d.current}
            assert superseded == {ids[i] for i in expected}
            assert all(loaded[iri].superseded_by == result.produced for iri in superseded)
            assert decisions.structural_violations(loaded.values()) == []

    check()
