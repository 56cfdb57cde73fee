"""Resolving the pipeline's components through the scope chain plan > project > global >
built-in (architecture.md "Scope Resolution and Configuration").

Each scope is a ``[context.pipeline]`` table. A component is named by a string,
``"builtin:ClassName"`` or ``"package.module:ClassName"``, or by a table with an optional
``class`` key plus the component's settings (dashed keys become keyword arguments):

    [context.pipeline]
    fragment-scorer = "my_extensions.scorers:DomainAwareScorer"
    [context.pipeline.strategy-executor]
    timeout-seconds = 10

(TOML cannot hold both a string and a table under one key, so a table is the way to name
a class and set its options together.) A more specific scope that names only settings
keeps the class of the broader one.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from cleveragents.config import Config, read_toml
from cleveragents.errors import UsageError

from .finalization import DepthReductionCompressor, ProvenancePreambleGenerator
from .fusion import (
    ContentHashDeduplicator,
    GreedyKnapsackPacker,
    MaxDepthResolver,
    RelevanceCoherenceOrderer,
    WeightedCompositeScorer,
)
from .orchestration import ConfidenceWeightedSelector, ParallelStrategyExecutor, ProportionalBudgetAllocator
from .packing import DepthPlanningPacker
from .protocols import COMPONENTS, PipelineConfig

BUILTINS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        ConfidenceWeightedSelector,
        ProportionalBudgetAllocator,
        ParallelStrategyExecutor,
        ContentHashDeduplicator,
        MaxDepthResolver,
        WeightedCompositeScorer,
        GreedyKnapsackPacker,
        DepthPlanningPacker,
        RelevanceCoherenceOrderer,
        ProvenancePreambleGenerator,
        DepthReductionCompressor,
    )
}
DEFAULTS: dict[str, str] = {
    "strategy_selector": "builtin:ConfidenceWeightedSelector",
    "budget_allocator": "builtin:ProportionalBudgetAllocator",
    "strategy_executor": "builtin:ParallelStrategyExecutor",
    "fragment_deduplicator": "builtin:ContentHashDeduplicator",
    "detail_depth_resolver": "builtin:MaxDepthResolver",
    "fragment_scorer": "builtin:WeightedCompositeScorer",
    "budget_packer": "builtin:DepthPlanningPacker",
    "fragment_orderer": "builtin:RelevanceCoherenceOrderer",
    "preamble_generator": "builtin:ProvenancePreambleGenerator",
    "skeleton_compressor": "builtin:DepthReductionCompressor",
}
ALIASES = {"depth-resolver": "detail-depth-resolver"}  # a shorter name some configs use
# The spec's [context.fusion] keys: settings of the built-in components.
FUSION_KEYS: dict[str, tuple[str, str]] = {
    "dedup-strategy": ("fragment-deduplicator", "mode"),
    "ordering": ("fragment-orderer", "mode"),
    "preamble-max-tokens": ("preamble-generator", "max-tokens"),
    "preamble-enabled": ("preamble-generator", "enabled"),
}
SCOPES = ("global", "project", "plan")


def import_object(spec: str, key: str, builtins: Mapping[str, Any] | None = None) -> Any:
    """The object named by ``module:Name`` (or ``module.Name``, or ``builtin:Name``), with a
    UsageError naming the config key and value when it cannot be imported."""
    spec = spec.strip()
    if spec.startswith("builtin:"):
        name = spec.removeprefix("builtin:")
        if builtins is None or name not in builtins:
            known = ", ".join(sorted(builtins or {}))
            raise UsageError(f"{key} = {spec!r}: no built-in {name!r}; built-ins: {known}")
        return builtins[name]
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise UsageError(f"{key} = {spec!r}: expected 'package.module:ClassName' or 'builtin:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or an error raised while importing it
        raise UsageError(f"{key} = {spec!r}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    try:
        value = module
        for part in attr.split("."):
            value = getattr(value, part)
    except AttributeError:
        raise UsageError(f"{key} = {spec!r}: {module_name} has no attribute {attr!r}") from None
    return value


def pipeline_table(data: Mapping[str, Any]) -> dict[str, Any]:
    """``[context.pipeline]`` of a parsed config file ({} if absent)."""
    context = data.get("context", {})
    table = context.get("pipeline", {}) if isinstance(context, Mapping) else {}
    return dict(table) if isinstance(table, Mapping) else {}


def fusion_table(config: Config | None) -> dict[str, Any]:
    """``[context.fusion]`` merged from the global then the project config file."""
    merged: dict[str, Any] = {}
    for path in (config.global_path, config.project_path) if config else ():
        if path is not None:
            context = read_toml(path).get("context", {})
            table = context.get("fusion", {}) if isinstance(context, Mapping) else {}
            merged.update(table if isinstance(table, Mapping) else {})
    unknown = sorted(set(merged) - set(FUSION_KEYS))
    if unknown:
        raise UsageError(f"unknown [context.fusion] key {', '.join(unknown)}; known: {', '.join(sorted(FUSION_KEYS))}")
    return merged


def config_scopes(config: Config | None) -> dict[str, dict[str, Any]]:
    """The global and project ``[context.pipeline]`` tables of a Config's files."""
    if config is None:
        return {"global": {}, "project": {}}
    project = pipeline_table(read_toml(config.project_path)) if config.project_path else {}
    return {"global": pipeline_table(read_toml(config.global_path)), "project": project}


