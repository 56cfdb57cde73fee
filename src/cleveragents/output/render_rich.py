"""The ``rich`` and ``table`` renderers: Rich panels, tables and trees.

``table`` is static box-drawing output. ``rich`` adds what needs a live terminal: progress
bars (only when stdout is a TTY) and syntax highlighting.
"""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console, RenderableType
from rich.panel import Panel as RichPanel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress
from rich.syntax import Syntax
from rich.table import Table as RichTable
from rich.text import Text as RichText
from rich.tree import Tree as RichTree

from cleveragents.errors import CleverAgentsError
from cleveragents.output.elements import (
    Code,
    Data,
    Element,
    Panel,
    Progress,
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

STATUS_STYLE = {
    "ok": ("✓ OK", "green"),
    "info": ("ℹ INFO", "blue"),
    "warn": ("⚠ WARN", "yellow"),
    "error": ("✗ ERROR", "red"),
}


def _console(stream: TextIO) -> Console:
    # markup/emoji off: user data such as "[bold]" or ":smile:" must print verbatim.
    return Console(file=stream, highlight=False, markup=False, emoji=False, soft_wrap=False)


def _boxed(body: RenderableType, title: str | None) -> RenderableType:
    """The rounded, left-titled box that frames every panel and table."""
    return RichPanel(
        body,
        title=RichText(title) if title else None,
        title_align="left",
        box=box.ROUNDED,
        expand=False,
    )


def _panel(panel: Panel) -> RenderableType:
    grid = RichTable.grid(padding=(0, 1))
    grid.add_column(style="bold")
    grid.add_column()
    for key, value in panel.entries.items():
        grid.add_row(RichText(f"{key}:"), RichText(entry_text(value)))
    return _boxed(grid, panel.title)


def _table(table: Table) -> RenderableType:
    if not table.rows:
        return _boxed(RichText(table.empty_text(), style="dim"), table.title)
    rows, hidden_rows = table.shown_rows()
    # Titled box with a simple header rule, as the spec's table examples draw it.
    grid = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold cyan")
    columns = table.visible_columns
    for column in columns:
        grid.add_column(RichText(column.label), justify=column.alignment)
    for row in rows:
        grid.add_row(*(RichText(cell_text(row.get(c.name))) for c in columns))
    if hidden_rows:
        grid.caption = RichText(omitted_rows_note(hidden_rows), style="dim")
    return _boxed(grid, table.title)


def _tree(tree: Tree) -> RenderableType:
    out = RichTree(RichText(tree.root.label, style="bold"))
    limit = tree.max_depth_hint

    def walk(node: TreeNode, branch: RichTree, depth: int) -> None:
        for child in node.children:
            sub = branch.add(RichText(child.label))
            if child.children and limit is not None and depth >= limit:
                sub.add(RichText("...", style="dim"))
            else:
                walk(child, sub, depth + 1)

    walk(tree.root, out, 1)
    return out


def _status(status: Status) -> RenderableType:
    label, style = STATUS_STYLE[status.level]
    text = RichText.assemble((label, f"bold {style}"), " ", status.message)
    if status.detail:
        text.append("\n" + "\n".join(f"  {line}" for line in status.detail.splitlines()))
    return text


class RichRenderer:
    """Rich renderables on ``out``; ``live`` enables progress bars and highlighting."""

    def __init__(self, out: TextIO, err: TextIO, *, live: bool) -> None:
        self.console = _console(out)
        self.err_console = _console(err)
        self.live = live
        self._last_kind: str | None = None
        self._progress: RichProgress | None = None
        self._tasks: dict[int, TaskID] = {}

    def renderable(self, element: Element) -> RenderableType | None:
        match element:
            case Panel():
                return _panel(element)
            case Table():
                return _table(element)
            case Tree():
                return _tree(element)
            case Status():
                return _status(element)
            case Code() if self.live and element.language:
                return Syntax(element.content.rstrip("\n"), element.language, theme="ansi_dark")
            case Text() | Code():
                return RichText(element.content.rstrip("\n"))
            case Data():
                generic = data_as_element(element)
                return self.renderable(generic) if generic is not None else None
        return None

    def render(self, element: Element) -> None:
        renderable = self.renderable(element)
        if renderable is None:
            return
        if needs_blank_line(self._last_kind, element.kind):
            self.console.print()
        self.console.print(renderable)
        self._last_kind = element.kind

    # --- live progress (only when the strategy was built with live=True) ---

    def begin_live(self, element: Element) -> None:
        if not (self.live and isinstance(element, Progress)):
            return
        if self._progress is None:
            self._progress = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
        self._tasks[id(element)] = self._progress.add_task(
            element.label, total=element.total, completed=element.current
        )

    def update_live(self, element: Element) -> None:
        task = self._tasks.get(id(element))
        if self._progress is not None and task is not None and isinstance(element, Progress):
            self._progress.update(task, description=element.label, completed=element.current, total=element.total)

    def end_live(self, element: Element) -> None:
        task = self._tasks.pop(id(element), None)
        if self._progress is None or task is None:
            return
        self._progress.remove_task(task)
        if not self._tasks:
            self._progress.stop()
            self._progress = None

    def _stop_live(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._tasks.clear()

    def render_error(self, error: CleverAgentsError) -> None:
        self._stop_live()
        headline, *rest = error_lines(error)
        self.err_console.print(RichText(headline, style="bold red"))
        for line in rest:
            self.err_console.print(RichText(line))

    def render_cancelled(self) -> None:
        self._stop_live()
        self.err_console.print(_status(Status(level="warn", message=CANCELLED_MESSAGE)))

    def finish(self) -> None:
        self._stop_live()
        self.console.file.flush()
