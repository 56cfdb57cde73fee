"""Providers through LangChain: keys, packages, retries and timeouts against the fake server."""

from __future__ import annotations

import time

import openai
import pytest

from cleveragents.actors.providers import PROVIDERS, ModelRef, ProviderSettings, chat_model, status
from cleveragents.errors import ConfigurationError, DependencyMissingError, ValidationError
from cleveragents.fakes.model_server import FakeModelServer


def test_a_missing_key_names_the_variable_before_any_call(model_server: FakeModelServer):
    model_server.set_script({"turns": [{"text": "never sent"}]})
    env = {"OPENAI_BASE_URL": model_server.openai_base_url}
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY is not set") as caught:
        chat_model(ModelRef.parse("openai/gpt-4o"), ProviderSettings(), env=env)
    assert caught.value.data == {"variable": "OPENAI_API_KEY"}
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        chat_model(ModelRef.parse("anthropic/claude-x"), ProviderSettings(), env={})
    assert model_server.requests() == []


def test_an_uninstalled_provider_package_is_reported_with_its_install_name():
    google = status(PROVIDERS["google"], ProviderSettings(), env={"GOOGLE_API_KEY": "k"})
    assert not google.available and google.problem == "package not installed: pip install langchain-google-genai"
    with pytest.raises(DependencyMissingError, match="langchain-google-genai"):
        chat_model(ModelRef.parse("google/gemini-2.5-pro"), ProviderSettings(), env={"GOOGLE_API_KEY": "k"})


def test_model_references():
    assert ModelRef.parse("openrouter/anthropic/claude-3.5") == ModelRef("openrouter", "anthropic/claude-3.5")
    with pytest.raises(ValidationError, match="names no provider"):
        ModelRef.parse("gpt-4o")
    with pytest.raises(ValidationError, match="unknown provider 'acme'"):
        chat_model(ModelRef.parse("acme/x"), ProviderSettings(), env={})


def test_openai_compatible_needs_a_base_url_and_uses_it(model_server: FakeModelServer):
    unset = status(PROVIDERS["openai-compatible"], ProviderSettings(), env={"OPENAI_API_KEY": "k"})
    assert "no base URL" in unset.problem
    model_server.set_script({"turns": [{"text": "from the compatible server"}]})
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model_server.openai_base_url}
    model = chat_model(
        ModelRef.parse("openai-compatible/llama3"), ProviderSettings(), env=env, options={"temperature": 0.2}
    )
    assert model.invoke("hi").content == "from the compatible server"
    body = model_server.requests()[0]["body"]
    assert body["model"] == "llama3" and body["temperature"] == 0.2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_429_and_5xx_are_retried_with_backoff_then_answered(model_server: FakeModelServer, provider):
    model_server.set_script(
        {
            "turns": [
                {"error": {"status": 429, "message": "rate limited", "retry_after": 0.05}},
                {"error": {"status": 503, "message": "unavailable", "retry_after": 0.05}},
                {"text": "third time lucky"},
            ]
        }
    )
    url = model_server.openai_base_url if provider == "openai" else model_server.anthropic_base_url
    env = {f"{provider.upper()}_API_KEY": "k", f"{provider.upper()}_BASE_URL": url}
    model = chat_model(ModelRef(provider, "m"), ProviderSettings(max_retries=2), env=env)
    assert model.invoke("hi").content == "third time lucky"
    assert len(model_server.requests()) == 3


def test_retries_give_up_with_the_provider_message(model_server: FakeModelServer):
    model_server.set_script({"turns": [{"error": {"status": 500, "message": "boom", "retry_after": 0.01}}] * 2})
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model_server.openai_base_url}
    with pytest.raises(openai.InternalServerError, match="boom"):
        chat_model(ModelRef("openai", "m"), ProviderSettings(max_retries=1), env=env).invoke("hi")
    assert len(model_server.requests()) == 2


@pytest.mark.serial
def test_the_per_call_timeout_holds(model_server: FakeModelServer):
    model_server.set_script({"turns": [{"delay": 3, "text": "late"}]})
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model_server.openai_base_url}
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        chat_model(ModelRef("openai", "m"), ProviderSettings(timeout=0.5, max_retries=0), env=env).invoke("hi")
    assert time.monotonic() - started < 2.5
