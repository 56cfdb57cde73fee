"""The fake model server speaks the real wire formats: the official clients read it."""

from __future__ import annotations

import anthropic
import openai
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from cleveragents.fakes.model_server import FakeModelServer, Script


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return path


def _stream(model, prompt):
    full = None
    for chunk in model.stream(prompt):
        full = chunk if full is None else full + chunk
    return full


def test_openai_text_tool_calls_usage_and_streaming(model_server: FakeModelServer):
    model_server.set_script(
        {
            "turns": [
                {"text": "hello there", "usage": {"input_tokens": 11, "output_tokens": 2}},
                {"text": "reading", "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
                {
                    "text": "streamed words arrive in pieces",
                    "tool_calls": [{"name": "read_file", "arguments": {"path": "src/a.py"}}],
                },
            ]
        }
    )
    model = ChatOpenAI(model="fake-gpt", base_url=model_server.openai_base_url, api_key="k", stream_usage=True)
    answer = model.invoke("hi")
    assert answer.content == "hello there"
    assert answer.usage_metadata["input_tokens"] == 11 and answer.usage_metadata["output_tokens"] == 2
    with_tools = model.bind_tools([read_file])
    called = with_tools.invoke("read it")
    assert called.tool_calls[0]["name"] == "read_file" and called.tool_calls[0]["args"] == {"path": "README.md"}
    streamed = _stream(with_tools, "stream it")
    assert streamed.content == "streamed words arrive in pieces"
    assert streamed.tool_calls[0]["args"] == {"path": "src/a.py"}
    assert streamed.usage_metadata["total_tokens"] > 0
    sent = model_server.requests()
    assert [r["api"] for r in sent] == ["openai"] * 3
    assert sent[1]["body"]["tools"][0]["function"]["name"] == "read_file"
    assert sent[2]["body"]["stream"] is True


def test_anthropic_text_tool_calls_usage_and_streaming(model_server: FakeModelServer):
    model_server.set_script(
        {
            "turns": [
                {"text": "plain answer"},
                {"text": "using a tool", "tool_calls": [{"name": "read_file", "arguments": {"path": "b"}}]},
                {
                    "text": "streamed",
                    "tool_calls": [{"name": "read_file", "arguments": {"path": "c"}}],
                    "usage": {"input_tokens": 30, "output_tokens": 5},
                },
            ]
        }
    )
    model = ChatAnthropic(model="fake-claude", base_url=model_server.anthropic_base_url, api_key="k")
    assert model.invoke("hi").content == "plain answer"
    called = model.bind_tools([read_file]).invoke("go")
    assert called.tool_calls == [
        {"name": "read_file", "args": {"path": "b"}, "id": called.tool_calls[0]["id"], "type": "tool_call"}
    ]
    streamed = _stream(model.bind_tools([read_file]), "go")
    assert streamed.tool_calls[0]["args"] == {"path": "c"}
    assert streamed.usage_metadata["input_tokens"] == 30 and streamed.usage_metadata["output_tokens"] == 5
    assert [r["api"] for r in model_server.requests()] == ["anthropic"] * 3


def test_http_errors_reach_the_clients_as_provider_errors(model_server: FakeModelServer):
    model_server.set_script(
        {
            "turns": [
                {"error": {"status": 429, "message": "slow down"}},
                {"error": {"status": 503, "message": "overloaded"}},
            ]
        }
    )
    with pytest.raises(openai.RateLimitError, match="slow down"):
        ChatOpenAI(model="m", base_url=model_server.openai_base_url, api_key="k", max_retries=0).invoke("x")
    with pytest.raises(anthropic.InternalServerError, match="overloaded"):
        ChatAnthropic(model="m", base_url=model_server.anthropic_base_url, api_key="k", max_retries=0).invoke("x")


def test_an_exhausted_script_is_an_error_unless_it_echoes(model_server: FakeModelServer):
    model_server.set_script({"turns": []})
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        ChatOpenAI(model="m", base_url=model_server.openai_base_url, api_key="k", max_retries=0).invoke("x")
    model_server.set_script({"turns": [], "fallback": "echo"})
    answer = ChatOpenAI(model="m", base_url=model_server.openai_base_url, api_key="k").invoke("say this")
    assert answer.content == "echo: say this"


def test_bad_scripts_are_refused():
    with pytest.raises(ValueError, match="unknown turn keys"):
        Script.from_data({"turns": [{"txt": "typo"}]})
    with pytest.raises(ValueError, match="fallback"):
        Script.from_data({"turns": [], "fallback": "maybe"})
