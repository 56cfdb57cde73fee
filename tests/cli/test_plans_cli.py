"""``agents action``, ``agents plan`` and ``agents invariant`` through the real CLI on a
store in tmp_path, with the scripted actor."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

SCRIPT = """
strategize:
  - key: approach
    decision: strategy_choice
    question: How to rename?
    chosen: "Rename {{ old }} to {{ new }} and every caller"
    alternatives: [Rename the definition only]
    confidence: 0.9
    rationale: Callers would break otherwise
execute:
  - decision: implementation_choice
    question: How to edit?
    chosen: textual replacement
    confidence: 0.95
    influenced_by: [approach]
"""

ACTION = """
name: local/rename
description: "Rename {{ old }} to {{ new }}"
definition_of_done: "No {{ old }} is left"
strategy_actor: scripted:script.yaml
execution_actor: scripted:script.yaml
invariants: [Public names keep a deprecated alias]
args:
  old: {type: string, required: true, description: the current name}
  new: {type: string, required: true}
  limit: {type: int, min: 1, max: 10, default: 3}
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    (tmp_path / "script.yaml").write_text(textwrap.dedent(SCRIPT))
    (tmp_path / "action.yaml").write_text(textwrap.dedent(ACTION))
    runner.ok("project", "create", "local/demo")
    return runner


def test_action_create_flags_override_the_yaml(cli: Cli, tmp_path: Path) -> None:
    shown = cli.ok("action", "create", "--config", str(tmp_path / "action.yaml"), "--draft", fmt="json").json()
    action = shown["data"]["action"]
    assert (action["name"], action["state"]) == ("local/rename", "draft")
    assert action["strategy_actor"] == f"scripted:{tmp_path / 'script.yaml'}"
    assert [a["name"] for a in action["arguments"]] == ["limit", "new", "old"]
    assert action["invariants"] == ["Public names keep a deprecated alias"]
    listed = cli.ok("action", "list", "--state", "draft", fmt="json").json()["data"]["actions"]
    assert [a["name"] for a in listed] == ["local/rename"]
    used = cli("plan", "use", "local/rename", "demo", "--arg", "old=f", "--arg", "new=g")
    assert used.code == 1 and "Error [409]" in used.err and "draft" in used.err
    cli.ok("action", "available", "local/rename")
    assert cli.ok("action", "list", "--available", fmt="json").json()["data"]["actions"][0]["state"] == "available"


def test_use_to_apply_with_tree_explain_and_invariants(cli: Cli, tmp_path: Path) -> None:
    cli.ok("action", "create", "--config", str(tmp_path / "action.yaml"))
    cli.ok("invariant", "add", "--global", "Never touch vendored code")
    cli.ok("invariant", "add", "--project", "demo", "Never touch vendored code")  # same text: enforced once
    used = cli.ok(
        "plan",
        "use",
        "local/rename",
        "demo",
        "--arg",
        "old=f",
        "--arg",
        "new=g",
        "--automation-level",
        "review",
        "--invariant",
        "Keep the tests green",
        fmt="json",
    ).json()["data"]["plan"]
    assert (used["phase"], used["state"]) == ("execute", "complete")
    assert used["arguments"] == {"old": "f", "new": "g", "limit": 3}
    assert used["allowed_verbs"] == ["apply", "correct", "prompt", "cancel"]
    plan = used["id"]
    bad = cli("plan", "execute", plan)
    assert bad.code == 1
    assert f"Error [409] CONFLICT: cannot execute plan {plan}: it is in phase execute, state complete" in bad.err
    rows = cli.ok("plan", "tree", plan, "--format", "flat", fmt="json").json()["data"]["tree"]
    assert rows["label"].startswith(f"Plan {plan}")
    text = cli.ok("plan", "tree", plan).out
    assert '[prompt_definition] "Rename f to g"' in text and "[implementation_choice]" in text
    effective = cli.ok("invariant", "list", "--plan", plan, "--effective", fmt="json").json()["data"]["invariants"]
    assert sorted((i["scope"], i["text"]) for i in effective) == [
        ("plan", "Keep the tests green"),
        ("plan", "Public names keep a deprecated alias"),
        ("project", "Never touch vendored code"),
    ]
    flat = cli.ok("plan", "tree", plan, "--format", "json").out
    assert flat.count('"type": "invariant_enforced"') == 3
    strategy = next(line.split("id=")[1].split()[0] for line in text.splitlines() if "[strategy_choice]" in line)
    explained = cli.ok("plan", "explain", strategy, "--show-reasoning", fmt="json").json()["data"]["decision"]
    assert explained["question"] == "How to rename?" and explained["alternatives"] == ["Rename the definition only"]
    assert explained["confidence"] == 0.9
    applied = cli.ok("plan", "apply", plan, "--yes", fmt="json").json()["data"]["plan"]
    assert (applied["phase"], applied["state"]) == ("apply", "applied")
    assert [p["id"] for p in cli.ok("plan", "list", "--state", "applied", fmt="json").json()["data"]["plans"]] == [plan]


def test_bad_arguments_are_listed_in_one_error(cli: Cli, tmp_path: Path) -> None:
    cli.ok("action", "create", "--config", str(tmp_path / "action.yaml"))
    bad = cli("plan", "use", "local/rename", "demo", "--arg", "limit=99", "--arg", "colour=red")
    assert bad.code == 1
    assert "Error [422]" in bad.err
    for part in (
        "colour: not an argument",
        "limit: 99 is out of bounds (expected int in [1, 10])",
        "old: missing (expected string)",
        "new: missing",
    ):
        assert part in bad.err
