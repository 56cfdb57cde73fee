"""Actors for plans: ``scripted:PATH``, registered actors and built-in ``provider/model`` ones.

A plan names its strategy and execution actors by reference; the lifecycle engine asks this
resolver for them. Registered actors (``agents actor add``) and built-in ones (``openai/gpt-4o``)
become :class:`LLMActor` instances writing their LangGraph checkpoints through the plan's
writer session, with the plan's tool router (the tools Execute may call) described to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cleveragents.actors import definition, pricing
from cleveragents.actors.llm_actor import LLMActor
from cleveragents.actors.runtime import ToolDescription
from cleveragents.config import Config
from cleveragents.graph.workspace import Workspace, WriteSession
from cleveragents.plans import tools as plan_tools
from cleveragents.plans.actor import Actor, PlanContext
from cleveragents.services import actor_registry, providers, sandboxes, skill_registry


def builtin_file(ref: str, env: Mapping[str, str] | None = None) -> definition.ActorFile:
    """A one-actor file for a built-in ``provider/model`` reference."""
    model_ref = actor_registry.builtin(ref)
    assert model_ref is not None
    text = (f"name: builtin/{model_ref.provider}\nactors:\n  model:\n    type: llm\n"
            f"    config: {{provider: {model_ref.provider}, model: '{model_ref.model}'}}\n")
    return definition.parse(text, ref, env=env)


def resolver(
    ws: Workspace,
    session: WriteSession,
    *,
    agent: str,
    fallback: Callable[[str], Actor],
    env: Mapping[str, str] | None = None,
) -> Callable[[str], Actor]:
    config = Config(ws.data_dir)
    router = plan_tools.register(sandboxes.router())
    prices = pricing.load_prices(Path(config.value("providers.prices_file")))

    def tool_descriptions(_: PlanContext) -> list[ToolDescription]:
        return [ToolDescription(spec.name, spec.description, spec.input_schema) for spec in router.specs()]

    def resolve(ref: str) -> Actor:
        if ref.startswith("scripted:"):
            return fallback(ref)
        if actor_registry.builtin(ref) is not None:
            actor_file = builtin_file(ref, env)
        else:
            _, actor_file = actor_registry.resolve(ws, ref, env=env)
        actor: Any = LLMActor(actor_file, settings=providers.settings(config), writer=session,
                              data_dir=ws.data_dir, env=env, tool_descriptions=tool_descriptions, agent=agent,
                              agent_skills=lambda refs: skill_registry.agent_skills_in(session.store, refs),
                              price=lambda model, usage: pricing.cost(prices, model, usage))
        return actor

    return resolve
