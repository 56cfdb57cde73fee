"""The data dir: creating it, wiping it, and opening its store for reading or writing."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import ConfigurationError, DatabaseError
from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore, syntax_error
from cleveragents.graph.tbox import TBox, rebuild_closure, replace_graph
from cleveragents.resources import data_path

CONFIG_TEMPLATE = """# CleverAgents configuration (see `agents config list` for every key).
# Resolution: CLI flag > CLEVERAGENTS_* environment > project config > this file > default.
"""

_compiled_shapes: dict[str, Any] = {}


@dataclass
class WriteSession:
    """A writer's handle: the store and the one commit path into it."""

    store: GraphStore
    engine: CommitEngine

    def commit(self, request: CommitRequest) -> CommitResult:
        return self.engine.commit(request)


class Workspace:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.expanduser()
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
        except OSError as exc:
            raise ConfigurationError(f"cannot create the data dir {self.data_dir}: {exc.strerror}") from None
        if reset and self.store_dir.exists():
            GraphStore.open(self.store_dir).close()  # fails clearly if another writer holds it
            shutil.rmtree(self.store_dir)
        with GraphStore.open(self.store_dir) as store:
            ontology = load_folder("ontology")
            shapes = load_folder("shapes")
            replace_graph(store.raw, layout.ONTOLOGY, ontology)
            closure = rebuild_closure(store.raw)
            replace_graph(store.raw, layout.SHAPES, shapes)
            return {"ontology_triples": len(ontology), "closure_pairs": closure, "shape_triples": len(shapes),
                    "head": store.head}

    def require(self) -> None:
        if not self.exists():
            raise DatabaseError(
                f"no store in {self.data_dir}", suggestions=["agents init", "agents --data-dir DIR ..."]
            )

    @contextmanager
    def writer(self, *, validate: bool = True) -> Iterator[WriteSession]:
        self.require()
        with GraphStore.open(self.store_dir) as store:
            validator = shapes_validator(store.raw) if validate else None
            yield WriteSession(store, CommitEngine(store, TBox.from_store(store.raw), validator))

    @contextmanager
    def reader(self) -> Iterator[GraphStore]:
        self.require()
        store = GraphStore.open_read_only(self.store_dir)
        try:
            yield store
        finally:
            del store


def load_folder(name: str) -> list[ox.Triple]:
    """Every triple of the Turtle files in a data folder (ontology/, shapes/)."""
    triples: list[ox.Triple] = []
    for path in sorted(data_path(name).glob("*.ttl")):
        try:
            triples += [q.triple for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]
        except SyntaxError as exc:
            raise syntax_error(exc, f"Turtle in {path}") from None
    return triples


def shapes_validator(raw: ox.Store) -> Any:
    """The compiled SHACL validator for the store's shapes graph (cached per content)."""
    from cleveragents.validation.compiler import compile_shapes

    body = ox.serialize(
        [q.triple for q in raw.quads_for_pattern(None, None, None, layout.SHAPES)], format=ox.RdfFormat.N_TRIPLES
    )
    key = hashlib.sha256(body).hexdigest()
    if key not in _compiled_shapes:
        _compiled_shapes[key] = compile_shapes(body.decode())
    return _compiled_shapes[key]
