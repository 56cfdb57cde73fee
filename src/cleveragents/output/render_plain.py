"""The ``plain`` renderer: aligned ASCII text, no colour, no box drawing; stable for grep."""

from __future__ import annotations

from typing import TextIO

from cleveragents.errors import CleverAgentsError
from cleveragents.output.elements import (
    Code,
    Data,
    Element,
    Panel,
    Status,
    Table,
    Text,
    Tree,
    TreeNode,
)
from cleveragents.output.human import (
    CANCELLED_MESSAGE,
    cell_text,
    data_as_element,
    entry_text,
    error_lines,
    needs_blank_line,
    omitted_rows_note,
)

STATUS_PREFIX = {"ok": "[OK]", "info": "[INFO]", "warn": "[WARN]", "error": "[ERROR]"}


def format_panel(panel: Panel) -> str:
    lines = [panel.title] if panel.title else []
    width = max((len(k) for k in panel.entries), default=0) + 1
    for key, value in panel.entries.items():
        first, *rest = entry_text(value).splitlines() or [""]
        lines.append(f"  {key + ':':<{width}} {first}".rstrip())
        lines.extend(f"  {'':<{width}} {line}".rstrip() for line in rest)
    return "\n".join(lines)


def _align(text: str, width: int, alignment: str) -> str:
    if alignment == "right":
        return text.rjust(width)
    if alignment == "center":
        return text.center(width)
    return text.ljust(width)


def format_table(table: Table) -> str:
    if not table.rows:
        return table.empty_text()
    columns = table.visible_columns
    rows, hidden_rows = table.shown_rows()
    cells = [[cell_text(row.get(c.name)) for c in columns] for row in rows]
    widths = [max([len(c.label), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = [table.title] if table.title else []
    lines.append("  ".join(_align(c.label, w, c.alignment) for c, w in zip(columns, widths, strict=True)))
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        parts = [_align(v, w, c.alignment) for v, w, c in zip(r, widths, columns, strict=True)]
        lines.append("  ".join(parts))
    if hidden_rows:
        lines.append(omitted_rows_note(hidden_rows))
    return "\n".join(line.rstrip() for line in lines)


def _depth(node: TreeNode) -> int:
    return 1 + max((_depth(c) for c in node.children), default=0)


def format_tree(tree: Tree) -> str:
    lines = [tree.root.label]
    limit = tree.max_depth_hint

    def walk(node: TreeNode, prefix: str, depth: int) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            lines.append(f"{prefix}+-- {child.label}")
            inner = prefix + ("    " if last else "|   ")
            if child.children and limit is not None and depth >= limit:
                lines.append(f"{inner}... ({_depth(child) - 1} more levels)")
            else:
                walk(child, inner, depth + 1)

    walk(tree.root, "", 1)
    return "\n".join(lines)


def format_status(status: Status) -> str:
    lines = [f"{STATUS_PREFIX[status.level]} {status.message}"]
    if status.detail:
        lines.extend(f"  {line}" for line in status.detail.splitlines())
    return "\n".join(lines)


def format_element(element: Element) -> str | None:
    """The plain text of one element, or None when plain shows nothing (progress)."""
    match element:
        case Panel():
            return format_panel(element)
        case Table():
            return format_table(element)
        case Tree():
            return format_tree(element)
        case Status():
            return format_status(element)
        case Text() | Code():
            return element.content.rstrip("\n")
        case Data():
            generic = data_as_element(element)
            return format_element(generic) if generic is not None else None
    return None


class PlainRenderer:
    """Writes elements to ``out`` separated by blank lines; errors go to ``err``."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self._last_kind: str | None = None

    def render(self, element: Element) -> None:
        text = format_element(element)
        if text is None:
            return
        if needs_blank_line(self._last_kind, element.kind):
            self.out.write("\n")
        self.out.write(text + "\n")
        self._last_kind = element.kind

    def begin_live(self, element: Element) -> None:
        """Plain output never animates."""

    def update_live(self, element: Element) -> None:
        """Plain output never animates."""

    def end_live(self, element: Element) -> None:
        """Plain output never animates."""

    def render_error(self, error: CleverAgentsError) -> None:
        self.out.flush()
        self.err.write("\n".join(error_lines(error)) + "\n")

    def render_cancelled(self) -> None:
        self.out.flush()
        self.err.write(format_status(Status(level="warn", message=CANCELLED_MESSAGE)) + "\n")

    def finish(self) -> None:
        self.out.flush()
