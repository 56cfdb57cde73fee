"""``agents providers list``: each provider configured, missing its key, or not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, clean_env


def test_providers_list_reports_keys_packages_and_endpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    clean_env(monkeypatch, tmp_path)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "OPENAI_BASE_URL", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("CLEVERAGENTS_PROVIDERS_OPENAI_COMPATIBLE_BASE_URL", "http://127.0.0.1:11434/v1")
    cli = Cli(tmp_path / "data", capsys)
    rows = {p["name"]: p for p in cli.ok("providers", "list", fmt="json").json()["data"]["providers"]}
    assert rows["anthropic"]["state"] == "configured"
    assert rows["openai"] == rows["openai"] | {"state": "missing", "problem": "OPENAI_API_KEY is not set"}
    assert rows["google"]["state"] == "unavailable"
    assert rows["google"]["problem"] == "package not installed: pip install langchain-google-genai"
    assert rows["openrouter"]["base_url"] == "https://openrouter.ai/api/v1"
    assert rows["openai-compatible"]["base_url"] == "http://127.0.0.1:11434/v1"
    assert rows["openai-compatible"]["problem"] == "OPENAI_API_KEY is not set"
    plain = cli.ok("providers", "list", fmt="plain").out
    assert "langchain-google-genai" in plain and "configured" in plain
