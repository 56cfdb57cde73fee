"""A closed writer releases the store even when something still holds its handle.

Oxigraph closes a store only when its Python handle is freed. A failed writer session
whose exception keeps frames in a reference cycle would keep RocksDB open: a new writer
in the same process (a server, a plan that resumes after a provider error) would find
the store held by itself, and a read-only open beside it can spin in a query while the
leaked writer compacts (pyoxigraph 0.5). Real store on disk, real exception cycle.
"""

from __future__ import annotations

import time
from pathlib import Path

from cleveragents.graph.workspace import Workspace


class Boom(Exception):
    pass


def _failed_session_in_a_cycle(ws: Workspace) -> None:
    """Raise inside a writer session and keep the exception in an unreachable cycle."""
    try:
        with ws.writer() as session:
            assert session.store.head >= 0
            raise Boom
    except Boom as exc:
        exc.cycle = [exc]  # exception -> traceback -> this frame -> ... -> session


def test_a_writer_held_only_by_a_cycle_does_not_hold_the_store(tmp_path: Path):
    ws = Workspace(tmp_path / "data", writer_wait=0)
    ws.initialize()
    _failed_session_in_a_cycle(ws)
    started = time.monotonic()
    with ws.writer() as session:  # wait 0: StoreLockedError if the first one were still open
        assert session.store.head >= 0
    with ws.reader() as store:
        assert store.query("ASK { ?s ?p ?o }")
    assert time.monotonic() - started < 10
