"""The rename example end to end through the CLI on a real git repository (a small
handwritten package in a temporary repo): action create -> plan use -> Execute in a git
worktree sandbox -> apply -> re-index -> the "why" query names the decision."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from cleveragents.resources import data_path
from tests.cli.test_graph_cli import Cli, initialized_cli

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


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("def helper(x):\n    return x + 1\n")
    (root / "pkg" / "app.py").write_text(
        textwrap.dedent(
            """\
            from pkg.util import helper


            def run(values):
                return [helper(v) for v in values]
            """
        )
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@e", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "start")
    return root


def test_rename_from_action_create_to_apply(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cli: Cli = initialized_cli(tmp_path, monkeypatch, capsys)
    cli.ok("resource", "add", str(repo), "--type", "git-checkout", "--name", "local/repo")
    cli.ok("project", "create", "local/demo")
    cli.ok("project", "link-resource", "local/demo", "local/repo")
    cli.ok("action", "create", "--config", str(EXAMPLE))
    before_plan = _head(cli)
    plan = cli.ok(
        "plan",
        "use",
        "local/rename-function",
        "demo",
        "--arg",
        "old_name=helper",
        "--arg",
        "new_name=increment",
        fmt="json",
    ).json()["data"]["plan"]
    assert (plan["phase"], plan["state"]) == ("execute", "complete"), plan["error"]
    assert "def helper(" in (repo / "pkg" / "util.py").read_text()  # nothing real changed before apply
    before_apply = _head(cli)
    applied = cli.ok("plan", "apply", plan["id"], "--yes", fmt="json").json()["data"]["plan"]
    assert applied["state"] == "applied", applied["error"]
    assert "def increment(x)" in (repo / "pkg" / "util.py").read_text()
    assert "increment(v) for v" in (repo / "pkg" / "app.py").read_text()
    subprocess.run(["python3", "-m", "compileall", "-q", str(repo)], check=True)
    found = cli.ok(
        "graph", "query", 'SELECT ?f WHERE { ?f uko:name "increment" ; uko:sourcePath "pkg/util.py" }', fmt="json"
    ).json()
    iri = _first_iri(found)
    why = cli.ok("query", "run", "why-entity-changed", "--param", f"entity={iri}", fmt="json").out
    assert "How are the files edited?" in why
    assert "Rename the function helper to increment and update every caller" in why  # the prompt
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
    for path, tail in (("pkg/util.py", "/pkg/util.py"), ("pkg", "/pkg/")):
        found = f'SELECT ?m WHERE {{ ?m uko:sourcePath "{path}" FILTER(STRENDS(STR(?m), "{tail}")) }}'
        module = _first_iri(cli.ok("graph", "query", found, fmt="json").json())
        touched = run("plans-touching-module", f"module={module}")
        assert [(r["plan"], r["action"]) for r in touched] == [(f"<{plan['iri']}>", '"local/rename-function"')]
        assert "modify" in touched[0]["kinds"]
        assert run("plans-touching-module", f"module={module}", before_plan) == []
