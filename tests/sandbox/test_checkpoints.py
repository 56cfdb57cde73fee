"""Checkpoints and rollback, byte-compared, for both kinds of sandbox (a git worktree of a
real repository and a copy of a real directory)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cleveragents.errors import NotFoundError
from cleveragents.sandbox import Sandbox
from corpora.fetch import corpus_dir

from .conftest import CORPUS, git, tree_bytes


@pytest.fixture(params=["git-checkout", "fs-directory"])
def sandbox(request, repo: Path, tmp_path: Path, make_sandbox) -> Sandbox:
    if request.param == "git-checkout":
        return make_sandbox(repo)
    plain = tmp_path / "plain"
    shutil.copytree(corpus_dir(CORPUS), plain, symlinks=True)
    return make_sandbox(plain, kind="fs-directory")


def change_ten_files(root: Path, tag: str) -> None:
    """Modify, add, delete, make executable and symlink: ten files in all."""
    sources = sorted(p for p in (root / "src/requests").glob("*.py"))[:5]
    for path in sources:
        path.write_text(path.read_text() + f"\n# {tag}\n")
    (root / "src/requests/new_module.py").write_text(f"VALUE = {tag!r}\n")
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / f"{tag}.md").write_text(f"# {tag}\n")
    (root / "HISTORY.md").unlink(missing_ok=True)
    (root / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "tool.sh").chmod(0o755)
    link = root / "latest"
    if link.is_symlink():
        link.unlink()
    os.symlink(f"docs/{tag}.md", link)


def test_rollback_restores_each_checkpoint_byte_for_byte(sandbox: Sandbox):
    root = sandbox.root
    at_fork = tree_bytes(root)
    first = sandbox.checkpoint("fork state")
    assert first.files == ()
    change_ten_files(root, "one")
    after_one = tree_bytes(root)
    second = sandbox.checkpoint("ten files", kind="post_step")
    assert len(second.files) == 10 and second.kind == "post_step"
    change_ten_files(root, "two")
    (root / "untracked-scratch.txt").write_text("scratch\n")
    after_two = tree_bytes(root)
    third = sandbox.checkpoint("more")
    assert [c.sequence for c in sandbox.checkpoints()] == [1, 2, 3]

    assert sandbox.rollback(second.id[:8]).id == second.id
    assert tree_bytes(root) == after_one
    sandbox.rollback("fork state")
    assert tree_bytes(root) == at_fork
    # Later checkpoints stay reachable after rolling back past them.
    sandbox.rollback("3")
    assert tree_bytes(root) == after_two
    assert third.id in {c.id for c in sandbox.checkpoints()}


def test_rollback_discards_uncommitted_work(sandbox: Sandbox):
    checkpoint = sandbox.checkpoint("clean")
    before = tree_bytes(sandbox.root)
    change_ten_files(sandbox.root, "dirty")
    sandbox.rollback(checkpoint.id)
    assert tree_bytes(sandbox.root) == before


def test_unknown_checkpoint_is_named_with_the_known_ones(sandbox: Sandbox):
    sandbox.checkpoint("only")
    with pytest.raises(NotFoundError) as info:
        sandbox.rollback("nope")
    assert "nope" in info.value.message and "only" in (info.value.detail or "")


def test_diff_and_changed_files_include_uncommitted_work(sandbox: Sandbox):
    root = sandbox.root
    (root / "setup.py").write_text((root / "setup.py").read_text().replace("requests", "rekwests", 1))
    (root / "added.txt").write_text("new\n")
    (root / "HISTORY.md").unlink()
    changes = {(c.status, c.path) for c in sandbox.changed_files()}
    assert changes == {("modified", "setup.py"), ("added", "added.txt"), ("deleted", "HISTORY.md")}
    diff = sandbox.diff()
    assert "+++ b/added.txt" in diff and "rekwests" in diff and "deleted file mode" in diff


def test_the_real_resource_is_never_touched_by_sandbox_work(sandbox: Sandbox):
    real = Path(sandbox.resource.location)
    before = tree_bytes(real)
    change_ten_files(sandbox.root, "one")
    checkpoint = sandbox.checkpoint("x")
    sandbox.rollback(checkpoint.id)
    assert tree_bytes(real) == before
    if sandbox.resource.type == "git-checkout":
        assert git(real, "status", "--porcelain") == ""
        assert git(real, "rev-parse", "--abbrev-ref", "HEAD") == "main"


def test_rollback_handles_odd_names_and_a_file_that_became_a_directory(sandbox: Sandbox):
    root = sandbox.root
    (root / "glob[1]*.txt").write_text("literal name\n")
    (root / "AUTHORS.rst").unlink(missing_ok=True)
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "page").write_text("a file\n")
    target = sandbox.checkpoint("odd")
    expected = tree_bytes(root)
    (root / "glob[1]*.txt").write_text("changed\n")
    (root / "glob[1]-other.txt").write_text("must survive? no: untracked, goes\n")
    (root / "docs" / "page").unlink()
    (root / "docs" / "page").mkdir()
    (root / "docs" / "page" / "inner.txt").write_text("a directory now\n")
    sandbox.rollback(target.id)
    assert tree_bytes(root) == expected
