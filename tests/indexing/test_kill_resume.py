"""SIGKILL in the middle of a first index: the store stays consistent and the next run
completes it, ending in the same graph as an uninterrupted run (real sources: requests)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cleveragents import iris
from cleveragents.graph.store import GraphStore
from corpora.fetch import corpus_dir

AGENTS = [sys.executable, "-c", "import sys; from cleveragents.cli.main import run; sys.exit(run())"]


def agents(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTS, *args], env=env, capture_output=True, text=True, timeout=300, check=False)


def head(env: dict[str, str]) -> int:
    """The published head, read beside the running writer (a read-only open, no subprocess)."""
    store = GraphStore.open_read_only(Path(env["CLEVERAGENTS_DATA_DIR"]) / "store")
    try:
        return store.head
    finally:
        del store


def graph_content(env: dict[str, str]) -> set[tuple[str, str, str]]:
    """(path + key of subject, predicate, object with resource ULIDs removed) of source nodes."""
    done = agents(
        env, "--format", "json", "graph", "query",
        "SELECT ?s ?p ?o WHERE { ?s uko:sourcePath ?path ; ?p ?o FILTER(?p NOT IN (uko:validFrom, uko:isCurrent)) }",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["data"]["results"]
    out = set()
    for row in rows:
        ulid, path, key = iris.split_iri(row["s"][1:-1])  # type: ignore[misc]
        out.add((f"{path}#{key}", row["p"], row["o"].replace(ulid, "R")))
    return out


def setup(tmp_path: Path, name: str, tree: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "CLEVERAGENTS_DATA_DIR": str(tmp_path / name),
        "CLEVERAGENTS_INDEX_COMMIT_BATCH_FILES": "1",
        "CLEVERAGENTS_QUERY_DEFAULT_LIMIT": "0",
    }
    assert agents(env, "init").returncode == 0
    added = agents(env, "resource", "add", str(tree), "--type", "fs-directory", "--name", "local/req", "--no-index")
    assert added.returncode == 0, added.stderr
    return env


@pytest.mark.slow
def test_killed_first_index_resumes_to_the_same_graph(tmp_path: Path):
    tree = tmp_path / "requests"
    shutil.copytree(corpus_dir("requests-2.32.3"), tree)
    killed = setup(tmp_path, "killed", tree)
    before = head(killed)
    run = subprocess.Popen([*AGENTS, "index"], env=killed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while head(killed) < before + 2 and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.05)
    assert run.poll() is None, "the run finished before it could be killed"
    run.send_signal(signal.SIGKILL)
    run.wait()
    partial = head(killed)
    assert partial >= before + 2  # some batches were committed, not all
    resumed = agents(killed, "--format", "json", "index")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)["data"]["index"][0]
    assert summary["unchanged"] > 0 and summary["analyzed"] > 0 and not summary["errors"]

    clean = setup(tmp_path, "clean", tree)
    clean["CLEVERAGENTS_INDEX_COMMIT_BATCH_FILES"] = "400"  # one commit: the reference graph
    assert agents(clean, "index").returncode == 0
    assert graph_content(killed) == graph_content(clean)
    assert agents(killed, "graph", "validate").returncode == 0
