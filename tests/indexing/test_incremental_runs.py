"""What an incremental run may skip, and that skipping never changes the result: unchanged
files are not read again, only the directories whose members changed are diffed, and a
few files are linked against only the names they use."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cleveragents.indexing.sources import DirectorySnapshot

from .conftest import TREE, calls, rows, write

LONG_AGO = time.time() - 3600


def age(root: Path) -> None:
    """Move every file's mtime out of the window in which a stat is not trusted."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (LONG_AGO, LONG_AGO))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = DirectorySnapshot.read

    def counting(self: DirectorySnapshot, path: str) -> bytes:
        seen.append(path)
        return original(self, path)

    monkeypatch.setattr(DirectorySnapshot, "read", counting)
    return seen


def test_unchanged_files_are_not_read_again(ws, tmp_path, add_resource, run_index, reads):
    root = tmp_path / "tree"
    write(root, TREE)
    age(root)
    info = add_resource(root)
    run_index(info)
    assert sorted(reads) == sorted(TREE)

    reads.clear()
    assert run_index(info).revision is None
    assert reads == []

    write(root, {"b.outline": "def helper\ndef extra\ncall main\n"})
    os.utime(root / "b.outline", (LONG_AGO + 60, LONG_AGO + 60))
    reads.clear()
    summary = run_index(info)
    assert reads == ["b.outline"]
    assert summary.analyzed == 1 and summary.entities_added == 1
    assert ("deep", "helper", "0.5", "name-match") in calls(ws)


def test_a_file_modified_moments_ago_is_always_read(ws, tree, add_resource, run_index, reads):
    info = add_resource(tree)  # written just now: inside the window
    run_index(info)
    reads.clear()
    assert run_index(info).revision is None
    assert sorted(reads) == sorted(TREE)


def test_a_changed_file_is_found_even_when_its_old_bytes_were_trusted(ws, tmp_path, add_resource, run_index):
    """Same size, new mtime: the fingerprint differs, so the file is read and re-analyzed."""
    root = tmp_path / "tree"
    write(root, TREE)
    age(root)
    info = add_resource(root)
    run_index(info)
    write(root, {"a.outline": TREE["a.outline"].replace("unused", "unusex")})
    os.utime(root / "a.outline", (LONG_AGO + 5, LONG_AGO + 5))
    summary = run_index(info)
    assert summary.analyzed == 1
    names = {r["n"] for r in rows(ws, "SELECT ?n WHERE { ?e uko:name ?n }")}
    assert "unusex" in names and "unused" not in names


def test_incremental_runs_leave_what_a_full_run_would_write(ws, tmp_path, add_resource, run_index):
    """Files appear in new directories, a directory empties, a package loses its
    __init__.py: after each incremental run, a full run of the same tree finds nothing
    to change (directory nodes, containment, edges and types all agree)."""
    root = tmp_path / "tree"
    write(root, {**TREE, "pkg/__init__.py": "", "pkg/mod.py": "def deep2():\n    return 1\n"})
    info = add_resource(root)
    run_index(info)
    steps = [
        lambda: write(root, {"new/deeper/d.outline": "def fresh\ncall deep\n"}),
        lambda: (root / "pkg/c.outline").unlink(),
        lambda: (root / "pkg/__init__.py").unlink(),
        lambda: [(root / "new/deeper/d.outline").unlink(), (root / "new/deeper").rmdir()],
        lambda: write(root, {"b.outline": "def helper\ndef deep\n"}),
    ]
    for number, step in enumerate(steps):
        step()
        assert run_index(info).revision is not None, f"step {number} made no commit"
        assert run_index(info, full=True).revision is None, f"step {number}: a full run still found changes"
    packages = {
        r["p"].rsplit("/", 2)[-2] if r["p"].endswith("/") else ""
        for r in rows(ws, "SELECT ?p WHERE { ?p a uko-code:Package }")
    }
    assert "deeper" not in packages and "pkg" in packages
    assert not rows(ws, "SELECT ?p WHERE { ?p a uko-py:Package }")
