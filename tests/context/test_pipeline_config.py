"""Pipeline components and strategies are plugins: ``module:Class`` in config.toml,
resolved plan > project > global > built-in; bad names give errors naming key and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from cleveragents.config import Config
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.pipeline import (
    GreedyKnapsackPacker,
    ParallelStrategyExecutor,
    RelevanceCoherenceOrderer,
    WeightedCompositeScorer,
    resolve_pipeline,
    resolved_names,
)
from cleveragents.context.protocols import BackendSet, ContextStrategy
from cleveragents.context.strategy_loader import builtin_strategies, load_strategies
from cleveragents.errors import ConfigurationError, UsageError

HERE = "tests.context.test_pipeline_config"


class ReverseOrderer:
    """A user's FragmentOrderer: the least relevant first (for the override test)."""

    def order(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        return list(reversed(fragments))


class NotAnOrderer:
    def sort(self, fragments: list[ContextFragment]) -> list[ContextFragment]:
        return fragments


class ConfiguredStrategy:
    """A user's strategy registered through [context.strategies.custom]."""

    name = "test/configured"
    capabilities = StrategyCapabilities(uses_graph=True, quality_score=0.8)

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        return 0.9 if request.focus else 0.0

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        return []

    def explain(self) -> str:
        return "test strategy"


def config_with(tmp_path: Path, global_toml: str = "", project_toml: str = "") -> Config:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "config.toml").write_text(global_toml)
    if project_toml:
        (tmp_path / "proj" / ".cleveragents").mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / ".cleveragents" / "config.toml").write_text(project_toml)
    return Config(data, cwd=tmp_path / "proj" if project_toml else tmp_path, env={})


def test_built_in_defaults_without_config() -> None:
    names = resolved_names(resolve_pipeline())
    assert names["fragment-orderer"] == "RelevanceCoherenceOrderer"
    assert names["strategy-selector"] == "ConfidenceWeightedSelector"
    assert len(names) == 10


def test_the_scope_chain_plan_over_project_over_global(tmp_path: Path) -> None:
    config = config_with(
        tmp_path,
        global_toml=f"""
[context.pipeline]
fragment-orderer = "{HERE}:ReverseOrderer"
[context.pipeline.fragment-scorer]
relevance-weight = 1.0
hierarchy-weight = 0.0
""",
        project_toml="""
[context.pipeline.strategy-executor]
timeout-seconds = 5
max-workers = 2
[context.pipeline.budget-packer]
depth-fallback-steps = [6, 1]
""",
    )
    resolved = resolve_pipeline(config)
    assert isinstance(resolved.fragment_orderer, ReverseOrderer)  # global file
    assert isinstance(resolved.strategy_executor, ParallelStrategyExecutor)
    assert (resolved.strategy_executor.timeout, resolved.strategy_executor.max_workers) == (5.0, 2)  # project file
    assert isinstance(resolved.budget_packer, GreedyKnapsackPacker) and resolved.budget_packer.steps == [6, 1]
    assert isinstance(resolved.fragment_scorer, WeightedCompositeScorer)
    assert resolved.fragment_scorer.weights["hierarchy"] == 0.0
    # A project's and a plan's overrides passed as dicts: the plan wins.
    resolved = resolve_pipeline(
        config,
        project_overrides={"fragment-orderer": f"{HERE}:ReverseOrderer", "strategy-executor": {"timeout-seconds": 9}},
        plan_overrides={"fragment-orderer": {"class": "builtin:RelevanceCoherenceOrderer", "mode": "relevance"}},
    )
    assert (
        isinstance(resolved.fragment_orderer, RelevanceCoherenceOrderer)
        and resolved.fragment_orderer.mode == "relevance"
    )
    assert resolved.strategy_executor.timeout == 9.0
    # The spec's key and the short alias name the same component.
    via_alias = resolve_pipeline(plan_overrides={"depth-resolver": "builtin:MaxDepthResolver"})
    assert type(via_alias.detail_depth_resolver).__name__ == "MaxDepthResolver"


