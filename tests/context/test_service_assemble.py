"""``services.context.assemble`` and the builtin/context skill over the real pipeline,
strategies and backends, on a store indexed from requests' sources (tmp_path).

The strategies are limited (config ``[context.strategies] enabled``) to those that need
no embedding model, so the module runs in seconds; the vector backend is not built."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.config import Config
from cleveragents.context.model import ContextRequest
from cleveragents.context.tokens import counter_for
from cleveragents.errors import UsageError
from cleveragents.graph.workspace import Workspace
from cleveragents.iris import file_iri
from cleveragents.services import context, indexing, projects, resources
from cleveragents.services import context_skill as skill
from cleveragents.services.context_skill import ContextSession
from corpora.fetch import corpus_dir

FILES = ("sessions.py", "hooks.py", "structures.py", "adapters.py", "auth.py")
ENABLED = ["breadth-depth-navigator", "simple-keyword", "temporal-archaeology", "plan-decision-context"]
CONFIG = f"[context.strategies]\nenabled = {ENABLED!r}\n".replace("'", '"')


@dataclass
class Store:
    ws: Workspace
    ulid: str
    other_ulid: str


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root = tmp_path_factory.mktemp("context-assemble")
    tree = root / "tree" / "requests"
    tree.mkdir(parents=True)
    for name in FILES:
        shutil.copy(corpus_dir("requests-2.32.3") / "src" / "requests" / name, tree / name)
    other = root / "other"
    other.mkdir()
    (other / "billing.py").write_text(
        "def send_invoice(session, amount):\n    return session.post('/invoice', amount)\n"
    )
    ws = Workspace(root / "data")
    ws.initialize()
    (root / "data" / "config.toml").write_text(CONFIG)
    info, _ = resources.add(ws, root / "tree", type_name="fs-directory", name="local/requests")
    other_info, _ = resources.add(ws, other, type_name="fs-directory", name="local/billing")
    indexing.index(ws, [info, other_info])
    projects.create(ws, "local/billing")
    projects.link(ws, "local/billing", "local/billing")
    yield Store(ws, info.ulid, other_info.ulid)


def head(ws: Workspace) -> int:
    with ws.reader() as reader:
        return reader.head


def test_assembly_is_within_budget_recorded_and_shown_again(store: Store) -> None:
    request = ContextRequest(query="send a prepared request", focus=["Session.send"], max_tokens=1500)
    done = context.assemble_detailed(store.ws, request, explain=True)
    ctx = done.context
    assert ctx.fragments and ctx.total_tokens <= 1500 and ctx.budget == 1500
    assert file_iri(store.ulid, "requests/sessions.py", "Session.send") in {f.uko_node for f in ctx.fragments}
    assert "breadth-depth-navigator" in ctx.strategies_used
    assert ctx.explanation["selection"] and ctx.explanation["allocations"]
    assert done.commit is not None and not done.commit.empty
    shown = context.show(store.ws, ctx.context_hash)
    assert shown.verified, shown.problems
    assert shown.context.render() == ctx.render()
    # Same request, same store: the same payload, and nothing new is written.
    before = head(store.ws)
    again = context.assemble_detailed(store.ws, request)
    assert again.context.context_hash == ctx.context_hash
    assert again.commit is None and head(store.ws) == before
    assert again.context.explanation == {}  # no --explain: no explanation


def test_no_record_writes_nothing(store: Store) -> None:
    before = head(store.ws)
    ctx = context.assemble(store.ws, ContextRequest(query="digest auth", max_tokens=800), record=False)
    assert ctx.total_tokens <= 800
    assert head(store.ws) == before


@pytest.mark.parametrize("budget", [1, 40, 300, 3000])
def test_never_over_budget(store: Store, budget: int) -> None:
    ctx = context.assemble(
        store.ws, ContextRequest(query="adapter", focus=["adapters.py"], max_tokens=budget), record=False
    )
    assert ctx.total_tokens <= budget
    if not ctx.fragments:
        assert ctx.explanation["empty_reason"]


def test_project_scope_never_sees_other_resources(store: Store) -> None:
    ctx = context.assemble(
        store.ws, ContextRequest(query="send session post", max_tokens=2000), project="local/billing", record=False
    )
    assert ctx.fragments
    assert {f.provenance.resource for f in ctx.fragments} == {store.other_ulid}


def test_unknown_strategy_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="unknown context strategy 'breadth-depth-navigater'") as caught:
        context.assemble(store.ws, ContextRequest(query="x", preferred_strategies=["breadth-depth-navigater"]))
    assert "did you mean breadth-depth-navigator" in caught.value.message


def test_simulate_plans_without_running(store: Store) -> None:
    before = head(store.ws)
    plan = context.simulate(store.ws, ContextRequest(focus=["Session.send"], max_tokens=2000))
    assert plan["scope"]["focus"] == {"Session.send": [file_iri(store.ulid, "requests/sessions.py", "Session.send")]}
    names = [row["strategy"] for row in plan["plan"]["allocations"]]
    assert "breadth-depth-navigator" in names
    assert sum(row["tokens"] for row in plan["plan"]["allocations"]) <= plan["plan"]["budget"]["candidate_pool"]
    assert head(store.ws) == before


# --- the builtin/context skill ---------------------------------------------------------------


def test_skill_charges_every_delivery_to_the_session_budget(store: Store) -> None:
    session = ContextSession(store.ws, budget=1200, record=False)
    first = skill.request_context(session, query="retry adapter", focus=["HTTPAdapter"], purpose="fix retries")
    assert 0 < first["tokens"] <= 1200
    assert first["budget_remaining"] == 1200 - first["tokens"]
    assert first["fragments"] and first["context"].strip()
    budget = skill.get_context_budget(session)
    assert budget == {
        "budget": 1200,
        "used": first["tokens"],
        "remaining": 1200 - first["tokens"],
        "encoding": "o200k_base",
        "assemblies": [first["context_hash"]],
    }
    second = skill.call(session, "builtin/context/request_context", {"query": "hooks", "purpose": "more"})
    assert second["tokens"] <= 1200 - first["tokens"]
    session.used = session.budget
    assert skill.request_context(session, query="more", purpose="x")["note"].startswith("the context budget")


def test_skill_query_history(store: Store) -> None:
    session = ContextSession.from_config(store.ws, budget=1000, record=False)
    assert session.encoding == "o200k_base" and ContextSession.from_config(store.ws).budget == 8000
    result = skill.query_history(session, query="what changed in sessions", scope="current_plan")
    assert result["scope"] == "current_plan" and result["tokens"] <= 1000


def test_skill_rejects_bad_arguments(store: Store) -> None:
    session = ContextSession(store.ws, budget=1000)
    with pytest.raises(UsageError, match="argument 'purpose': is required"):
        skill.request_context(session, query="x")
    with pytest.raises(UsageError, match="argument 'breadth': input should be less than or equal to 5"):
        skill.request_context(session, purpose="x", breadth=9)
    with pytest.raises(UsageError, match="argument 'scope'"):
        skill.query_history(session, query="x", scope="everything")
    with pytest.raises(UsageError, match="unknown context tool 'forget'"):
        skill.call(session, "forget", {})
    with pytest.raises(UsageError, match="unknown detail level 'SIGNATUR'"):
        skill.request_context(session, purpose="x", depth="SIGNATUR")


def test_skill_definitions_are_json_schemas() -> None:
    definition = skill.skill_definition()
    assert definition["name"] == "builtin/context"
    tools = {tool["name"]: tool for tool in definition["tools"]}
    assert list(tools) == ["request_context", "query_history", "get_context_budget"]
    request_schema = tools["request_context"]["input_schema"]
    assert request_schema["required"] == ["purpose"]
    assert request_schema["properties"]["depth"]["oneOf"] == [{"minimum": 0, "type": "integer"}, {"type": "string"}]
    assert request_schema["properties"]["breadth"] | {} == {
        **request_schema["properties"]["breadth"],
        "default": 2,
        "maximum": 5,
        "minimum": 0,
    }
    assert tools["query_history"]["input_schema"]["properties"]["scope"]["enum"] == [
        "current_plan",
        "plan_tree",
        "all_plans",
    ]
    assert tools["get_context_budget"]["input_schema"]["properties"] == {}
    assert all(t["input_schema"]["$schema"].endswith("2020-12/schema") for t in tools.values())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(1, 16_000),
    focus=st.sampled_from([[], ["adapters.py"], ["Session.send"], ["requests/auth.py", "HTTPDigestAuth"]]),
    query=st.sampled_from([None, "adapter send", "why are auth headers dropped on redirect?", "クッキーの扱い"]),
    depth=st.sampled_from([0, 3, 9, "SIGNATURES", "FULL_SOURCE"]),
    breadth=st.integers(0, 3),
)
def test_the_real_strategies_never_exceed_any_budget(
    store: Store, budget: int, focus: list[str], query: str | None, depth: int | str, breadth: int
) -> None:
    request = ContextRequest(query=query, focus=focus, max_tokens=budget, depth=depth, breadth=breadth)
    if not (query or focus):
        request = request.model_copy(update={"query": "session"})
    try:
        ctx = context.assemble(store.ws, request, record=False)
    except UsageError as exc:  # only a budget too small for anything is refused
        assert "budget" in str(exc) and budget < 300, exc
        return
    assert ctx.total_tokens == counter_for(ctx.encoding).count(ctx.render()) <= budget
    if not ctx.fragments:
        assert ctx.explanation["empty_reason"]


def test_strategies_count_tokens_in_the_pipelines_encoding(store: Store) -> None:
    config = Config(store.ws.data_dir, flags={"context.encoding": "cl100k_base"})
    request = ContextRequest(query="adapter send", focus=["adapters.py"], max_tokens=3000)
    ctx = context.assemble(store.ws, request, record=False, config=config)
    assert ctx.encoding == "cl100k_base" and ctx.fragments
    cl100k = counter_for("cl100k_base")
    # Every fragment was counted (and budgeted by its strategy) in cl100k_base tokens.
    assert all(f.token_count == cl100k.count(f.content) for f in ctx.fragments)
    assert ctx.total_tokens == cl100k.count(ctx.render()) <= 3000
