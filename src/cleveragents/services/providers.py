"""Model providers as the configuration sets them: the call policy and each provider's state."""

from __future__ import annotations

import os
from collections.abc import Mapping

from cleveragents.actors.providers import PROVIDERS, ProviderSettings, ProviderStatus, status
from cleveragents.config import Config


def settings(config: Config) -> ProviderSettings:
    """Timeout, retries and endpoint overrides from the ``providers.*`` keys."""
    base_urls = {
        name: str(config.value(f"providers.{name}.base_url"))
        for name in ("openai", "anthropic", "openrouter", "openai-compatible")
        if config.value(f"providers.{name}.base_url")
    }
    return ProviderSettings(
        timeout=float(config.value("providers.timeout")),
        max_retries=int(config.value("providers.max_retries")),
        base_urls=base_urls,
        key_envs={"openai-compatible": str(config.value("providers.openai-compatible.api_key_env"))},
    )


def list_providers(config: Config, env: Mapping[str, str] | None = None) -> list[ProviderStatus]:
    current = settings(config)
    return [status(spec, current, os.environ if env is None else env) for spec in PROVIDERS.values()]
