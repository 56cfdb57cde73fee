"""The LSP Runtime: shared, reference-counted server instances, driven from sync code.

One event loop runs in a daemon thread; callers (the indexer, tools, the CLI) use
``ServerHandle``'s blocking methods, which submit coroutines to it. One instance serves
each (server, workspace root) pair, however many users acquire it; it stops when the last
one releases it, or at interpreter exit, so no server process outlives the CLI (Ctrl+C
included: the processes run in their own session and are killed by process group).

Failure policy (the indexer must go on without a server): a crash restarts the server
and re-opens its documents, up to ``MAX_RESTARTS`` times; consecutive timeouts count as
a hang and restart it too. After that the handle is *failed*: every call raises
``ServerGone`` at once, with the reason, and the caller falls back.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp

from .client import LSPError, LSPTimeout, ServerConnection, ServerGone, ServerLaunch

MAX_RESTARTS = 2
HANG_AFTER_TIMEOUTS = 3  # consecutive timeouts that mean the server is stuck, not slow
PIPELINE_DEPTH = 64  # requests in flight per server: enough to hide the round trip

T = TypeVar("T")
_RUNTIMES: weakref.WeakSet[LSPRuntime] = weakref.WeakSet()


class ServerHandle:
    """A user's reference to a shared server instance. Blocking methods; thread-safe."""

    def __init__(self, runtime: LSPRuntime, key: tuple[str, str], launch: ServerLaunch, root: Path) -> None:
        self.runtime = runtime
        self.key = key
        self.launch = launch
        self.root = root
        self.refs = 0
        self.restarts = 0
        self.failure: str | None = None
        self.connection = ServerConnection(launch, root)
        self._timeouts = 0
        self._lock: asyncio.Lock | None = None

    @property
    def name(self) -> str:
        return self.launch.name

    @property
    def capabilities(self) -> lsp.ServerCapabilities | None:
        return self.connection.capabilities

    @property
    def pid(self) -> int | None:
        return self.connection.pid

    # -- blocking API ------------------------------------------------------------------------

    def open(self, path: Path, language_id: str, text: str) -> str:
        return self.runtime.call(self._documents(lambda c: c.open(path, language_id, text)))

    def close_document(self, path: Path) -> None:
        self.runtime.call(self._documents(lambda c: c.close(path)))

    def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        return self.runtime.call(self._request(method, params, timeout))

    def requests(self, method: str, params: Sequence[Any]) -> list[Any | LSPError]:
        """Many requests of one method, pipelined; each answer or the error it got, in order.
        Raises ``ServerGone`` only if the server is lost for good."""
        return self.runtime.call(self._pipelined(method, params))

    def diagnostics(self, path: Path, timeout: float = 5.0) -> list[lsp.Diagnostic] | None:
        return self.runtime.call(self._diagnostics(path.as_uri(), timeout))

    def diagnostics_many(self, paths: Iterable[Path], timeout: float = 10.0) -> dict[Path, list[lsp.Diagnostic]]:
        """Diagnostics of the open ``paths``: asked for (LSP 3.17 pull) when the server can
        answer, else those it published within ``timeout``."""
        paths = list(paths)
        capabilities = self.capabilities
        pulls = lsp.TEXT_DOCUMENT_DIAGNOSTIC in self.connection.registered
        if pulls or (capabilities is not None and capabilities.diagnostic_provider):
            params = [lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(p.as_uri())) for p in paths]
            reports = self.requests(lsp.TEXT_DOCUMENT_DIAGNOSTIC, params)
            # A full report has items; an "unchanged" report or an LSPError in its place has none.
            found = {p: getattr(r, "items", None) for p, r in zip(paths, reports, strict=True)}
            return {p: list(items) for p, items in found.items() if items is not None}
        found = self.runtime.call(self._diagnostics_many([p.as_uri() for p in paths], timeout))
        return {p: d for p, d in zip(paths, found, strict=True) if d is not None}

    def release(self) -> None:
        self.runtime.release(self)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # -- on the loop -------------------------------------------------------------------------

    async def start(self) -> None:
        self._lock = asyncio.Lock()
        await self.connection.start()

    async def _documents(self, change: Callable[[ServerConnection], T]) -> T:
        await self._ensure_alive()
        return change(self.connection)

    async def _request(self, method: str, params: Any, timeout: float | None) -> Any:
        for attempt in range(MAX_RESTARTS + 1):
            await self._ensure_alive()
            try:
                result = await self.connection.request(method, params, timeout)
            except LSPTimeout:
                await self._note_timeout()
                raise
            except ServerGone:
                if attempt == MAX_RESTARTS:
                    raise
                continue  # _ensure_alive restarts it and re-opens the documents
            self._timeouts = 0
            return result
        raise ServerGone(self.failure or "unavailable")

    async def _pipelined(self, method: str, params: Sequence[Any]) -> list[Any | LSPError]:
        window = asyncio.Semaphore(PIPELINE_DEPTH)

        async def one(item: Any) -> Any | LSPError:
            async with window:
                try:
                    return await self._request(method, item, None)
                except ServerGone:
                    raise
                except LSPError as exc:
                    return exc

        return list(await asyncio.gather(*(one(p) for p in params)))

    async def _diagnostics(self, uri: str, timeout: float) -> list[lsp.Diagnostic] | None:
        await self._ensure_alive()
        return await self.connection.wait_diagnostics(uri, timeout)

    async def _diagnostics_many(self, uris: list[str], timeout: float) -> list[list[lsp.Diagnostic] | None]:
        await self._ensure_alive()
        return list(await asyncio.gather(*(self.connection.wait_diagnostics(u, timeout) for u in uris)))

    async def _ensure_alive(self) -> None:
        if self.failure is not None:
            raise ServerGone(self.failure)
        if self.connection.alive:
            return
        assert self._lock is not None
        async with self._lock:
            if self.connection.alive or self.failure is not None:
                if self.failure is not None:
                    raise ServerGone(self.failure)
                return
            reason = self.connection.exit_reason()
            if self.restarts >= MAX_RESTARTS:
                self.failure = f"{reason}; gave up after {self.restarts} restarts"
                await self.connection.stop()
                raise ServerGone(self.failure)
            self.restarts += 1
            documents = self.connection.documents
            await self.connection.stop()
            self.connection = ServerConnection(self.launch, self.root)
            self.connection.documents = documents
            try:
                await self.connection.start()
            except ServerGone as exc:
                self.failure = f"{reason}; restart failed: {exc}"
                raise ServerGone(self.failure) from exc

    async def _note_timeout(self) -> None:
        self._timeouts += 1
        if self._timeouts >= HANG_AFTER_TIMEOUTS:
            self._timeouts = 0
            await self.connection.stop()  # treated as a crash: the next call restarts it


