"""A small real store for the server tests: five files of requests' sources (pinned
corpus), indexed into a fresh data dir, with context strategies that need no model."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.emit import file_iri
from cleveragents.services import indexing, resources
from corpora.fetch import corpus_dir

FILES = ("sessions.py", "hooks.py", "structures.py", "adapters.py", "auth.py")
ENABLED = ["breadth-depth-navigator", "simple-keyword"]
CONFIG = f"[context.strategies]\nenabled = {ENABLED!r}\n".replace("'", '"')


@dataclass
class Corpus:
    ws: Workspace
    data_dir: Path
    tree: Path
    ulid: str

    def iri(self, path: str, key: str = "") -> str:
        return file_iri(self.ulid, path, key)

    @property
    def send(self) -> str:
        return self.iri("requests/sessions.py", "Session.send")


def build_corpus(root: Path) -> Corpus:
    tree = root / "tree" / "requests"
    tree.mkdir(parents=True)
    for name in FILES:
        shutil.copy(corpus_dir("requests-2.32.3") / "src" / "requests" / name, tree / name)
    data = root / "data"
    ws = Workspace(data)
    ws.initialize()
    (data / "config.toml").write_text(CONFIG)
    info, _ = resources.add(ws, root / "tree", type_name="fs-directory", name="local/requests")
    indexing.index(ws, [info])
    return Corpus(ws, data, root / "tree", info.ulid)
