"""Running an actor alone (``agents actor run``): a prompt in, the model's answer out.

No plan, no sandbox and no tools: the actor's system prompt is rendered with the manual
context (files given with ``--context``) and the model answers, streamed token by token
when asked. Plans run actors through the LangGraph runtime instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cleveragents.actors.definition import ActorFile, ActorSpec
from cleveragents.actors.providers import ModelRef, ProviderSettings, chat_model
from cleveragents.errors import ValidationError

# Config keys that are CleverAgents' own, not options of the chat model.
_NOT_MODEL_OPTIONS = {
    "provider",
    "model",
    "actor",
    "system_prompt",
    "memory_enabled",
    "max_history",
    "unsafe",
    "tools",
    "response_format",
    "base_url",
    "api_key_env",
    "context_window",
    "reserved_output",
    "timeout",
    "max_retries",
    "max_tool_failures",
    "options",
}


@dataclass
class Usage:
    """Token counts of one or more model calls, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0

    def add(self, metadata: Mapping[str, Any] | None) -> None:
        self.calls += 1
        if metadata:
            self.input_tokens += int(metadata.get("input_tokens", 0))
            self.output_tokens += int(metadata.get("output_tokens", 0))

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            "calls": self.calls,
        }


@dataclass
class ActorAnswer:
    actor: str
    model: str
    text: str
    usage: Usage = field(default_factory=Usage)
    # From the price table; None when the model is not in it.
    cost_usd: float | None = None


def resolve_llm(actor_file: ActorFile, actor: ActorSpec) -> tuple[ActorSpec, ModelRef]:
    """The LLM actor that answers for ``actor`` (following ``config.actor`` to another actor)."""
    seen = []
    current = actor
    while True:
        if not current.is_llm:
            raise ValidationError(
                f"{actor_file.source}: actor '{current.name}' is a {current.type} actor; "
                "`actor run` answers with llm actors (graph actors run in plans)"
            )
        ref = current.model_ref()
        if ref is not None:
            return current, ref
        target = current.config.get("actor")
        if target in seen or target not in actor_file.actors:
            raise ValidationError(
                f"{actor_file.source}: actor '{current.name}' refers to '{target}', "
                "which is not an actor of the loaded files"
            )
        seen.append(current.name)
        current = actor_file.actors[target]


def model_options(actor: ActorSpec, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    options = {k: v for k, v in actor.config.items() if k not in _NOT_MODEL_OPTIONS}
    options.update(actor.config.get("options") or {})
    options.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return options


def settings_for(actor: ActorSpec, base: ProviderSettings, provider: str) -> ProviderSettings:
    """The actor's own endpoint, key variable, timeout and retries over the configured ones."""
    config = actor.config
    return ProviderSettings(
        timeout=float(config.get("timeout", base.timeout)),
        max_retries=int(config.get("max_retries", base.max_retries)),
        base_urls={**base.base_urls, **({provider: config["base_url"]} if config.get("base_url") else {})},
        key_envs={**base.key_envs, **({provider: config["api_key_env"]} if config.get("api_key_env") else {})},
    )


def run(
    actor_file: ActorFile,
    prompt: str,
    *,
    settings: ProviderSettings,
    actor_name: str | None = None,
    context: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    on_token: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> ActorAnswer:
    """Ask the actor; ``on_token`` receives the answer as it streams."""
    from langchain_core.messages import HumanMessage, SystemMessage

    chosen = actor_file.actor(actor_name)
    llm, ref = resolve_llm(actor_file, chosen)
    model = chat_model(ref, settings_for(llm, settings, ref.provider), options=model_options(llm, overrides), env=env)
    messages: list[Any] = []
    system = actor_file.render_prompt(llm, dict(context or {})) if llm.system_prompt else ""
    if system.strip():
        messages.append(SystemMessage(system))
    messages.append(HumanMessage(prompt))
    answer = ActorAnswer(actor=chosen.name, model=str(ref), text="")
    if on_token is None:
        reply = model.invoke(messages)
        answer.text = reply.text if hasattr(reply, "text") else str(reply.content)
        answer.usage.add(reply.usage_metadata)
        return answer
    merged = None
    for chunk in model.stream(messages):
        piece = chunk.text if isinstance(chunk.text, str) else str(chunk.content)
        if piece:
            on_token(piece)
        merged = chunk if merged is None else merged + chunk
    answer.text = merged.text if merged is not None else ""
    answer.usage.add(merged.usage_metadata if merged is not None else None)
    return answer
