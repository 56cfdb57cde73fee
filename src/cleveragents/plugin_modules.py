"""Where plugin modules come from, for every kind of plugin (analyzers, context
strategies): the built-in package's modules, a user's directory of ``*.py`` files, and
an entry-point group. Each kind reads its own export (``ANALYZERS``, ``STRATEGIES``) from
the modules this yields; a module whose name starts with '_' is a helper, not a plugin."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from cleveragents.errors import ConfigurationError


def package_modules(package: ModuleType, kind: str, folder: str) -> Iterator[tuple[str, ModuleType]]:
    """The plugin modules of a built-in package, by name, as ``(origin, module)``; a
    module that fails to import is named (``folder/name``) in the error."""
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
        except Exception as exc:  # name the broken built-in rather than failing somewhere deep
            raise ConfigurationError(
                f"cannot load built-in {kind} {folder}/{info.name}: {type(exc).__name__}: {exc}"
            ) from exc
        yield f"{folder}/{info.name}", module


def directory_modules(directory: Path, kind: str, named_by: str) -> Iterator[tuple[str, ModuleType]]:
    """The ``*.py`` files of a user's directory, each imported under its own module name;
    ``named_by`` says where the directory was given, for the error when it is missing."""
    if not directory.is_dir():
        raise ConfigurationError(f"{kind} directory {directory} does not exist ({named_by})")
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        name = f"cleveragents_user_{kind}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a user's plugin: report it, with where
            raise ConfigurationError(f"cannot load {kind} {path}: {type(exc).__name__}: {exc}") from None
        yield str(path), module


def entry_point_objects(group: str, kind: str) -> Iterator[tuple[str, object]]:
    """What each entry point of ``group`` loads (a module, a list or a single object)."""
    for point in entry_points(group=group):
        try:
            loaded = point.load()
        except Exception as exc:
            raise ConfigurationError(f"cannot load {kind} entry point {point.value}: {exc}") from None
        yield point.value, loaded
