"""File contents stored once per content hash, so any revision can be rendered later.

The graph records each file's ``uko:contentHash``; the bytes live here, compressed,
write-once. A blob is written before the commit that mentions it, so a crash can leave
an unreferenced blob but never a graph node whose content is missing. Every read checks
the bytes against the hash, so a blob changed on disk is an error, never a wrong
rendering; writing the same content again replaces a blob that fails the check.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from pathlib import Path

from cleveragents.errors import ContentCorruptError, NotFoundError
from cleveragents.graph.workspace import Workspace


class ContentStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, digest: str) -> Path:
        hexdigest = digest.split(":", 1)[-1]
        return self.root / hexdigest[:2] / hexdigest[2:]

    def has(self, digest: str) -> bool:
        return self.path_of(digest).exists()

    def put(self, digest: str, data: bytes) -> None:
        target = self.path_of(digest)
        if target.exists() and self.verify(digest):
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
        path = self.path_of(digest)
        try:
            data = zlib.decompress(path.read_bytes())
        except FileNotFoundError:
            raise NotFoundError(
                f"content {digest} is not in the content store {self.root}",
                suggestions=["agents index --full RESOURCE (re-reads the files)"],
            ) from None
        except zlib.error as exc:
            raise self._corrupt(path, digest, f"cannot be decompressed ({exc})") from None
        if _digest(data) != _hex(digest):
            raise self._corrupt(path, digest, "does not match its hash")
        return data

    def verify(self, digest: str) -> bool:
        """Whether the blob of ``digest`` is present and holds bytes of that hash."""
        try:
            return _digest(zlib.decompress(self.path_of(digest).read_bytes())) == _hex(digest)
        except (OSError, zlib.error):
            return False

    def blobs(self) -> list[str]:
        """The digest of every blob on disk (as 'sha256:HEX')."""
        if not self.root.is_dir():
            return []
        return sorted(
            f"sha256:{p.parent.name}{p.name}"
            for p in self.root.glob("??/*")
            if p.is_file() and not p.name.startswith(".tmp-")
        )

    def _corrupt(self, path: Path, digest: str, what: str) -> ContentCorruptError:
        return ContentCorruptError(
            f"the content blob {path} for {digest} {what}: it was changed or damaged on disk",
            suggestions=[f"delete {path}, then agents index --full RESOURCE (re-reads the files and rewrites it)"],
        )


def _hex(digest: str) -> str:
    return digest.split(":", 1)[-1]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_store(ws: Workspace) -> ContentStore:
    """The content store of a data dir (beside its graph store)."""
    return ContentStore(ws.data_dir / "content")
