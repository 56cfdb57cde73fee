"""SIGKILL during apply, at every step of the protocol and at random moments: after the
next start (which finishes or rolls back the journal) the real resource is either fully
applied or untouched, byte for byte, and no journal is left.

The kill points are the journal's fault-injection hook (``CLEVERAGENTS_SANDBOX_CRASH_AT``):
the apply runs in a subprocess that SIGKILLs itself there."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cleveragents.sandbox import Sandbox, SandboxResource, recover
from cleveragents.sandbox.journal import CRASH_ENV, Journal
from corpora.fetch import corpus_dir

from .conftest import CORPUS, git, make_repo, tree_bytes

PLAN = "01JAAAAAAAAAAAAAAAAAAAAAAA"
IRI = "https://cleveragents.ai/id/resource/01JRES"
CHILD = """
import sys
from pathlib import Path
from cleveragents.sandbox import Sandbox, SandboxResource
data, plan, kind, location, iri = sys.argv[1:6]
sandbox = Sandbox.open(Path(data), plan, SandboxResource("local/repo", kind, location, iri))
print("ready", flush=True)
print(sandbox.apply().status, flush=True)
"""
GIT_POINTS = [
    "apply:staged",
    "apply:ref-moved",
    "apply:committed",
    "apply:op-0",
    "apply:op-5",
    "apply:before-cleanup",
]
DIRECTORY_POINTS = ["apply:staged", "apply:committed", "apply:op-0", "apply:op-5", "apply:before-cleanup"]


def prepare(base: Path, kind: str) -> tuple[Path, Path]:
    """A real resource and a used sandbox of it: 20+ files changed, added, deleted, and a
    concurrent change in the real resource so that apply merges."""
    if kind == "git-checkout":
        real = make_repo(base / "real")
    else:
        real = base / "real"
        shutil.copytree(corpus_dir(CORPUS), real, symlinks=True)
    data = base / "data"
    sandbox = Sandbox.open(data, PLAN, SandboxResource("local/repo", kind, str(real), IRI))
    root = sandbox.root
    for path in sorted((root / "src/requests").glob("*.py"))[:15]:
        path.write_text(path.read_text() + "\n# changed by the plan\n")
    for number in range(6):
        (root / f"added/file{number}.txt").parent.mkdir(exist_ok=True)
        (root / f"added/file{number}.txt").write_text(f"{number}\n")
    (root / "HISTORY.md").unlink()
    sandbox.checkpoint("work")
    readme = real / "README.md"
    readme.write_text(readme.read_text() + "\nA concurrent edit.\n")
    if kind == "git-checkout":
        git(real, "commit", "-qam", "concurrent")
    return real, data


def state(real: Path, kind: str) -> tuple[dict[str, str], str]:
    head = git(real, "rev-parse", "HEAD^{tree}") if kind == "git-checkout" else ""
    return tree_bytes(real), head


def expected_outcomes(base: Path, kind: str) -> tuple[tuple[dict[str, str], str], tuple[dict[str, str], str]]:
    """(untouched, applied) states, the second from an apply nobody interrupted."""
    real, data = prepare(base, kind)
    untouched = state(real, kind)
    sandbox = Sandbox.open(data, PLAN, SandboxResource("local/repo", kind, str(real), IRI))
    assert sandbox.apply().status == "applied"
    return untouched, state(real, kind)


def child(data: Path, real: Path, kind: str, crash_at: str | None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop(CRASH_ENV, None)
    if crash_at:
        env[CRASH_ENV] = crash_at
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data), PLAN, kind, str(real), IRI],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_after_restart(data: Path, real: Path, kind: str, untouched, applied) -> str:
    recover(data)  # what the next start does (Sandbox.open calls it)
    folder = Journal.folder(data)
    assert not folder.exists() or not any(folder.iterdir()), "a journal was left behind"
    now = state(real, kind)
    assert now in (untouched, applied), "the resource is half applied"
    if kind == "git-checkout":
        assert git(real, "status", "--porcelain") == ""
    return "applied" if now == applied else "untouched"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory):
    return {kind: expected_outcomes(tmp_path_factory.mktemp(kind), kind) for kind in ("git-checkout", "fs-directory")}


CASES = [("git-checkout", p) for p in GIT_POINTS] + [("fs-directory", p) for p in DIRECTORY_POINTS]


@pytest.mark.parametrize(("kind", "point"), CASES, ids=[f"{k}:{p}" for k, p in CASES])
def test_sigkill_at_each_step_ends_applied_or_untouched(tmp_path: Path, outcomes, kind: str, point: str):
    untouched, applied = outcomes[kind]
    real, data = prepare(tmp_path, kind)
    assert state(real, kind) == untouched
    proc = child(data, real, kind, point)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err
    outcome = check_after_restart(data, real, kind, untouched, applied)
    # Before the commit point nothing may have happened; after it, everything.
    assert outcome == ("untouched" if point == "apply:staged" else "applied")


@pytest.mark.parametrize("kind", ["git-checkout", "fs-directory"])
def test_sigkill_at_random_moments_ends_applied_or_untouched(tmp_path: Path, outcomes, kind: str):
    untouched, applied = outcomes[kind]
    seen = []
    for attempt, delay in enumerate((0.0, 0.05, 0.15, 0.3)):
        real, data = prepare(tmp_path / str(attempt), kind)
        proc = child(data, real, kind, None)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen.append(check_after_restart(data, real, kind, untouched, applied))
    # Each kill landed before the commit point or after it; recovery made it all or nothing.
    assert set(seen) <= {"applied", "untouched"}


def test_the_next_apply_finishes_an_interrupted_one(tmp_path: Path, outcomes):
    """No explicit recovery: opening the sandbox again (the next start) finishes the job."""
    untouched, applied = outcomes["git-checkout"]
    real, data = prepare(tmp_path, "git-checkout")
    proc = child(data, real, "git-checkout", "apply:op-5")
    proc.communicate(timeout=120)
    assert state(real, "git-checkout") not in (untouched, applied)  # half way, as killed
    sandbox = Sandbox.open(data, PLAN, SandboxResource("local/repo", "git-checkout", str(real), IRI))
    assert state(real, "git-checkout") == applied
    assert sandbox.apply().status == "unchanged" or state(real, "git-checkout") == applied


ROLLBACK_CHILD = """
import sys
from pathlib import Path
from cleveragents.sandbox import Sandbox, SandboxResource
data, plan, kind, location, iri, target = sys.argv[1:7]
Sandbox.open(Path(data), plan, SandboxResource("local/repo", kind, location, iri)).rollback(target)
"""


@pytest.mark.parametrize("point", ["rollback:intent-written", "rollback:half-way"])
def test_a_killed_rollback_completes_on_next_use(tmp_path: Path, point: str):
    real, data = prepare(tmp_path, "git-checkout")
    resource = SandboxResource("local/repo", "git-checkout", str(real), IRI)
    sandbox = Sandbox.open(data, PLAN, resource)
    target = sandbox.checkpoints()[0]
    at_target = tree_bytes(sandbox.root)
    for path in sorted((sandbox.root / "src/requests").glob("*.py")):
        path.write_text("overwritten\n")
    (sandbox.root / "scratch.txt").write_text("x\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), CRASH_ENV: point}
    done = subprocess.run(
        [sys.executable, "-c", ROLLBACK_CHILD, str(data), PLAN, "git-checkout", str(real), IRI, target.id],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert tree_bytes(Sandbox.open(data, PLAN, resource).root) == at_target
