"""Helpers shared by the human renderers (plain, rich/table, csv)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

from cleveragents.errors import CleverAgentsError
from cleveragents.output.elements import ColumnDef, Data, Element, Panel, Table, Text


def cell_text(value: Any) -> str:
    """One-line display text for a value; stable so that grep and awk keep working."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, Enum):
        return cell_text(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, default=str, ensure_ascii=False, separators=(", ", ": "))
    text = str(value) if not isinstance(value, PurePath) else value.as_posix()
    return text.replace("\r", "").replace("\n", "\\n").replace("\t", " ")


def entry_text(value: Any) -> str:
    """A panel entry or csv cell: strings verbatim (multi-line text stays multi-line),
    anything else as ``cell_text``."""
    return value if isinstance(value, str) else cell_text(value)


def omitted_rows_note(count: int) -> str:
    """The line under a table cut at its ``max_rows_hint``."""
    return f"(... and {count} more rows)"


def needs_blank_line(previous_kind: str | None, kind: str) -> bool:
    """Whether a blank line goes before an element: consecutive status lines stay
    together, everything else is a separate block."""
    return previous_kind is not None and not (previous_kind == "status" and kind == "status")


def data_as_element(data: Data) -> Element | None:
    """The generic human view of a raw payload: a panel, a table or a line of text."""
    title = data.key or "data"
    value = data.value
    if data.hidden:
        return None
    if data.display is not None:
        return Text(content=data.display)
    if isinstance(value, Mapping):
        return Panel(title=title, entries=dict(value))
    if isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value):
        names: dict[str, None] = {}
        for row in value:
            names.update(dict.fromkeys(str(k) for k in row))
        columns = [ColumnDef(name) for name in names]
        rows = [{name: row.get(name) for name in names} for row in value]
        return Table(title=title, columns=columns, rows=rows)
    if isinstance(value, list | tuple):
        if not value:
            return Text(content=f"No {title} found.")
        return Text(content="\n".join([f"{title}:", *(f"  - {cell_text(v)}" for v in value)]))
    return Text(content=f"{title}: {cell_text(value)}")


def error_lines(err: CleverAgentsError) -> list[str]:
    """``Error [code] CATEGORY: message`` then indented detail and suggestions."""
    lines = [err.headline()]
    if err.detail:
        lines.extend(f"  {line}" for line in err.detail.splitlines())
    if err.suggestions:
        lines.append("Suggestions:")
        lines.extend(f"  - {s}" for s in err.suggestions)
    return lines


CANCELLED_MESSAGE = "Operation cancelled"
