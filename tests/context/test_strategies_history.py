"""temporal-archaeology and plan-decision-context on a real store: three modules of
requests indexed, then sessions.py and hooks.py edited and re-indexed twice; plans and
decisions written through the commit API (validated by SHACL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cleveragents.context.model import ContextRequest, PlanContext, TemporalScope
from cleveragents.context.protocols import BackendSet
from cleveragents.graph.workspace import Workspace
from cleveragents.services import graph_service, indexing
from cleveragents.services.resources import ResourceInfo
from cleveragents.strategies.plan_decision_context import PlanDecisionContext
from cleveragents.strategies.temporal_archaeology import TemporalArchaeology
from tests.context.strategy_support import backends_for, build_requests_store

ID = "https://cleveragents.ai/id/test/"
_NOW = '"2026-01-16T09:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
IDENTITY = "\n".join(
    [
        f'id:{p} ca:attempt 1 ; ca:createdAt {_NOW} ; ca:createdBy "test" ; ca:definitionOfDone "done" ; '
        'ca:automationLevel "auto" .'
        for p in ("plan", "child", "other")
    ]
    + [
        f'id:{d} ca:createdAt {_NOW} ; ca:approvalStatus "auto" ; ca:ulid "01HXM7C2ZK4Q7C2B3F2R4VYVA{i}" .'
        for i, d in enumerate(("d-root-old", "d-root", "d-strategy", "d-tool", "d-spawn", "child-root", "other-root"))
    ]
)
PLANS = f"""PREFIX ca: <https://cleveragents.ai/ontology/ca#>
PREFIX id: <{ID}>
INSERT DATA {{
id:plan a ca:Plan ; ca:phase ca:ExecutePhase ; ca:state ca:processing .
id:d-root-old a ca:Decision ; ca:belongsToPlan id:plan ; ca:decisionType ca:prompt_definition ;
    ca:sequenceNumber 0 ; ca:chosenOption "Make requests retry." .
id:d-root a ca:Decision ; ca:belongsToPlan id:plan ; ca:decisionType ca:prompt_definition ;
    ca:supersedes id:d-root-old ; ca:sequenceNumber 3 ; ca:chosenOption "Retry idempotent requests." .
id:d-strategy a ca:Decision ; ca:belongsToPlan id:plan ; ca:decisionType ca:strategy_choice ;
    ca:parentDecision id:d-root ; ca:sequenceNumber 5 ; ca:question "Where to retry?" ;
    ca:chosenOption "In the HTTPAdapter, not in Session." ; ca:alternativeConsidered "In Session.send." ;
    ca:confidence 0.8 ; ca:rationale "Adapters own the connections." .
id:d-tool a ca:Decision ; ca:belongsToPlan id:plan ; ca:decisionType ca:tool_invocation ;
    ca:parentDecision id:d-strategy ; ca:sequenceNumber 6 ; ca:chosenOption "ran the test suite" .
id:d-spawn a ca:Decision ; ca:belongsToPlan id:plan ; ca:decisionType ca:subplan_spawn ;
    ca:parentDecision id:d-strategy ; ca:sequenceNumber 7 ; ca:chosenOption "Change requests/adapters.py." .
id:child a ca:Plan ; ca:phase ca:StrategizePhase ; ca:state ca:queued ; ca:parentPlan id:plan ;
    ca:rootPlan id:plan ; ca:spawnedBy id:d-spawn .
id:child-root a ca:Decision ; ca:belongsToPlan id:child ; ca:decisionType ca:prompt_definition ;
    ca:influencedBy id:d-spawn ; ca:sequenceNumber 0 ; ca:chosenOption "Add retries to HTTPAdapter.send." .
id:other a ca:Plan ; ca:phase ca:ExecutePhase ; ca:state ca:processing .
id:other-root a ca:Decision ; ca:belongsToPlan id:other ; ca:decisionType ca:prompt_definition ;
    ca:sequenceNumber 0 ; ca:chosenOption "Unrelated work." .
# The identity fields every plan and decision carries (shapes/ca.ttl, plans engine block).
id:plan ca:rootPlan id:plan . id:other ca:rootPlan id:other .
id:plan ca:ulid "01HXM7C2ZK4Q7C2B3F2R4VYV90" . id:child ca:ulid "01HXM7C2ZK4Q7C2B3F2R4VYV91" .
id:other ca:ulid "01HXM7C2ZK4Q7C2B3F2R4VYV92" .
{IDENTITY}
}}"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, ResourceInfo, int]:
    ws, info = build_requests_store(tmp_path_factory.mktemp("history"), only=("sessions", "adapters", "hooks"))
    first = backends_for(ws).revision
    assert first is not None
    tree = Path(info.location) / "requests"
    for n in (1, 2):  # two edits of Session.send and of hooks.py, each indexed as one commit
        sessions = (tree / "sessions.py").read_text()
        marker = '        kwargs.setdefault("stream", self.stream)\n'
        (tree / "sessions.py").write_text(sessions.replace(marker, marker + f"        edit_{n} = {n}\n", 1))
        (tree / "hooks.py").write_text((tree / "hooks.py").read_text() + f"\nEDIT_{n} = {n}\n")
        indexing.index(ws, [info])
    graph_service.update(ws, PLANS, message="plans for the context tests")
    return ws, info, first


