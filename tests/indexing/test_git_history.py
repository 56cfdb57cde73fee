"""Replaying git history: one graph commit per git commit, queryable as of each sha."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cleveragents.graph.history import log, resolve_revision
from cleveragents.services import indexing

from .conftest import write


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    shas = []
    for number, files in enumerate(
        [
            {"a.outline": "def one\n"},
            {"a.outline": "def one\ndef two\ncall one\n", "b.outline": "def other\n"},
            {"b.outline": "def other\ncall a.two\n"},
            {"README.txt": "no analyzer takes this\n"},
        ]
    ):
        write(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"step {number}", "--date", f"2026-01-0{number + 1}T10:00:00+00:00")
        shas.append(git(root, "rev-parse", "HEAD").strip())
    return root, shas


def names(ws, revision: int) -> set[str]:
    with ws.reader() as store:
        result = store.query("SELECT ?n WHERE { ?e a uko-code:Function ; uko:name ?n }", view=store.view(revision))
        return {row["n"].value for row in result}


def test_history_replay_makes_one_commit_per_git_commit(ws, repo, add_resource, outline_analyzers):
    root, shas = repo
    info = add_resource(root, "git-checkout")
    summaries = indexing.import_history(ws, info, analyzers=outline_analyzers)
    assert len(summaries) == 4
    with ws.reader() as store:
        commits = {c.external_id: c for c in log(store) if c.external_id}
        assert set(commits) == set(shas)
        assert commits[shas[0]].agent == "Ada <ada@example.org>"
        assert commits[shas[0]].time.startswith("2026-01-01T10:00:00")
        revisions = [resolve_revision(store, sha[:10]) for sha in shas]
    assert revisions == sorted(revisions)
    assert names(ws, revisions[0]) == {"one"}
    assert names(ws, revisions[1]) == {"one", "two", "other"}
    # The last git commit touched no indexed file and is still a graph commit.
    assert names(ws, revisions[3]) == names(ws, revisions[2])


def test_history_replay_resumes_and_respects_limits(ws, repo, add_resource, outline_analyzers):
    root, shas = repo
    info = add_resource(root, "git-checkout")
    first = indexing.import_history(ws, info, max_commits=2, analyzers=outline_analyzers)
    assert len(first) == 2
    with ws.reader() as store:
        imported = {c.external_id for c in log(store) if c.external_id}
    assert imported == set(shas[2:])
    again = indexing.import_history(ws, info, since=shas[1], analyzers=outline_analyzers)
    assert again == []  # both commits after shas[1] are already in the graph


def test_history_needs_a_git_resource(ws, tmp_path, add_resource, outline_analyzers):
    plain = tmp_path / "plain"
    write(plain, {"a.outline": "def x\n"})
    info = add_resource(plain)
    with pytest.raises(Exception, match="needs a git-checkout resource"):
        indexing.import_history(ws, info, analyzers=outline_analyzers)
