"""A writer killed at any point leaves a readable store with the commit all or nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.graph import history as hist
from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest
from cleveragents.graph.hierarchy import TBox
from cleveragents.graph.layout import PUBLISHING
from cleveragents.graph.store import GraphStore
from tests.graph.conftest import CALLS, MODULE, TYPE, ex, open_store

BIG = 60_000

WRITER = textwrap.dedent(
    """
    import sys, pyoxigraph as ox
    from tests.graph.conftest import open_store, CALLS, ex
    from cleveragents.graph.commit import CommitEngine, CommitRequest
    from cleveragents.graph.hierarchy import TBox
    store = open_store(__import__("pathlib").Path(sys.argv[1]))
    engine = CommitEngine(store, TBox.from_store(store.raw), None)
    old = [(ex(f"s{i}"), CALLS, ex(f"o{i}")) for i in range({big})]
    new = [(ex(f"n{i}"), CALLS, ex(f"o{i}")) for i in range({big})]
    print("ready", flush=True)
    engine.commit(CommitRequest(add=new, remove=old[: {big} // 2], message="big"))
    print("done", flush=True)
    """
).replace("{big}", str(BIG))


def seed(path: Path) -> set[tuple]:
    store = open_store(path)
    engine = CommitEngine(store, TBox.from_store(store.raw), None)
    engine.commit(CommitRequest(add=[(ex(f"s{i}"), CALLS, ex(f"o{i}")) for i in range(BIG)], message="seed"))
    before = {t for t in hist.state(store, 1) if not hist.is_bookkeeping(t)}
    store.close()
    return before


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5, 2.5, 4.0])
def test_sigkill_during_a_large_commit(tmp_path: Path, delay: float) -> None:
    path = tmp_path / "store"
    before = seed(path)
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reader = GraphStore.open_read_only(path)  # finishes a half-done publication if needed
    head = reader.head
    state = {t for t in hist.state(reader, head) if not hist.is_bookkeeping(t)}
    if head == 1:
        assert state == before
    else:
        assert head == 2
        expected = {t for t in before if int(t[0].value.rsplit("s", 1)[-1]) >= BIG // 2}
        expected |= {(ex(f"n{i}"), CALLS, ex(f"o{i}")) for i in range(BIG)}
        assert state == expected
    assert reader.publishing is None


def test_a_publication_interrupted_midway_is_rolled_forward(tmp_path: Path) -> None:
    path = tmp_path / "store"
    store = open_store(path)
    engine = CommitEngine(store, TBox.from_store(store.raw), None)
    engine.commit(CommitRequest(add=[(ex("a"), TYPE, MODULE), (ex("a"), CALLS, ex("b"))]))
    # Simulate a crash inside publication of revision 2: closed copy written, intent
    # recorded, the open copy not yet removed.
    open_g, closed_g = layout.interval_graph("iv", 1), layout.interval_graph("iv", 1, 2)
    store.raw.add(ox.Quad(ex("a"), CALLS, ex("b"), closed_g))
    store.raw.update(f"INSERT DATA {{ GRAPH {layout.META} {{ {layout.STORE_NODE} {PUBLISHING} 2 }} }}")
    store.close()
    reopened = GraphStore.open(path)
    assert reopened.head == 2 and reopened.publishing is None
    assert not list(reopened.raw.quads_for_pattern(ex("a"), CALLS, ex("b"), open_g))
    assert (ex("a"), CALLS, ex("b")) not in hist.state(reopened, 2)
    assert (ex("a"), CALLS, ex("b")) in hist.state(reopened, 1)
    reopened.close()
