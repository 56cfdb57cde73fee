"""The data dir: creating it, wiping it, and opening its store for reading or writing."""

from __future__ import annotations

import gc
import hashlib
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.config import WRITER_WAIT_DEFAULT
from cleveragents.errors import ConfigurationError, DatabaseError
from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest, CommitResult
from cleveragents.graph.hierarchy import TBox, rebuild_closure
from cleveragents.graph.store import GraphStore
from cleveragents.tbox.modules import load_ontology, load_shapes

CONFIG_TEMPLATE = """# CleverAgents configuration (see `agents config list` for every key).
# Resolution: CLI flag > CLEVERAGENTS_* environment > project config > this file > default.
"""


# The writer each store dir has open in this process. A reader in the same process reads
# through it: a second, read-only RocksDB instance is a snapshot of the store's files, and
# the writer's background compaction can delete one of them under it mid-query ("IO error:
# No such file or directory: .../000255.sst", seen after a plan's apply on a loaded
# machine); the writer's own instance never loses a file it reads.
_WRITERS_HERE: dict[Path, GraphStore] = {}


def held_writer(store_dir: Path) -> GraphStore | None:
    """The store this process holds open for writing at ``store_dir``, if any."""
    return _WRITERS_HERE.get(store_dir.resolve())


@dataclass
class WriteSession:
    """A writer's handle: the store and the one commit path into it."""

    store: GraphStore
    engine: CommitEngine

    def commit(self, request: CommitRequest) -> CommitResult:
        return self.engine.commit(request)


class Workspace:
    def __init__(
        self,
        data_dir: Path,
        *,
        validate_on_commit: bool = True,
        service_allowlist: Iterable[str] = (),
        writer_wait: float = WRITER_WAIT_DEFAULT,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.data_dir = data_dir.expanduser()
        # The default for writer(): config key store.validate_on_commit.
        self.validate_on_commit = validate_on_commit
        # SPARQL SERVICE endpoints queries may call (config query.service_allowlist).
        self.service_allowlist = frozenset(service_allowlist)
        # A writer finding the store held waits this long for its turn (store.writer_wait),
        # calling on_wait("pid N: COMMAND") whenever the holder changes.
        self.writer_wait = writer_wait
        self.on_wait = on_wait
        self.store_dir = self.data_dir / "store"
        self.config_file = self.data_dir / "config.toml"

    def exists(self) -> bool:
        return (self.store_dir / "oxigraph").is_dir()

    def initialize(self, *, reset: bool = False) -> dict[str, int]:
        """Create (or with ``reset`` wipe and recreate) the store; (re)load ontology and shapes."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            if not self.config_file.exists():
                self.config_file.write_text(CONFIG_TEMPLATE)
                self.config_file.chmod(0o600)  # it may come to hold provider keys
        except OSError as exc:
            raise ConfigurationError(f"cannot create the data dir {self.data_dir}: {exc.strerror}") from None
        if reset and self.store_dir.exists():
            self._open_writer().close()  # fails clearly if another writer holds it
            shutil.rmtree(self.store_dir)
        with self._open_writer() as store:
            before = _closure_digest(store.raw)
            ontology = load_ontology(store.raw, layout.ONTOLOGY)
            closure = rebuild_closure(store.raw)
            shapes = load_shapes(store.raw, layout.SHAPES)
            rederived = 0
            if store.head and _closure_digest(store.raw) != before:
                # The class/property hierarchy changed: the materialized closure follows.
                engine = CommitEngine(store, TBox.from_store(store.raw), None)
                result = engine.rederive_inferences()
                rederived = result.inferred_added + result.inferred_removed
            return {
                "ontology_triples": ontology,
                "closure_pairs": closure,
                "shape_triples": shapes,
                "inferences_rederived": rederived,
                "head": store.head,
            }

    def require(self) -> None:
        if not self.exists():
            raise DatabaseError(
                f"no store in {self.data_dir}",
                suggestions=["agents init", "agents --data-dir DIR ..."],
            )

    @contextmanager
    def writer(self, *, validate: bool | None = None) -> Iterator[WriteSession]:
        self.require()
        if validate is None:
            validate = self.validate_on_commit
        raw: ox.Store | None = None
        validator: ShapesOnFirstUse | None = None
        try:
            with self._open_writer() as store:
                raw = store.raw
                store.allowed_services = self.service_allowlist
                key = self.store_dir.resolve()
                _WRITERS_HERE[key] = store
                try:
                    validator = ShapesOnFirstUse(raw) if validate else None
                    yield WriteSession(store, CommitEngine(store, TBox.from_store(raw), validator))
                finally:
                    if _WRITERS_HERE.get(key) is store:
                        del _WRITERS_HERE[key]
        finally:
            # The store's lock goes with its last reference. A session kept alive in a
            # reference cycle (a LangGraph run's checkpointer holds one) would keep the lock
            # until the collector runs, and the next writer of this process would wait for
            # itself: so the references this session made are dropped, and if any other
            # remains, the cycles are collected now.
            if validator is not None:
                validator.release()
            if raw is not None and sys.getrefcount(raw) > 2:
                gc.collect()
            raw = validator = None

    def _open_writer(self) -> GraphStore:
        return GraphStore.open(self.store_dir, wait=self.writer_wait, on_wait=self.on_wait)

    @contextmanager
    def reader(self) -> Iterator[GraphStore]:
        self.require()
        held = held_writer(self.store_dir)
        if held is not None:
            yield held
            return
        store = GraphStore.open_read_only(self.store_dir)
        store.allowed_services = self.service_allowlist
        try:
            yield store
        finally:
            del store


def _closure_digest(raw: ox.Store) -> str:
    rows = sorted(str(q) for q in raw.quads_for_pattern(None, None, None, layout.TBOX_CLOSURE))
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def shapes_validator(raw: ox.Store) -> Any:
    """The compiled SHACL validator for the store's shapes graph (compile_shapes caches
    it per content)."""
    from cleveragents.validation.compiler import compile_shapes

    body = ox.serialize(
        [q.triple for q in raw.quads_for_pattern(None, None, None, layout.SHAPES)],
        format=ox.RdfFormat.N_TRIPLES,
    )
    return compile_shapes(body or b"")  # serialize returns bytes when given no output


def validate_current(store: GraphStore) -> list[Any]:
    """Audit the whole current state against the store's shapes (the violations found)."""
    return shapes_validator(store.raw).validate(store.raw, default_graph=store.view().default_graph())


class ShapesOnFirstUse:
    """The store's validator, compiled when the first commit is validated: a run that
    commits nothing (re-indexing an unchanged tree) does not pay ~0.2 s for it."""

    def __init__(self, raw: ox.Store) -> None:
        self._raw: ox.Store | None = raw
        self._compiled: Any = None

    def release(self) -> None:
        """Forget the store (its writer closed): the compiled shapes stay usable."""
        self._raw = None

    def validate(self, store: ox.Store, **kwargs: Any) -> list[Any]:
        if self._compiled is None:
            assert self._raw is not None, "the validator's writer session is closed"
            self._compiled = shapes_validator(self._raw)
        return self._compiled.validate(store, **kwargs)
