"""Materialization strategies: when elements reach the stream (renderers decide how).

* ``SequentialStrategy`` (rich, table, plain, csv, tsv) prints each element when it is
  closed, in declaration order: an element closed early waits for those declared before
  it. Progress elements get live begin/update/end calls, which only ``rich`` on a TTY
  uses, and never hold back later elements.
* ``AccumulateStrategy`` (json, yaml) writes one document when the session ends.
"""

from __future__ import annotations

from typing import Protocol

from cleveragents.errors import CleverAgentsError
from cleveragents.output.elements import Element, Progress, StructuredOutput
from cleveragents.output.render_data import DocumentWriter


class Strategy(Protocol):
    def created(self, index: int, element: Element) -> None: ...
    def updated(self, index: int, element: Element) -> None: ...
    def closed(self, index: int, element: Element) -> None: ...
    def end(self, output: StructuredOutput, error: CleverAgentsError | None) -> None: ...


class Renderer(Protocol):
    """What a human-format renderer offers to ``SequentialStrategy``."""

    def render(self, element: Element) -> None: ...
    def begin_live(self, element: Element) -> None: ...
    def update_live(self, element: Element) -> None: ...
    def end_live(self, element: Element) -> None: ...
    def render_error(self, error: CleverAgentsError) -> None: ...
    def render_cancelled(self) -> None: ...
    def finish(self) -> None: ...


class SequentialStrategy:
    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self._closed: dict[int, Element] = {}
        self._next = 0

    def created(self, index: int, element: Element) -> None:
        self.renderer.begin_live(element)
        if isinstance(element, Progress):
            # Progress leaves nothing in scrolling output, so it must not hold back the
            # elements declared after it until it closes.
            self._ready(index, element)

    def updated(self, index: int, element: Element) -> None:
        self.renderer.update_live(element)

    def closed(self, index: int, element: Element) -> None:
        self.renderer.end_live(element)
        if not isinstance(element, Progress):
            self._ready(index, element)

    def _ready(self, index: int, element: Element) -> None:
        self._closed[index] = element
        while self._next in self._closed:
            self.renderer.render(self._closed.pop(self._next))
            self._next += 1

    def end(self, output: StructuredOutput, error: CleverAgentsError | None) -> None:
        for index in sorted(self._closed):
            self.renderer.render(self._closed.pop(index))
        if output.status == "cancelled":
            self.renderer.render_cancelled()
        elif error is not None:
            self.renderer.render_error(error)
        self.renderer.finish()


class AccumulateStrategy:
    def __init__(self, writer: DocumentWriter) -> None:
        self.writer = writer

    def created(self, index: int, element: Element) -> None:
        """Nothing is written before the session ends."""

    def updated(self, index: int, element: Element) -> None:
        """Nothing is written before the session ends."""

    def closed(self, index: int, element: Element) -> None:
        """Nothing is written before the session ends."""

    def end(self, output: StructuredOutput, error: CleverAgentsError | None) -> None:
        self.writer.write(output)
