"""Apply across resources is all or nothing: a plan that changed two git repositories is
applied to neither when one of them would conflict (a preflight of both comes first), and
to both once the conflict is gone."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cleveragents.graph.workspace import Workspace
from cleveragents.plans.records import PlanRecord
from cleveragents.services import plans, projects, resources, validation_commands
from tests.sandbox.conftest import tree_bytes

from .conftest import AGENT, write_action

GIT_ID = ["-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false"]
SCRIPT = """
strategize:
  - key: how
    decision: implementation_choice
    question: What changes?
    chosen: the same file in both repositories
    confidence: 0.9
execute:
  - tool: write_file
    decision_key: how
    required: true
    arguments: {resource: local/a, path: notes.txt, content: "{{ new }}"}
  - tool: write_file
    decision_key: how
    required: true
    arguments: {resource: local/b, path: notes.txt, content: "{{ new }}"}
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=repo, check=True, capture_output=True)


def _head(repo: Path) -> str:
    return subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=repo, text=True)


def _use(ws: Workspace) -> PlanRecord:
    new = {"old": "x", "new": "from the plan\n"}
    return plans.use(ws, "local/demo-action", ["demo"], new, automation_level="review", agent=AGENT)


def _repo(root: Path) -> Path:
    root.mkdir()
    (root / "notes.txt").write_text("original\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "start"]):
        _git(root, *args)
    return root


def test_a_conflict_in_one_resource_applies_none_then_both(ws: Workspace, tmp_path: Path) -> None:
    repos = {name: _repo(tmp_path / name) for name in ("a", "b")}
    for name, repo in repos.items():
        resources.add(ws, repo, type_name="git-checkout", name=f"local/{name}", agent=AGENT)
        projects.link(ws, "local/demo", f"local/{name}", agent=AGENT)
    plans.create_action(ws, write_action(tmp_path, SCRIPT), {}, agent=AGENT)
    plan = _use(ws)
    assert (plan.phase, plan.state) == ("execute", "complete"), plan.error

    # Someone changes b's file since the sandboxes forked: b would conflict.
    (repos["b"] / "notes.txt").write_text("changed by hand\n")
    _git(repos["b"], "commit", "-qam", "by hand")
    before = {name: tree_bytes(repo) for name, repo in repos.items()}
    heads = {name: _head(repo) for name, repo in repos.items()}

    constrained = plans.apply(ws, plan.id, agent=AGENT)
    assert (constrained.phase, constrained.state) == ("apply", "constrained")
    assert constrained.error == "conflicts in local/b:notes.txt"
    # Neither repository moved, although a alone would have applied cleanly.
    assert {name: tree_bytes(repo) for name, repo in repos.items()} == before
    assert heads == {name: _head(repo) for name, repo in repos.items()}

    # The hand change reverted: the resume reverts to Strategize, runs the
    # plan again (review), and the apply then lands in both repositories.
    _git(repos["b"], "revert", "--no-edit", "HEAD")
    again = plans.resume(ws, plan.id, agent=AGENT)
    assert (again.phase, again.state) == ("execute", "complete"), again.error
    applied = plans.apply(ws, plan.id, agent=AGENT)
    assert applied.state == "applied", applied.error
    assert all((repo / "notes.txt").read_text() == "from the plan\n" for repo in repos.values())


def test_a_failing_validation_command_errors_execute(ws: Workspace, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "a")
    resources.add(ws, repo, type_name="git-checkout", name="local/a", agent=AGENT)
    projects.link(ws, "local/demo", "local/a", agent=AGENT)
    validation_commands.set_validation(ws, "local/demo", test="grep plan notes.txt && exit 4", agent=AGENT)
    one_repo = SCRIPT[
        : SCRIPT.index(
            "  - tool: write_file\n    decision_key: how\n    required: true\n    arguments: {resource: local/b"
        )
    ]
    plans.create_action(ws, write_action(tmp_path, one_repo), {}, agent=AGENT)
    plan = _use(ws)
    # The command ran in the sandbox (it sees the plan's file) and its failure ends Execute.
    assert (plan.phase, plan.state) == ("execute", "errored")
    assert (
        plan.error == "validation failed: test `grep plan notes.txt && exit 4` in local/a exited with 4: from the plan"
    )
    assert (repo / "notes.txt").read_text() == "original\n"
