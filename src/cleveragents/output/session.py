"""OutputSession: the live output document of one command invocation.

Producers create typed handles in declaration order and write to them; the session
forwards events to the format's strategy and builds the final ``StructuredOutput``.
A handle created *with* its content (``panel(title, fields)``, ``table(..., rows=...)``,
``status(...)``, ``text("...")``, ``data(...)``) is closed at once unless
``keep_open=True``; a handle created empty stays open until closed (or the session ends).
"""

from __future__ import annotations

import copy
import logging
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TextIO, TypeVar

from ulid import ULID

from cleveragents.errors import CleverAgentsError
from cleveragents.output.elements import (
    Code,
    ColumnDef,
    Data,
    Element,
    Level,
    Panel,
    Progress,
    SessionStatus,
    Status,
    StructuredOutput,
    Table,
    Text,
    Tree,
    TreeNode,
)
from cleveragents.output.failures import (
    CANCELLED_EXIT_CODE,
    as_error,
    is_cancellation,
    mark_rendered,
    system_exit_code,
)
from cleveragents.output.formats import create_strategy
from cleveragents.output.handles import (
    CodeHandle,
    DataHandle,
    ElementHandle,
    PanelHandle,
    ProgressHandle,
    StatusHandle,
    TableHandle,
    TextHandle,
    TreeHandle,
    check_level,
)
from cleveragents.output.human import CANCELLED_MESSAGE
from cleveragents.output.materialization import Strategy

log = logging.getLogger(__name__)

H = TypeVar("H", bound=ElementHandle[Any])


