"""``agents plan checkpoint | rollback | artifacts`` and ``agents project set-validation``
on a real store and a real git repository (requests), with the tool calls made through
the services the plans engine uses. The plan itself is a fixture (plans creates real ones)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.services import sandboxes, validation_commands
from cleveragents.terms import CA, ID
from tests.cli.test_graph_cli import Cli, initialized_cli

from .conftest import bare_plan, git, tree_bytes

PLAN = "01JAAAAAAAAAAAAAAAAAAAAAAA"


@pytest.fixture
def setup(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> tuple[Cli, Workspace, Path]:
    cli = initialized_cli(tmp_path, monkeypatch, capsys)
    cli.ok("resource", "add", str(repo), "--type", "git-checkout", "--name", "local/repo", "--no-index")
    cli.ok("project", "create", "local/app")
    cli.ok("project", "link-resource", "local/app", "local/repo")
    project = cli.ok("project", "show", "local/app", fmt="json").json()["data"]["project"]["iri"]
    ws = Workspace(cli.data_dir)
    plan = ox.NamedNode(f"{ID}plan/{PLAN}")
    with ws.writer() as session:
        triples = [*bare_plan(PLAN), (plan, ox.NamedNode(CA + "targetsProject"), ox.NamedNode(project))]
        session.commit(CommitRequest(add=triples, message="a plan (fixture)"))
    return cli, ws, repo


def tool_calls(ws: Workspace, *calls: tuple[str, dict]) -> None:
    router = sandboxes.router()
    with ws.writer() as session:
        ctx = sandboxes.tool_context(ws, session, sandboxes.plan_node(session.store, PLAN))
        for name, arguments in calls:
            result = router.call(name, arguments, ctx)
            assert result.ok, result.error


def test_checkpoint_artifacts_rollback_and_apply(setup):
    cli, ws, repo = setup
    none_yet = cli("plan", "checkpoint", PLAN)
    assert none_yet.code == 1 and "has no sandbox yet" in none_yet.out + none_yet.err

    tool_calls(
        ws,
        ("edit_file", {"path": "src/requests/api.py", "edits": [{"old_text": "def get(", "new_text": "def fetch("}]}),
        ("write_file", {"path": "NOTES.md", "content": "notes\n"}),
    )
    taken = cli.ok("plan", "checkpoint", PLAN, "--label", "first", fmt="json").json()["data"]["checkpoints"]
    assert [(c["resource"], c["sequence"], c["label"], c["files"]) for c in taken] == [("local/repo", 1, "first", 2)]
    query = "SELECT ?ref ?type WHERE { ?c a ca:Checkpoint ; ca:sandboxRef ?ref ; ca:checkpointType ?type }"
    rows = cli.ok("graph", "query", query, fmt="json").json()["data"]["results"]
    assert [(r["ref"].strip('"'), r["type"].strip('"')) for r in rows] == [(taken[0]["id"], "manual")]

    sandbox_root = Path(sandboxes.artifacts(ws, PLAN)[0].root)
    at_first = tree_bytes(sandbox_root)
    tool_calls(ws, ("delete_file", {"path": "README.md"}), ("write_file", {"path": "NOTES.md", "content": "v2\n"}))
    listed = cli.ok("plan", "artifacts", PLAN, fmt="json").json()["data"]["artifacts"]
    assert {(a["status"], a["path"]) for a in listed} == {
        ("modified", "src/requests/api.py"),
        ("added", "NOTES.md"),
        ("deleted", "README.md"),
    }
    plain = cli.ok("plan", "artifacts", PLAN).out
    assert "Artifacts (3 file(s) in 1 sandbox(es))" in plain and "deleted   README.md" in plain

    unconfirmed = cli("plan", "rollback", PLAN, "first")
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.out + unconfirmed.err
    unknown = cli("plan", "rollback", PLAN, "nope", "--yes")
    assert unknown.code == 1 and "no checkpoint 'nope'" in unknown.out + unknown.err
    cli.ok("plan", "rollback", PLAN, taken[0]["checkpoint"], "--yes")  # by the checkpoint's ULID
    assert tree_bytes(sandbox_root) == at_first

    results = sandboxes.apply(ws, PLAN)
    assert [(r.status, sorted(c.path for c in r.changed_files)) for r in results] == [
        ("applied", ["NOTES.md", "src/requests/api.py"])
    ]
    assert "def fetch(" in (repo / "src/requests/api.py").read_text()
    assert git(repo, "status", "--porcelain") == ""


def test_unknown_plan_is_a_readable_error(setup):
    cli, _, _ = setup
    missing = cli("plan", "artifacts", "01JBBBBBBBBBBBBBBBBBBBBBBB")
    assert missing.code == 1 and "Error [404] NOT_FOUND: plan '01JBBBBBBBBBBBBBBBBBBBBBBB' not found" in missing.err


def test_set_validation_and_run_it_in_the_sandbox(setup):
    cli, ws, _ = setup
    shown = cli.ok(
        "project", "set-validation", "local/app",
        "--test-command", "python -m compileall -q src",
        "--lint-command", "test ! -e BROKEN",
        "--timeout", "60",
        fmt="json",
    ).json()["data"]["validation"]  # fmt: skip
    assert (shown["test"], shown["lint"], shown["timeout"]) == ("python -m compileall -q src", "test ! -e BROKEN", 60.0)
    # Setting one command again keeps the others.
    cli.ok("project", "set-validation", "--project", "local/app", "--build-command", "true")
    [commands] = validation_commands.project_validation(ws, "local/app")
    assert (commands.build, commands.test, commands.timeout) == ("true", "python -m compileall -q src", 60.0)

    tool_calls(ws, ("write_file", {"path": "BROKEN", "content": "x\n"}))
    runs, result = validation_commands.run_for_plan(ws, PLAN)
    assert [(r.kind, r.passed) for r in runs] == [("build", True), ("lint", False), ("test", True)]
    assert result is not None and not result.empty
    recorded = cli.ok(
        "graph", "query",
        "SELECT ?kind ?ok WHERE { ?r a ca:ValidationRun ; ca:validationKind ?kind ; ca:succeeded ?ok } ORDER BY ?kind",
        fmt="json",
    ).json()["data"]["results"]  # fmt: skip
    assert [(r["kind"].split('"')[1], r["ok"].split('"')[1]) for r in recorded] == [
        ("build", "true"),
        ("lint", "false"),
        ("test", "true"),
    ]

    nothing = cli("project", "set-validation", "local/app")
    assert nothing.code == 1 and "nothing to set" in nothing.err
    bad = cli("project", "set-validation", "local/app", "--timeout", "0")
    assert bad.code == 1 and "--timeout must be more than 0" in bad.err
    cli.ok("project", "set-validation", "local/app", "--clear")
    assert validation_commands.project_validation(ws, "local/app") == []
