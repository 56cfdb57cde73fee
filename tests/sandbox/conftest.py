"""Fixtures: a pinned corpus checked into a temporary git repository, its sandbox, and a
byte-level picture of a tree (for before/after comparisons)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cleveragents.sandbox import Sandbox, SandboxResource
from corpora.fetch import corpus_dir

CORPUS = "requests-2.32.3"
GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(path: Path, corpus: str = CORPUS) -> Path:
    shutil.copytree(corpus_dir(corpus), path, symlinks=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", f"{corpus} as released")
    return path


def tree_bytes(root: Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, str]:
    """path -> sha256 of the content (or 'link:<target>') of every file under root."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            if name in skip:
                continue  # a worktree's .git is a file
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                mode = "x" if os.access(path, os.X_OK) else "-"
                out[rel] = mode + hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def bare_plan(plan_ulid: str) -> list[tuple[object, object, object]]:
    """The smallest plan the shapes accept (a root plan in the Action phase; one outside
    Action needs its decision tree, which is the plans package's business). A fixture."""
    import pyoxigraph as ox

    from cleveragents.terms import CA, ID, RDF_TYPE, XSD

    plan = ox.NamedNode(f"{ID}plan/{plan_ulid}")
    p = lambda name: ox.NamedNode(CA + name)  # noqa: E731
    return [
        (plan, ox.NamedNode(RDF_TYPE), p("Plan")),
        (plan, p("phase"), p("ActionPhase")),
        (plan, p("state"), p("available")),
        (plan, p("ulid"), ox.Literal(plan_ulid)),
        (plan, p("rootPlan"), plan),
        (plan, p("attempt"), ox.Literal("1", datatype=ox.NamedNode(XSD + "integer"))),
        (plan, p("automationLevel"), ox.Literal("manual")),
        (plan, p("createdBy"), ox.Literal("tests")),
        (plan, p("definitionOfDone"), ox.Literal("the test passes")),
        (plan, p("createdAt"), ox.Literal("2026-01-01T00:00:00Z", datatype=ox.NamedNode(XSD + "dateTime"))),
    ]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """requests 2.32.3 committed into a fresh git repository (branch main)."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Callable[..., Sandbox]:
    def make(location: Path, *, kind: str = "git-checkout", plan: str = "01JAAAAAAAAAAAAAAAAAAAAAAA") -> Sandbox:
        resource = SandboxResource("local/repo", kind, str(location), "https://cleveragents.ai/id/resource/01JRES")
        return Sandbox.open(tmp_path / "data", plan, resource)

    return make