class OutputSession:
    def __init__(
        self,
        command: str,
        fmt: str = "plain",
        *,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        metadata: Mapping[str, Any] | None = None,
        strategy: Strategy | None = None,
    ) -> None:
        self.command = command
        self.format = fmt
        self.session_id = str(ULID())
        self.metadata = dict(metadata or {})
        # Looked up now, not at import: test runners swap sys.stdout per test.
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self._strategy = strategy or create_strategy(fmt, self.stdout, self.stderr)
        self._handles: list[ElementHandle[Any]] = []
        self._lock = threading.RLock()
        self._started = time.monotonic()
        self._final: StructuredOutput | None = None
        self.exit_code = 0

    @classmethod
    def open(cls, command: str, fmt: str = "plain", **kwargs: Any) -> OutputSession:
        return cls(command, fmt, **kwargs)

    @property
    def is_open(self) -> bool:
        return self._final is None

    # --- handle factories -------------------------------------------------------------

    def _add(self, handle_cls: type[H], element: Element, close: bool) -> H:
        with self._lock:
            if self._final is not None:
                raise RuntimeError(f"output session for {self.command!r} is closed")
            handle = handle_cls(self, element, len(self._handles))
            self._handles.append(handle)
            self._strategy.created(handle.index, element)
        if close:
            handle.close()
        return handle

    def panel(
        self,
        title: str,
        fields: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        keep_open: bool = False,
    ) -> PanelHandle:
        element = Panel(title=title, entries=dict(fields or {}), key=key)
        return self._add(PanelHandle, element, fields is not None and not keep_open)

    def table(
        self,
        title: str | None,
        columns: Sequence[str | ColumnDef],
        *,
        rows: Sequence[Mapping[str, Any] | Sequence[Any]] | None = None,
        key: str | None = None,
        empty_message: str | None = None,
        max_rows_hint: int | None = None,
        keep_open: bool = False,
    ) -> TableHandle:
        defs = [c if isinstance(c, ColumnDef) else ColumnDef(c) for c in columns]
        element = Table(
            title=title,
            columns=defs,
            key=key,
            empty_message=empty_message,
            max_rows_hint=max_rows_hint,
        )
        handle = self._add(TableHandle, element, close=False)
        if rows is not None:
            handle.add_rows(rows)
            if not keep_open:
                handle.close()
        return handle

    def tree(
        self,
        label: str,
        data: Any = None,
        *,
        key: str | None = None,
        max_depth_hint: int | None = None,
        keep_open: bool = False,
    ) -> TreeHandle:
        element = Tree(root=TreeNode(label=label), key=key, max_depth_hint=max_depth_hint)
        handle = self._add(TreeHandle, element, close=False)
        if data is not None:
            handle.add_data(data)
            if not keep_open:
                handle.close()
        return handle

    def progress(self, description: str, total: int | None = None) -> ProgressHandle:
        """A progress bar on a TTY in ``rich``; silent in every other format."""
        return self._add(ProgressHandle, Progress(label=description, total=total), close=False)

    def status(
        self,
        message: str,
        level: Level = "info",
        *,
        detail: str | None = None,
        keep_open: bool = False,
    ) -> StatusHandle:
        check_level(level)
        element = Status(level=level, message=message, detail=detail)
        return self._add(StatusHandle, element, not keep_open)

    def text(self, content: str | None = None, *, key: str | None = None, keep_open: bool = False) -> TextHandle:
        element = Text(content=content or "", key=key)
        return self._add(TextHandle, element, content is not None and not keep_open)

    def code(
        self,
        content: str | None = None,
        language: str | None = None,
        *,
        key: str | None = None,
        keep_open: bool = False,
    ) -> CodeHandle:
        element = Code(content=content or "", language=language, key=key)
        return self._add(CodeHandle, element, content is not None and not keep_open)

    def data(self, key: str, value: Any, *, display: str | None = None, hidden: bool = False) -> DataHandle:
        """A raw payload: ``data[key] = value`` in json/yaml; ``display`` (or a generic
        panel/table/line; nothing if ``hidden``) in human formats; a list of row objects
        is a table in csv."""
        element = Data(key=key, value=value, display=display, hidden=hidden)
        return self._add(DataHandle, element, close=True)

    # --- handle callbacks -------------------------------------------------------------

    def _element_updated(self, handle: ElementHandle[Any]) -> None:
        with self._lock:
            if self._final is None:
                self._strategy.updated(handle.index, handle.element)

    def _element_closed(self, handle: ElementHandle[Any]) -> None:
        with self._lock:
            if self._final is None:
                self._strategy.closed(handle.index, handle.element)

    # --- lifecycle --------------------------------------------------------------------

    def snapshot(self) -> StructuredOutput:
        """A static copy of everything accumulated so far."""
        with self._lock:
            if self._final is not None:
                return self._final
            return self._output(copy.deepcopy([h.element for h in self._handles]), None)

    def _output(
        self,
        elements: list[Element],
        error: CleverAgentsError | None,
        status: SessionStatus | None = None,
    ) -> StructuredOutput:
        return StructuredOutput(
            command=self.command,
            session_id=self.session_id,
            elements=elements,
            exit_code=self.exit_code,
            status=status or ("ok" if self.exit_code == 0 else "error"),
            error=error.to_dict() if error is not None else None,
            timing={"duration_ms": round((time.monotonic() - self._started) * 1000)},
            metadata=self.metadata,
        )

    def _finish(
        self, error: CleverAgentsError | None, status: SessionStatus | None, warn_open: bool
    ) -> StructuredOutput:
        with self._lock:
            if self._final is not None:
                return self._final
            for handle in self._handles:
                if handle.is_open:
                    if warn_open:
                        log.warning(
                            "Handle %d (%s) was not explicitly closed; force-closing it.",
                            handle.index,
                            handle.element.kind,
                        )
                    handle.close()
            elements = [h.element for h in self._handles]
            if status == "cancelled":
                elements.append(Status(level="warn", message=CANCELLED_MESSAGE))
            self._final = self._output(elements, error, status)
            self._strategy.end(self._final, error)
            return self._final

    def close(self, exit_code: int | None = None) -> StructuredOutput:
        """Force-close open handles, write what the format writes at the end, and return
        the final snapshot. Closing twice returns the first result."""
        if exit_code is not None and self._final is None:
            self.exit_code = exit_code
        return self._finish(None, None, warn_open=True)

    def abort(self, exc: BaseException) -> int:
        """End the session because of ``exc``; render it; return the exit code.

        KeyboardInterrupt (or ``Interrupted``) is a cancellation: exit 130, status
        "cancelled". A CleverAgentsError keeps its code and exit code; anything else is
        shown as ``Error [500] INTERNAL: An unexpected error occurred`` with exit 1.
        """
        if isinstance(exc, BrokenPipeError):
            # The reader went away (``| head``): writing anything more would fail again.
            with self._lock:
                self.exit_code = 1
                if self._final is None:
                    self._final = self._output([h.element for h in self._handles], None)
            mark_rendered(exc)
            return self.exit_code
        if isinstance(exc, SystemExit):
            code = system_exit_code(exc)
            self.close(code)
            return code
        if is_cancellation(exc):
            self.exit_code = CANCELLED_EXIT_CODE
            self._finish(None, "cancelled", warn_open=False)
        else:
            error = as_error(exc)
            self.exit_code = error.exit_code
            self._finish(error, "error", warn_open=False)
        mark_rendered(exc)
        return self.exit_code

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # The exception still propagates (marked as rendered) so callers see the failure.
        if exc is None or isinstance(exc, GeneratorExit):
            self.close()
        else:
            self.abort(exc)
