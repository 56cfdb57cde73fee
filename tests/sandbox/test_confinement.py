"""Every way out of the sandbox is refused with a message the actor can read, and the
plan goes on (the router returns a result, never raises). Real git worktree of requests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cleveragents.sandbox import Sandbox
from cleveragents.tools import ToolContext, default_router

from .conftest import tree_bytes

ROUTER = default_router()


@pytest.fixture
def sandbox(repo: Path, make_sandbox) -> Sandbox:
    return make_sandbox(repo)


def ctx_for(sandbox: Sandbox, **kw) -> ToolContext:
    return ToolContext(plan="01JAAAAAAAAAAAAAAAAAAAAAAA", sandboxes={"local/repo": sandbox}, **kw)


ESCAPES = [
    ("read_file", {"path": "../repo/README.md"}, "'..' is not allowed"),
    ("read_file", {"path": "/etc/passwd"}, "absolute"),
    ("read_file", {"path": "~/.bashrc"}, "absolute"),
    ("read_file", {"path": "src/../../outside.txt"}, "'..' is not allowed"),
    ("read_file", {"path": ".git/config"}, "deny-list"),
    ("read_file", {"path": ".git"}, "deny-list"),
    ("list_files", {"path": "node_modules"}, "deny-list"),
    ("write_file", {"path": "src/node_modules/x.js", "content": "x"}, "deny-list"),
    ("write_file", {"path": "/tmp/escaped.txt", "content": "x"}, "absolute"),
    ("write_file", {"path": "../escaped.txt", "content": "x"}, "'..' is not allowed"),
    ("delete_file", {"path": "../repo/setup.py"}, "'..' is not allowed"),
    ("move_file", {"source": "setup.py", "destination": "../setup.py"}, "'..' is not allowed"),
    ("move_file", {"source": "/etc/hostname", "destination": "x"}, "absolute"),
    ("create_directory", {"path": ".git/hooks/x"}, "deny-list"),
    ("search_files", {"pattern": "x", "path": "/"}, "absolute"),
    ("run_command", {"command": "true", "cwd": ".."}, "'..' is not allowed"),
]


@pytest.mark.parametrize(("tool", "arguments", "reason"), ESCAPES, ids=[f"{t}:{a}" for t, a, _ in ESCAPES])
def test_escape_attempts_are_refused_readably(sandbox: Sandbox, repo: Path, tool: str, arguments, reason: str):
    sandbox.root  # noqa: B018 - created before the picture is taken
    real_before = tree_bytes(repo.parent)
    result = ROUTER.call(tool, arguments, ctx_for(sandbox))
    assert not result.ok
    assert result.error_code == "ACCESS_DENIED"
    assert reason in result.error
    assert tree_bytes(repo.parent) == real_before  # nothing outside changed (sandbox neither)


def test_symlinks_that_lead_out_are_refused(sandbox: Sandbox, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink(outside / "secret.txt", sandbox.root / "link-file")
    os.symlink(outside, sandbox.root / "link-dir")
    os.symlink("../../../../outside", sandbox.root / "relative-link")
    ctx = ctx_for(sandbox)
    for tool, arguments in [
        ("read_file", {"path": "link-file"}),
        ("read_file", {"path": "link-dir/secret.txt"}),
        ("write_file", {"path": "link-file", "content": "overwritten"}),
        ("write_file", {"path": "link-dir/new.txt", "content": "planted"}),
        ("get_file_info", {"path": "relative-link/secret.txt"}),
        ("list_files", {"path": "link-dir"}),
    ]:
        result = ROUTER.call(tool, arguments, ctx)
        assert not result.ok and result.error_code == "ACCESS_DENIED", (tool, arguments, result)
        assert "outside the sandbox" in result.error
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret\n"
    # A recursive listing or search does not follow the links either.
    listed = ROUTER.call("list_files", {}, ctx).content["files"]
    assert not any(f.startswith("link-dir/") for f in listed)
    found = ROUTER.call("search_files", {"pattern": "secret"}, ctx).content["matches"]
    assert not any(m["path"].startswith(("link-dir", "link-file")) for m in found)


def test_a_read_only_plan_gets_only_read_only_tools(sandbox: Sandbox):
    ctx = ctx_for(sandbox, read_only=True)
    before = tree_bytes(sandbox.root)
    for tool, arguments in [
        ("write_file", {"path": "new.txt", "content": "x"}),
        ("edit_file", {"path": "setup.py", "edits": [{"old_text": "setup", "new_text": "x"}]}),
        ("delete_file", {"path": "setup.py"}),
        ("move_file", {"source": "setup.py", "destination": "x.py"}),
        ("create_directory", {"path": "d"}),
        ("run_command", {"command": "touch planted"}),
    ]:
        result = ROUTER.call(tool, arguments, ctx)
        assert not result.ok and result.error_code == "ACCESS_DENIED"
        assert "read-only" in result.error
    assert tree_bytes(sandbox.root) == before
    assert ROUTER.call("read_file", {"path": "setup.py"}, ctx).ok
    offered = {spec.name for spec in ROUTER.specs(ctx)}
    assert offered == {"read_file", "list_files", "search_files", "get_file_info"}


def test_a_tool_outside_the_allowed_set_is_refused(sandbox: Sandbox):
    ctx = ctx_for(sandbox, allowed_tools=frozenset({"read_file"}))
    refused = ROUTER.call("list_files", {}, ctx)
    assert not refused.ok and refused.error_code == "ACCESS_DENIED" and "not allowed" in refused.error
    assert ROUTER.call("read_file", {"path": "setup.py"}, ctx).ok


def test_arguments_are_validated_against_the_schema(sandbox: Sandbox):
    ctx = ctx_for(sandbox)
    missing = ROUTER.call("write_file", {"path": "a.txt"}, ctx)
    assert not missing.ok and missing.error_code == "VALIDATION_FAILED"
    assert "'content' is a required property" in missing.error
    wrong = ROUTER.call("read_file", {"path": "setup.py", "offset": "3", "colour": "red"}, ctx)
    assert not wrong.ok
    assert "offset: '3' is not of type 'integer'" in wrong.error
    assert "'colour' was unexpected" in wrong.error
    unknown = ROUTER.call("format_disk", {}, ctx)
    assert not unknown.ok and unknown.error_code == "NOT_FOUND" and "read_file" in unknown.error


def test_a_resource_outside_the_plan_is_refused(sandbox: Sandbox):
    result = ROUTER.call("read_file", {"path": "setup.py", "resource": "local/other"}, ctx_for(sandbox))
    assert not result.ok and result.error_code == "ACCESS_DENIED" and "local/repo" in result.error


def test_the_sandbox_is_created_only_when_first_used(sandbox: Sandbox, repo: Path):
    assert not sandbox.materialized
    refused = ROUTER.call("read_file", {"path": "/etc/passwd"}, ctx_for(sandbox))
    assert not refused.ok
    ROUTER.call("read_file", {"path": "setup.py"}, ctx_for(sandbox))
    assert sandbox.materialized
    assert tree_bytes(sandbox.root) == tree_bytes(repo)
