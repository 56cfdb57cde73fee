"""Where files come from: a directory on disk, a git work tree, or a git commit's tree.

A snapshot lists candidate paths and reads them; anything it cannot list safely
(symlinks, loops, unreadable directories) is reported as skipped with a reason.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cleveragents.errors import ValidationError

# Dependencies, caches and VCS internals: never the user's own content.
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cleveragents",
    }
)


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


class Snapshot(Protocol):
    def listing(self) -> tuple[list[str], list[Skipped]]:
        """Candidate file paths (relative, POSIX, sorted) and what was left out and why."""
        ...

    def read(self, path: str) -> bytes:
        """The file's bytes; raises OSError when it vanished or cannot be read."""
        ...

    def size(self, path: str) -> int: ...

    def fingerprint(self, path: str) -> str | None:
        """A cheap token that changes whenever the file's content does, or None when the
        snapshot can't promise that; an unchanged token lets a run skip reading the file."""
        ...


# A file modified this recently may change again within the same mtime tick without its
# size changing ("racy git"): its stat is not trusted until it is older.
_RACY_SECONDS = 2.0


class DirectorySnapshot:
    """A directory as it is on disk now. Symlinks are not followed (no loops, no escapes)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def listing(self) -> tuple[list[str], list[Skipped]]:
        paths: list[str] = []
        skipped: list[Skipped] = []

        def on_error(exc: OSError) -> None:
            where = os.path.relpath(exc.filename, self.root) if exc.filename else "?"
            skipped.append(Skipped(where, f"unreadable directory: {exc.strerror}"))

        for dirpath, dirnames, filenames in os.walk(self.root, onerror=on_error):
            rel_dir = os.path.relpath(dirpath, self.root)
            prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            keep = []
            for name in sorted(dirnames):
                if name in IGNORED_DIRS:
                    continue
                if os.path.islink(os.path.join(dirpath, name)):
                    skipped.append(Skipped(prefix + name, "symlinked directory (not followed)"))
                else:
                    keep.append(name)
            dirnames[:] = keep
            for name in filenames:
                full = os.path.join(dirpath, name)
                if os.path.islink(full):
                    skipped.append(Skipped(prefix + name, "symlink (not followed)"))
                elif reason := _unusable(full, prefix + name):
                    skipped.append(Skipped(_printable(prefix + name), reason))
                else:
                    paths.append(prefix + name)
        return sorted(paths), skipped

    def read(self, path: str) -> bytes:
        full = self.root / path
        # Replaced by a named pipe since the listing: reading it would block forever.
        # (A vanished file raises FileNotFoundError here, reported as such.)
        if not stat.S_ISREG(os.stat(full).st_mode):
            raise OSError(f"{path}: not a regular file any more")
        return full.read_bytes()

    def size(self, path: str) -> int:
        return (self.root / path).stat().st_size

    def fingerprint(self, path: str) -> str | None:
        try:
            st = (self.root / path).stat()
        except OSError:
            return None
        if st.st_mtime > time.time() - _RACY_SECONDS:
            return None
        return f"stat:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


class GitWorkTreeSnapshot(DirectorySnapshot):
    """A git checkout's work tree: tracked and untracked files that .gitignore does not exclude."""

    def listing(self) -> tuple[list[str], list[Skipped]]:
        out = _git(self.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        paths: list[str] = []
        skipped: list[Skipped] = []
        for path in sorted(set(filter(None, out.decode(errors="surrogateescape").split("\0")))):
            full = self.root / path
            if any(part in IGNORED_DIRS for part in path.split("/")[:-1]):
                continue
            if full.is_symlink():
                skipped.append(Skipped(path, "symlink (not followed)"))
            elif not full.exists():
                skipped.append(Skipped(path, "deleted in the work tree"))
            elif reason := _unusable(str(full), path):
                skipped.append(Skipped(_printable(path), reason))
            else:
                paths.append(path)
        return paths, skipped


class GitCommitSnapshot:
    """The tree of one git commit, read from the object database (no checkout needed)."""

    def __init__(self, repo: Path, commit: str, blob_cache: dict[str, bytes] | None = None) -> None:
        self.repo = repo
        self.commit = commit
        # Shared across the commits of a history replay: most blobs do not change between them.
        self.blob_cache = blob_cache if blob_cache is not None else {}
        self.blobs: dict[str, tuple[str, int]] = {}  # path -> (blob id, size)
        out = _git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", commit)
        self._skipped: list[Skipped] = []
        for entry in filter(None, out.decode(errors="surrogateescape").split("\0")):
            meta, path = entry.split("\t", 1)
            mode, kind, blob, size = meta.split()
            if kind != "blob":
                continue  # submodules
            if mode == "120000":
                self._skipped.append(Skipped(path, "symlink (not followed)"))
            elif not any(part in IGNORED_DIRS for part in path.split("/")[:-1]):
                self.blobs[path] = (blob, int(size))

    def listing(self) -> tuple[list[str], list[Skipped]]:
        return sorted(self.blobs), list(self._skipped)

    def blob_id(self, path: str) -> str:
        return self.blobs[path][0]

    def size(self, path: str) -> int:
        return self.blobs[path][1]

    def fingerprint(self, path: str) -> str | None:
        return f"blob:{self.blobs[path][0]}"

    def read(self, path: str) -> bytes:
        return _git(self.repo, "cat-file", "blob", self.blobs[path][0])

    def read_many(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        """Blobs through one ``git cat-file --batch`` process (one round trip per file is slow)."""
        missing = list(dict.fromkeys(self.blobs[p][0] for p in paths if self.blobs[p][0] not in self.blob_cache))
        if missing:
            request = "".join(blob + "\n" for blob in missing).encode()
            with subprocess.Popen(
                ["git", "-C", str(self.repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            ) as proc:
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(request)
                proc.stdin.close()
                for blob in missing:
                    size = int(proc.stdout.readline().split()[2])
                    self.blob_cache[blob] = proc.stdout.read(size)
                    proc.stdout.read(1)  # the newline after each object
        for path in paths:
            yield path, self.blob_cache[self.blobs[path][0]]


def _unusable(full: str, path: str) -> str | None:
    """Why a listed file cannot be indexed: a name that is not UTF-8 (it could not be
    written into the graph), or not a regular file (a named pipe would block the read
    forever; a socket or device has no content)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "file name is not valid UTF-8"
    try:
        mode = os.lstat(full).st_mode
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    if stat.S_ISREG(mode):
        return None
    kind = "named pipe" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device or special file"
    return f"not a regular file ({kind})"


def _printable(path: str) -> str:
    """A path as text that can be shown and stored (undecodable bytes as \\xNN)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _git(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or "git failed"
        raise ValidationError(f"git {args[0]} in {repo}: {message}")
    return done.stdout
