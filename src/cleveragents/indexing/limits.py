"""Per-file limits on analysis: a file that takes too long or too much memory is cut off
with a coded reason, and the rest of the run goes on.

Hard limits need a process that can be stopped, so ``run_guarded`` analyzes in worker
processes that take one file at a time: the parent kills a worker whose file passes its
time limit (and starts another), and each worker's address space is capped at its size
after start-up plus the memory limit, so an allocation past it fails in that worker
(MemoryError, or the worker's death if it happens in native code). ``time_limit`` is the
in-process fallback for small runs, where starting workers would cost more than the
analysis: an interrupt between Python bytecodes, so a long call into native code ends
before it is noticed.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

TIME_LIMIT = "ANALYSIS_TIME_LIMIT"
MEMORY_LIMIT = "ANALYSIS_MEMORY_LIMIT"
CRASHED = "ANALYSIS_CRASHED"
# A worker loading the analyzers is not analyzing yet: its start-up gets its own limit.
_STARTUP_SECONDS = 300.0


@dataclass(frozen=True)
class FileLimits:
    """Config keys index.file_time_limit (seconds) and index.file_memory_limit (MB); 0 is
    no limit."""

    seconds: float = 120.0
    memory_mb: int = 2048

    def time_reason(self) -> str:
        return f"[{TIME_LIMIT}] analysis took longer than {self.seconds:g} s (config index.file_time_limit)"

    def memory_reason(self) -> str:
        return f"[{MEMORY_LIMIT}] analysis needed more than {self.memory_mb} MB (config index.file_memory_limit)"


DEFAULT_LIMITS = FileLimits()
OUT_OF_MEMORY = f"[{MEMORY_LIMIT}] analysis ran out of memory"


def crash_reason(exitcode: int | None) -> str:
    how = f"signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit code {exitcode}"
    return f"[{CRASHED}] the analysis process died ({how}), likely past the memory limit"


class LimitExceeded(BaseException):
    """Raised into an in-process analysis at its time limit. A BaseException, so an
    analyzer's ``except Exception`` does not swallow it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@contextmanager
def time_limit(limits: FileLimits) -> Iterator[None]:
    """Raise LimitExceeded in this thread after ``limits.seconds`` (main thread only:
    signals are delivered there; elsewhere this does nothing)."""
    if limits.seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise LimitExceeded(limits.time_reason())

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limits.seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- worker processes --------------------------------------------------------------------

_READY = "ready"
_OUT_OF_MEMORY = "out-of-memory"


def _cap_memory(memory_mb: int) -> None:
    """Cap this process's address space at its current size plus ``memory_mb``."""
    if memory_mb <= 0:
        return
    with open("/proc/self/statm") as handle:
        current = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = current + memory_mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    # Native code (tree-sitter) may crash rather than fail an allocation: no core file.
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))


def _serve(
    conn: Connection,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    work: Callable[[Any], Any],
    memory_mb: int,
) -> None:
    initializer(*initargs)
    _cap_memory(memory_mb)
    conn.send(_READY)
    while True:
        try:
            job = conn.recv()
            result: Any = work(job)
        except EOFError:
            return
        except MemoryError:
            result = _OUT_OF_MEMORY
        conn.send(result)
        if result == _OUT_OF_MEMORY:
            return  # a fresh worker takes the next file: this one may be left fragmented


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Any  # the parent's end of a Pipe (a Connection)
    job: int | None = None
    deadline: float = 0.0
    ready: bool = False


def run_guarded(
    jobs: Sequence[Any],
    *,
    workers: int,
    limits: FileLimits,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    work: Callable[[Any], Any],
    cut_off: Callable[[Any, str], Any],
    progress: Callable[[int], None] | None = None,
) -> list[Any]:
    """``work(job)`` for every job in worker processes, in job order; a job past a limit
    gets ``cut_off(job, reason)`` (computed here) instead. ``initializer`` and ``work``
    must be importable module-level functions (workers come from a fork server)."""
    # A fork server, not a fork of this process: a fork of a process that has Oxigraph
    # (RocksDB) open copies its locks and thread pools without their threads, and a child
    # that touches them (its GC running a destructor) aborts.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["cleveragents.die_with_parent"])  # the forkserver dies with us
    results: list[Any] = [None] * len(jobs)
    queue = deque(range(len(jobs)))
    pool: list[_Worker] = []

    def start() -> _Worker:
        parent, child = context.Pipe()
        args = (child, initializer, initargs, work, limits.memory_mb)
        process = context.Process(target=_serve, args=args, daemon=True)
        process.start()
        child.close()
        worker = _Worker(process, parent, deadline=time.monotonic() + _STARTUP_SECONDS)
        pool.append(worker)
        return worker

    def retire(worker: _Worker) -> None:
        pool.remove(worker)
        worker.conn.close()
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join()

    def finish(worker: _Worker, result: Any) -> None:
        assert worker.job is not None
        results[worker.job] = result
        worker.job = None
        if progress:
            progress(len(jobs) - len(queue) - sum(1 for w in pool if w.job is not None))

    try:
        for _ in range(max(1, min(workers, len(jobs)))):
            start()
        while queue or any(w.job is not None for w in pool):
            for worker in pool:
                if worker.ready and worker.job is None and queue:
                    worker.job = queue.popleft()
                    worker.deadline = time.monotonic() + (limits.seconds if limits.seconds > 0 else float("inf"))
                    worker.conn.send(jobs[worker.job])
            soonest = min(w.deadline for w in pool)
            timeout = None if soonest == float("inf") else max(0.0, soonest - time.monotonic())
            wait([w.conn for w in pool] + [w.process.sentinel for w in pool], timeout)
            for worker in list(pool):
                message: Any = None
                if worker.conn.poll():
                    try:
                        message = worker.conn.recv()
                    except EOFError:
                        message = None
                if message == _READY:
                    worker.ready = True
                    continue
                if message is not None and message != _OUT_OF_MEMORY:
                    finish(worker, message)
                    continue
                if message == _OUT_OF_MEMORY:
                    reason = limits.memory_reason()
                elif not worker.process.is_alive():
                    worker.process.join()
                    reason = crash_reason(worker.process.exitcode)
                elif time.monotonic() >= worker.deadline:
                    reason = limits.time_reason()
                else:
                    continue
                if worker.job is None:  # died or stalled while starting: nothing to blame on a file
                    raise RuntimeError(f"an analysis worker failed to start ({reason})")
                finish(worker, cut_off(jobs[worker.job], reason))
                retire(worker)
                if queue:
                    start()
    finally:
        for worker in list(pool):
            worker.conn.close()
            worker.process.kill()
            worker.process.join()
    return results
