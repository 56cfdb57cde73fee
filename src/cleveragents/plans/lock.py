"""One process at a time per plan: an advisory lock file under the data dir. The second
process gets an error naming the first (its pid, command and start time)."""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from cleveragents.errors import ConflictError


def lock_path(data_dir: Path, plan_id: str) -> Path:
    return data_dir / "plans" / f"{plan_id}.lock"


@contextmanager
def plan_lock(data_dir: Path, plan_id: str) -> Iterator[None]:
    path = lock_path(data_dir, plan_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = path.read_text().strip() or "another process"
            raise ConflictError(
                f"plan {plan_id} is being run by another process: {holder}; wait for it or stop it",
                data={"holder": holder},
            ) from None
        os.ftruncate(fd, 0)
        command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
        since = datetime.now(UTC).isoformat(timespec="seconds")
        os.write(fd, f"pid {os.getpid()} ({command}) since {since}".encode())
        yield
    finally:
        os.close(fd)


def is_locked(data_dir: Path, plan_id: str) -> bool:
    """Whether a live process holds the plan (a 'processing' plan nobody holds was interrupted)."""
    path = lock_path(data_dir, plan_id)
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
