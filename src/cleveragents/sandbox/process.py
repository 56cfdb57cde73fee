"""Running a command inside a sandbox: its own process group, a timeout, bounded output.

The command runs through ``/bin/sh -c`` in the sandbox directory, in a new session (so a
timeout or Ctrl+C kills the command and everything it started, never the caller). Output
beyond ``max_output`` bytes per stream keeps its head and tail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

MAX_OUTPUT: Final = 64 * 1024
# After the timeout the group gets SIGTERM, then SIGKILL if it is still there this much later.
KILL_GRACE: Final = 2.0


@dataclass(frozen=True)
class ProcessResult:
    command: str
    exit_code: int | None  # None when it was killed on timeout
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def as_dict(self) -> dict[str, object]:
        return {**self.__dict__, "ok": self.ok}


def run_process(
    command: str,
    cwd: Path,
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    max_output: int = MAX_OUTPUT,
) -> ProcessResult:
    """Run ``command`` in ``cwd``; kill its whole process group when ``timeout`` passes."""
    started = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    except BaseException:  # Ctrl+C or any failure: the command does not outlive us
        _kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    # Children that ignored the group's end or were left in the background go too.
    _kill_group(proc.pid, signal.SIGKILL)
    return ProcessResult(
        command=command,
        exit_code=None if timed_out else proc.returncode,
        stdout=_clip(out, max_output),
        stderr=_clip(err, max_output),
        timed_out=timed_out,
        duration_s=round(time.monotonic() - started, 3),
    )


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _clip(data: bytes, limit: int) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    half = limit // 2
    head = data[:half].decode("utf-8", errors="replace")
    tail = data[-half:].decode("utf-8", errors="replace")
    return f"{head}\n... [{len(data) - limit} bytes cut] ...\n{tail}"
