"""Support for the strategy tests: one indexed requests store per module, and its backends."""

from __future__ import annotations

import shutil
from pathlib import Path

from cleveragents.context.backends import backend_set
from cleveragents.context.protocols import BackendSet
from cleveragents.graph.workspace import Workspace
from cleveragents.services import indexing, resources
from cleveragents.services.resources import ResourceInfo
from corpora.fetch import corpus_dir


def build_requests_store(root: Path, only: tuple[str, ...] = ()) -> tuple[Workspace, ResourceInfo]:
    """src/requests of requests 2.32.3 (or only the named modules of it), indexed into a
    fresh store under ``root``."""
    tree = root / "tree"
    source = corpus_dir("requests-2.32.3") / "src" / "requests"
    if only:
        (tree / "requests").mkdir(parents=True)
        for name in only:
            shutil.copy2(source / f"{name}.py", tree / "requests" / f"{name}.py")
    else:
        shutil.copytree(source, tree / "requests")
    ws = Workspace(root / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name="local/requests")
    indexing.index(ws, [info])
    return ws, info


def backends_for(ws: Workspace, *, vector: bool = False, as_of: str | None = None) -> BackendSet:
    """The real backends over every indexed resource (the vector index only when asked:
    embedding the corpus takes seconds)."""
    return backend_set(ws, None, vector=vector, as_of=as_of)
