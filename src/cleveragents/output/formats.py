"""Format names, terminal detection and the registry of format -> strategy factories.

Resolution order (the CLI feeds the first three through the config chain):
``--format`` flag > ``CLEVERAGENTS_FORMAT`` > config key ``format`` > terminal detection,
where ``auto`` (the default) means ``rich`` on a TTY and ``plain`` when piped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TextIO

from cleveragents.output.materialization import AccumulateStrategy, SequentialStrategy, Strategy
from cleveragents.output.render_csv import CsvRenderer
from cleveragents.output.render_data import DocumentWriter
from cleveragents.output.render_plain import PlainRenderer
from cleveragents.output.render_rich import RichRenderer

AUTO: Final = "auto"
BUILTIN_FORMATS: Final = ("rich", "plain", "table", "json", "yaml", "csv", "tsv")

StrategyFactory = Callable[[TextIO, TextIO], Strategy]


def is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or exotic streams
        return False


_REGISTRY: dict[str, StrategyFactory] = {
    "rich": lambda out, err: SequentialStrategy(RichRenderer(out, err, live=is_tty(out))),
    "table": lambda out, err: SequentialStrategy(RichRenderer(out, err, live=False)),
    "plain": lambda out, err: SequentialStrategy(PlainRenderer(out, err)),
    "csv": lambda out, err: SequentialStrategy(CsvRenderer(out, err, delimiter=",")),
    "tsv": lambda out, err: SequentialStrategy(CsvRenderer(out, err, delimiter="\t")),
    "json": lambda out, err: AccumulateStrategy(DocumentWriter(out, "json")),
    "yaml": lambda out, err: AccumulateStrategy(DocumentWriter(out, "yaml")),
}


def register_format(name: str, factory: StrategyFactory) -> None:
    """Add (or replace) a format; plugins call this at load time."""
    _REGISTRY[name] = factory


def available_formats() -> list[str]:
    return sorted(_REGISTRY)


def resolve_format(requested: str | None, stream: TextIO) -> str:
    """The concrete format for ``requested`` (None or ``auto`` -> terminal detection).

    Raises ValueError for a name that is not registered.
    """
    name = (requested or AUTO).strip().lower()
    if name == AUTO:
        return "rich" if is_tty(stream) else "plain"
    if name not in _REGISTRY:
        choices = ", ".join(available_formats())
        raise ValueError(f"unknown format {requested!r}; choose from {choices}")
    return name


def create_strategy(fmt: str, out: TextIO, err: TextIO) -> Strategy:
    try:
        factory = _REGISTRY[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}") from None
    return factory(out, err)
