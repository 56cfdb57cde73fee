"""``agents tool`` and ``agents validation``: YAML tools, wrapping, MCP servers, read-only validations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

SERVER = Path(__file__).parent / "fixtures" / "mcp_server.py"

RUN_TESTS = """
cleveragents: {version: "3.0"}
tool:
  name: local/run-tests
  description: Run the test suite.
  input_schema:
    type: object
    properties: {path: {type: string}}
  capability: {read_only: true, side_effects: [cpu]}
"""

MIGRATE = """
tool:
  name: local/run-migrations
  description: Apply database migrations.
  input_schema: {type: object, properties: {target: {type: string}}}
  capability: {writes: true, checkpointable: true, checkpoint_scope: transaction}
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_yaml_tools_wrapping_and_read_only_validations(cli: Cli, tmp_path: Path):
    cli.ok("tool", "add", "-c", _write(tmp_path, "run-tests.yaml", RUN_TESTS))
    cli.ok("tool", "add", "-c", _write(tmp_path, "migrate.yaml", MIGRATE))
    shown = cli.ok("tool", "show", "local/run-migrations", fmt="json").json()["data"]["tool"]
    assert shown["read_only"] is False and shown["checkpointable"] is True and shown["source"] == "custom"
    assert shown["definition"]["capability"]["checkpoint_scope"] == "transaction"
    wrapped = _write(tmp_path, "quick.yaml", "tool:\n  name: local/quick-tests\n  wraps: local/run-tests\n"
                     "  argument_mapping: {path: path}\n  capability: {read_only: true}\n")
    cli.ok("tool", "add", "-c", wrapped)
    assert cli.ok("tool", "show", "local/quick-tests", fmt="json").json()["data"]["tool"]["wraps"] == "local/run-tests"
    # A validation of a read-only tool is accepted; one of a writing tool is refused at registration.
    cli.ok("validation", "add", "-c", _write(tmp_path, "v1.yaml",
                                             "validation:\n  name: local/tests-pass\n  wraps: local/run-tests\n"))
    writes = _write(tmp_path, "v2.yaml", "validation:\n  name: local/migrated\n  wraps: local/run-migrations\n")
    refused = cli("validation", "add", "-c", writes)
    assert refused.code == 1
    assert "validations are read-only, and 'local/run-migrations' can modify resources" in refused.err
    validations = cli.ok("validation", "list", fmt="json").json()["data"]["validations"]
    assert [(v["name"], v["wraps"], v["mode"], v["read_only"]) for v in validations] == [
        ("local/tests-pass", "local/run-tests", "required", True)]
    names = [t["name"] for t in cli.ok("tool", "list", fmt="json").json()["data"]["tools"]]
    assert names == ["local/quick-tests", "local/run-migrations", "local/run-tests", "local/tests-pass"]
    assert cli("tool", "remove", "local/run-tests").code == 1  # still wrapped
    assert cli("tool", "add", "-c", _write(tmp_path, "run-tests.yaml", RUN_TESTS)).code == 1  # registered once
    cli.ok("tool", "add", "-c", str(tmp_path / "run-tests.yaml"), "--update")


@pytest.mark.parametrize(("text", "message"), [
    ("tool:\n  name: local/x\n", "input_schema: a JSON Schema object is required"),
    ("tool:\n  name: local/x\n  input_schema: {type: object}\n  capability: {read_only: true, writes: true}\n",
     "capability: a capability cannot be both read_only and writes"),
    ("tool:\n  name: local/x\n  input_schema: {type: objekt}\n", "not a valid JSON Schema"),
    ("services: {}\n", "not a tool or validation file"),
])
def test_bad_tool_files(cli: Cli, tmp_path: Path, text: str, message: str):
    result = cli("tool", "add", "-c", _write(tmp_path, "bad.yaml", text))
    assert result.code == 1 and message in result.err


def test_every_tool_of_a_real_mcp_server_is_registered(cli: Cli):
    added = cli.ok("tool", "add", "--mcp", f"{sys.executable} {SERVER}", fmt="json").json()
    rows = {t["name"]: t for t in added["data"]["tools"]}
    assert sorted(rows) == ["local/add", "local/fail", "local/shout"]
    assert rows["local/add"]["read_only"] is True and rows["local/shout"]["read_only"] is False
    assert rows["local/add"]["source"] == "mcp" and rows["local/add"]["definition"]["tool_name"] == "add"
    assert rows["local/add"]["definition"]["input_schema"]["required"] == ["a", "b"]
