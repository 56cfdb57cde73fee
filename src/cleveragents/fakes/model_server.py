"""A fake model server: OpenAI Chat Completions and Anthropic Messages on 127.0.0.1.

No model service is reachable from CI, so the real client path (langchain-openai and
langchain-anthropic over HTTP, through the official SDKs) is exercised against this
process. It answers the real wire formats, streaming (server-sent events) included, with
tool calls and usage, from a **script of turns** instead of a model::

    # script.yaml
    turns:
      - text: "I will read the README first."
        tool_calls:
          - {name: read_file, arguments: {path: README.md}}
      - error: {status: 429, message: "rate limited", retry_after: 0.01}   # an HTTP error, as a provider sends it
      - delay: 5                                          # seconds before answering (timeouts)
        text: "late"
      - text: "Done."
        usage: {input_tokens: 120, output_tokens: 3}
    fallback: echo        # when the turns run out: echo the last user message; default: error (HTTP 500)

Each request consumes the next turn, whichever API it arrives on. Every request body is
kept, so a test can check what the client sent (``GET /_fake/requests``); a new script
replaces the old one with ``POST /_fake/script``. Run it with::

    python -m cleveragents.fakes.model_server --script script.yaml [--port 0] [--port-file F]

which prints ``fake model server listening on http://127.0.0.1:PORT``. In Python,
:class:`FakeModelServer` starts it as a subprocess and stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_ids = itertools.count(1)


@dataclass
class ScriptedTurn:
    """One answer of the fake model: text, tool calls, an HTTP error, or a delay."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    delay: float = 0.0
    usage: dict[str, int] | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ScriptedTurn:
        unknown = set(raw) - {"text", "tool_calls", "error", "delay", "usage"}
        if unknown:
            raise ValueError(f"fake model script: unknown turn keys {sorted(unknown)}")
        calls = []
        for call in raw.get("tool_calls") or []:
            if "name" not in call:
                raise ValueError("fake model script: a tool call needs a name")
            calls.append({"name": call["name"], "arguments": call.get("arguments") or {}, "id": call.get("id")})
        return cls(
            text=str(raw.get("text") or ""),
            tool_calls=calls,
            error=raw.get("error"),
            delay=float(raw.get("delay") or 0.0),
            usage=raw.get("usage"),
        )


@dataclass
class Script:
    turns: list[ScriptedTurn]
    fallback: str = "error"

    @classmethod
    def from_data(cls, data: Any) -> Script:
        if isinstance(data, list):
            data = {"turns": data}
        if not isinstance(data, dict) or not isinstance(data.get("turns", []), list):
            raise ValueError("fake model script: expected a mapping with a 'turns' list")
        fallback = str(data.get("fallback", "error"))
        if fallback not in ("error", "echo"):
            raise ValueError(f"fake model script: fallback must be 'error' or 'echo', not {fallback!r}")
        return cls([ScriptedTurn.from_dict(t) for t in data.get("turns") or []], fallback)

    @classmethod
    def load(cls, path: str | Path) -> Script:
        return cls.from_data(yaml.safe_load(Path(path).read_text(encoding="utf-8")))


def _estimate_tokens(text: str) -> int:
    """A stand-in token count (4 characters a token) when the script gives no usage."""
    return max(1, len(text) // 4)


def _request_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False) + json.dumps(body.get("system", ""))


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


