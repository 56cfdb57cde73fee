"""The on-disk Oxigraph store: opening, locking, views and queries.

One process may write a store directory at a time (RocksDB's lock). Readers open it
read-only beside a writer. Queries see a *view*: the default graph is the union of
the interval graphs valid at one revision, plus the ontology.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import DatabaseError, QuerySyntaxError, StoreLockedError, fault_error
from cleveragents.graph import layout
from cleveragents.graph.layout import HEAD, PUBLISHING, IntervalGraph
from cleveragents.graph.publish import finish_publication
from cleveragents.graph.results import GraphName, solutions
from cleveragents.graph.sparql_guard import refuse_services
from cleveragents.terms import PREFIXES

LOCK_INFO = "writer.json"


@dataclass(frozen=True)
class View:
    """The dataset one query runs over: the state as of ``revision``."""

    revision: int
    graphs: tuple[ox.NamedNode | ox.DefaultGraph, ...]

    def default_graph(self) -> list[GraphName]:
        """The graphs as ``Store.query``'s ``default_graph``."""
        return list(self.graphs)


class GraphStore:
    """An opened store directory. Use :meth:`open` or :meth:`open_read_only`."""

    def __init__(self, path: Path, store: ox.Store, *, writable: bool) -> None:
        self.path = path
        self.raw = store
        self.writable = writable
        self.write_lock = threading.RLock()
        self._graphs: dict[ox.NamedNode, IntervalGraph] | None = None
        self._head: int | None = None
        # SPARQL SERVICE endpoints queries may call (see sparql_guard); none by default.
        self.allowed_services: frozenset[str] = frozenset()

    # -- opening -------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, wait: float = 0.0, on_wait: Callable[[str], None] | None = None) -> GraphStore:
        """Open for writing. A store held by another writer is retried for ``wait``
        seconds (writers queue; readers are never blocked), calling ``on_wait`` with
        "pid N: COMMAND" whenever the holder changes; then StoreLockedError names it."""
        path.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + max(0.0, wait)
        announced: str | None = None
        while True:
            try:
                store = ox.Store(str(path / "oxigraph"))
                break
            except OSError as exc:
                if "lock" not in str(exc).lower():
                    raise fault_error(exc) or DatabaseError(f"cannot open the store at {path}: {exc}") from None
            if time.monotonic() >= deadline:
                waited = f" (waited {wait:g} s)" if wait > 0 else ""
                raise StoreLockedError(
                    f"the store at {path} is held by another writer: {_describe_holder(path)}{waited}",
                    suggestions=[
                        "wait for it to finish (--wait SECONDS, config store.writer_wait), "
                        "or run read-only commands meanwhile"
                    ],
                ) from None
            holder = holder_summary(path)
            if on_wait is not None and holder != announced:
                on_wait(holder)
                announced = holder
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        _write_holder(path)
        # Files of a bulk load that failed (a full disk) or was killed: only a writer makes
        # them, and the store never references them, so the one writer may remove them.
        for leftover in (path / "oxigraph").glob("bulk-*.sst"):
            leftover.unlink(missing_ok=True)
        opened = cls(path, store, writable=True)
        opened.discard_unpublished()
        return opened

    @classmethod
    def open_read_only(cls, path: Path, *, wait: float = 30.0) -> GraphStore:
        """Open beside a writer. A reader never sees a commit half-published: it waits
        for the writer to finish, or finishes a publication whose writer died."""
        if not (path / "oxigraph").is_dir():
            raise DatabaseError(f"no store at {path}", suggestions=["agents init", "pass --data-dir"])
        deadline = time.monotonic() + wait
        failures = 0
        while True:
            try:
                opened = cls(path, ox.Store.read_only(str(path / "oxigraph")), writable=False)
                publishing = opened.publishing
            except (OSError, RuntimeError) as exc:
                # A read-only open is a snapshot of the files; a writer compacting at the
                # same moment can delete one of them under it. A fresh open sees the new set.
                failures += 1
                if failures > 20:
                    raise fault_error(exc) or DatabaseError(
                        f"cannot open the store at {path} read-only: {exc}"
                    ) from None
                time.sleep(0.05)
                continue
            if publishing is None:
                return opened
            del opened
            try:
                cls.open(path).close()  # the writer died mid-publication: roll it forward
            except StoreLockedError:
                if time.monotonic() > deadline:
                    raise DatabaseError(f"a writer has been publishing a commit for over {wait:g} s") from None
                time.sleep(0.05)

    @classmethod
    def in_memory(cls) -> GraphStore:
        """A throwaway store (tests of pure logic, staging)."""
        return cls(Path("<memory>"), ox.Store(), writable=True)

    def close(self) -> None:
        if self.writable and self.path.is_dir():
            self.raw.flush()
            (self.path / LOCK_INFO).unlink(missing_ok=True)
        del self.raw

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- revisions and graphs -------------------------------------------------------

    @property
    def head(self) -> int:
        """The last published revision (0 for a store that has never been written)."""
        if self._head is None:
            self._head = 0
            self._head = self._meta_integer(HEAD) or 0
        return self._head

    def interval_graphs(self) -> dict[ox.NamedNode, IntervalGraph]:
        if self._graphs is None:
            self._graphs = {}
            for node in self.raw.named_graphs():
                if isinstance(node, ox.NamedNode) and (parsed := layout.parse_graph(node)):
                    self._graphs[node] = parsed
        return self._graphs

    def forget_graphs(self) -> None:
        """Drop the cached graph list and head after a write changed them."""
        self._graphs = None
        self._head = None

    def overlap(self, graph: ox.NamedNode, others: Iterable[ox.NamedNode]) -> list[ox.Quad]:
        """Quads of ``others`` holding a triple that ``graph`` holds too.

        One join inside Oxigraph with the graph left free (a single index seek per
        triple), filtered here: restricting ``named_graphs`` would cost a seek per graph.
        """
        wanted = set(others)
        if not wanted or next(iter(self.raw.quads_for_pattern(None, None, None, graph)), None) is None:
            return []
        rows = solutions(
            self.raw.query(
                f"SELECT ?s ?p ?o ?g WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} "
                f"GRAPH ?g {{ ?s ?p ?o }} FILTER(?g != {graph}) }}"
            )
        )
        return [ox.Quad(r["s"], r["p"], r["o"], r["g"]) for r in rows if r["g"] in wanted]

    def count(self, graph: ox.NamedNode) -> int:
        """Triples in one graph, counted inside Oxigraph."""
        row = next(iter(solutions(self.raw.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"))))
        return int(row["n"].value)

    def graph_quads(self, graph: ox.NamedNode | ox.DefaultGraph | None = None) -> Iterator[ox.Quad]:
        """Every quad of one graph (every graph when None), whatever its interval: the
        ontology (``layout.ONTOLOGY``), the shapes, the store's META, one interval graph."""
        return iter(self.raw.quads_for_pattern(None, None, None, graph))

    def ontology_triples(self) -> list[ox.Triple]:
        """The loaded ontology modules (the TBox), as triples."""
        return [quad.triple for quad in self.graph_quads(layout.ONTOLOGY)]

    def published_quads(self) -> Iterator[ox.Quad]:
        """Every quad of every graph, history included, except graphs of a commit that is
        not published (in flight or abandoned): the store's full dump."""
        head = self.head
        for quad in self.graph_quads():
            graph = quad.graph_name
            interval = layout.parse_graph(graph) if isinstance(graph, ox.NamedNode) else None
            if interval is None or interval.published(head):
                yield quad

    def asserted_view(self) -> View:
        """The live asserted triples only (the current-state mirror): no inferences, no
        ontology. A writer diffs its new output against this state, and a pattern such as
        ``?s ?p ?o`` over it returns only what was asserted."""
        return View(self.head, (layout.LIVE,))

    def view(self, revision: int | None = None, *, inferred: bool = True) -> View:
        """The graphs valid at ``revision`` (default: the head), plus the ontology.

        The head is read from the current-state mirror; a past revision from the
        interval graphs valid at it.
        """
        head = self.head
        rev = head if revision is None else revision
        if rev == head:
            live = (layout.LIVE, layout.LIVE_INFERRED) if inferred else (layout.LIVE,)
            return View(rev, (*live, layout.ONTOLOGY, layout.TBOX_CLOSURE))
        families = ("iv", "inf") if inferred else ("iv",)
        graphs = [
            node
            for node, iv in sorted(self.interval_graphs().items(), key=lambda kv: kv[1].sort_key)
            if iv.family in families and iv.published(head) and iv.valid_at(rev)
        ]
        graphs += [layout.ONTOLOGY, layout.TBOX_CLOSURE]
        return View(rev, tuple(graphs))

    @property
    def publishing(self) -> int | None:
        """The revision whose publication was started and not finished, if any."""
        return self._meta_integer(PUBLISHING)

    def _meta_integer(self, predicate: ox.NamedNode) -> int | None:
        """The integer the store's META graph records for ``predicate`` (head, publishing)."""
        for quad in self.raw.quads_for_pattern(layout.STORE_NODE, predicate, None, layout.META):
            if isinstance(quad.object, ox.Literal):
                return int(quad.object.value)
        return None

    def discard_unpublished(self) -> None:
        """Recover after a crash: finish a started publication, drop any other leftovers."""
        if self.publishing is not None:
            finish_publication(self, self.publishing)
        head = self.head
        stale = [n for n, iv in self.interval_graphs().items() if not iv.published(head)]
        for node in stale:
            self.raw.remove_graph(node)
        if stale:
            self.forget_graphs()

    # -- queries ---------------------------------------------------------------------

    def query(
        self,
        sparql: str,
        *,
        view: View | None = None,
        named_graphs: list[ox.NamedNode] | None = None,
        bindings: dict[str, Any] | None = None,
    ) -> Any:
        """Run SPARQL over a view (default: current state) with the standard prefixes.
        A ``SERVICE`` to an endpoint not in ``allowed_services`` is refused."""
        refuse_services(sparql, self.allowed_services, PREFIXES)
        view = view or self.view()
        try:
            return self.raw.query(
                sparql,
                prefixes=PREFIXES,
                default_graph=view.default_graph(),
                named_graphs=[*named_graphs] if named_graphs is not None else None,
                substitutions={ox.Variable(k): v for k, v in bindings.items()} if bindings else None,
            )
        except SyntaxError as exc:
            raise syntax_error(exc, "SPARQL") from None

    def live_quads(
        self,
        subject: ox.NamedNode | None = None,
        predicate: ox.NamedNode | None = None,
        obj: Any = None,
        *,
        families: Iterable[str] = ("iv",),
        head: int | None = None,
    ) -> Iterator[ox.Quad]:
        """Quads valid at the head matching a pattern, with the graph that holds them."""
        graphs = self.interval_graphs()
        head = self.head if head is None else head
        wanted = tuple(families)
        for quad in self.raw.quads_for_pattern(subject, predicate, obj, None):
            iv = graphs.get(quad.graph_name)  # type: ignore[arg-type]
            if iv and iv.family in wanted and iv.is_open and iv.start <= head:
                yield quad

    def disk_bytes(self) -> int:
        root = self.path / "oxigraph"
        return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0


def syntax_error(exc: SyntaxError, what: str) -> QuerySyntaxError:
    """Turn Oxigraph's parser message into an error with 1-based line and column."""
    text = str(exc)
    line = column = None
    # Oxigraph reports positions as "at L:C" (1-based).
    match = re.search(r"line (\d+) (?:column|between columns) (\d+)", text) or re.search(r"\b(\d+):(\d+)\b", text)
    if match:
        line, column = int(match.group(1)), int(match.group(2))
    where = f" at line {line}, column {column}" if line else ""
    return QuerySyntaxError(f"malformed {what}{where}: {text}", line=line, column=column)


def _write_holder(path: Path) -> None:
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else sys.executable,
        "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    tmp = path / (LOCK_INFO + ".tmp")
    tmp.write_text(json.dumps(info))
    tmp.replace(path / LOCK_INFO)


def _read_holder(path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads((path / LOCK_INFO).read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def holder_summary(path: Path) -> str:
    """ "pid N: COMMAND" of the writer holding the store (as it recorded itself)."""
    info = _read_holder(path)
    if info is None:
        return "an unknown process"
    command = str(info.get("command"))
    return f"pid {info.get('pid')}: {command if len(command) <= 120 else command[:117] + '...'}"


def _describe_holder(path: Path) -> str:
    info = _read_holder(path)
    if info is None:
        return "an unknown process"
    return f"pid {info.get('pid')} on {info.get('host')} ({info.get('command')}, since {info.get('since')})"
