"""A plan run by a registered LLM actor through the real client path (the fake model server)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cleveragents.fakes.model_server import FakeModelServer
from cleveragents.graph import named_queries
from cleveragents.graph.workspace import Workspace
from cleveragents.services import actor_registry, plans, projects

EXAMPLE = Path(__file__).parents[2] / "examples" / "actors" / "openai-compatible.yaml"
AGENT = "tester"


@pytest.fixture
def ws(tmp_path: Path, model_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
    monkeypatch.setenv("CLEVERAGENTS_PROVIDERS_MAX_RETRIES", "0")
    workspace = Workspace(tmp_path / "data")
    workspace.initialize()
    projects.create(workspace, "local/demo", agent=AGENT)
    actor_registry.add(workspace, "local/assistant", EXAMPLE, agent=AGENT)
    action = tmp_path / "action.yaml"
    action.write_text(yaml.safe_dump({
        "name": "local/explain", "description": "Explain module {{ module }}",
        "definition_of_done": "The explanation is recorded", "strategy_actor": "local/assistant",
        "execution_actor": "local/assistant", "args": {"module": {"type": "string", "required": True}},
    }))
    plans.create_action(workspace, action, {}, agent=AGENT)
    return workspace


STRATEGY = [
    {"tool_calls": [{"name": "graph_query",
                     "arguments": {"sparql": "SELECT ?n WHERE { ?p a ca:Project ; ca:name ?n }"}}]},
    {"tool_calls": [{"name": "record_decision", "arguments": {
        "type": "strategy_choice", "chosen": "Read the module, then summarize it", "confidence": 0.9,
        "rationale": "the module is small"}}]},
    {"text": "Strategy recorded."},
]
EXECUTION = [
    {"tool_calls": [{"name": "record_decision", "arguments": {
        "type": "implementation_choice", "chosen": "A three-sentence summary", "confidence": 0.95}}]},
    {"text": "Done."},
]


def test_a_plan_runs_strategize_and_execute_with_an_llm_actor(ws: Workspace, model_server: FakeModelServer):
    model_server.set_script({"turns": STRATEGY + EXECUTION})
    plan = plans.use(ws, "local/explain", ["demo"], {"module": "billing"}, automation_level="auto", agent=AGENT)
    assert (plan.phase, plan.state) == ("apply", "applied"), plan.error
    _, found, _ = plans.tree(ws, plan.id)
    chosen = sorted((d.type, d.phase, d.chosen) for d in found.values() if d.type != "prompt_definition")
    assert chosen == [("implementation_choice", "execute", "A three-sentence summary"),
                      ("strategy_choice", "strategize", "Read the module, then summarize it")]
    sent = [r["body"] for r in model_server.requests()]
    first_prompt = sent[0]["messages"][1]["content"]
    assert first_prompt.startswith("Plan ") and "Explain module billing" in first_prompt
    tools = {t["function"]["name"] for t in sent[0]["tools"]}
    assert {"record_decision", "graph_query"} <= tools and "write_file" not in tools  # no writes in Strategize
    assert "write_file" in {t["function"]["name"] for t in sent[3]["tools"]}  # Execute gets the router's tools
    assert "local/demo" in sent[1]["messages"][-1]["content"]  # the graph_query result went back to the model
    with ws.reader() as store:
        threads = {row["t"].value for row in store.query(
            "SELECT DISTINCT ?t WHERE { ?c a ca:ActorCheckpoint ; ca:threadId ?t }")}
    assert threads == {f"{plan.id}/strategize/1", f"{plan.id}/execute/1"}
    # Usage per phase run, from the provider's usage metadata, through the plan-cost named query.
    query = named_queries.get("plan-cost")
    with ws.reader() as store:
        rows = list(store.query(query.text, bindings={"plan": plan.node}))
        usage = sorted((int(r["calls"].value), r["model"].value, int(r["inputTokens"].value) > 0) for r in rows)
    assert usage == [(2, "openai-compatible/gpt-4o-mini", True), (3, "openai-compatible/gpt-4o-mini", True)]


def test_a_provider_failure_errors_the_plan_and_resume_continues_the_thread(ws, model_server):
    model_server.set_script({"turns": [STRATEGY[0], {"error": {"status": 500, "message": "model down"}}]})
    plan = plans.use(ws, "local/explain", ["demo"], {"module": "billing"}, automation_level="auto", agent=AGENT)
    assert plan.state == "errored" and "model down" in plan.error and "provider openai-compatible" in plan.error
    model_server.set_script({"turns": STRATEGY[1:] + EXECUTION})
    # The provider's exception kept the writer's store in a reference cycle; the writer
    # session collects it as it ends, so `plan resume` in this process finds the store free.
    plan = plans.resume(ws, plan.id, agent=AGENT)
    assert (plan.phase, plan.state) == ("apply", "applied"), plan.error
    first = model_server.requests()[0]["body"]["messages"]
    # The resumed thread starts after the graph_query call: its result is already in the conversation.
    assert [m["role"] for m in first] == ["system", "user", "assistant", "tool"]
