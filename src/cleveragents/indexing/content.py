"""File contents stored once per content hash, so any revision can be rendered later.

The graph records each file's ``uko:contentHash``; the bytes live here, compressed,
write-once. A blob is written before the commit that mentions it, so a crash can leave
an unreferenced blob but never a graph node whose content is missing.
"""

from __future__ import annotations

import os
import tempfile
import zlib
from pathlib import Path

from cleveragents.errors import NotFoundError
from cleveragents.graph.workspace import Workspace


class ContentStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, digest: str) -> Path:
        hexdigest = digest.split(":", 1)[-1]
        return self.root / hexdigest[:2] / hexdigest[2:]

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def put(self, digest: str, data: bytes) -> None:
        target = self._path(digest)
        if target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(zlib.compress(data, 1))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, digest: str) -> bytes:
        try:
            return zlib.decompress(self._path(digest).read_bytes())
        except FileNotFoundError:
            raise NotFoundError(
                f"content {digest} is not in the content store {self.root}",
                suggestions=["agents index --full RESOURCE (re-reads the files)"],
            ) from None


def content_store(ws: Workspace) -> ContentStore:
    """The content store of a data dir (beside its graph store)."""
    return ContentStore(ws.data_dir / "content")