class LSPRuntime:
    """Owns the event loop thread and the shared server instances."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="lsp-runtime", daemon=True)
        self._thread.start()
        self._handles: dict[tuple[str, str], ServerHandle] = {}
        self._guard = threading.Lock()
        self._closed = False
        _RUNTIMES.add(self)

    def call(self, coroutine: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
        if self._closed:
            raise ServerGone("the LSP runtime is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()  # type: ignore[arg-type]

    def acquire(self, launch: ServerLaunch, root: Path) -> ServerHandle:
        """The running instance of ``launch`` for ``root``, started if needed.
        Raises ``ServerGone`` with the reason when it cannot start."""
        root = root.resolve()
        key = (launch.name, str(root))
        with self._guard:
            handle = self._handles.get(key)
            if handle is None or handle.failure is not None:
                handle = ServerHandle(self, key, launch, root)
                try:
                    self.call(handle.start())
                except ServerGone:
                    self.call(handle.connection.stop())
                    raise
                self._handles[key] = handle
            handle.refs += 1
            return handle

    def release(self, handle: ServerHandle) -> None:
        with self._guard:
            handle.refs -= 1
            if handle.refs > 0 or self._handles.get(handle.key) is not handle:
                return
            del self._handles[handle.key]
        if not self._closed:
            self.call(handle.connection.stop())

    def running(self) -> list[ServerHandle]:
        with self._guard:
            return list(self._handles.values())

    def close(self) -> None:
        """Stop every server (politely, then by force) and the loop."""
        if self._closed:
            return
        with self._guard:
            handles = list(self._handles.values())
            self._handles.clear()
        try:
            future = asyncio.run_coroutine_threadsafe(_stop_all(handles), self._loop)
            future.result(timeout=15)
        except BaseException:  # interrupted or stuck: the kill below still runs
            pass
        finally:
            for handle in handles:
                handle.connection.kill_now()
            self._closed = True
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def kill_all(self) -> None:
        for handle in self.running():
            handle.connection.kill_now()


@atexit.register
def _kill_leftovers() -> None:
    """Whatever path the interpreter exits by, no server process is left behind."""
    for runtime in list(_RUNTIMES):
        runtime.kill_all()


_shared: LSPRuntime | None = None
_shared_guard = threading.Lock()


def shared_runtime() -> LSPRuntime:
    """The process-wide runtime (one per CLI invocation or service process)."""
    global _shared
    with _shared_guard:
        if _shared is None or _shared._closed:
            _shared = LSPRuntime()
        return _shared


def close_shared_runtime() -> None:
    global _shared
    with _shared_guard:
        runtime, _shared = _shared, None
    if runtime is not None:
        runtime.close()


async def _stop_all(handles: Sequence[ServerHandle]) -> None:
    """Stop every server at once; a server that fails to stop is left to the kill."""
    await asyncio.gather(*(h.connection.stop() for h in handles), return_exceptions=True)
