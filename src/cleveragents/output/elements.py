"""Element snapshot types: the accumulated state that handles build and renderers paint.

These are plain dataclasses so that a snapshot can be inspected in tests and serialized
without knowing which format produced it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

Level = Literal["ok", "info", "warn", "error"]
LEVELS: tuple[Level, ...] = ("ok", "info", "warn", "error")
Alignment = Literal["left", "right", "center"]
SessionStatus = Literal["ok", "error", "cancelled"]


@dataclass(frozen=True)
class ColumnDef:
    """A table column. ``name`` keys rows (and JSON/CSV); ``header`` is the display label."""

    name: str
    header: str | None = None
    type: str = "string"
    alignment: Alignment = "left"
    # Hidden columns appear in structured formats (json/yaml/csv) but not on screen.
    hidden: bool = False

    @property
    def label(self) -> str:
        return self.header if self.header is not None else self.name


@dataclass(kw_only=True)
class Element:
    """Base of all snapshot types. ``key`` names the element in the JSON ``data`` object."""

    kind: ClassVar[str] = "element"
    key: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Panel(Element):
    kind: ClassVar[str] = "panel"
    title: str
    entries: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Table(Element):
    kind: ClassVar[str] = "table"
    title: str | None
    columns: list[ColumnDef]
    rows: list[dict[str, Any]] = field(default_factory=list)
    empty_message: str | None = None
    max_rows_hint: int | None = None

    @property
    def visible_columns(self) -> list[ColumnDef]:
        return [c for c in self.columns if not c.hidden]

    def shown_rows(self) -> tuple[list[dict[str, Any]], int]:
        """The rows a human format shows (at most ``max_rows_hint``) and how many it leaves out."""
        if self.max_rows_hint is None or len(self.rows) <= self.max_rows_hint:
            return self.rows, 0
        return self.rows[: self.max_rows_hint], len(self.rows) - self.max_rows_hint

    def empty_text(self) -> str:
        if self.empty_message:
            return self.empty_message
        if self.title:
            noun = re.sub(r"\s*\(.*\)\s*$", "", self.title).strip().lower()
            return f"No {noun} found."
        return "No results."


@dataclass
class TreeNode:
    label: str
    children: list[TreeNode] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label}
        if self.metadata:
            out["metadata"] = self.metadata
        out["children"] = [child.to_dict() for child in self.children]
        return out


@dataclass(kw_only=True)
class Tree(Element):
    kind: ClassVar[str] = "tree"
    root: TreeNode
    max_depth_hint: int | None = None


@dataclass(kw_only=True)
class Status(Element):
    kind: ClassVar[str] = "status"
    level: Level = "info"
    message: str
    detail: str | None = None


@dataclass(kw_only=True)
class Progress(Element):
    kind: ClassVar[str] = "progress"
    label: str
    current: int = 0
    total: int | None = None


@dataclass(kw_only=True)
class Text(Element):
    kind: ClassVar[str] = "text"
    content: str = ""


@dataclass(kw_only=True)
class Code(Element):
    kind: ClassVar[str] = "code"
    content: str = ""
    language: str | None = None


@dataclass(kw_only=True)
class Data(Element):
    """A raw structured payload. ``display`` replaces the generic human rendering."""

    kind: ClassVar[str] = "data"
    value: Any = None
    display: str | None = None
    hidden: bool = False  # structured formats (json, yaml, csv) only


@dataclass
class StructuredOutput:
    """The static snapshot of a whole session (what json/yaml serialize)."""

    command: str
    session_id: str
    elements: list[Element]
    exit_code: int = 0
    status: SessionStatus = "ok"
    error: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
