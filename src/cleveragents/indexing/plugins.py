"""Finding analyzers: the built-ins in ``analyzers/``, a user's directories, entry points.

All three go through one mechanism: a module exposing ``ANALYZERS``, a list of objects
that satisfy the ``Analyzer`` protocol. A user's analyzers come first, so they can take
over files a built-in would handle.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from cleveragents.errors import ConfigurationError

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
    import cleveragents.analyzers as package

    found: list[Analyzer] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            found += _exported(module, f"analyzers/{info.name}")
    return found


def directory_analyzers(directory: Path) -> list[Analyzer]:
    if not directory.is_dir():
        raise ConfigurationError(f"analyzer directory {directory} does not exist (config key analyzers.path)")
    found: list[Analyzer] = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        name = f"cleveragents_user_analyzer_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a user's plugin: report it, with where
            raise ConfigurationError(f"cannot load analyzer {path}: {type(exc).__name__}: {exc}") from None
        found += _exported(module, str(path))
    return found


def entry_point_analyzers() -> list[Analyzer]:
    found: list[Analyzer] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = point.load()
        except Exception as exc:
            raise ConfigurationError(f"cannot load analyzer entry point {point.value}: {exc}") from None
        found += _exported(loaded, point.value) if isinstance(loaded, ModuleType) else list(loaded)
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
