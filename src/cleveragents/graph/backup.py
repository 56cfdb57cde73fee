"""Backups of a data dir's graph on Oxigraph's own backup, and restoring one.

A backup directory holds ``oxigraph/`` (``Store.backup``: a consistent snapshot taken
from a read-only open, so writers keep working and no half-published commit is in it),
``content/`` (the stored file contents the graph's renderings need) and ``backup.json``
(head revision, time). Restoring validates the backup first, holds the writer lock while
it copies, then swaps the store directory in with renames, so a failed restore leaves
the current store as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from cleveragents.errors import ConflictError, DatabaseError, NotFoundError
from cleveragents.graph.store import GraphStore

MANIFEST = "backup.json"


@dataclass(frozen=True)
class BackupInfo:
    path: Path
    head: int
    created: str
    blobs: int


def backup(store_dir: Path, content_dir: Path, target: Path) -> BackupInfo:
    """Write a backup of the store (and the content store) into the new directory ``target``."""
    if target.exists() and any(target.iterdir()):
        raise ConflictError(f"{target} exists and is not empty", suggestions=["give a new directory"])
    target.mkdir(parents=True, exist_ok=True)
    store = GraphStore.open_read_only(store_dir)
    try:
        head = store.head
        store.raw.backup(str(target / "oxigraph"))
    except OSError as exc:
        raise DatabaseError(f"cannot write the backup to {target}: {exc}") from None
    finally:
        del store
    blobs = _copy_blobs(content_dir, target / "content")
    created = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    (target / MANIFEST).write_text(json.dumps({"head": head, "created": created, "blobs": blobs}))
    return BackupInfo(target, head, created, blobs)


def inspect(source: Path) -> BackupInfo:
    """The backup at ``source``, checked to open as a store."""
    try:
        manifest = json.loads((source / MANIFEST).read_text())
    except (OSError, ValueError):
        raise NotFoundError(
            f"{source} is not a backup (no readable {MANIFEST})", suggestions=["agents graph backup PATH"]
        ) from None
    try:
        opened = GraphStore(source, ox.Store.read_only(str(source / "oxigraph")), writable=False)
        head = opened.head
        del opened
    except OSError as exc:
        raise DatabaseError(f"the backup at {source} does not open: {exc}") from None
    return BackupInfo(source, head, str(manifest.get("created")), int(manifest.get("blobs", 0)))


def restore(source: Path, store_dir: Path, content_dir: Path, *, wait: float = 0.0) -> BackupInfo:
    """Replace the store with the backup at ``source`` (content blobs are added, never
    removed). The writer lock is held while the copy is made."""
    info = inspect(source)
    staging = store_dir.with_name(store_dir.name + ".restoring")
    shutil.rmtree(staging, ignore_errors=True)
    writer = GraphStore.open(store_dir, wait=wait)  # no writer may start meanwhile
    try:
        shutil.copytree(source / "oxigraph", staging / "oxigraph")
        _copy_blobs(source / "content", content_dir)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise DatabaseError(f"cannot restore into {store_dir}: {exc}") from None
    finally:
        writer.close()
    replaced = store_dir.with_name(f"{store_dir.name}.replaced-{os.getpid()}")
    os.replace(store_dir, replaced)
    os.replace(staging, store_dir)
    shutil.rmtree(replaced, ignore_errors=True)
    return info


def _copy_blobs(source: Path, target: Path) -> int:
    """Copy content blobs (write-once, named by hash) that ``target`` lacks."""
    count = 0
    if not source.is_dir():
        return 0
    for blob in source.rglob("*"):
        if blob.is_file() and not blob.name.startswith(".tmp-"):
            dest = target / blob.relative_to(source)
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(blob, dest)
            count += 1
    return count
