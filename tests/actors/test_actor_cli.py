"""``agents actor ...`` on a real store, answering through the fake model server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cleveragents.fakes.model_server import FakeModelServer
from tests.cli.test_graph_cli import Cli, initialized_cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "actors" / "openai-compatible.yaml"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, model_server: FakeModelServer) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
    for name in ("OPENAI_MODEL", "OPENAI_TEMPERATURE"):
        monkeypatch.delenv(name, raising=False)
    return runner


def test_actor_run_prints_the_models_answer_with_the_context_files(cli: Cli, model_server, tmp_path: Path):
    model_server.set_script({"turns": [{"text": "The notes say to buy milk.", "usage": {"input_tokens": 50,
                                                                                     "output_tokens": 7}}]})
    notes = tmp_path / "notes.md"
    notes.write_text("buy milk\n")
    out = cli.ok("actor", "run", "--config", str(EXAMPLE), "--prompt", "What do my notes say?",
                 "--context", str(notes), fmt="plain").out
    assert out.strip() == "The notes say to buy milk."
    body = model_server.requests()[0]["body"]
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.2
    system, user = body["messages"]
    assert system["role"] == "system" and f"--- {notes}\nbuy milk" in system["content"]
    assert user == {"role": "user", "content": "What do my notes say?"}


def test_actor_run_streams_and_reports_usage_in_json(cli: Cli, model_server):
    model_server.set_script({"turns": [{"text": "streamed answer, in pieces"}, {"text": "whole"}]})
    out = cli.ok("actor", "run", "-c", str(EXAMPLE), "-p", "hi", "--stream", fmt="plain").out
    assert out.strip() == "streamed answer, in pieces"
    assert model_server.requests()[0]["body"]["stream"] is True
    doc = cli.ok("actor", "run", "-c", str(EXAMPLE), "-p", "hi", fmt="json").json()
    answer = doc["data"]["answer"]
    assert answer["text"] == "whole" and answer["model"] == "openai-compatible/gpt-4o-mini"
    assert answer["usage"]["calls"] == 1 and answer["usage"]["total_tokens"] > 0
    assert answer["cost_usd"] is None  # no price table: unpriced, not zero


def test_cost_comes_from_the_price_table(cli: Cli, model_server, tmp_path: Path):
    (cli.data_dir / "prices.toml").write_text(
        '["openai-compatible/gpt-4o-mini"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.60\n')
    model_server.set_script({"turns": [{"text": "x", "usage": {"input_tokens": 1000000, "output_tokens": 500000}}]})
    answer = cli.ok("actor", "run", "-c", str(EXAMPLE), "-p", "hi", fmt="json").json()["data"]["answer"]
    assert answer["cost_usd"] == 0.45


def test_a_missing_key_fails_before_any_request(cli: Cli, model_server, monkeypatch):
    model_server.set_script({"turns": [{"text": "never"}]})
    monkeypatch.delenv("OPENAI_API_KEY")
    result = cli("actor", "run", "-c", str(EXAMPLE), "-p", "hi", fmt="plain")
    assert result.code == 1
    assert "OPENAI_API_KEY is not set" in result.err and "CONFIGURATION_ERROR" in result.err
    assert model_server.requests() == []


def test_a_bad_actor_file_is_one_clear_error(cli: Cli, tmp_path: Path):
    bad = tmp_path / "compose.yaml"
    bad.write_text("services:\n  web:\n    image: nginx\n")
    result = cli("actor", "run", "-c", str(bad), "-p", "hi", fmt="plain")
    assert result.code == 1
    assert f"{bad}: not an actor file" in result.err


def test_registry_add_list_show_update_set_default_remove(cli: Cli, model_server, tmp_path: Path):
    added = cli.ok("actor", "add", "local/helper", "-c", str(EXAMPLE), "--set-default", fmt="json").json()
    actor = added["data"]["actor"]
    assert actor["model"] == "openai-compatible/gpt-4o-mini" and actor["default"] is True
    assert actor["actors"] == ["assistant"]
    second = tmp_path / "second.yaml"
    second.write_text(EXAMPLE.read_text().replace("local/openai-compatible", "local/second"))
    cli.ok("actor", "add", "second", "-c", str(second))
    assert cli("actor", "add", "second", "-c", str(second)).code == 1  # a name is registered once
    rows = cli.ok("actor", "list", fmt="json").json()["data"]["actors"]
    assert [(r["name"], r["default"]) for r in rows] == [("local/helper", True), ("local/second", False)]
    cli.ok("actor", "set-default", "local/second")
    rows = cli.ok("actor", "list", fmt="json").json()["data"]["actors"]
    assert [(r["name"], r["default"]) for r in rows] == [("local/helper", False), ("local/second", True)]
    updated = cli.ok("actor", "update", "local/helper", "-o", "temperature=0.9", "--unsafe", fmt="json").json()
    assert updated["data"]["actor"]["options"] == {"temperature": 0.9} and updated["data"]["actor"]["unsafe"]
    model_server.set_script({"turns": [{"text": "registered answer"}]})
    assert cli.ok("actor", "run", "--actor", "local/helper", "-p", "hi", fmt="plain").out.strip() == "registered answer"
    assert model_server.requests()[0]["body"]["temperature"] == 0.9
    # The stored configuration is the file as written: the environment is read at run time.
    stored = cli.ok("graph", "query", "SELECT ?c WHERE { ?a ca:name 'local/helper' ; ca:configuration ?c }",
                    fmt="json").json()
    assert "${OPENAI_MODEL:-gpt-4o-mini}" in json.dumps(stored)
    cli.ok("actor", "remove", "local/helper")
    assert cli("actor", "show", "local/helper").code == 1


def test_actor_contexts_add_list_show_export_import_clear_delete(cli: Cli, model_server, tmp_path: Path):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("alpha\n")
    (docs / "sub" / "b.md").write_text("beta\n")
    cli.ok("actor", "context", "add", "--name", "docs", str(docs), "-r")
    files = cli.ok("actor", "context", "list", "docs", fmt="json").json()["data"]["files"]
    assert sorted(f["path"] for f in files) == ["docs/a.md", "docs/sub/b.md"]
    assert cli.ok("actor", "context", "show", "--name", "docs", "docs/a.md", fmt="plain").out.strip() == "alpha"
    model_server.set_script({"turns": [{"text": "ok"}]})
    cli.ok("actor", "run", "-c", str(EXAMPLE), "-p", "summarize", "--context", "docs")
    assert "--- docs/sub/b.md\nbeta" in model_server.requests()[0]["body"]["messages"][0]["content"]
    exported = tmp_path / "docs.json"
    cli.ok("actor", "context", "export", "--name", "docs", "--output", str(exported))
    cli.ok("actor", "context", "rm", "--name", "docs", "docs/sub")
    assert len(cli.ok("actor", "context", "list", "docs", fmt="json").json()["data"]["files"]) == 1
    cli.ok("actor", "context", "import", "--name", "copy", "--input", str(exported))
    assert len(cli.ok("actor", "context", "list", "copy", fmt="json").json()["data"]["files"]) == 2
    cli.ok("actor", "context", "clear", "--name", "copy", "--yes")
    assert cli.ok("actor", "context", "list", "copy", fmt="json").json()["data"]["files"] == []
    cli.ok("actor", "context", "delete", "--name", "copy", "--yes")
    names = [c["name"] for c in cli.ok("actor", "context", "list", fmt="json").json()["data"]["contexts"]]
    assert names == ["docs"]
