"""Path confinement: every path a tool names must stay inside its sandbox.

A path is taken relative to the sandbox root. It is refused when it is absolute, names a
parent (``..``), passes through a deny-listed directory (``.git``, ``node_modules``), or
resolves, symlinks followed, to a place outside the root. The refusal is an
``AccessDeniedError`` whose message an actor can read and act on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Final

from cleveragents.errors import AccessDeniedError

# Directory names no tool may read or write, at any depth (spec: the deny-list).
DENY_LIST: Final = frozenset({".git", "node_modules"})


def confine(root: Path, path: str, *, deny: frozenset[str] = DENY_LIST) -> Path:
    """The absolute path of ``path`` inside ``root``, or AccessDeniedError saying why not."""
    if not isinstance(path, str) or path.strip() == "":
        raise AccessDeniedError("a path is required (relative to the sandbox root)")
    if "\0" in path:
        raise AccessDeniedError(f"path {path!r} contains a NUL byte")
    if path.startswith("~") or os.path.isabs(path) or PurePosixPath(path).is_absolute():
        raise AccessDeniedError(f"path '{path}' is absolute; give a path relative to the sandbox root")
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if ".." in parts:
        raise AccessDeniedError(f"path '{path}' leaves the sandbox ('..' is not allowed)")
    denied = next((part for part in parts if part in deny), None)
    if denied is not None:
        raise AccessDeniedError(f"path '{path}' is on the deny-list ({denied}/ may not be touched)")
    real_root = Path(os.path.realpath(root))
    candidate = real_root.joinpath(*parts) if parts and parts != (".",) else real_root
    # realpath follows every symlink on the way, including one at the end, and keeps a
    # missing tail as written: a link anywhere that points out is caught here.
    resolved = Path(os.path.realpath(candidate))
    if resolved != real_root and real_root not in resolved.parents:
        raise AccessDeniedError(f"path '{path}' resolves outside the sandbox (through a symlink)")
    inner = resolved.relative_to(real_root).parts
    denied = next((part for part in inner if part in deny), None)
    if denied is not None:
        raise AccessDeniedError(f"path '{path}' leads into the deny-list ({denied}/ may not be touched)")
    return candidate


def relative(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` in POSIX form (how tools report paths)."""
    return Path(os.path.relpath(path, os.path.realpath(root))).as_posix()


def walk_files(root: Path, start: Path, *, deny: frozenset[str] = DENY_LIST) -> Iterator[Path]:
    """Files under ``start`` in sorted order, skipping deny-listed directories and never
    descending through a symlinked directory (it may lead out of the sandbox)."""
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in deny)
        for name in sorted(filenames):
            if name in deny:
                continue
            yield Path(dirpath, name)
