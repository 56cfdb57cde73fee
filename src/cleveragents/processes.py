"""Child processes that can always be stopped: by a time limit, by Ctrl+C, by SIGTERM,
and by the death of their parent.

Oxigraph runs a query in native code, where Python sees no signal until it returns, so
a query (or an update's WHERE) that must obey a time limit or Ctrl+C runs in a forked
child that the parent kills. The parent waits in short slices, so SIGINT and SIGTERM are
seen within a fraction of a second, and the child asks the kernel to kill it when the
parent dies, so nothing outlives a ``kill -9`` of the parent.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class ChildTimedOut(Exception):
    """The child ran past its time limit and was killed."""


class ChildDied(Exception):
    """The child ended without answering (``exitcode`` says how)."""

    def __init__(self, exitcode: int | None) -> None:
        super().__init__(f"exit code {exitcode}")
        self.exitcode = exitcode


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent exits (no-op elsewhere)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's kill on exit still applies
        return
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def terminate_as_interrupt() -> None:
    """Make SIGTERM raise KeyboardInterrupt in the main thread, so a terminated command
    unwinds (kills its children, closes the store, exits 130) as Ctrl+C does."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def run_in_child(
    target: Callable[..., bytes],
    args: tuple[Any, ...],
    timeout: float | None,
    *,
    slice_seconds: float = 0.05,
) -> bytes:
    """``target(*args)`` in a forked child; its bytes back. ``timeout`` None or <= 0 is
    no limit. Raises ChildTimedOut, ChildDied, or KeyboardInterrupt (Ctrl+C, SIGTERM),
    having killed the child in every case."""
    ctx = mp.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_serve, args=(sender, target, args), daemon=True)
    # Ctrl+C is held while forking: arriving inside an at-fork hook (logging registers
    # one), its KeyboardInterrupt would be printed and dropped, and the wait would go on
    # forever. Unblocked inside the try, a held signal is raised there and the child dies.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    deadline = time.monotonic() + timeout if timeout and timeout > 0 else None
    try:
        proc.start()
        sender.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        while True:
            wait = slice_seconds if deadline is None else min(slice_seconds, max(0.0, deadline - time.monotonic()))
            if receiver.poll(wait):
                try:
                    return receiver.recv_bytes()
                except EOFError:
                    proc.join()
                    raise ChildDied(proc.exitcode) from None
            if deadline is not None and time.monotonic() >= deadline:
                raise ChildTimedOut
            if not proc.is_alive() and not receiver.poll(0):
                raise ChildDied(proc.exitcode)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if proc.is_alive():
            proc.kill()
        if proc.pid is not None:
            proc.join()
        receiver.close()
        sender.close()


def _serve(conn: Connection, target: Callable[..., bytes], args: tuple[Any, ...]) -> None:
    die_with_parent()
    # Ctrl+C reaches the whole process group; the parent decides, the child just stops.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # held by the parent's fork
    try:
        conn.send_bytes(target(*args))
    finally:
        conn.close()
