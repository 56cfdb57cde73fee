"""Skills: Agent Skill folders (SKILL.md) and skill YAML in the registry, disclosed to a live actor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cleveragents.actors import agent_skills
from cleveragents.errors import ValidationError
from cleveragents.fakes.model_server import FakeModelServer
from tests.cli.test_graph_cli import Cli, initialized_cli

EXAMPLES = Path(__file__).parents[2] / "examples"
FOLDER = EXAMPLES / "skills" / "release-notes"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


def _fails(cli: Cli, *args: str):
    result = cli(*args)
    assert result.code != 0, (args, result.out, result.err)
    return result


def test_a_skill_md_folder_is_parsed_as_the_standard_says(tmp_path: Path):
    skill = agent_skills.load(FOLDER)
    assert (skill.name, skill.allowed_tools) == ("release-notes", ("plan_tree", "plan_explain"))
    assert skill.instructions.startswith("# Writing release notes") and skill.files() == ["references/STYLE.md"]
    assert skill.metadata == {"author": "cleveragents", "version": "1.0"}
    bad = tmp_path / "notes"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: release-notes\ndescription: x\n---\nbody\n")
    with pytest.raises(ValidationError, match="must match the folder's name 'notes'"):
        agent_skills.load(bad)
    (bad / "SKILL.md").write_text("---\nname: notes\n---\n")
    with pytest.raises(ValidationError, match=r"SKILL\.md: description"):
        agent_skills.load(bad)
    (bad / "SKILL.md").write_text("no front matter\n")
    with pytest.raises(ValidationError, match=r"SKILL.md:1: SKILL.md starts with YAML front matter"):
        agent_skills.load(bad)


def test_skill_registry_folders_yaml_includes_and_removal(cli: Cli, tmp_path: Path):
    added = cli.ok("skill", "add", str(FOLDER), fmt="json").json()["data"]["skill"]
    assert added["name"] == "local/release-notes" and added["tools"] == ["local/release-notes"]
    tool = cli.ok("tool", "show", "local/release-notes", fmt="json").json()["data"]["tool"]
    assert tool["source"] == "agent_skill" and tool["read_only"] is True
    assert tool["definition"]["path"] == str(FOLDER.resolve())
    cli.ok("skill", "add", "--config", str(EXAMPLES / "skills" / "writer.yaml"))
    outer = tmp_path / "outer.yaml"
    outer.write_text(yaml.safe_dump({"skill": {"name": "local/outer", "description": "all of it",
                                               "includes": ["local/writer"]}}))
    cli.ok("skill", "add", "--config", str(outer))
    flattened = cli.ok("skill", "tools", "local/outer", fmt="json").json()["data"]["tools"]
    assert [(t["name"], t["source"]) for t in flattened] == [("local/release-notes", "agent_skill")]
    assert "included by local/outer" in _fails(cli, "skill", "remove", "local/writer").err
    listed = cli.ok("skill", "list", fmt="json").json()["data"]["skills"]
    assert sorted(s["name"] for s in listed) == ["local/outer", "local/release-notes", "local/writer"]
    assert "CONFLICT" in _fails(cli, "skill", "add", str(FOLDER)).err
    missing = tmp_path / "missing.yaml"
    missing.write_text(yaml.safe_dump({"skill": {"name": "local/m", "tools": ["local/nope"]}}))
    assert "no registered tool 'local/nope'" in _fails(cli, "skill", "add", "--config", str(missing)).err
    cli.ok("skill", "remove", "local/outer")
    cli.ok("skill", "remove", "local/writer")
    # the agent_skill tool stays while local/release-notes still uses it
    assert cli.ok("tool", "show", "local/release-notes", fmt="json").json()["data"]["tool"]["source"] == "agent_skill"


def test_an_actor_with_a_skill_sees_its_metadata_then_activates_it(cli: Cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    cli.ok("skill", "add", str(FOLDER))
    actor = yaml.safe_load((EXAMPLES / "actors" / "orchestrator.yaml").read_text())
    actor["actors"]["orchestrator"]["skills"] = ["local/release-notes"]
    actor_file = tmp_path / "writer.yaml"
    actor_file.write_text(yaml.safe_dump(actor))
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        cli.ok("actor", "add", "local/writer", "--config", str(actor_file))
        cli.ok("session", "create", "--name", "notes", "--actor", "local/writer")
        server.set_script({"turns": [
            {"tool_calls": [{"name": "activate_skill", "arguments": {"name": "release-notes"}}]},
            {"tool_calls": [{"name": "read_skill_file", "arguments": {"name": "release-notes",
                                                                      "path": "references/STYLE.md"}}]},
            {"tool_calls": [{"name": "read_skill_file", "arguments": {"name": "release-notes",
                                                                      "path": "../../../../etc/hostname"}}]},
            {"text": "Adds sessions."},
        ]})
        told = cli.ok("session", "tell", "Release notes, please", fmt="json").json()["data"]["answer"]
        sent = [r["body"] for r in server.requests()]
    assert told["text"] == "Adds sessions."
    system = sent[0]["messages"][0]["content"]
    assert "<name>release-notes</name>" in system and "# Writing release notes" not in system  # metadata only
    assert {"activate_skill", "read_skill_file"} <= {t["function"]["name"] for t in sent[0]["tools"]}
    activated = json.loads(sent[1]["messages"][-1]["content"])
    assert activated["instructions"].startswith("# Writing release notes")
    assert activated["files"] == ["references/STYLE.md"]
    assert "Start each line with a verb" in json.loads(sent[2]["messages"][-1]["content"])["content"]
    escaped = sent[3]["messages"][-1]["content"]
    assert escaped.startswith("Error") and "has no file" in escaped  # confined to the skill's folder
    assert told["tool_calls"] == [{"name": "activate_skill", "ok": True}, {"name": "read_skill_file", "ok": True},
                                  {"name": "read_skill_file", "ok": False}]
