"""``agents session ...`` on a real store, the orchestrator answering through the fake model server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cleveragents.fakes.model_server import FakeModelServer
from tests.cli.test_graph_cli import Cli, initialized_cli

EXAMPLES = Path(__file__).parents[2] / "examples" / "actors"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, model_server: FakeModelServer) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
    monkeypatch.setenv("CLEVERAGENTS_PROVIDERS_MAX_RETRIES", "0")
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    runner.ok("actor", "add", "local/orchestrator", "--config", str(EXAMPLES / "orchestrator.yaml"))
    return runner


def _fails(cli: Cli, *args: str):
    result = cli(*args)
    assert result.code == 1, (args, result.out, result.err)
    return result


def _messages(cli: Cli, session: str) -> list[dict]:
    return cli.ok("session", "show", session, "--last", "0", fmt="json").json()["data"]["messages"]


def test_tell_runs_cleveragents_commands_as_tools_and_records_the_conversation(cli: Cli, model_server, tmp_path):
    cli.ok("project", "create", "local/demo")
    cli.ok("actor", "add", "local/assistant", "--config", str(EXAMPLES / "openai-compatible.yaml"))
    action = tmp_path / "action.yaml"
    action.write_text(yaml.safe_dump({
        "name": "local/explain", "description": "Explain module {{ module }}", "definition_of_done": "Recorded",
        "strategy_actor": "local/assistant", "execution_actor": "local/assistant",
        "args": {"module": {"type": "string", "required": True}}}))
    cli.ok("action", "create", "--config", str(action))
    created = cli.ok("session", "create", "--name", "weekly", "--actor", "local/orchestrator",
                     "--metadata", "team=platform", fmt="json").json()["data"]["session"]
    assert created["metadata"] == {"team": "platform"} and created["thread"] == f"session/{created['id']}"
    model_server.set_script({"turns": [
        # the orchestrator looks for an action, then starts a plan with it
        {"tool_calls": [{"name": "action_list", "arguments": {}}]},
        {"tool_calls": [{"name": "plan_use", "arguments": {
            "action": "local/explain", "projects": ["local/demo"], "arguments": {"module": "billing"},
            "automation_level": "auto"}}]},
        # the plan's own LLM actor (local/assistant): Strategize, then Execute
        {"tool_calls": [{"name": "record_decision", "arguments": {"type": "strategy_choice", "chosen": "Summarize"}}]},
        {"text": "Strategy recorded."},
        {"tool_calls": [{"name": "record_decision", "arguments": {"type": "implementation_choice",
                                                                  "chosen": "Three sentences"}}]},
        {"text": "Done."},
        # back to the orchestrator
        {"text": "I started plan local/explain for local/demo; it is applied.",
         "usage": {"input_tokens": 300, "output_tokens": 20}},
    ]})
    answer = cli.ok("session", "tell", "Explain the billing module of demo", "--session", "weekly",
                    fmt="json").json()["data"]["answer"]
    assert answer["text"] == "I started plan local/explain for local/demo; it is applied."
    assert answer["tool_calls"] == [{"name": "action_list", "ok": True}, {"name": "plan_use", "ok": True}]
    sent = [r["body"] for r in model_server.requests()]
    assert "local/explain" in sent[1]["messages"][-1]["content"]  # action_list's result went to the model
    plan_result = json.loads(sent[6]["messages"][-1]["content"])
    assert (plan_result["phase"], plan_result["state"]) == ("apply", "applied")
    plans = cli.ok("plan", "list", fmt="json").json()["data"]["plans"]
    assert [p["id"] for p in plans] == [plan_result["id"]]
    found = _messages(cli, "weekly")
    assert [(m["index"], m["role"]) for m in found] == [(0, "user"), (1, "assistant")]
    assert found[0]["text"] == "Explain the billing module of demo"
    assert found[1]["text"] == answer["text"] and found[1]["model"] == "openai-compatible/gpt-4o-mini"
    assert found[1]["calls"] == 3 and found[1]["input_tokens"] >= 300
    listed = cli.ok("session", "list", fmt="json").json()["data"]["sessions"]
    assert [(s["name"], s["messages"]) for s in listed] == [("weekly", 2)]
    threads = cli.ok("graph", "query", "SELECT DISTINCT ?t WHERE { ?c a ca:ActorCheckpoint ; ca:threadId ?t }",
                     fmt="json").json()
    assert f"session/{created['id']}" in json.dumps(threads)


def test_the_conversation_continues_and_an_interrupted_tell_is_finished_by_the_next(cli: Cli, model_server):
    cli.ok("session", "create", "--name", "s1", "--actor", "local/orchestrator")
    model_server.set_script({"turns": [{"text": "Hello, Ada."}]})
    streamed = cli.ok("session", "tell", "My name is Ada.", "--stream", fmt="plain").out  # the latest session
    assert streamed.strip() == "Hello, Ada." and model_server.requests()[0]["body"]["stream"] is True
    model_server.set_script({"turns": [
        {"tool_calls": [{"name": "plan_list", "arguments": {}}]},
        {"error": {"status": 500, "message": "model down"}},
    ]})
    failed = _fails(cli, "session", "tell", "List my plans.", "--session", "s1")
    assert "PROVIDER_ERROR" in failed.err and "model down" in failed.err
    assert len(_messages(cli, "s1")) == 2  # nothing half-recorded
    model_server.set_script({"turns": [{"text": "You have no plans."}, {"text": "Your name is Ada."}]})
    told = cli.ok("session", "tell", "What is my name?", "--session", "s1", fmt="json").json()["data"]["answer"]
    assert told["resumed_prompt"] == "List my plans." and told["text"] == "Your name is Ada."
    sent = [r["body"]["messages"] for r in model_server.requests()]
    # the resumed turn continued from its checkpoint: the plan_list result, no new model call before it
    assert sent[0][-1]["role"] == "tool" and sent[0][-2]["tool_calls"][0]["function"]["name"] == "plan_list"
    # the new prompt came with the whole conversation
    contents = [m.get("content") for m in sent[1]]
    assert "My name is Ada." in contents and "Hello, Ada." in contents and contents[-1] == "What is my name?"
    found = _messages(cli, "s1")
    assert [(m["role"], m["text"]) for m in found] == [
        ("user", "My name is Ada."), ("assistant", "Hello, Ada."),
        ("user", "List my plans."), ("assistant", "You have no plans."),
        ("user", "What is my name?"), ("assistant", "Your name is Ada."),
    ]
    assert found[3]["tool_calls"] == [{"name": "plan_list", "ok": True}]


def test_export_import_delete_and_cost(cli: Cli, model_server, tmp_path: Path):
    (cli.data_dir / "prices.toml").write_text(
        '["openai-compatible/gpt-4o-mini"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.60\n')
    cli.ok("session", "create", "--name", "a", "--actor", "local/orchestrator")
    model_server.set_script({"turns": [{"text": "Noted: the release is Friday.",
                                        "usage": {"input_tokens": 1000000, "output_tokens": 500000}}]})
    cli.ok("session", "tell", "The release is Friday.", "--session", "a")
    shown = cli.ok("session", "show", "a", fmt="json").json()["data"]["session"]
    assert shown["cost_usd"] == 0.45 and shown["input_tokens"] == 1000000 and shown["calls"] == 1
    export = tmp_path / "a.json"
    cli.ok("session", "export", "a", "--output", str(export))
    assert json.loads(export.read_text())["messages"][0]["text"] == "The release is Friday."
    imported = cli.ok("session", "import", "--input", str(export), "--name", "b", fmt="json").json()["data"]
    assert imported["session"]["messages"] == 2 and imported["session"]["id"] != shown["id"]
    model_server.set_script({"turns": [{"text": "Friday."}]})
    cli.ok("session", "tell", "When is the release?", "--session", "b")
    contents = [m.get("content") for m in model_server.requests()[0]["body"]["messages"]]
    assert contents[-3:] == ["The release is Friday.", "Noted: the release is Friday.", "When is the release?"]
    cli.ok("session", "delete", "a", "--yes")
    assert [s["name"] for s in cli.ok("session", "list", fmt="json").json()["data"]["sessions"]] == ["b"]
    assert "NOT_FOUND" in _fails(cli, "session", "show", "a").err
    assert "CONFLICT" in _fails(cli, "session", "create", "--name", "b").err
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": []}')
    assert "not a session export" in _fails(cli, "session", "import", "--input", str(bad)).err
