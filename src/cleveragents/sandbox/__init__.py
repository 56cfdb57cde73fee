"""Per-plan sandboxes of resources: lazy creation, checkpoints, rollback, diff and an
all-or-nothing apply by three-way merge (a git worktree on its own branch for a
``git-checkout``, a copy with a private repository for an ``fs-directory``)."""

from .core import (
    ApplyResult,
    Checkpoint,
    FileChange,
    Sandbox,
    SandboxResource,
    conflict_error,
    sandboxes_root,
)
from .journal import recover
from .paths import DENY_LIST, confine
from .process import ProcessResult, run_process

__all__ = [
    "DENY_LIST",
    "ApplyResult",
    "Checkpoint",
    "FileChange",
    "ProcessResult",
    "Sandbox",
    "SandboxResource",
    "confine",
    "conflict_error",
    "recover",
    "run_process",
    "sandboxes_root",
]
