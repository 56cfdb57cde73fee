"""``agents mcp serve`` as a real subprocess: over stdio with the SDK's client and with
raw JSON-RPC lines, and over streamable HTTP on 127.0.0.1 with a bearer token. Bad
requests (malformed JSON-RPC, no or wrong token, an oversized body) get protocol errors
and the server goes on answering."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .support import Corpus

TOKEN = "test-token-7f3a"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}


def agents_command() -> list[str]:
    exe = Path(sys.executable).with_name("agents")
    return [str(exe)]


def env(**extra: str) -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "PYTHONPATH": src, **extra}


def test_stdio_with_the_sdk_client(corpus: Corpus) -> None:
    params = StdioServerParameters(
        command=agents_command()[0], args=["--data-dir", str(corpus.data_dir), "mcp", "serve"], env=env()
    )

    async def main() -> None:
        async with Client(params, cache=None) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"graph_query", "callers", "assemble_context"} <= names
            found = await client.call_tool("callers", {"iri": corpus.send})
            assert not found.is_error
            callers = {e["symbol"]["qualified_name"] for e in found.structured_content["edges"]}
            assert "requests.sessions.Session.request" in callers

    anyio.run(main)


def test_stdio_answers_a_malformed_line_with_a_parse_error_and_goes_on(corpus: Corpus) -> None:
    proc = subprocess.Popen(
        [*agents_command(), "--data-dir", str(corpus.data_dir), "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env(),
    )
    assert proc.stdin and proc.stdout

    def send(line: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    try:
        send(json.dumps(INITIALIZE))
        assert json.loads(proc.stdout.readline())["id"] == 1
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send("{this is not json")
        error = json.loads(proc.stdout.readline())
        assert error["id"] is None and error["error"]["code"] == -32700
        call = {"name": "find_symbol", "arguments": {"name": "Session.send"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 2 and answer["result"]["structuredContent"]["matches"][0]["iri"] == corpus.send
    finally:
        proc.stdin.close()
        assert proc.wait(20) == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(corpus: Corpus) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            *agents_command(),
            "--data-dir",
            str(corpus.data_dir),
            "mcp",
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env(CLEVERAGENTS_SERVER_TOKEN=TOKEN, CLEVERAGENTS_SERVER_MAX_REQUEST_BYTES="20000"),
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(20)


def test_http_refuses_bad_requests_and_keeps_serving(http_server: str, corpus: Corpus) -> None:
    url = http_server
    with httpx.Client(timeout=30) as http:
        missing = http.post(url, headers=HEADERS, json=INITIALIZE)
        assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
        assert "missing bearer token" in missing.json()["error"]["message"]
        wrong = http.post(url, headers={**HEADERS, "Authorization": "Bearer nope"}, json=INITIALIZE)
        assert wrong.status_code == 401 and "wrong bearer token" in wrong.json()["error"]["message"]
        auth = {**HEADERS, "Authorization": f"Bearer {TOKEN}"}
        malformed = http.post(url, headers=auth, content=b"{not json")
        assert malformed.json()["error"]["code"] == -32700
        big = http.post(url, headers=auth, content=b"x" * 30_000)
        assert big.status_code == 413 and "REQUEST_TOO_LARGE" in big.json()["error"]["message"]

    async def main() -> None:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with client, Client(streamable_http_client(url, http_client=client), cache=None) as mcp:
            result = await mcp.call_tool("find_symbol", {"name": "Session.send"})
            assert not result.is_error and result.structured_content["matches"][0]["iri"] == corpus.send
            refused = await mcp.call_tool("graph_query", {"sparql": "DELETE WHERE { ?s ?p ?o }"})
            assert refused.is_error and "read-only" in refused.content[0].text

    anyio.run(main)


def test_binding_beyond_loopback_needs_a_token(corpus: Corpus) -> None:
    done = subprocess.run(
        [
            *agents_command(),
            "--data-dir",
            str(corpus.data_dir),
            "mcp",
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
        ],
        capture_output=True,
        text=True,
        env={k: v for k, v in env().items() if k != "CLEVERAGENTS_SERVER_TOKEN"},
        timeout=60,
    )
    assert done.returncode == 2
    assert "bearer token is required" in done.stdout + done.stderr