def test_the_specs_context_fusion_keys_set_the_built_ins(tmp_path: Path) -> None:
    config = config_with(
        tmp_path,
        global_toml="""
[context.fusion]
dedup-strategy = "uko-identity"
ordering = "relevance"
preamble-max-tokens = 120
preamble-enabled = false
[context.pipeline.fragment-orderer]
mode = "relevance-coherence"
""",
    )
    resolved = resolve_pipeline(config)
    assert resolved.fragment_deduplicator.mode == "uko-identity"  # type: ignore[attr-defined]
    assert resolved.fragment_orderer.mode == "relevance-coherence"  # type: ignore[attr-defined]  # pipeline wins
    assert (resolved.preamble_generator.max_tokens, resolved.preamble_generator.enabled) == (120, False)  # type: ignore[attr-defined]
    replaced = resolve_pipeline(config, plan_overrides={"fragment-orderer": f"{HERE}:ReverseOrderer"})
    assert isinstance(replaced.fragment_orderer, ReverseOrderer)  # fusion settings are for the built-ins only
    with pytest.raises(UsageError, match=r"unknown \[context.fusion\] key ordering2; known: dedup-strategy"):
        resolve_pipeline(config_with(tmp_path, "[context.fusion]\nordering2 = 1\n"))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"fragment-orderer": "no_such_module.x:Y"},
            "context.pipeline.fragment-orderer = 'no_such_module.x:Y': cannot import no_such_module.x",
        ),
        ({"fragment-orderer": f"{HERE}:Missing"}, f"'{HERE}:Missing': {HERE} has no attribute 'Missing'"),
        ({"fragment-orderer": f"{HERE}:NotAnOrderer"}, "does not satisfy FragmentOrderer: it needs order()"),
        ({"fragment-orderer": "builtin:Nope"}, "no built-in 'Nope'; built-ins: ConfidenceWeightedSelector"),
        ({"fragment-orderer": "justaname"}, "expected 'package.module:ClassName' or 'builtin:ClassName'"),
        ({"fragment-sorter": "builtin:RelevanceCoherenceOrderer"}, "unknown pipeline component 'fragment-sorter'"),
        ({"strategy-executor": {"timeout": 3}}, "bad settings ['timeout']"),
        ({"fragment-orderer": {"mode": "topological"}}, "mode 'topological' is not supported"),
        ({"strategy-executor": 3}, "must be a 'module:Class' string or a table"),
    ],
)
def test_bad_components_name_the_key_and_value(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_pipeline(plan_overrides=overrides)
    assert message in caught.value.message


def test_custom_and_enabled_strategies_from_config(tmp_path: Path) -> None:
    config = config_with(
        tmp_path,
        global_toml=f"""
[context.strategies]
enabled = ["test/configured"]
[context.strategies.custom]
"test/configured" = "{HERE}.ConfiguredStrategy"
""",
    )
    loaded = load_strategies(config)
    assert loaded.names() == ["test/configured"]
    assert isinstance(loaded.by_name("test/configured"), ContextStrategy)
    with pytest.raises(
        UsageError, match=r"unknown strategy nope in context.strategies.enabled; found: .*test/configured"
    ):
        load_strategies(config, enabled=["nope"])
    with pytest.raises(UsageError, match="calls itself 'test/configured', not 'other'"):
        load_strategies(builtins=False, custom={"other": f"{HERE}:ConfiguredStrategy"})
    with pytest.raises(UsageError, match="is not a context strategy"):
        load_strategies(builtins=False, custom={"x": f"{HERE}:ReverseOrderer"})


def test_a_users_strategy_directory_is_loaded_like_the_built_ins(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(f"from {HERE} import ConfiguredStrategy\n\nSTRATEGIES = [ConfiguredStrategy]\n")
    (tmp_path / "_private.py").write_text("raise SystemExit('never imported')\n")
    assert load_strategies(directories=[tmp_path], builtins=False).names() == ["test/configured"]
    (tmp_path / "broken.py").write_text("STRATEGIES = [object()]\n")
    with pytest.raises(ConfigurationError, match=r"broken.py: <object object at .*> is not a context strategy"):
        load_strategies(directories=[tmp_path], builtins=False)


def test_built_in_strategies_come_from_the_strategies_folder() -> None:
    found = builtin_strategies()
    assert all(isinstance(s, ContextStrategy) for s in found)
    names = [s.name for s in found]
    assert len(names) == len(set(names))
    assert set(names) <= {
        "simple-keyword", "semantic-embedding", "breadth-depth-navigator", "arce",
        "temporal-archaeology", "plan-decision-context",
    }  # fmt: skip
