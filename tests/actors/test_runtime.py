"""The LangGraph runtime: tool calls, failures, context per turn, resume, over the real client path."""

from __future__ import annotations

import shutil
from pathlib import Path

import openai
import pytest

from cleveragents.actors.checkpointer import StoreCheckpointSaver
from cleveragents.actors.providers import ModelRef, ProviderSettings, chat_model
from cleveragents.actors.runtime import AgentRuntime, ToolBelt, ToolDescription, ToolFailureLimit, TurnContext
from cleveragents.fakes.model_server import FakeModelServer
from cleveragents.graph.workspace import Workspace


@pytest.fixture(scope="module")
def template_store(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("template") / "data"
    Workspace(data).initialize()
    return data


@pytest.fixture
def ws(template_store: Path, tmp_path: Path) -> Workspace:
    shutil.copytree(template_store, tmp_path / "data")
    return Workspace(tmp_path / "data")


class Files:
    """Two real tools over a real directory, and a decision log (record_decision)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.decisions: list[dict] = []

    def call(self, name: str, args: dict):
        if name == "read_file":
            return (self.root / args["path"]).read_text()
        if name == "record_decision":
            self.decisions.append(args)
            return {"recorded": len(self.decisions)}
        raise AssertionError(name)

    def belt(self) -> ToolBelt:
        return ToolBelt([
            ToolDescription("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}},
                                                          "required": ["path"], "additionalProperties": False}),
            ToolDescription("record_decision", "Record a decision.", {
                "type": "object", "properties": {"type": {"type": "string"}, "chosen": {"type": "string"},
                                                 "context_hash": {"type": "string"}},
                "required": ["type", "chosen"]}),
        ], self.call)


def _model(server: FakeModelServer, retries: int = 0):
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url}
    return chat_model(ModelRef("openai", "fake"), ProviderSettings(max_retries=retries, timeout=10), env=env)


def test_a_tool_loop_records_checkpoints_usage_and_the_context_hash(ws, model_server, tmp_path):
    (tmp_path / "README.md").write_text("the project README\n")
    files = Files(tmp_path)
    model_server.set_script({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}],
         "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"tool_calls": [{"name": "record_decision", "arguments": {"type": "implementation_choice",
                                                                  "chosen": "keep the README"}}],
         "usage": {"input_tokens": 120, "output_tokens": 12}},
        {"text": "Done: the README is fine.", "usage": {"input_tokens": 140, "output_tokens": 6}},
    ]})
    asked = []

    def context(question: str, budget: int) -> TurnContext:
        asked.append((question, budget))
        return TurnContext("## src/app.py\nprint('hi')", hash="sha256:abc123", tokens=8)

    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        runtime = AgentRuntime(_model(model_server), system_prompt="You review projects.", tools=files.belt(),
                               checkpointer=saver, context_provider=context, context_window=8000,
                               reserved_output=1000)
        result = runtime.run("plan-1/execute/1", "Check the README")
        assert result.text == "Done: the README is fine."
        assert result.usage == {"input_tokens": 360, "output_tokens": 28, "total_tokens": 388, "calls": 3}
        assert files.decisions == [{"type": "implementation_choice", "chosen": "keep the README",
                                    "context_hash": "sha256:abc123"}]
        assert result.context_hashes == ["sha256:abc123"]
        assert len(asked) == 3 and asked[0][0] == "Check the README" and 0 < asked[0][1] < 7000
        sent = [r["body"] for r in model_server.requests()]
        assert sent[0]["messages"][0]["content"].startswith("You review projects.\n\n# Context\n\n## src/app.py")
        assert {t["function"]["name"] for t in sent[0]["tools"]} == {"read_file", "record_decision"}
        tool_reply = sent[1]["messages"][-1]
        assert tool_reply["role"] == "tool" and tool_reply["content"] == "the project README\n"
        steps = int(next(iter(session.store.query(
            "SELECT (COUNT(?c) AS ?n) WHERE { ?c a ca:ActorCheckpoint ; ca:threadId 'plan-1/execute/1' }")))["n"].value)
        assert steps == len(saver.put_seconds) and steps >= 6  # every checkpoint recorded by the run's end


def test_unknown_tools_and_bad_arguments_go_back_to_the_model_then_the_run_errors(ws, model_server, tmp_path):
    files = Files(tmp_path)
    model_server.set_script({"turns": [
        {"tool_calls": [{"name": "delete_everything", "arguments": {}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"file": "x"}}]},
        {"text": "Recovered without tools."},
    ]})
    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        runtime = AgentRuntime(_model(model_server), system_prompt="", tools=files.belt(), checkpointer=saver,
                               max_tool_failures=3)
        assert runtime.run("t-1", "go").text == "Recovered without tools."
        sent = [r["body"]["messages"][-1]["content"] for r in model_server.requests()[1:]]
        assert sent[0].startswith("Error: unknown tool 'delete_everything' (available: read_file, record_decision)")
        assert sent[1] == ("Error: arguments of 'read_file' do not match its schema at (arguments): "
                           "'path' is a required property")
        model_server.set_script({"turns": [{"tool_calls": [{"name": "nope", "arguments": {}}]}] * 3})
        runtime = AgentRuntime(_model(model_server), system_prompt="", tools=files.belt(), checkpointer=saver,
                               max_tool_failures=3)
        with pytest.raises(ToolFailureLimit, match="3 consecutive tool calls failed; the last: nope"):
            runtime.run("t-2", "go")


def test_a_provider_failure_stops_the_run_and_a_new_run_continues_the_thread(ws, model_server, tmp_path):
    (tmp_path / "a.txt").write_text("alpha")
    files = Files(tmp_path)
    model_server.set_script({"turns": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"error": {"status": 503, "message": "overloaded", "retry_after": 0.01}},
        {"error": {"status": 503, "message": "overloaded", "retry_after": 0.01}},
    ]})
    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        runtime = AgentRuntime(_model(model_server, retries=1), system_prompt="", tools=files.belt(),
                               checkpointer=saver)
        with pytest.raises(openai.InternalServerError, match="overloaded"):
            runtime.run("plan-2/execute/1", "read a")
    # As after `plan resume` in a new process: the same thread continues after the tool call.
    model_server.set_script({"turns": [{"text": "alpha it is"}]})
    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        runtime = AgentRuntime(_model(model_server), system_prompt="", tools=files.belt(), checkpointer=saver)
        result = runtime.run("plan-2/execute/1", "read a")
        assert result.resumed and result.text == "alpha it is"
        messages = model_server.requests()[0]["body"]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
        assert messages[-1]["content"] == "alpha"
