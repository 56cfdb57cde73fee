"""The rename example end to end through the CLI on a pinned corpus (requests 2.32.3 in a
temporary git repository): action create -> plan use -> Execute in a git worktree sandbox,
where the project's validation command runs some of requests' own tests -> apply ->
re-index -> the "why" query, graph blame and the plan queries (also --as-of) name the plan
and the decision."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cleveragents.resources import data_path
from tests.cli.test_graph_cli import Cli, initialized_cli
from tests.sandbox.conftest import make_repo

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rename-function" / "action.yaml"


def _first_iri(payload: object) -> str:
    """The first IRI-looking string in a JSON payload (without its angle brackets)."""
    text = json.dumps(payload)
    start = text.index("https://cleveragents.ai/id/src/")
    return text[start : text.index('"', start)].rstrip(">")


def _head(cli: Cli) -> int:
    """The store's current revision."""
    return int(cli.ok("graph", "query", "ASK {}", fmt="json").json()["data"]["revision"])


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


# Offline tests of requests (no httpbin): they import the whole package, sessions.py included.
TESTS = f"PYTHONPATH=src {sys.executable} -m pytest -q -p no:cacheprovider tests/test_hooks.py tests/test_structures.py"
SESSIONS = "src/requests/sessions.py"


def test_rename_from_action_create_to_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    cli: Cli = initialized_cli(tmp_path, monkeypatch, capsys)
    cli.ok("resource", "add", str(repo), "--type", "git-checkout", "--name", "local/requests")
    cli.ok("project", "create", "local/demo")
    cli.ok("project", "link-resource", "local/demo", "local/requests")
    cli.ok("index", "local/requests")
    cli.ok("project", "set-validation", "local/demo", "--test-command", TESTS, "--timeout", "300")
    cli.ok("action", "create", "--config", str(EXAMPLE))
    before_plan = _head(cli)
    plan = cli.ok(
        "plan",
        "use",
        "local/rename-function",
        "demo",
        "--arg",
        "old_name=merge_setting",
        "--arg",
        "new_name=merge_settings",
        fmt="json",
    ).json()["data"]["plan"]
    assert (plan["phase"], plan["state"]) == ("execute", "complete"), plan["error"]
    assert "def merge_setting(" in (repo / SESSIONS).read_text()  # nothing real changed before apply
    # requests' tests passed in the sandbox (the validation run recorded at the end of Execute).
    runs = cli.ok(
        "graph",
        "query",
        f"SELECT ?ok ?tail WHERE {{ ?r a ca:ValidationRun ; ca:forPlan <{plan['iri']}> ; ca:succeeded ?ok ; "
        "ca:outputTail ?tail }",
        fmt="json",
    ).json()["data"]["results"]
    assert len(runs) == 1 and runs[0]["ok"].startswith('"true"') and " passed" in runs[0]["tail"]
    before_apply = _head(cli)
    applied = cli.ok("plan", "apply", plan["id"], "--yes", fmt="json").json()["data"]["plan"]
    assert applied["state"] == "applied", applied["error"]
    text = (repo / SESSIONS).read_text()
    assert "def merge_settings(" in text and "merge_setting(" not in text
    assert text.count("merge_settings(") == 1 + 8  # the definition and its eight calls (all in sessions.py)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "src")], check=True)
    renamed = f'SELECT ?f WHERE {{ ?f uko:name "merge_settings" ; uko:sourcePath "{SESSIONS}" }}'
    found = cli.ok("graph", "query", renamed, fmt="json").json()
    iri = _first_iri(found)
    why = cli.ok("query", "run", "why-entity-changed", "--param", f"entity={iri}", fmt="json").out
    assert "How are the files edited?" in why
    assert "Rename the function merge_setting to merge_settings and update every caller" in why  # the prompt
    assert "The behaviour of the renamed function does not change" in why  # the invariant
    assert data_path("queries").joinpath("why-entity-changed.rq").exists()

    # graph blame names the plan and the decision behind the revision that renamed it.
    blame = cli.ok("graph", "blame", iri, fmt="json").json()["data"]["blame"]
    deciding = {(line["plan"], line["decision"]) for line in blame if line["plan"]}
    assert len(deciding) == 1 and next(iter(deciding))[0] == plan["id"]
    assert next(iter(deciding))[1] in why

    # The plan queries at a past revision (--as-of) see the plan as it was then.
    def run(name: str, param: str, as_of: int | None = None) -> list[dict[str, str]]:
        extra = ["--as-of", str(as_of)] if as_of is not None else []
        return cli.ok("query", "run", name, "--param", param, *extra, fmt="json").json()["data"]["results"]

    plan_param = f"plan={plan['iri']}"
    phases_then = [r["phase"] for r in run("plan-timeline", plan_param, before_apply)]
    phases_now = [r["phase"] for r in run("plan-timeline", plan_param)]
    assert not any("Apply" in p for p in phases_then) and any("Apply" in p for p in phases_now)
    assert run("plan-timeline", plan_param, before_plan) == []
    assert len(run("plan-decisions", plan_param, before_apply)) == len(run("plan-decisions", plan_param)) > 0
    assert run("plan-changed-entities", plan_param, before_apply) == [] != run("plan-changed-entities", plan_param)
    assert run("why-entity-changed", f"entity={iri}", before_apply) == []

    # Plans that touched a module: the file (and the package holding it), not before the plan.
    for path, tail in ((SESSIONS, "/" + SESSIONS), ("src/requests", "/src/requests/")):
        found = f'SELECT ?m WHERE {{ ?m uko:sourcePath "{path}" FILTER(STRENDS(STR(?m), "{tail}")) }}'
        module = _first_iri(cli.ok("graph", "query", found, fmt="json").json())
        touched = run("plans-touching-module", f"module={module}")
        assert [(r["plan"], r["action"]) for r in touched] == [(f"<{plan['iri']}>", '"local/rename-function"')]
        assert "modify" in touched[0]["kinds"]
        assert run("plans-touching-module", f"module={module}", before_plan) == []
