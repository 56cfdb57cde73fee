"""The git command line, as the sandbox uses it.

Every call runs without hooks, signing or automatic gc (a sandbox commit must not run
the user's hooks or pause for a gc), with a fixed identity for the commits the sandbox
makes. ``Git`` binds a work tree and, for directory copies, a private git dir.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cleveragents.errors import CleverAgentsError, DependencyMissingError

IDENTITY: Final = {
    "GIT_AUTHOR_NAME": "CleverAgents",
    "GIT_AUTHOR_EMAIL": "sandbox@cleveragents.invalid",
    "GIT_COMMITTER_NAME": "CleverAgents",
    "GIT_COMMITTER_EMAIL": "sandbox@cleveragents.invalid",
}
# How long a command waits for another git's lock file (index.lock, a ref's .lock) to go.
LOCK_WAIT: Final = 10.0
SETTINGS: Final = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "commit.gpgsign=false",
    "-c", "gc.auto=0",
    "-c", "core.quotePath=false",
    "-c", "advice.detachedHead=false",
)  # fmt: skip


class GitError(CleverAgentsError):
    """A git command the sandbox ran failed."""

    code = 500
    category = "SANDBOX_GIT_FAILED"


@dataclass(frozen=True)
class Git:
    """git bound to a work tree; ``git_dir`` set for a private repository (directory copies)."""

    work_tree: Path
    git_dir: Path | None = None
    config: tuple[str, ...] = ()  # extra `-c key=value` settings

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**os.environ, **IDENTITY}
        for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            env.pop(key, None)
        if self.git_dir is not None:
            env["GIT_DIR"] = str(self.git_dir)
            env["GIT_WORK_TREE"] = str(self.work_tree)
        return {**env, **(extra or {})}

    def run(
        self,
        *args: str,
        check: bool = True,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        ok_codes: tuple[int, ...] = (0,),
    ) -> subprocess.CompletedProcess[bytes]:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                done = subprocess.run(
                    ["git", *SETTINGS, *(item for key in self.config for item in ("-c", key)), *args],
                    cwd=self.work_tree,
                    input=input,
                    capture_output=True,
                    env=self.env(env),
                    check=False,
                )
            except FileNotFoundError:
                raise DependencyMissingError("git is not installed; sandboxes need it") from None
            # Another git holds the index (one left running by a killed parent finishes on
            # its own): a command refused for that did nothing, so it is run again.
            if done.returncode == 0 or b".lock': File exists" not in done.stderr or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if check and done.returncode not in ok_codes:
            message = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
            raise GitError(f"git {args[0]} failed in {self.work_tree}: {message}")
        return done

    def out(self, *args: str, env: dict[str, str] | None = None) -> str:
        return self.run(*args, env=env).stdout.decode(errors="surrogateescape").strip()

    def rev(self, ref: str) -> str:
        return self.out("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def z_split(data: bytes) -> list[str]:
    """Fields of ``-z`` output."""
    return [item.decode(errors="surrogateescape") for item in data.split(b"\0") if item]
