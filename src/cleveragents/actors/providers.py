"""Model providers: LangChain chat models built from a ``provider/model`` reference.

The providers are LangChain's own packages (``init_chat_model``); this module only knows,
per provider, which package serves it, which environment variable holds its key and
where an OpenAI-compatible endpoint lives. Retries with backoff on 429/5xx and the
per-call timeout are the provider SDKs' (``max_retries``, ``timeout``): they honour
``Retry-After`` and back off exponentially. A missing key or package is an error naming
the variable or the package, raised before any work starts.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cleveragents.errors import CleverAgentsError, ConfigurationError, DependencyMissingError, ValidationError


@dataclass(frozen=True)
class ProviderSpec:
    """What CleverAgents needs to know about one provider."""

    name: str
    description: str
    # The ``init_chat_model`` provider key and the Python module that serves it.
    langchain_provider: str
    module: str
    pip_name: str
    key_env: str | None
    # Where the endpoint is: an environment variable naming it, else a fixed URL.
    base_url_env: str | None = None
    default_base_url: str | None = None
    base_url_required: bool = False


PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec(
            "openai",
            "OpenAI Chat Completions",
            "openai",
            "langchain_openai",
            "langchain-openai",
            "OPENAI_API_KEY",
            base_url_env="OPENAI_BASE_URL",
        ),
        ProviderSpec(
            "anthropic",
            "Anthropic Messages",
            "anthropic",
            "langchain_anthropic",
            "langchain-anthropic",
            "ANTHROPIC_API_KEY",
            base_url_env="ANTHROPIC_BASE_URL",
        ),
        ProviderSpec(
            "google",
            "Google Gemini (Generative AI)",
            "google_genai",
            "langchain_google_genai",
            "langchain-google-genai",
            "GOOGLE_API_KEY",
        ),
        # OpenRouter speaks the OpenAI API; langchain-openai serves it (langchain-openrouter is
        # not a dependency).
        ProviderSpec(
            "openrouter",
            "OpenRouter (OpenAI-compatible API)",
            "openai",
            "langchain_openai",
            "langchain-openai",
            "OPENROUTER_API_KEY",
            base_url_env="OPENROUTER_BASE_URL",
            default_base_url="https://openrouter.ai/api/v1",
        ),
        # Ollama, vLLM, llama.cpp and any other server with the OpenAI API: the base URL is required.
        ProviderSpec(
            "openai-compatible",
            "Any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server)",
            "openai",
            "langchain_openai",
            "langchain-openai",
            "OPENAI_API_KEY",
            base_url_env="OPENAI_BASE_URL",
            base_url_required=True,
        ),
    )
}


@dataclass(frozen=True)
class ModelRef:
    """``provider/model``; the model part may itself contain slashes (OpenRouter ids)."""

    provider: str
    model: str

    @classmethod
    def parse(cls, ref: str, *, provider: str | None = None) -> ModelRef:
        if provider:
            return cls(provider, ref)
        head, sep, tail = ref.partition("/")
        if not sep or not head or not tail:
            raise ValidationError(
                f"model '{ref}' names no provider: write provider/model (providers: {', '.join(PROVIDERS)})"
            )
        return cls(head, tail)

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


@dataclass(frozen=True)
class ProviderSettings:
    """Call policy and endpoint overrides (config keys ``providers.*`` and the actor's config)."""

    timeout: float = 60.0
    max_retries: int = 3
    base_urls: Mapping[str, str] = field(default_factory=dict)
    key_envs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderStatus:
    name: str
    description: str
    available: bool
    configured: bool
    key_env: str | None
    base_url: str | None
    problem: str | None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def provider_spec(name: str) -> ProviderSpec:
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ValidationError(f"unknown provider '{name}' (known: {', '.join(PROVIDERS)})") from None


def installed(spec: ProviderSpec) -> bool:
    return importlib.util.find_spec(spec.module) is not None


def key_env(spec: ProviderSpec, settings: ProviderSettings) -> str | None:
    return settings.key_envs.get(spec.name) or spec.key_env


def base_url(spec: ProviderSpec, settings: ProviderSettings, env: Mapping[str, str]) -> str | None:
    return (
        settings.base_urls.get(spec.name)
        or (env.get(spec.base_url_env) if spec.base_url_env else None)
        or spec.default_base_url
    )


def status(spec: ProviderSpec, settings: ProviderSettings, env: Mapping[str, str] | None = None) -> ProviderStatus:
    env = os.environ if env is None else env
    variable = key_env(spec, settings)
    url = base_url(spec, settings, env)
    problem = None
    if not installed(spec):
        problem = f"package not installed: pip install {spec.pip_name}"
    elif variable and not env.get(variable):
        problem = f"{variable} is not set"
    elif spec.base_url_required and not url:
        problem = f"no base URL: set {spec.base_url_env} or providers.{spec.name}.base_url"
    return ProviderStatus(
        name=spec.name,
        description=spec.description,
        available=installed(spec),
        configured=problem is None,
        key_env=variable,
        base_url=url,
        problem=problem,
    )


def check_ready(ref: ModelRef, settings: ProviderSettings, env: Mapping[str, str] | None = None) -> None:
    """Raise the error a call would meet (package, key, base URL) before any work starts."""
    spec = provider_spec(ref.provider)
    state = status(spec, settings, env)
    if state.configured:
        return
    if not state.available:
        raise DependencyMissingError(
            f"provider '{spec.name}' needs the package {spec.pip_name}, which is not installed",
            suggestions=[f"pip install {spec.pip_name}"],
        )
    if state.key_env and state.problem and state.key_env in state.problem:
        raise ConfigurationError(
            f"provider '{spec.name}' needs an API key: the environment variable {state.key_env} is not set",
            suggestions=[f"export {state.key_env}=..."],
            data={"variable": state.key_env},
        )
    raise ConfigurationError(f"provider '{spec.name}': {state.problem}")


def chat_model(
    ref: ModelRef,
    settings: ProviderSettings,
    *,
    options: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    """A LangChain chat model for ``ref``; options are the actor's (temperature, max_tokens...)."""
    from langchain.chat_models import init_chat_model

    env = os.environ if env is None else env
    check_ready(ref, settings, env)
    spec = provider_spec(ref.provider)
    kwargs: dict[str, Any] = {"timeout": settings.timeout, "max_retries": settings.max_retries}
    variable = key_env(spec, settings)
    if variable:
        kwargs["api_key"] = env[variable]
    url = base_url(spec, settings, env)
    if url:
        kwargs["base_url"] = url
    if spec.langchain_provider == "openai":
        # Usage arrives with streamed answers too (costs are counted per call).
        kwargs["stream_usage"] = True
    kwargs.update({k: v for k, v in (options or {}).items() if v is not None})
    return init_chat_model(ref.model, model_provider=spec.langchain_provider, **kwargs)


class ProviderError(CleverAgentsError):
    """A model provider failed after the client's retries (HTTP 429/5xx, a timeout, no connection)."""

    code = 502
    category = "PROVIDER_ERROR"


def is_provider_error(exc: BaseException) -> bool:
    """An error of a provider SDK or its HTTP transport (after the SDK's own retries)."""
    import anthropic
    import httpx
    import openai

    return isinstance(exc, openai.APIError | anthropic.APIError | httpx.HTTPError)
