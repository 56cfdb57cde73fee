"""Finding analyzers: the built-ins in ``analyzers/``, a user's directories, entry points.

All three go through one mechanism: a module exposing ``ANALYZERS``, a list of objects
that satisfy the ``Analyzer`` protocol. A user's analyzers come first, so they can take
over files a built-in would handle.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from cleveragents.errors import ConfigurationError
from cleveragents.plugin_modules import directory_modules, entry_point_objects, package_modules

from .model import Analyzer

ENTRY_POINT_GROUP = "cleveragents.analyzers"


@dataclass(frozen=True)
class AnalyzerSet:
    analyzers: tuple[Analyzer, ...]
    # Where they came from, so that a worker process can load the same set.
    directories: tuple[Path, ...] = ()
    builtins: bool = True

    def for_path(self, path: str) -> Analyzer | None:
        return next((a for a in self.analyzers if a.handles(path)), None)

    def by_name(self, name: str) -> Analyzer | None:
        return next((a for a in self.analyzers if a.name == name), None)

    def fingerprint(self) -> str:
        """Changes when any analyzer's output may change: cached link data is keyed on it."""
        return ",".join(f"{a.name}={a.version}" for a in self.analyzers)


def _exported(module: ModuleType, origin: str) -> list[Analyzer]:
    found = getattr(module, "ANALYZERS", None)
    if found is None:
        return []
    bad = [a for a in found if not isinstance(a, Analyzer)]
    if bad:
        raise ConfigurationError(f"{origin}: ANALYZERS holds {bad[0]!r}, which lacks the Analyzer methods")
    return list(found)


def builtin_analyzers() -> list[Analyzer]:
    """Every module of the top-level ``analyzers/`` folder (``cleveragents.analyzers``).

    Imported by name, as a plugin: analyzers sit above indexing (they implement its
    protocol), so indexing has no static import of them (see ARCHITECTURE.md)."""
    package = importlib.import_module("cleveragents.analyzers")
    return [
        a for origin, module in package_modules(package, "analyzer", "analyzers") for a in _exported(module, origin)
    ]


def directory_analyzers(directory: Path) -> list[Analyzer]:
    return [
        a
        for origin, module in directory_modules(directory, "analyzer", "config key analyzers.path")
        for a in _exported(module, origin)
    ]


def entry_point_analyzers() -> list[Analyzer]:
    found: list[Analyzer] = []
    for origin, loaded in entry_point_objects(ENTRY_POINT_GROUP, "analyzer"):
        found += _exported(loaded, origin) if isinstance(loaded, ModuleType) else list(loaded)  # type: ignore[call-overload]
    return found


def load_analyzers(directories: Sequence[Path] = (), *, builtins: bool = True) -> AnalyzerSet:
    chain: list[Analyzer] = []
    for directory in directories:
        chain += directory_analyzers(directory)
    chain += entry_point_analyzers()
    if builtins:
        chain += builtin_analyzers()
    return AnalyzerSet(tuple(_unique(chain)), tuple(directories), builtins)


def _unique(analyzers: Iterable[Analyzer]) -> Iterable[Analyzer]:
    seen: set[str] = set()
    for analyzer in analyzers:
        if analyzer.name not in seen:
            seen.add(analyzer.name)
            yield analyzer
