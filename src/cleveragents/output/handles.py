"""Element handles: the write-only, format-agnostic producer API.

A handle accumulates state into its element and tells the owning session when it was
updated or closed; the session forwards that to the active materialization strategy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from cleveragents.output.elements import (
    LEVELS,
    Code,
    Data,
    Element,
    Level,
    Panel,
    Progress,
    Status,
    Table,
    Text,
    Tree,
    TreeNode,
)

if TYPE_CHECKING:
    from cleveragents.output.session import OutputSession

E = TypeVar("E", bound=Element)


class ElementClosedError(RuntimeError):
    """A write to a closed handle: a bug in the producer, never a user error."""


class ElementHandle(Generic[E]):
    """Base handle. Writes to one handle are serialized by its own lock."""

    def __init__(self, session: OutputSession, element: E, index: int) -> None:
        self._session = session
        self._element = element
        self.index = index
        self._open = True
        self._lock = threading.Lock()

    @property
    def element(self) -> E:
        """The accumulated state; treat it as read-only."""
        return self._element

    @property
    def is_open(self) -> bool:
        return self._open

    def close(self) -> None:
        with self._lock:
            if not self._open:
                return
            self._open = False
        self._session._element_closed(self)

    def _write(self, change: Callable[[], None]) -> None:
        with self._lock:
            if not self._open:
                raise ElementClosedError(f"{self._element.kind} handle is closed")
            change()
        self._session._element_updated(self)

    def _set(self, name: str, value: Any) -> None:
        """Write one field of the element (a value computed before the lock is taken)."""
        self._write(lambda: setattr(self._element, name, value))

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class PanelHandle(ElementHandle[Panel]):
    def set_entry(self, key: str, value: Any) -> None:
        self._write(lambda: self._element.entries.__setitem__(key, value))

    def set_entries(self, entries: Mapping[str, Any]) -> None:
        self._write(lambda: self._element.entries.update(entries))

    def remove_entry(self, key: str) -> None:
        self._write(lambda: self._element.entries.pop(key, None))


class TableHandle(ElementHandle[Table]):
    def _normalize(self, row: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
        names = [c.name for c in self._element.columns]
        if isinstance(row, Mapping):
            # Missing cells become None and unknown keys are dropped, as the spec says.
            return {name: row.get(name) for name in names}
        if len(row) != len(names):
            raise ValueError(f"row has {len(row)} cells, table has {len(names)} columns")
        return dict(zip(names, row, strict=True))

    def add_row(self, row: Mapping[str, Any] | Sequence[Any]) -> None:
        normalized = self._normalize(row)
        self._write(lambda: self._element.rows.append(normalized))

    def add_rows(self, rows: Sequence[Mapping[str, Any] | Sequence[Any]]) -> None:
        normalized = [self._normalize(r) for r in rows]
        self._write(lambda: self._element.rows.extend(normalized))

    @property
    def row_count(self) -> int:
        return len(self._element.rows)


class TreeHandle(ElementHandle[Tree]):
    """Nodes are addressed by index paths ("", "0", "0/2"): labels may contain '/'."""

    def _node(self, path: str | None) -> TreeNode:
        node = self._element.root
        for part in filter(None, (path or "").split("/")):
            node = node.children[int(part)]
        return node

    def add_child(self, parent: str | None, label: str, *, metadata: dict[str, Any] | None = None) -> str:
        """Add a node under ``parent`` (None = root); return the new node's path."""
        holder: list[str] = []

        def change() -> None:
            node = self._node(parent)
            node.children.append(TreeNode(label=label, metadata=dict(metadata or {})))
            index = str(len(node.children) - 1)
            holder.append(f"{parent}/{index}" if parent else index)

        self._write(change)
        return holder[0]

    def add_data(self, data: Any, parent: str | None = None) -> None:
        """Add nested dicts/lists: dict keys and list items become nodes."""
        for label, children in _tree_items(data):
            path = self.add_child(parent, label)
            if children is not None:
                self.add_data(children, path)


def _tree_items(data: Any) -> list[tuple[str, Any]]:
    if isinstance(data, Mapping):
        items: list[tuple[str, Any]] = []
        for key, value in data.items():
            if isinstance(value, Mapping | list | tuple):
                items.append((str(key), value))
            else:
                items.append((f"{key}: {value}", None))
        return items
    if isinstance(data, list | tuple):
        return [(str(i), v) if isinstance(v, Mapping | list | tuple) else (str(v), None) for i, v in enumerate(data)]
    return [(str(data), None)]


class ProgressHandle(ElementHandle[Progress]):
    def set_progress(self, current: int, total: int | None = None) -> None:
        def change() -> None:
            self._element.current = current
            if total is not None:
                self._element.total = total

        self._write(change)

    def increment(self, delta: int = 1) -> None:
        self.set_progress(self._element.current + delta)

    def set_label(self, label: str) -> None:
        self._set("label", label)


class StatusHandle(ElementHandle[Status]):
    def set_message(self, message: str) -> None:
        self._set("message", message)

    def set_level(self, level: Level) -> None:
        check_level(level)
        self._set("level", level)

    def set_detail(self, detail: str | None) -> None:
        self._set("detail", detail)


class TextHandle(ElementHandle[Text]):
    def append(self, text: str) -> None:
        # Read and write under the lock, so concurrent appends don't lose text.
        self._write(lambda: setattr(self._element, "content", self._element.content + text))

    def set_content(self, content: str) -> None:
        self._set("content", content)


class CodeHandle(ElementHandle[Code]):
    def set_content(self, content: str) -> None:
        self._set("content", content)

    def set_language(self, language: str | None) -> None:
        self._set("language", language)


class DataHandle(ElementHandle[Data]):
    def set_value(self, value: Any) -> None:
        self._set("value", value)


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown status level {level!r}; expected one of {LEVELS}")
