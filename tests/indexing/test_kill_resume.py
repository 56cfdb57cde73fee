"""SIGKILL an index at 10 different points, resume each time, and end in exactly the graph
an uninterrupted run makes (real sources: requests 2.32.3, real subprocesses, real kills).

The killed runs are chained: each resumes what the previous one left, so the 10 points
cover start-up, reading, analysis, the moment before the first commit, and commits at
several depths into the batches (a resumed run commits its new files in batches too).
Both data dirs start from one copy of an initialized store, so the resource has the same
IRI in both and the two exports can be compared line for line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.graph import history
from cleveragents.graph.store import GraphStore
from cleveragents.vocabulary import ca
from corpora.fetch import corpus_dir

AGENTS = [sys.executable, "-c", "import sys; from cleveragents.cli.main import run; sys.exit(run())"]
BATCH = 2  # files per commit: 14 commits for the 27 files, room for 10 kills
# A slice of the corpus that keeps the run short: the package, the test helpers (not the
# big test modules), and the project files; nested directories and Python packages.
SLICE = (
    "src/requests",
    "tests/testserver",
    "tests/__init__.py",
    "tests/compat.py",
    "tests/conftest.py",
    "tests/utils.py",
    "setup.cfg",
    "pyproject.toml",
    "README.md",
)


def agents(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTS, *args], env=env, capture_output=True, text=True, timeout=300, check=False)


def read_store(env: dict[str, str]) -> GraphStore:
    """A read-only open beside a running writer (no subprocess)."""
    return GraphStore.open_read_only(Path(env["CLEVERAGENTS_DATA_DIR"]) / "store")


def head(env: dict[str, str]) -> int:
    store = read_store(env)
    try:
        return store.head
    finally:
        store.close()


def live_file_count(env: dict[str, str]) -> int:
    store = read_store(env)
    try:
        rows = store.query(f"SELECT (COUNT(?f) AS ?n) WHERE {{ ?f <{ca.indexedBy}> ?by }}", view=store.asserted_view())
        return int(next(iter(rows))["n"].value)
    finally:
        store.close()


def canonical_dump(env: dict[str, str]) -> list[str]:
    """The state at head, asserted and inferred, without commit records and revision
    metadata (what ``graph export --format nt`` writes), as sorted N-Triples lines."""
    store = read_store(env)
    try:
        state = history.state(store, store.head, inferred=True)
        content = [ox.Triple(*t) for t in state if not history.is_bookkeeping(t)]
    finally:
        store.close()
    return sorted(ox.serialize(content, format=ox.RdfFormat.N_TRIPLES).decode().splitlines())


def cache_file(env: dict[str, str], kind: str) -> Path | None:
    """The resource's file fingerprints ("files") or link data ("links") in the index cache."""
    folder = Path(env["CLEVERAGENTS_DATA_DIR"]) / "index-cache"
    found = [p for p in folder.glob("*.pickle") if p.name.endswith(".files.pickle") == (kind == "files")]
    return found[0] if found else None


def changed(env: dict[str, str], kind: str) -> Callable[[], bool]:
    """True once an index-cache file appears or is replaced (a phase of the run has ended)."""
    before = cache_file(env, kind)
    stamp = before.stat().st_mtime_ns if before else None

    def check() -> bool:
        now = cache_file(env, kind)
        return now is not None and (stamp is None or now.stat().st_mtime_ns != stamp)

    return check


def commits(env: dict[str, str], n: int) -> Callable[[], bool]:
    """True once this run has published ``n`` commits."""
    start = head(env)
    last = [0.0]

    def check() -> bool:  # a read-only open costs about 10 ms of CPU: not at every poll
        if time.monotonic() - last[0] < 0.1:
            return False
        last[0] = time.monotonic()
        return head(env) >= start + n

    return check


def after(seconds: float) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def kill_when(env: dict[str, str], trigger: Callable[[], bool]) -> bool:
    """Start ``agents index``, SIGKILL it when ``trigger`` holds; False if it ended first."""
    run = subprocess.Popen([*AGENTS, "index"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while run.poll() is None and time.monotonic() < deadline:
        if trigger():
            run.send_signal(signal.SIGKILL)
            run.wait()
            return True
        time.sleep(0.05)
    run.wait()
    return False


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An initialized data dir with the corpus added as a resource, not yet indexed."""
    root = tmp_path_factory.mktemp("resume")
    tree = root / "requests"
    corpus = corpus_dir("requests-2.32.3")
    for part in SLICE:
        (tree / part).parent.mkdir(parents=True, exist_ok=True)
        copy = shutil.copytree if (corpus / part).is_dir() else shutil.copy2
        copy(corpus / part, tree / part)
    env = {**os.environ, "CLEVERAGENTS_DATA_DIR": str(root / "template")}
    assert agents(env, "init").returncode == 0
    added = agents(env, "resource", "add", str(tree), "--type", "fs-directory", "--name", "local/req", "--no-index")
    assert added.returncode == 0, added.stderr
    return root, root / "template"


def data_dir(template: tuple[Path, Path], name: str, batch: int) -> dict[str, str]:
    root, source = template
    shutil.copytree(source, root / name)
    return {
        **os.environ,
        "CLEVERAGENTS_DATA_DIR": str(root / name),
        "CLEVERAGENTS_INDEX_COMMIT_BATCH_FILES": str(batch),
    }


@pytest.mark.slow
def test_ten_kills_then_resume_give_the_clean_graph(template: tuple[Path, Path]):
    clean = data_dir(template, "clean", 1000)  # one commit: the reference graph
    assert agents(clean, "index").returncode == 0
    reference = canonical_dump(clean)

    killed = data_dir(template, "killed", BATCH)
    points: list[tuple[str, Callable[[dict[str, str]], Callable[[], bool]]]] = [
        ("start-up", lambda env: after(0.3)),
        ("analysis (files read)", lambda env: changed(env, "files")),
        ("before the first commit (link data saved)", lambda env: changed(env, "links")),
        ("after 1 commit", lambda env: commits(env, 1)),
        ("after 2 commits", lambda env: commits(env, 2)),
        ("after 1 commit of a resumed run", lambda env: commits(env, 1)),
        ("after 3 commits", lambda env: commits(env, 3)),
        ("after 1 commit, again", lambda env: commits(env, 1)),
        ("after 2 commits, again", lambda env: commits(env, 2)),
        ("after 1 commit, late", lambda env: commits(env, 1)),
    ]
    killed_at = [name for name, trigger in points if kill_when(killed, trigger(killed))]
    assert len(killed_at) == len(points), f"runs ended before their kill point: only {killed_at}"
    assert agents(killed, "graph", "validate").returncode == 0  # whole commits only

    committed = live_file_count(killed)
    resumed = agents(killed, "--format", "json", "index")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)["data"]["index"][0]
    total = live_file_count(killed)
    assert 0 < committed < total
    # Only what no killed run committed is analyzed again.
    assert summary["analyzed"] == total - committed and summary["unchanged"] == committed
    assert not summary["errors"]

    dump = canonical_dump(killed)
    missing, extra = sorted(set(reference) - set(dump)), sorted(set(dump) - set(reference))
    assert not missing and not extra, f"missing {len(missing)}: {missing[:5]}; extra {len(extra)}: {extra[:5]}"
    # A further run finds nothing to do.
    again = json.loads(agents(killed, "--format", "json", "index").stdout)["data"]["index"][0]
    assert again["analyzed"] == 0 and again["revision"] is None
