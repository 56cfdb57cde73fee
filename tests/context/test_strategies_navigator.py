"""breadth-depth-navigator on a real store indexed from requests' src/requests."""

from __future__ import annotations

import pytest

from cleveragents.context.model import ContextRequest, PlanContext
from cleveragents.context.protocols import BackendSet, ContextStrategy
from cleveragents.errors import UsageError
from cleveragents.graph.workspace import Workspace
from cleveragents.services.resources import ResourceInfo
from cleveragents.strategies.breadth_depth_navigator import STRATEGIES, BreadthDepthNavigator
from tests.context.strategy_support import backends_for, build_requests_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, ResourceInfo]:
    return build_requests_store(tmp_path_factory.mktemp("navigator"))


@pytest.fixture(scope="module")
def backends(store: tuple[Workspace, ResourceInfo]) -> BackendSet:
    return backends_for(store[0])


def _assemble(backends: BackendSet, budget: int, **request: object) -> tuple[BreadthDepthNavigator, list]:
    nav = BreadthDepthNavigator()
    return nav, nav.assemble(ContextRequest(**request), backends, budget, PlanContext())  # type: ignore[arg-type]


def _key(node: str) -> str:
    return node.split("#", 1)[-1] if "#" in node else node.rsplit("/", 1)[-1]


def test_it_is_a_strategy_exported_for_the_loader() -> None:
    assert [BreadthDepthNavigator] == STRATEGIES
    nav = BreadthDepthNavigator()
    assert isinstance(nav, ContextStrategy)
    assert nav.name == "breadth-depth-navigator"
    assert nav.capabilities.quality_score == 0.85 and nav.capabilities.uses_graph


def test_one_hop_from_session_request_reaches_what_it_calls_and_its_callers(backends: BackendSet) -> None:
    nav, fragments = _assemble(
        backends, 4000, focus=["requests.sessions.Session.request"], breadth=1, depth="FULL_SOURCE"
    )
    by_key = {_key(f.uko_node): f for f in fragments}
    focus = by_key["Session.request"]
    assert focus.metadata["distance"] == 0 and focus.detail_depth == 13  # FULL_SOURCE of a Python method
    assert (
        focus.content.startswith("def request(")
        and "allow_redirects=True" in focus.content
        and "return resp" in focus.content
    )
    assert {"Session.send", "Session.prepare_request", "Request", "Session"} <= set(by_key)  # callees, container
    assert {"Session.get", "Session.post"} <= set(by_key)  # callers: dependsOn is walked both ways
    assert by_key["Session.send"].metadata["edge"] == "calls:out"
    for f in fragments:
        if f.metadata["distance"] == 1:
            assert f.detail_depth < focus.detail_depth
            assert f.relevance_score < focus.relevance_score
    assert sum(f.token_count for f in fragments) <= 4000
    prov = focus.provenance
    assert prov.path == "requests/sessions.py" and prov.line_range == (500, 591) and prov.strategy == nav.name


def test_detail_falls_with_distance_at_breadth_two(backends: BackendSet) -> None:
    _, fragments = _assemble(backends, 16000, focus=["requests.sessions.Session.request"], breadth=2, depth=9)
    distances = {f.metadata["distance"] for f in fragments}
    assert distances == {0, 1, 2}
    for d in (0, 1, 2):
        depths = {f.detail_depth for f in fragments if f.metadata["distance"] == d}
        assert max(depths) <= {0: 9, 1: 4, 2: 0}[d]  # the spec's gradient: 9 -> 4 -> 0
    # Ranked by distance first: the packer sees the focus before anything else.
    assert [f.metadata["distance"] for f in fragments] == sorted(f.metadata["distance"] for f in fragments)
    assert sum(f.token_count for f in fragments) <= 16000


@pytest.mark.parametrize("budget", [1, 40, 300, 1000])
def test_small_budgets_are_never_exceeded(backends: BackendSet, budget: int) -> None:
    _, fragments = _assemble(backends, budget, focus=["requests/sessions.py"], breadth=2, depth="FULL_SOURCE")
    assert sum(f.token_count for f in fragments) <= budget
    if budget >= 40:
        assert fragments  # something fits, at a lower depth if need be


def test_focus_by_path_suffix_and_short_name(backends: BackendSet) -> None:
    _, by_path = _assemble(backends, 2000, focus=["sessions.py"], breadth=0, depth=0)
    assert [_key(f.uko_node) for f in by_path] == ["sessions.py"]
    _, by_suffix = _assemble(backends, 2000, focus=["Session.send"], breadth=0, depth="SIGNATURES")
    assert [_key(f.uko_node) for f in by_suffix] == ["Session.send"]
    assert by_suffix[0].content.startswith("def send(self, request, **kwargs)")


def test_a_focus_that_matches_nothing_is_explained(backends: BackendSet) -> None:
    nav, fragments = _assemble(backends, 2000, focus=["no.such.symbol_anywhere"], breadth=2)
    assert fragments == []
    assert "focus matched nothing: no.such.symbol_anywhere" in nav.explain()


def test_an_unknown_named_depth_is_a_usage_error(backends: BackendSet) -> None:
    with pytest.raises(UsageError, match="unknown detail level 'FULLSOURCE'"):
        _assemble(backends, 2000, focus=["requests.sessions.Session.send"], depth="FULLSOURCE")


def test_another_resources_scope_sees_nothing(store: tuple[Workspace, ResourceInfo], backends: BackendSet) -> None:
    _, info = store
    _, visible = _assemble(backends, 2000, focus=["requests.sessions.Session.send"], resources=[info.ulid], breadth=1)
    assert visible
    _, hidden = _assemble(
        backends, 2000, focus=["requests.sessions.Session.send"], resources=["01ARZ3NDEKTSV4RRFFQ69G5FAV"]
    )
    assert hidden == []


def test_can_handle_is_calibrated(backends: BackendSet) -> None:
    nav = BreadthDepthNavigator()
    assert nav.can_handle(ContextRequest(focus=["x"]), BackendSet()) == 0.0  # no graph backend
    with_focus = nav.can_handle(ContextRequest(focus=["requests.sessions.Session"]), backends)
    query_only = nav.can_handle(ContextRequest(query="how does Session.send retry?"), backends)
    assert with_focus > query_only > 0.0
    assert nav.can_handle(ContextRequest(query="the"), backends) == 0.0
