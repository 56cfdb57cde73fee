"""The built-in resource tools on a real worktree, and the calls recorded in the graph."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.sandbox import Sandbox
from cleveragents.tools import GraphRecorder, ToolContext, default_router

from .conftest import bare_plan

ROUTER = default_router()
PLAN = "01JAAAAAAAAAAAAAAAAAAAAAAA"


@pytest.fixture
def sandbox(repo: Path, make_sandbox) -> Sandbox:
    return make_sandbox(repo)


def ctx_for(sandbox: Sandbox, **kw) -> ToolContext:
    return ToolContext(plan=PLAN, sandboxes={"local/repo": sandbox}, **kw)


def call(ctx: ToolContext, tool: str, **arguments):
    result = ROUTER.call(tool, arguments, ctx)
    assert result.ok, result.error
    return result


def test_file_tools_round_trip(sandbox: Sandbox, repo: Path):
    ctx = ctx_for(sandbox)
    source = (repo / "src/requests/api.py").read_text()
    read = call(ctx, "read_file", path="src/requests/api.py", offset=1, max_lines=3).content
    assert read["content"] == "".join(source.splitlines(keepends=True)[:3]) and read["truncated"]
    written = call(ctx, "write_file", path="notes/todo.md", content="# todo\n")
    assert [(c.kind, c.path) for c in written.changes] == [("create", "notes/todo.md")]
    edited = call(
        ctx, "edit_file", path="src/requests/api.py", edits=[{"old_text": "def get(", "new_text": "def fetch("}]
    )
    assert edited.changes[0].kind == "modify" and edited.changes[0].before != edited.changes[0].after
    assert "def fetch(" in (sandbox.root / "src/requests/api.py").read_text()
    assert "def get(" in (repo / "src/requests/api.py").read_text()  # the real checkout is untouched
    moved = call(ctx, "move_file", source="notes/todo.md", destination="docs/todo.md")
    assert moved.changes[0].previous_path == "notes/todo.md"
    assert call(ctx, "create_directory", path="build/out").changes[0].kind == "mkdir"
    assert call(ctx, "delete_file", path="docs/todo.md").changes[0].kind == "delete"
    info = call(ctx, "get_file_info", path="src/requests/api.py").content
    assert info["type"] == "file" and info["sha256"] == edited.changes[0].after
    listed = call(ctx, "list_files", path="src/requests", pattern="*.py").content["files"]
    assert "src/requests/api.py" in listed and all(f.endswith(".py") for f in listed)
    hits = call(ctx, "search_files", pattern=r"^def fetch\(", glob="*.py").content["matches"]
    assert [(h["path"], h["text"][:10]) for h in hits] == [("src/requests/api.py", "def fetch(")]


def test_edit_file_is_all_or_nothing(sandbox: Sandbox):
    ctx = ctx_for(sandbox)
    before = (sandbox.root / "src/requests/api.py").read_bytes()
    result = ROUTER.call(
        "edit_file",
        {
            "path": "src/requests/api.py",
            "edits": [{"old_text": "def get(", "new_text": "def fetch("}, {"old_text": "no such text", "new_text": ""}],
        },
        ctx,
    )
    assert not result.ok and "edit 2: old_text not found" in result.error and "nothing was changed" in result.error
    ambiguous = ROUTER.call(
        "edit_file", {"path": "src/requests/api.py", "edits": [{"old_text": "return", "new_text": "yield"}]}, ctx
    )
    assert not ambiguous.ok and "occurs" in ambiguous.error
    assert (sandbox.root / "src/requests/api.py").read_bytes() == before


def test_run_command_reports_output_and_changed_files(sandbox: Sandbox):
    ctx = ctx_for(sandbox)
    result = call(ctx, "run_command", command="echo hi; echo oops >&2; echo x >> setup.py; touch made.txt; exit 3")
    content = result.content
    assert (content["exit_code"], content["stdout"], content["stderr"], content["ok"]) == (3, "hi\n", "oops\n", False)
    assert sorted((c.kind, c.path) for c in result.changes) == [("create", "made.txt"), ("modify", "setup.py")]


def test_run_command_timeout_kills_the_whole_process_group(sandbox: Sandbox, tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    result = call(ctx_for(sandbox), "run_command", command=f"sleep 60 & echo $! > {pidfile}; sleep 60", timeout=0.5)
    assert result.content["timed_out"] and result.content["exit_code"] is None
    assert time.monotonic() - started < 10
    child = int(pidfile.read_text())
    time.sleep(0.1)
    assert not alive(child)  # the background child went with its group


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that the container may not have is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_calls_and_changes_are_recorded_in_the_graph(sandbox: Sandbox, tmp_path: Path):
    ws = Workspace(tmp_path / "store-data")
    ws.initialize()
    with ws.writer() as session:
        session.commit(CommitRequest(add=bare_plan(PLAN), message="a bare plan (fixture)"))
        ctx = ctx_for(sandbox, recorder=GraphRecorder(session.commit))
        call(ctx, "write_file", path="a.txt", content="a\n")
        call(ctx, "move_file", source="a.txt", destination="b.txt")
        refused = ROUTER.call("read_file", {"path": "../x"}, ctx)
        assert not refused.ok
        rows = session.store.query(
            """SELECT ?tool ?ok ?args ?kind ?path WHERE {
                 ?call a ca:ToolCall ; ca:forPlan ?plan ; ca:toolName ?tool ; ca:succeeded ?ok ;
                       ca:toolArguments ?args ; prov:startedAtTime ?t .
                 OPTIONAL { ?c prov:wasGeneratedBy ?call ; ca:changeKind ?kind ; ca:changedPath ?path ;
                               ca:inChangeSet/ca:forPlan ?plan ; ca:changedResource ?r } } ORDER BY ?t"""
        )
        got = [(r["tool"].value, r["ok"].value, json.loads(r["args"].value), r["kind"], r["path"]) for r in rows]
    assert [(t, ok, k.value if k else None, p.value if p else None) for t, ok, _, k, p in got] == [
        ("write_file", "true", "create", "a.txt"),
        ("move_file", "true", "move", "b.txt"),
        ("read_file", "false", None, None),
    ]
    assert got[2][2] == {"path": "../x"}
