"""Where the backends keep their indexes (``<data dir>/indexes/<kind>/``): one directory per
store revision, written atomically and pruned to the newest few, plus the document list of
each revision so that a second backend (or a second run) needs no SPARQL to get it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from cleveragents.context.backends.documents import Document, file_fingerprints, load_documents, update_documents
from cleveragents.graph.workspace import Workspace

KEEP_REVISIONS = 3  # older revision directories are removed when a new one is written
_FIELDS = (
    "iri",
    "resource",
    "path",
    "source_range",
    "node_type",
    "name",
    "qualified_name",
    "content_hash",
    "file_hash",
)


def index_root(ws: Workspace, kind: str) -> Path:
    return ws.data_dir / "indexes" / kind


def revision_dir(ws: Workspace, kind: str, revision: int) -> Path:
    return index_root(ws, kind) / f"rev-{revision}"


def write_revision_dir(ws: Workspace, kind: str, revision: int, fill: Callable[[Path], object]) -> Path:
    """Fill a temporary directory, then move it into place: a reader never sees half an index.
    Callers write only when they could not read the existing one, so it is replaced (two
    processes building the same revision write equal indexes)."""
    root = index_root(ws, kind)
    root.mkdir(parents=True, exist_ok=True)
    target = revision_dir(ws, kind, revision)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-"))
    try:
        fill(tmp)
        try:
            os.rename(tmp, target)
        except OSError:  # a stale or unreadable one is in the way
            shutil.rmtree(target, ignore_errors=True)
            try:
                os.rename(tmp, target)
            except OSError:  # another process put its own there meanwhile
                shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _prune(root)
    return target


def _prune(root: Path) -> None:
    revisions = sorted(
        (int(p.name[4:]) for p in root.glob("rev-*") if p.name[4:].isdigit()),
        reverse=True,
    )
    for old in revisions[KEEP_REVISIONS:]:
        shutil.rmtree(root / f"rev-{old}", ignore_errors=True)


def _read_catalog(path: Path) -> tuple[list[Document], dict[str, str]]:
    data = json.loads(path.read_text())
    return [Document(**dict(zip(_FIELDS, row, strict=True))) for row in data["documents"]], data["files"]


def _nearest_catalog(ws: Workspace, revision: int) -> tuple[list[Document], dict[str, str]] | None:
    """The saved catalog of the revision nearest to ``revision``, to update from."""
    saved = [int(p.name[4:]) for p in index_root(ws, "documents").glob("rev-*") if p.name[4:].isdigit()]
    for other in sorted(saved, key=lambda r: (abs(r - revision), -r)):
        try:
            return _read_catalog(revision_dir(ws, "documents", other) / "documents.json")
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return None


def documents(ws: Workspace, revision: int) -> tuple[list[Document], str | None]:
    """The documents at ``revision``, with None when they were read from the catalog, or a note
    saying how they were read from the store (and saved for next time): only the files that
    changed since the nearest saved revision, or all of them."""
    path = revision_dir(ws, "documents", revision) / "documents.json"
    try:
        return _read_catalog(path)[0], None
    except (OSError, ValueError, TypeError, KeyError):
        pass  # missing or unreadable: read the store
    previous = _nearest_catalog(ws, revision)
    with ws.reader() as store:
        if previous is None:
            files = file_fingerprints(store, revision)
            found = load_documents(store, revision)
            note = f"document list for revision {revision} read from the store ({len(found)} documents)"
        else:
            found, files, read = update_documents(store, revision, *previous)
            note = f"document list for revision {revision} updated: {read} changed files read from the store"
    data = {"files": files, "documents": [[getattr(d, name) for name in _FIELDS] for d in found]}
    write_revision_dir(ws, "documents", revision, lambda tmp: (tmp / "documents.json").write_text(json.dumps(data)))
    return found, note