def _normalize(scope: str, table: Mapping[str, Any]) -> dict[str, tuple[str | None, dict[str, Any]]]:
    """Config key -> (class spec or None, settings)."""
    keys = {key for key, _ in COMPONENTS.values()}
    out: dict[str, tuple[str | None, dict[str, Any]]] = {}
    for raw_key, value in table.items():
        key = ALIASES.get(raw_key, raw_key)
        if key not in keys:
            known = ", ".join(sorted(keys))
            raise UsageError(f"unknown pipeline component {raw_key!r} in {scope} [context.pipeline]; known: {known}")
        if isinstance(value, str):
            out[key] = (value, {})
        elif isinstance(value, Mapping):
            settings = {k: v for k, v in value.items() if k != "class"}
            spec = value.get("class")
            if spec is not None and not isinstance(spec, str):
                raise UsageError(f"{scope} context.pipeline.{key}.class must be a 'module:Class' string")
            out[key] = (spec, settings)
        else:
            raise UsageError(f"{scope} context.pipeline.{key} must be a 'module:Class' string or a table")
    return out


def resolve_pipeline(
    config: Config | None = None,
    *,
    global_overrides: Mapping[str, Any] | None = None,
    project_overrides: Mapping[str, Any] | None = None,
    plan_overrides: Mapping[str, Any] | None = None,
) -> PipelineConfig:
    """The effective components. Tables from the Config's files come first in each scope,
    the dicts passed here (a project's or plan's ``pipeline:`` overrides) on top."""
    files = config_scopes(config)
    layers = [
        ("global", files["global"]),
        ("global", global_overrides or {}),
        ("project", files["project"]),
        ("project", project_overrides or {}),
        ("plan", plan_overrides or {}),
    ]
    chosen: dict[str, tuple[str, str, dict[str, Any]]] = {
        COMPONENTS[field][0]: (DEFAULTS[field], "built-in", {}) for field in COMPONENTS
    }
    for scope, table in layers:
        for key, (spec, settings) in _normalize(scope, table).items():
            old_spec, old_scope, old_settings = chosen[key]
            if spec is None or spec == old_spec:
                chosen[key] = (old_spec, old_scope if spec is None else scope, {**old_settings, **settings})
            else:  # another class: the broader scope's settings were for the old one
                chosen[key] = (spec, scope, dict(settings))
    for name, value in fusion_table(config).items():  # a [context.pipeline] setting wins
        key, setting = FUSION_KEYS[name]
        spec, scope, settings = chosen[key]
        field = next(f for f, (k, _) in COMPONENTS.items() if k == key)
        if spec == DEFAULTS[field] and setting not in settings:
            chosen[key] = (spec, scope, {**settings, setting: value})
    values = {field: _instantiate(COMPONENTS[field][0], *chosen[COMPONENTS[field][0]]) for field in COMPONENTS}
    return PipelineConfig(**values)


def resolved_names(config: PipelineConfig) -> dict[str, str]:
    """Config key -> the class of each component, for --explain."""
    return {key: type(getattr(config, field)).__qualname__ for field, (key, _) in COMPONENTS.items()}


def _instantiate(key: str, spec: str, scope: str, settings: dict[str, Any]) -> Any:
    protocol = next(proto for k, proto in COMPONENTS.values() if k == key)
    where = f"context.pipeline.{key}"
    target = import_object(spec, where, BUILTINS)
    kwargs = {name.replace("-", "_"): value for name, value in settings.items()}
    if isinstance(target, type):
        try:
            instance = target(**kwargs)
        except TypeError as exc:
            raise UsageError(f"{where} = {spec!r} ({scope}): bad settings {sorted(settings)}: {exc}") from None
    else:
        if kwargs:
            raise UsageError(f"{where} = {spec!r} ({scope}): settings need a class, not an instance")
        instance = target
    if not isinstance(instance, protocol):
        raise UsageError(
            f"{where} = {spec!r} ({scope}) does not satisfy {protocol.__name__}: it needs {_methods(protocol)}"
        )
    return instance


def _methods(protocol: type) -> str:
    names = [n for n in vars(protocol) if not n.startswith("_") and callable(getattr(protocol, n))]
    return ", ".join(f"{n}()" for n in names)