@pytest.fixture(scope="module")
def backends(store: tuple[Workspace, ResourceInfo, int]) -> BackendSet:
    return backends_for(store[0])


def test_temporal_archaeology_counts_changes_in_the_focus_area(backends: BackendSet) -> None:
    strategy = TemporalArchaeology()
    request = ContextRequest(focus=["requests.sessions.Session.send"], temporal=TemporalScope.HISTORY)
    assert strategy.can_handle(request, backends) == 0.9
    fragments = strategy.assemble(request, backends, 800, PlanContext())
    assert len(fragments) == 1 and sum(f.token_count for f in fragments) <= 800
    text = fragments[0].content
    # indexed once, edited twice
    assert text.startswith("# History of requests/sessions.py: 3 commit(s) touched it, the last r")
    send = next(line for line in text.splitlines() if line.startswith("- Session.send:"))
    assert "3 revision(s)" in send
    assert "changed together with: requests/hooks.py (2)" in text  # the two edits; the first index is no coupling
    assert fragments[0].relevance_score == 1.0 and fragments[0].provenance.path == "requests/sessions.py"


def test_temporal_archaeology_honors_as_of(store: tuple[Workspace, ResourceInfo, int]) -> None:
    ws, _, first = store
    past = backends_for(ws, as_of=str(first))
    # At the first revision nothing was edited yet: no history to tell, unless asked for.
    focus = ["requests.sessions.Session.send"]
    assert TemporalArchaeology().assemble(ContextRequest(focus=focus), past, 800, PlanContext()) == []
    asked = ContextRequest(focus=focus, temporal=TemporalScope.HISTORY)
    fragments = TemporalArchaeology().assemble(asked, past, 800, PlanContext())
    assert f"1 commit(s) touched it, the last r{first}" in fragments[0].content
    assert f"not changed since it was added at r{first}" in fragments[0].content
    assert "unchanged since added" not in fragments[0].content and "changed together" not in fragments[0].content


def test_temporal_archaeology_without_focus_ranks_the_most_changed_files(backends: BackendSet) -> None:
    strategy = TemporalArchaeology()
    fragments = strategy.assemble(ContextRequest(query="what changed recently?"), backends, 4000, PlanContext())
    assert [f.provenance.path for f in fragments][:2] == ["requests/sessions.py", "requests/hooks.py"]
    assert sum(f.token_count for f in fragments) <= 4000
    tiny = strategy.assemble(ContextRequest(query="what changed recently?"), backends, 12, PlanContext())
    assert sum(f.token_count for f in tiny) <= 12


def test_plan_decisions_of_the_plan_and_its_ancestors(backends: BackendSet) -> None:
    strategy = PlanDecisionContext()
    assert strategy.can_handle(ContextRequest(), backends) > 0
    request = ContextRequest(focus=["requests/adapters.py"])
    fragments = strategy.assemble(request, backends, 1000, PlanContext(plan=ID + "child"))
    nodes = [f.uko_node.removeprefix(ID) for f in fragments]
    assert set(nodes) == {"child-root", "d-spawn", "d-root", "d-strategy", "d-tool"}  # not superseded, not other
    assert nodes[:2] == ["child-root", "d-spawn"]  # own framing decision, then what spawned this plan
    assert nodes[-1] == "d-tool"  # tool invocations matter least
    strategy_choice = fragments[nodes.index("d-strategy")]
    assert "Rationale: Adapters own the connections." in strategy_choice.content
    assert "Alternatives considered: In Session.send." in strategy_choice.content
    assert strategy_choice.metadata["plan_distance"] == 1
    assert sum(f.token_count for f in fragments) <= 1000


def test_plan_decisions_fit_a_small_budget_and_need_a_plan(backends: BackendSet) -> None:
    strategy = PlanDecisionContext()
    small = strategy.assemble(ContextRequest(), backends, 40, PlanContext(plan=ID + "child"))
    assert small and sum(f.token_count for f in small) <= 40
    assert strategy.assemble(ContextRequest(), backends, 1000, PlanContext()) == []
    assert "not assembling for a plan" in strategy.explain()
    assert strategy.can_handle(ContextRequest(), BackendSet()) == 0.0