class ScriptState:
    """The script being played and every request received so far."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.position = 0
        self.requests: list[dict[str, Any]] = []

    def next_turn(self, api: str, body: dict[str, Any]) -> ScriptedTurn:
        self.requests.append({"api": api, "body": body})
        if self.position < len(self.script.turns):
            turn = self.script.turns[self.position]
            self.position += 1
            return turn
        if self.script.fallback == "echo":
            return ScriptedTurn(text=f"echo: {_last_user_text(body)}")
        exhausted = f"fake model server: script exhausted after {self.position} turns"
        return ScriptedTurn(error={"status": 500, "message": exhausted})


def _usage(turn: ScriptedTurn, body: dict[str, Any]) -> tuple[int, int]:
    usage = turn.usage or {}
    produced = turn.text + "".join(json.dumps(c["arguments"]) for c in turn.tool_calls)
    return (
        int(usage.get("input_tokens", _estimate_tokens(_request_text(body)))),
        int(usage.get("output_tokens", _estimate_tokens(produced))),
    )


def _chunks(text: str, size: int = 8) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _call_id(call: dict[str, Any], prefix: str) -> str:
    return call.get("id") or f"{prefix}{next(_ids)}"


# --- OpenAI Chat Completions -------------------------------------------------------------


def openai_completion(turn: ScriptedTurn, body: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = _usage(turn, body)
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(c, "call_"),
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in turn.tool_calls
        ]
    return {
        "id": f"chatcmpl-fake{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if turn.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def openai_stream(turn: ScriptedTurn, body: dict[str, Any]) -> Iterator[str]:
    ident, created, model = f"chatcmpl-fake{next(_ids)}", int(time.time()), body.get("model", "fake")

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        payload = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(payload)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(turn.text):
        yield chunk({"content": piece})
    for index, call in enumerate(turn.tool_calls):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": _call_id(call, "call_"),
                        "type": "function",
                        "function": {"name": call["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in _chunks(json.dumps(call["arguments"]), 16):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if turn.tool_calls else "stop")
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt, completion = _usage(turn, body)
        payload = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }
        yield f"data: {json.dumps(payload)}\n\n"
    yield "data: [DONE]\n\n"


def openai_error(status: int, message: str) -> dict[str, Any]:
    kind = "rate_limit_exceeded" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "code": kind, "param": None}}


# --- Anthropic Messages ------------------------------------------------------------------


def _anthropic_blocks(turn: ScriptedTurn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    blocks += [
        {"type": "tool_use", "id": _call_id(c, "toolu_"), "name": c["name"], "input": c["arguments"]}
        for c in turn.tool_calls
    ]
    return blocks


def anthropic_message(turn: ScriptedTurn, body: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = _usage(turn, body)
    return {
        "id": f"msg_fake{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": _anthropic_blocks(turn),
        "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def anthropic_stream(turn: ScriptedTurn, body: dict[str, Any]) -> Iterator[str]:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    prompt, completion = _usage(turn, body)
    start = anthropic_message(turn, body) | {
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": prompt, "output_tokens": 1},
    }
    yield event("message_start", {"message": start})
    for index, block in enumerate(_anthropic_blocks(turn)):
        if block["type"] == "text":
            yield event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            for piece in _chunks(block["text"]):
                yield event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})
        else:
            yield event("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
            for piece in _chunks(json.dumps(block["input"]), 16):
                yield event(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
        yield event("content_block_stop", {"index": index})
    stop = "tool_use" if turn.tool_calls else "end_turn"
    yield event(
        "message_delta",
        {
            "delta": {"stop_reason": stop, "stop_sequence": None},
            # Anthropic reports the cumulative usage, input included, here.
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        },
    )
    yield event("message_stop", {})


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- the HTTP application -------------------------------------------------------------------


def build_app(state: ScriptState) -> Any:
    """A Starlette application serving both APIs from ``state``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def answer(request: Request, api: str) -> Response:
        body = await request.json()
        turn = state.next_turn(api, body)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error:
            status = int(turn.error.get("status", 500))
            message = str(turn.error.get("message", "fake model server error"))
            payload = openai_error(status, message) if api == "openai" else anthropic_error(status, message)
            # Providers send Retry-After with 429s; the SDKs wait that long before retrying.
            headers = (
                {"retry-after-ms": str(int(float(turn.error["retry_after"]) * 1000))}
                if "retry_after" in turn.error
                else None
            )
            return JSONResponse(payload, status_code=status, headers=headers)
        if body.get("stream"):
            events = openai_stream(turn, body) if api == "openai" else anthropic_stream(turn, body)

            async def send() -> AsyncIterator[str]:
                for item in events:
                    yield item

            return StreamingResponse(send(), media_type="text/event-stream")
        return JSONResponse(openai_completion(turn, body) if api == "openai" else anthropic_message(turn, body))

    async def chat_completions(request: Request) -> Response:
        return await answer(request, "openai")

    async def messages(request: Request) -> Response:
        return await answer(request, "anthropic")

    async def models(_: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "fake"}]})

    async def requests_seen(_: Request) -> Response:
        return JSONResponse({"position": state.position, "requests": state.requests})

    async def replace_script(request: Request) -> Response:
        try:
            state.script = Script.from_data(await request.json())
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        state.position, state.requests = 0, []
        return JSONResponse({"turns": len(state.script.turns)})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/_fake/requests", requests_seen, methods=["GET"]),
            Route("/_fake/script", replace_script, methods=["POST"]),
        ]
    )


def serve(script: Script, host: str = "127.0.0.1", port: int = 0, port_file: str | None = None) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    if port_file:
        Path(port_file).write_text(str(bound), encoding="utf-8")
    print(f"fake model server listening on http://{host}:{bound}", flush=True)
    config = uvicorn.Config(build_app(ScriptState(script)), log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


class FakeModelServer:
    """Start the fake model server as a subprocess on a free port; stop it on exit.

    ``openai_base_url`` and ``anthropic_base_url`` are what a client is pointed at.
    """

    def __init__(self, script: dict[str, Any] | list[Any] | None = None, *, startup_timeout: float = 20.0) -> None:
        self.script = script if script is not None else {"turns": [], "fallback": "echo"}
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def start(self) -> FakeModelServer:
        import tempfile

        Script.from_data(self.script)  # a bad script fails here, not in the subprocess
        workdir = Path(tempfile.mkdtemp(prefix="fake-model-"))
        script_path, port_file = workdir / "script.json", workdir / "port"
        script_path.write_text(json.dumps(self.script), encoding="utf-8")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cleveragents.fakes.model_server",
                "--script",
                str(script_path),
                "--port-file",
                str(port_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text().strip():
                self.port = int(port_file.read_text())
                if self._accepts():
                    return self
            if self.process.poll() is not None:
                stderr = self.process.stderr.read() if self.process.stderr else ""
                raise RuntimeError(f"fake model server exited: {stderr}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("fake model server did not start in time")

    def _accepts(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def set_script(self, script: dict[str, Any] | list[Any]) -> None:
        import httpx

        httpx.post(f"{self.url}/_fake/script", json=script, timeout=5).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        import httpx

        return httpx.get(f"{self.url}/_fake/requests", timeout=5).json()["requests"]

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake model server (OpenAI and Anthropic wire formats) for tests")
    parser.add_argument("--script", help="YAML or JSON script of turns (default: no turns, echo fallback)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the bound port here once listening")
    args = parser.parse_args(argv)
    script = Script.load(args.script) if args.script else Script([], "echo")
    serve(script, args.host, args.port, args.port_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
