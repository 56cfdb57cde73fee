"""Reading a snapshot's files for a run, without reading the ones known to be unchanged.

Every run needs each file's content hash to compare with the graph, but few need the
bytes. A file whose snapshot fingerprint (size, mtime and inode on disk; the blob id in
git) matches the one recorded when it was last read gets its hash from that record and
is read only if something asks for its bytes (re-analysis, a language server). The
records live in a small file beside the link-data cache; losing it only costs a full read.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from . import emit
from .model import Analyzer
from .plugins import AnalyzerSet
from .secrets import SecretFinding, mask_secrets
from .sources import Skipped, Snapshot

_BINARY_SNIFF = 8192


class SourceFiles(Mapping[str, bytes]):
    """The run's readable files: path -> bytes, read lazily, with each file's analyzer and
    content hash. Paths that turned out unreadable are reported in ``skipped``."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.analyzers: dict[str, Analyzer] = {}
        self.hashes: dict[str, str] = {}
        self.fingerprints: dict[str, tuple[str, str]] = {}  # path -> (fingerprint, hash)
        # Secrets found (and masked) in the files read so far: kind and line only.
        self.findings: dict[str, list[SecretFinding]] = {}
        self._data: dict[str, bytes] = {}

    def __getitem__(self, path: str) -> bytes:
        if path not in self.analyzers:
            raise KeyError(path)
        if path not in self._data:
            # A file trusted by its fingerprint: it passed the checks when it was recorded.
            self._data[path] = self.masked(path, self.analyzers[path], self.snapshot.read(path))
        return self._data[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.analyzers)

    def __len__(self) -> int:
        return len(self.analyzers)

    def add(self, path: str, analyzer: Analyzer, content_hash: str, data: bytes | None = None) -> None:
        """A file of the run; without ``data`` it is read when something asks for its bytes."""
        self.analyzers[path] = analyzer
        self.hashes[path] = content_hash
        if data is not None:
            self._data[path] = data

    def masked(self, path: str, analyzer: Analyzer, data: bytes) -> bytes:
        """``data`` with its secrets masked (see secrets.py); binary formats as they are."""
        if getattr(analyzer, "binary", False):
            return data
        data, found = mask_secrets(path, data)
        if found:
            self.findings[path] = found
        return data

    def analyzer(self, path: str) -> Analyzer:
        return self.analyzers[path]

    def hash(self, path: str) -> str:
        return self.hashes[path]


def read_files(
    snapshot: Snapshot,
    paths: list[str],
    analyzers: AnalyzerSet,
    known: Mapping[str, tuple[str, str]],
    skipped: list[Skipped],
) -> SourceFiles:
    """The snapshot's files that an analyzer takes. ``known`` maps a path to the
    (fingerprint, content hash) recorded when it was last read."""
    files = SourceFiles(snapshot)
    wanted: list[tuple[str, Analyzer, str | None]] = []
    for path in paths:
        analyzer = analyzers.for_path(path)
        if analyzer is None:
            skipped.append(Skipped(path, "no analyzer for this file type"))
            continue
        fingerprint = snapshot.fingerprint(path)
        record = known.get(path)
        if fingerprint is not None and record is not None and record[0] == fingerprint:
            files.add(path, analyzer, record[1])
            files.fingerprints[path] = record
        else:
            wanted.append((path, analyzer, fingerprint))
    reader = getattr(snapshot, "read_many", None)
    if reader is not None:
        loaded = reader([p for p, _, _ in wanted])
    else:
        loaded = (_read_one(snapshot, p, skipped) for p, _, _ in wanted)
    by_path = {p: (a, f) for p, a, f in wanted}
    for path, data in loaded:
        if data is None:
            continue
        analyzer, fingerprint = by_path[path]
        reason = _unreadable_reason(data, binary_ok=getattr(analyzer, "binary", False))
        if reason:
            skipped.append(Skipped(path, reason))
            continue
        data = files.masked(path, analyzer, data)
        files.add(path, analyzer, emit.content_hash(data), data)
        if fingerprint is not None:
            files.fingerprints[path] = (fingerprint, files.hash(path))
    files.analyzers = dict(sorted(files.analyzers.items()))
    return files


def load_fingerprints(path: Path) -> dict[str, tuple[str, str]]:
    try:
        with path.open("rb") as handle:
            records = pickle.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
        return {}
    return records if isinstance(records, dict) else {}


def save_fingerprints(path: Path, records: dict[str, tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as handle:
        pickle.dump(records, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def _read_one(snapshot: Snapshot, path: str, skipped: list[Skipped]) -> tuple[str, bytes | None]:
    try:
        return path, snapshot.read(path)
    except FileNotFoundError:
        skipped.append(Skipped(path, "vanished while indexing"))
    except PermissionError:
        skipped.append(Skipped(path, "unreadable: permission denied"))
    except IsADirectoryError:
        skipped.append(Skipped(path, "not a regular file"))
    except OSError as exc:
        skipped.append(Skipped(path, f"unreadable: {exc.strerror or exc}"))
    return path, None


def _unreadable_reason(data: bytes, *, binary_ok: bool) -> str | None:
    if binary_ok:
        return None
    if b"\0" in data[:_BINARY_SNIFF]:
        return "binary file"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte {exc.start}: {exc.reason})"
    return None
