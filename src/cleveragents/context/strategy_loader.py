"""Finding context strategies: the built-ins in ``strategies/``, a user's directories,
entry points and ``[context.strategies.custom]`` (architecture.md "Adding a New Context
Strategy"). One mechanism for all, as for analyzers (``indexing/plugins.py``): a module
exposes ``STRATEGIES``, a list of strategy classes (built with no arguments) or instances.

    [context.strategies]
    enabled = ["simple-keyword", "arce"]            # default: all that were found
    [context.strategies.custom]
    "my-namespace/domain-strategy" = "my_package.strategies:MyDomainStrategy"

A user's strategy with a built-in's name replaces the built-in.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from cleveragents.config import Config, read_toml
from cleveragents.errors import ConfigurationError, UsageError
from cleveragents.plugin_modules import directory_modules, entry_point_objects, package_modules

from .pipeline.resolver import import_object
from .protocols import ContextStrategy

ENTRY_POINT_GROUP = "cleveragents.strategies"


@dataclass(frozen=True)
class StrategySet:
    strategies: tuple[ContextStrategy, ...]

    def names(self) -> list[str]:
        return [s.name for s in self.strategies]

    def by_name(self, name: str) -> ContextStrategy | None:
        return next((s for s in self.strategies if s.name == name), None)


def _instance(item: Any, origin: str) -> ContextStrategy:
    """A strategy from a class (instantiated without arguments) or an instance."""
    if isinstance(item, type):
        try:
            item = item()
        except Exception as exc:
            raise ConfigurationError(
                f"{origin}: cannot create {item.__name__}(): {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(item, ContextStrategy):
        raise ConfigurationError(
            f"{origin}: {item!r} is not a context strategy "
            "(it needs name, capabilities, can_handle(), assemble() and explain())"
        )
    return item


def _exported(module: ModuleType, origin: str) -> list[ContextStrategy]:
    found = getattr(module, "STRATEGIES", None)
    if found is None:
        return []
    return [_instance(item, origin) for item in found]


def builtin_strategies() -> list[ContextStrategy]:
    """Every module of the top-level ``strategies/`` folder (``cleveragents.strategies``)."""
    try:
        package = importlib.import_module("cleveragents.strategies")
    except ModuleNotFoundError as exc:
        if exc.name == "cleveragents.strategies":  # an install without the folder: no built-ins
            return []
        raise
    return [
        s for origin, module in package_modules(package, "strategy", "strategies") for s in _exported(module, origin)
    ]


def directory_strategies(directory: Path) -> list[ContextStrategy]:
    return [
        s
        for origin, module in directory_modules(directory, "strategy", "a strategy directory given to load_strategies")
        for s in _exported(module, origin)
    ]


def entry_point_strategies() -> list[ContextStrategy]:
    found: list[ContextStrategy] = []
    for origin, loaded in entry_point_objects(ENTRY_POINT_GROUP, "strategy"):
        if isinstance(loaded, ModuleType):
            found += _exported(loaded, origin)
        else:
            items = loaded if isinstance(loaded, list | tuple) else [loaded]
            found += [_instance(item, origin) for item in items]
    return found


def custom_strategies(custom: Mapping[str, str]) -> list[ContextStrategy]:
    """``[context.strategies.custom]``: name -> ``module:Class`` (or ``module.Class``)."""
    found: list[ContextStrategy] = []
    for name, spec in sorted(custom.items()):
        key = f"context.strategies.custom.{name}"
        if not isinstance(spec, str):
            raise UsageError(f"{key} must be a 'module:Class' string, got {spec!r}")
        target = import_object(spec, key)
        try:
            strategy = _instance(target, f"{key} = {spec!r}")
        except ConfigurationError as exc:
            raise UsageError(exc.message) from None
        if strategy.name != name:
            raise UsageError(f"{key} = {spec!r}: the strategy calls itself {strategy.name!r}, not {name!r}")
        found.append(strategy)
    return found


def strategies_table(config: Config | None) -> dict[str, Any]:
    """``[context.strategies]`` merged from the global then the project config file."""
    if config is None:
        return {}
    merged: dict[str, Any] = {}
    for path in (config.global_path, config.project_path):
        if path is None:
            continue
        context = read_toml(path).get("context", {})
        table = context.get("strategies", {}) if isinstance(context, Mapping) else {}
        if isinstance(table, Mapping):
            custom = {**merged.get("custom", {}), **table.get("custom", {})}
            merged.update(table)
            merged["custom"] = custom
    return merged


def load_strategies(
    config: Config | None = None,
    *,
    directories: Sequence[Path] = (),
    builtins: bool = True,
    enabled: Sequence[str] | None = None,
    custom: Mapping[str, str] | None = None,
) -> StrategySet:
    """The strategies to offer the pipeline. ``enabled`` and ``custom`` default to the
    config's ``[context.strategies]``; an enabled name that is not found is a UsageError."""
    table = strategies_table(config)
    custom = {**table.get("custom", {}), **(custom or {})}
    chain = custom_strategies(custom)
    for directory in directories:
        chain += directory_strategies(directory)
    chain += entry_point_strategies()
    if builtins:
        chain += builtin_strategies()
    found = list(_unique(chain))
    wanted = enabled if enabled is not None else table.get("enabled")
    if wanted is None:
        return StrategySet(tuple(found))
    if not isinstance(wanted, list | tuple) or not all(isinstance(n, str) for n in wanted):
        raise UsageError("context.strategies.enabled must be a list of strategy names")
    names = {s.name for s in found}
    unknown = [n for n in wanted if n not in names]
    if unknown:
        raise UsageError(
            f"unknown strategy {', '.join(unknown)} in context.strategies.enabled; found: {', '.join(sorted(names))}"
        )
    return StrategySet(tuple(s for s in found if s.name in set(wanted)))


def _unique(strategies: Iterable[ContextStrategy]) -> Iterable[ContextStrategy]:
    seen: set[str] = set()
    for strategy in strategies:
        if strategy.name not in seen:
            seen.add(strategy.name)
            yield strategy
