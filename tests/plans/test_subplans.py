"""Subplans on a real store and a real git repository: subplan_spawn decisions made in
Strategize become child plans in Execute (the create-subplan tool), each with its own
worktree sandbox forked from the parent's; parallel children run at most max_parallel at
once; the parent merges them into its sandbox; a failing sequential child stops the
parent's step; the children show in the plan tree and in correction impact."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import yaml

from cleveragents.graph import named_queries
from cleveragents.graph.workspace import Workspace
from cleveragents.services import plans, projects, resources
from cleveragents.services.query_runner import evaluate

from .conftest import AGENT

GIT_ID = ["-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false"]

# A child: write one file, then check it with a command (which may be told to fail).
CHILD_SCRIPT = """
strategize:
  - key: how
    decision: implementation_choice
    question: How is {{ file }} written?
    chosen: write_file with the line
    confidence: 0.9
execute:
  - tool: write_file
    decision_key: how
    required: true
    arguments: {path: "{{ file }}", content: "{{ line }}\\n"}
  - tool: run_command
    decision_key: how
    required: true
    arguments: {command: "{{ check }}", timeout: 60}
"""


def _repo(root: Path) -> Path:
    root.mkdir()
    (root / "README").write_text("base\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "start"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=root, check=True, capture_output=True)
    return root


def _action(folder: Path, name: str, script: str, args: dict[str, object], description: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(textwrap.dedent(script))
    path = folder / f"{name}-action.yaml"
    body = {
        "name": f"local/{name}",
        "description": description,
        "definition_of_done": "done",
        "strategy_actor": f"scripted:{folder / f'{name}.yaml'}",
        "execution_actor": f"scripted:{folder / f'{name}.yaml'}",
        "args": args,
        "automation_level": "review",
    }
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def _setup(ws: Workspace, tmp_path: Path, parent_script: str) -> Path:
    repo = _repo(tmp_path / "repo")
    resources.add(ws, repo, type_name="git-checkout", name="local/repo", agent=AGENT)
    projects.link(ws, "local/demo", "local/repo", agent=AGENT)
    string = {"type": "string", "required": True}
    child_args = {"file": string, "line": string, "check": string}
    child = _action(tmp_path / "actions", "write-line", CHILD_SCRIPT, child_args, "{{ file }}")
    parent = _action(tmp_path / "actions", "fan-out", parent_script, {}, "Write the files through subplans")
    plans.create_action(ws, child, {}, agent=AGENT)
    plans.create_action(ws, parent, {}, agent=AGENT)
    return repo


def _spawns(names: list[str], check: str, parent: str | None = None) -> str:
    lines = []
    for name in names:
        lines += [
            f"  - key: spawn-{name}",
            "    decision: subplan_spawn",
            f"    question: Who writes {name}?",
            f"    chosen: a subplan writing {name}",
            "    confidence: 0.9",
            "    action: local/write-line",
            f"    arguments: {{file: {name}, line: line of {name}, check: '{check.replace('NAME', name)}'}}",
        ]
        if parent:
            lines.append(f"    parent: {parent}")
    return "\n".join(lines) + "\n"


def test_parallel_children_run_at_most_max_parallel_at_once_and_merge_into_the_parent(
    ws: Workspace, tmp_path: Path
) -> None:
    # Each child's command records how many children are running when it starts, then waits
    # until two have started: it passes only if two children really run at the same time.
    meet = tmp_path / "meet"
    meet.mkdir()
    check = (
        f"touch {meet}/start-NAME; s=$(ls {meet} | grep -c start); d=$(ls {meet} | grep -c done); "
        f"echo $((s - d)) > {meet}/running-NAME; "
        f"for i in $(seq 400); do [ $(ls {meet} | grep -c start) -ge 2 ] && break; sleep 0.05; done; "
        f"touch {meet}/done-NAME; [ $(ls {meet} | grep -c start) -ge 2 ]"
    )
    script = (
        "strategize:\n"
        "  - key: parts\n"
        "    decision: subplan_parallel_spawn\n"
        "    question: How is the work split?\n"
        "    chosen: one subplan per file, two at a time\n"
        "    confidence: 0.9\n"
        "    max_parallel: 2\n"
        + _spawns(["a.txt", "b.txt", "c.txt"], check, parent="parts")
        + "execute:\n"
        "  - tool: create-subplan\n"
        "    decision_key: parts\n"
        "    required: true\n"
        "  - tool: run_command\n"
        "    required: true\n"
        "    arguments: {command: 'cat a.txt b.txt c.txt'}\n"
    )
    repo = _setup(ws, tmp_path, script)
    plan = plans.use(ws, "local/fan-out", ["demo"], {}, agent=AGENT)
    assert (plan.phase, plan.state) == ("execute", "complete"), plan.error

    running = sorted(int((meet / f"running-{n}").read_text()) for n in ("a.txt", "b.txt", "c.txt"))
    assert max(running) <= 2 and len(list(meet.glob("done-*"))) == 3

    root, found, family = plans.tree(ws, plan.id)
    children = [p for p in family.values() if p.parent == root.iri]
    assert len(children) == 3
    assert all((c.phase, c.state) == ("apply", "applied") and c.root == root.iri for c in children)
    spawn = {d.iri: d for d in found.values() if d.type == "subplan_spawn"}
    assert sorted(c.spawned_by for c in children) == sorted(spawn)  # one child per spawn decision
    # Each child's root prompt is influenced by its spawn decision: a correction reaches it.
    impact = plans.correction_impact(ws, next(d.iri for d in found.values() if d.type == "subplan_parallel_spawn"))
    assert sorted(impact.subplans) == sorted(c.iri for c in children)
    assert len(impact.affected) >= 1 + 3 + 3  # the group, its spawns, the children's roots...

    # The named query lists them, with their spawn decision and the mode.
    query = named_queries.get("plan-subplans")
    with ws.reader() as store:
        rows = evaluate(store, query.text, None, named_queries.bind(query, {"plan": root.iri})).rows
    assert sorted(r["subplan"].value for r in rows) == sorted(c.iri for c in children)
    assert {(r["mode"].value, r["action"].value, r["state"].value) for r in rows} == {
        ("parallel", "local/write-line", "https://cleveragents.ai/ontology/ca#applied")
    }

    # The children's work is in the parent's sandbox, not yet in the real repository.
    assert not (repo / "a.txt").exists()
    applied = plans.apply(ws, plan.id, agent=AGENT)
    assert applied.state == "applied", applied.error
    assert sorted(p.name for p in repo.iterdir() if p.suffix == ".txt") == ["a.txt", "b.txt", "c.txt"]
    assert (repo / "b.txt").read_text() == "line of b.txt\n"  # the template's last newline is kept


def test_a_failing_sequential_child_stops_the_step_and_the_next_is_not_spawned(ws: Workspace, tmp_path: Path) -> None:
    script = (
        "strategize:\n"
        + _spawns(["bad.txt"], "echo checking NAME; exit 3")
        + _spawns(["never.txt"], "true")
        + "execute:\n"
        "  - tool: create-subplan\n"
        "    decision_key: spawn-bad.txt\n"
        "    required: true\n"
        "    arguments: {max_retries: 1}\n"
        "  - tool: create-subplan\n"
        "    decision_key: spawn-never.txt\n"
        "    required: true\n"
    )
    _setup(ws, tmp_path, script)
    plan = plans.use(ws, "local/fan-out", ["demo"], {}, agent=AGENT)
    assert (plan.phase, plan.state) == ("execute", "errored")
    # The parent's error carries the child's: which command, its exit code, its output.
    assert "1 of 1 subplans did not finish" in plan.error
    assert "exited with 3" in plan.error and "checking bad.txt" in plan.error
    _, found, family = plans.tree(ws, plan.id)
    children = [p for p in family.values() if p.parent == plan.iri]
    assert len(children) == 1 and (children[0].phase, children[0].state) == ("execute", "errored")
    never = next(d for d in found.values() if d.question == "Who writes never.txt?")
    assert never.spawned == []
    # retry_failed with max_retries 1: the child's Execute ran twice.
    with ws.reader() as store:
        runs = store.query(
            f"SELECT ?r WHERE {{ ?r ca:runOfPlan <{children[0].iri}> ; ca:runPhase ca:ExecutePhase }}"
        )
        assert len(list(runs)) == 2


def test_create_subplan_refuses_a_decision_that_spawns_nothing(ws: Workspace, tmp_path: Path) -> None:
    script = """
    strategize:
      - key: approach
        decision: strategy_choice
        question: How?
        chosen: directly
    execute:
      - tool: create-subplan
        decision_key: approach
        required: true
    """
    _setup(ws, tmp_path, textwrap.dedent(script))
    plan = plans.use(ws, "local/fan-out", ["demo"], {}, agent=AGENT)
    assert plan.state == "errored"
    assert "is a strategy_choice; subplans come from a subplan_spawn or subplan_parallel_spawn" in plan.error
