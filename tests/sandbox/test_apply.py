"""Apply: a three-way merge of the sandbox into the real resource, on real trees.

A concurrent change in the real resource merges cleanly; a conflict leaves the real
resource untouched (byte-compared) and the sandbox intact; uncommitted changes in the real
checkout are refused with the files listed unless forced."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cleveragents.sandbox import Sandbox
from corpora.fetch import corpus_dir

from .conftest import CORPUS, git, tree_bytes

API = "src/requests/api.py"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def sandbox(repo: Path, make_sandbox) -> Sandbox:
    return make_sandbox(repo)


def test_apply_without_concurrent_change_moves_the_branch_and_the_tree(sandbox: Sandbox, repo: Path):
    edit(sandbox.root / API, "def get(", "def fetch(")
    (sandbox.root / "NOTES.md").write_text("notes\n")
    (sandbox.root / "HISTORY.md").unlink()
    sandbox.checkpoint("work")
    expected = tree_bytes(sandbox.root)
    before = git(repo, "rev-parse", "HEAD")
    result = sandbox.apply()
    assert result.status == "applied" and not result.merged
    assert {(c.status, c.path) for c in result.changed_files} == {
        ("modified", API),
        ("added", "NOTES.md"),
        ("deleted", "HISTORY.md"),
    }
    assert tree_bytes(repo) == expected
    assert git(repo, "rev-parse", "HEAD") == result.commit
    assert git(repo, "rev-parse", "HEAD^") == before  # one commit on top, no sandbox history
    assert git(repo, "status", "--porcelain") == ""


def test_a_concurrent_change_in_the_real_checkout_is_merged(sandbox: Sandbox, repo: Path):
    edit(sandbox.root / API, "def get(", "def fetch(")
    sandbox.checkpoint("rename")
    edit(repo / "src/requests/sessions.py", "class Session(", "class RealSession(")
    edit(
        repo / API,
        '"""',
        '"""Edited in the real checkout.\n',
    )  # same file, other hunk
    git(repo, "commit", "-qam", "a concurrent change")
    result = sandbox.apply()
    assert result.status == "applied" and result.merged
    api = (repo / API).read_text()
    assert "def fetch(" in api and "Edited in the real checkout." in api
    assert "class RealSession(" in (repo / "src/requests/sessions.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    assert {c.path for c in result.changed_files} == {API}


def test_a_conflict_leaves_the_real_checkout_untouched_and_the_sandbox_intact(sandbox: Sandbox, repo: Path):
    edit(sandbox.root / API, "def get(", "def fetch(")
    (sandbox.root / "NOTES.md").write_text("notes\n")
    sandbox.checkpoint("rename")
    sandbox_before = tree_bytes(sandbox.root)
    edit(repo / API, "def get(", "def retrieve(")
    git(repo, "commit", "-qam", "a conflicting change")
    real_before, head_before = tree_bytes(repo), git(repo, "rev-parse", "HEAD")
    result = sandbox.apply()
    assert result.status == "conflict"
    assert result.conflicts == (API,)
    assert tree_bytes(repo) == real_before and git(repo, "rev-parse", "HEAD") == head_before
    assert git(repo, "status", "--porcelain") == ""
    assert tree_bytes(sandbox.root) == sandbox_before


def test_uncommitted_changes_are_refused_unless_forced(sandbox: Sandbox, repo: Path):
    edit(sandbox.root / API, "def get(", "def fetch(")
    edit(repo / "README.md", "Requests", "Rekwests")
    (repo / "src/requests/api.py.orig").write_text("untracked, not in the way\n")
    real_before = tree_bytes(repo)
    refused = sandbox.apply()
    assert refused.status == "refused" and refused.dirty_files == ("README.md",)
    assert tree_bytes(repo) == real_before
    forced = sandbox.apply(force=True)
    assert forced.status == "applied"
    assert "def fetch(" in (repo / API).read_text()
    assert "Rekwests" in (repo / "README.md").read_text()  # a file the plan did not touch stays as it was


def test_an_untracked_file_in_the_way_is_refused(sandbox: Sandbox, repo: Path):
    (sandbox.root / "NOTES.md").write_text("from the plan\n")
    (repo / "NOTES.md").write_text("the user's own, never committed\n")
    refused = sandbox.apply()
    assert refused.status == "refused" and refused.dirty_files == ("NOTES.md",)
    assert (repo / "NOTES.md").read_text() == "the user's own, never committed\n"


def test_nothing_to_apply(sandbox: Sandbox, repo: Path):
    assert sandbox.apply().status == "unchanged"  # never used
    sandbox.root  # noqa: B018
    assert sandbox.apply().status == "unchanged"


def test_directory_apply_merges_and_reports_conflicts(tmp_path: Path, make_sandbox):
    plain = tmp_path / "plain"
    shutil.copytree(corpus_dir(CORPUS), plain, symlinks=True)
    sandbox = make_sandbox(plain, kind="fs-directory")
    edit(sandbox.root / API, "def get(", "def fetch(")
    (sandbox.root / "NOTES.md").write_text("notes\n")
    edit(plain / "src/requests/sessions.py", "class Session(", "class RealSession(")  # concurrent
    result = sandbox.apply()
    assert result.status == "applied" and result.merged
    assert "def fetch(" in (plain / API).read_text() and (plain / "NOTES.md").read_text() == "notes\n"
    assert "class RealSession(" in (plain / "src/requests/sessions.py").read_text()

    second = make_sandbox(plain, kind="fs-directory", plan="01JBBBBBBBBBBBBBBBBBBBBBBB")
    edit(second.root / API, "def fetch(", "def obtain(")
    edit(plain / API, "def fetch(", "def retrieve(")
    before = tree_bytes(plain)
    conflict = second.apply()
    assert conflict.status == "conflict" and conflict.conflicts == (API,)
    assert tree_bytes(plain) == before
