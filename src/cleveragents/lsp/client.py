"""One connection to one language server process, on pygls's ``LanguageClient``.

What pygls leaves to its user, and this class does:

- drains the server's stderr (a server blocked on a full stderr pipe never exits, and
  ``stop()`` then hangs), keeping the last lines for error reports;
- answers the requests servers send to clients (``workspace/configuration``,
  ``client/registerCapability``, progress creation), which some servers wait on;
- keeps the open documents, so a restarted server gets them back;
- bounds every request by a timeout and cancels it on the server when it expires; a
  request queued behind others the server is answering is busy, not stuck (see
  ``request``);
- stops with ``shutdown``/``exit``, then terminate, then kill: no process outlives it.

Everything here runs on the runtime's event loop (see ``runtime.py``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from cleveragents import __version__

# pygls reports the late answer to a request that timed out, and other protocol chatter,
# as log warnings; with no handler Python prints them on the user's terminal. What
# matters reaches the caller as LSPTimeout or ServerGone.
logging.getLogger("pygls").addHandler(logging.NullHandler())

START_TIMEOUT = 30.0
STOP_TIMEOUT = 3.0
# A request unanswered for its timeout while the server kept computing (a big workspace's
# analysis on a slow machine) gets another timeout's worth, this many times at most.
BUSY_WINDOWS = 10
BUSY_SHARE = 0.1  # of one core over the window: less is waiting, not working
_ACKNOWLEDGED = (
    lsp.WINDOW_LOG_MESSAGE,
    lsp.WINDOW_SHOW_MESSAGE,
    lsp.PROGRESS,
    lsp.TELEMETRY_EVENT,
    "pyright/beginProgress",
    "pyright/reportProgress",
    "pyright/endProgress",
    "$/typescriptVersion",
    # Requests that only ask the client to re-pull; left unanswered, basedpyright exits.
    lsp.WORKSPACE_DIAGNOSTIC_REFRESH,
    lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
    lsp.WORKSPACE_INLAY_HINT_REFRESH,
    lsp.WORKSPACE_CODE_LENS_REFRESH,
    lsp.WORKSPACE_INLINE_VALUE_REFRESH,
)


class LSPError(Exception):
    """A request failed: the server answered with an error, timed out, or is gone."""


class LSPTimeout(LSPError):
    pass


class ServerGone(LSPError):
    """The server process exited (crashed) or could not be started."""


@dataclass(frozen=True)
class ServerLaunch:
    """How to start and talk to one server: what the runtime needs of a registry entry."""

    name: str
    command: tuple[str, ...]
    transport: str = "stdio"  # or "tcp": start ``command`` (if any), then connect
    host: str = "127.0.0.1"
    port: int | None = None
    initialization_options: dict[str, Any] | None = None
    workspace_settings: dict[str, Any] | None = None
    request_timeout: float = 10.0
    start_timeout: float = START_TIMEOUT


@dataclass
class OpenDocument:
    language_id: str
    version: int
    text: str


@dataclass
class _Diagnostics:
    items: dict[str, list[lsp.Diagnostic]] = field(default_factory=dict)
    arrived: dict[str, asyncio.Event] = field(default_factory=dict)

    def event(self, uri: str) -> asyncio.Event:
        return self.arrived.setdefault(uri, asyncio.Event())


class ServerConnection:
    """A started, initialized server for one workspace root."""

    def __init__(self, launch: ServerLaunch, root: Path) -> None:
        self.launch = launch
        self.root = root
        self.documents: dict[str, OpenDocument] = {}
        self.capabilities: lsp.ServerCapabilities | None = None
        self.server_info: lsp.ServerInfo | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self.diagnostics = _Diagnostics()
        self.registered: set[str] = set()  # methods the server registered dynamically
        self._client: LanguageClient | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[None] | None = None
        self.last_answer = 0.0  # time.monotonic() of the server's latest response
        self._cpu_sample: tuple[float, float | None] = (float("-inf"), None)  # (when, cpu_seconds)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def alive(self) -> bool:
        if self._client is None or self._client.stopped:
            return False
        return self._process is None or self._process.returncode is None

    def exit_reason(self) -> str:
        code = self._process.returncode if self._process is not None else None
        tail = " | ".join(line for line in list(self.stderr_tail)[-3:] if line)
        reason = f"exited with code {code}" if code is not None else "stopped answering"
        return f"{reason}{': ' + tail if tail else ''}"

    async def start(self) -> None:
        client = LanguageClient("cleveragents", __version__)
        self._client = client
        self._register_handlers(client)
        self._note_answers(client)
        client.server_exit = self._on_exit  # type: ignore[method-assign]  # pygls's documented hook
        try:
            await asyncio.wait_for(self._connect(client), self.launch.start_timeout)
            params = self._initialize_params()
            reply = await asyncio.wait_for(client.initialize_async(params), self.launch.start_timeout)
        except Exception as exc:
            reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else str(exc) or type(exc).__name__
            await self.stop()
            raise ServerGone(f"could not start: {reason}{self._tail()}") from exc
        self.capabilities = reply.capabilities
        self.server_info = reply.server_info
        self.last_answer = 0.0  # the initialize reply is no answer to a request of ours
        client.initialized(lsp.InitializedParams())
        if self.launch.workspace_settings:
            client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=self.launch.workspace_settings)
            )
        for uri, doc in self.documents.items():  # after a restart: the server gets them back
            self._send_open(uri, doc)

    async def _connect(self, client: LanguageClient) -> None:
        if self.launch.transport == "tcp":
            if self.launch.command:
                self._process = await self._spawn(stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL)
            await self._connect_tcp(client)
            return
        command, *args = self.launch.command
        await client.start_io(command, *args, cwd=str(self.root), start_new_session=True)
        self._process = client._server  # pygls keeps the process there and has no accessor
        self._start_drain()

    async def _spawn(self, **pipes: Any) -> asyncio.subprocess.Process:
        command, *args = self.launch.command
        process = await asyncio.create_subprocess_exec(
            command, *args, cwd=str(self.root), stderr=asyncio.subprocess.PIPE, start_new_session=True, **pipes
        )
        self._process = process
        self._start_drain()
        return process

    async def _connect_tcp(self, client: LanguageClient) -> None:
        assert self.launch.port is not None
        last: OSError | None = None
        for _ in range(100):  # the server may need a moment to listen
            try:
                await client.start_tcp(self.launch.host, self.launch.port)
                return
            except OSError as exc:
                last = exc
                if self._process is not None and self._process.returncode is not None:
                    break
                await asyncio.sleep(0.1)
        raise ServerGone(f"cannot connect to {self.launch.host}:{self.launch.port}: {last}")

    def _start_drain(self) -> None:
        process = self._process
        if process is None or process.stderr is None:
            return

        async def drain(stream: asyncio.StreamReader) -> None:
            while line := await stream.readline():
                self.stderr_tail.append(line.decode("utf-8", errors="replace").rstrip())

        self._drain = asyncio.ensure_future(drain(process.stderr))

    def _initialize_params(self) -> lsp.InitializeParams:
        uri = self.root.as_uri()
        capabilities = lsp.ClientCapabilities(
            general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
            text_document=lsp.TextDocumentClientCapabilities(
                synchronization=lsp.TextDocumentSyncClientCapabilities(),
                hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown]),
                definition=lsp.DefinitionClientCapabilities(link_support=False),
                references=lsp.ReferenceClientCapabilities(),
                implementation=lsp.ImplementationClientCapabilities(link_support=False),
                document_symbol=lsp.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(),
                diagnostic=lsp.DiagnosticClientCapabilities(dynamic_registration=True),
                rename=lsp.RenameClientCapabilities(prepare_support=False),
                signature_help=lsp.SignatureHelpClientCapabilities(),
                completion=lsp.CompletionClientCapabilities(),
            ),
            workspace=lsp.WorkspaceClientCapabilities(
                configuration=True,
                workspace_folders=True,
                did_change_configuration=lsp.DidChangeConfigurationClientCapabilities(dynamic_registration=True),
            ),
        )
        return lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            root_path=str(self.root),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=self.root.name or "root")],
            initialization_options=self.launch.initialization_options,
            capabilities=capabilities,
        )

    def _note_answers(self, client: LanguageClient) -> None:
        """Record when the server last answered a request (see ``request``)."""
        protocol = client.protocol
        handle = protocol.handle_message

        def handle_message(message: Any) -> None:
            if getattr(message, "method", None) is None:  # a response, not a request or notification
                self.last_answer = time.monotonic()
            handle(message)

        protocol.handle_message = handle_message  # type: ignore[method-assign]

    def _register_handlers(self, client: LanguageClient) -> None:
        diagnostics = self.diagnostics
        settings = self.launch.workspace_settings or {}

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: lsp.PublishDiagnosticsParams) -> None:
            diagnostics.items[params.uri] = list(params.diagnostics)
            diagnostics.event(params.uri).set()

        @client.feature(lsp.WORKSPACE_CONFIGURATION)
        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            out: list[Any] = []
            for item in params.items:
                value: Any = settings
                for part in (item.section or "").split("."):
                    value = value.get(part) if part and isinstance(value, dict) else value
                out.append(value)
            return out

        registered = self.registered

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register(params: lsp.RegistrationParams) -> None:
            registered.update(r.method for r in params.registrations)

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress(params: lsp.WorkDoneProgressCreateParams) -> None:
            return None

        def ignore(params: Any) -> None:
            return None

        # Messages servers send whether asked or not; pygls warns about (or refuses) unhandled ones.
        for method in _ACKNOWLEDGED:
            client.feature(method)(ignore)

    async def stop(self) -> None:
        """``shutdown`` and ``exit`` if the server still answers, then make sure it is gone."""
        client, process = self._client, self._process
        if client is not None and self.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), STOP_TIMEOUT)
                client.exit(None)
        if process is not None:
            await _reap(process)
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.stop(), STOP_TIMEOUT)
        if self._drain is not None:
            self._drain.cancel()
        self._client = None

    async def _on_exit(self, process: asyncio.subprocess.Process) -> None:
        """The launched process died: whatever it started in its group goes with it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def kill_now(self) -> None:
        """From any thread at interpreter exit: the process group goes, no questions asked."""
        process = self._process
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    # -- documents -------------------------------------------------------------------------

    def open(self, path: Path, language_id: str, text: str) -> str:
        uri = path.as_uri()
        known = self.documents.get(uri)
        if known is not None:
            if known.text != text:
                self.change(path, text)
            return uri
        doc = OpenDocument(language_id, 1, text)
        self.documents[uri] = doc
        self.diagnostics.event(uri).clear()
        self._send_open(uri, doc)
        return uri

    def change(self, path: Path, text: str) -> None:
        uri = path.as_uri()
        doc = self.documents[uri]
        doc.version += 1
        doc.text = text
        self.diagnostics.event(uri).clear()
        self._require().text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self, path: Path) -> None:
        uri = path.as_uri()
        if self.documents.pop(uri, None) is not None and self.alive:
            self._require().text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )

    def _send_open(self, uri: str, doc: OpenDocument) -> None:
        self._require().text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri, language_id=doc.language_id, version=doc.version, text=doc.text
                )
            )
        )

    # -- requests --------------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        client = self._require()
        msg_id = str(uuid.uuid4())
        limit = timeout or self.launch.request_timeout
        if not self.last_answer:  # the first answers wait for the server's analysis of the workspace
            limit = max(limit, self.launch.start_timeout)
        future = client.protocol.send_request_async(method, params, msg_id=msg_id)
        sent = time.monotonic()
        cpu = self._recent_cpu_seconds()
        extra_windows = 0
        try:
            while True:
                # A server answers a pipeline one request at a time: one waiting its turn
                # while answers keep coming is busy, not stuck. The limit runs from the
                # later of its own send and the server's latest answer.
                left = max(sent, self.last_answer) + limit - time.monotonic()
                if left <= 0:
                    # Silent for the whole limit: stuck, unless it was computing all along.
                    now = self.cpu_seconds()
                    if extra_windows >= BUSY_WINDOWS or now is None or cpu is None or now - cpu < limit * BUSY_SHARE:
                        raise TimeoutError
                    extra_windows, cpu, sent = extra_windows + 1, now, time.monotonic()
                    continue
                with contextlib.suppress(TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(future), left)
        except TimeoutError as exc:
            self._cancel(msg_id)
            raise LSPTimeout(f"{method} timed out: no answer from the server for {limit:g} s") from exc
        except RuntimeError as exc:  # pygls fails pending requests this way when the server exits
            raise ServerGone(self.exit_reason()) from exc
        except Exception as exc:
            if not self.alive:
                raise ServerGone(self.exit_reason()) from exc
            raise LSPError(f"{method}: {exc}") from exc

    def cpu_seconds(self) -> float | None:
        """CPU time the server's process group has used (it runs in its own session, so the
        launcher and what it starts share the launcher's group), from Linux's /proc; None
        where that can't be read (another OS, a server reached over TCP)."""
        process = self._process
        if process is None or not os.path.isdir("/proc"):
            return None
        ticks = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[-1].split()
            except OSError:  # exited meanwhile
                continue
            if len(fields) > 12 and int(fields[2]) == process.pid:  # pgrp; then utime, stime
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def _recent_cpu_seconds(self) -> float | None:
        """``cpu_seconds`` read at most once a second: every request takes it as its baseline,
        and a pipeline sends thousands (an older baseline only makes the server look busier)."""
        if time.monotonic() - self._cpu_sample[0] > 1.0:
            self._cpu_sample = (time.monotonic(), self.cpu_seconds())
        return self._cpu_sample[1]

    def _cancel(self, msg_id: str) -> None:
        """Forget the request (a late answer is then dropped) and ask the server to stop it."""
        if self._client is None:
            return
        protocol = self._client.protocol
        protocol._request_futures.pop(msg_id, None)  # pygls has no public way to forget a request
        with contextlib.suppress(Exception):
            protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))

    async def wait_diagnostics(self, uri: str, timeout: float) -> list[lsp.Diagnostic] | None:
        """The diagnostics the server published for ``uri`` since it was opened or changed;
        None when it published nothing within ``timeout`` (servers publish when they like)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.diagnostics.event(uri).wait(), timeout)
        return self.diagnostics.items.get(uri) if self.diagnostics.event(uri).is_set() else None

    def _require(self) -> LanguageClient:
        if self._client is None or not self.alive:
            raise ServerGone(self.exit_reason())
        return self._client

    def _tail(self) -> str:
        lines = [line for line in self.stderr_tail if line]
        return f" (stderr: {' | '.join(lines[-3:])})" if lines else ""


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Wait for the process to exit; terminate, then kill its process group if it won't.
    The group goes too: a launcher script (basedpyright's runs Node.js as its child) may
    have died and left the real server running."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if process.returncode is not None:
            break
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
