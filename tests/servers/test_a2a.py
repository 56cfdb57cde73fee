"""``agents serve`` as a real process on 127.0.0.1, driven by the a2a-sdk client: the
agent card, a question and a tool call as tasks (streamed and not), GetTask and
ListTasks, the ``_cleveragents/*`` methods, errors, and tasks that survive a restart
(they live in the graph)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageRequest,
    TaskState,
)
from google.protobuf.json_format import MessageToDict

from .support import Corpus
from .test_mcp_processes import agents_command, env, free_port

TOKEN = "a2a-test-token"


@contextmanager
def serving(corpus: Corpus, port: int) -> Iterator[str]:
    proc = subprocess.Popen(
        [*agents_command(), "--data-dir", str(corpus.data_dir), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env(CLEVERAGENTS_SERVER_TOKEN=TOKEN),
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(base + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.2)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(20)


def message(*parts: Any) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=f"m-{time.monotonic_ns()}", role=Role.ROLE_USER, parts=parts))


async def run_task(base: str, request: SendMessageRequest, *, streaming: bool) -> tuple[Any, list[str]]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
        client = await create_client(base, client_config=ClientConfig(httpx_client=http, streaming=streaming))
        kinds, task = [], None
        async for event in client.send_message(request):
            kinds.append(event.WhichOneof("payload"))
            if event.HasField("task"):
                task = event.task
        assert task is not None
        fetched = await client.get_task(GetTaskRequest(id=task.id))
        return fetched, kinds


def test_a2a_tasks_streaming_extensions_and_restart(corpus: Corpus) -> None:
    port = free_port()
    with serving(corpus, port) as base:
        card = httpx.get(base + "/.well-known/agent-card.json").json()
        assert {s["id"] for s in card["skills"]} == {"run-action", "answer-question", "graph-tool", "assemble-context"}
        assert card["supportedInterfaces"][0]["protocolVersion"] == "1.0"
        assert card["capabilities"]["streaming"] and "bearer" in card["securitySchemes"]

        tool = message(new_data_part({"tool": "callers", "arguments": {"iri": corpus.send}}))
        done, kinds = anyio.run(lambda: run_task(base, tool, streaming=True))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert "status_update" in kinds or "artifact_update" in kinds  # streamed as it ran
        edges = MessageToDict(done.artifacts[0].parts[0])["data"]["edges"]
        assert "requests.sessions.Session.request" in {e["symbol"]["qualified_name"] for e in edges}

        question = message(new_text_part("how does a session send a prepared request"))
        answered, _ = anyio.run(lambda: run_task(base, question, streaming=False))
        assert answered.status.state == TaskState.TASK_STATE_COMPLETED
        texts = [p.text for p in answered.artifacts[0].parts if p.HasField("text")]
        assert texts and "sessions.py" in texts[0]

        bad = message(
            new_data_part({"tool": "graph_query", "arguments": {"sparql": "INSERT DATA { <urn:a> <urn:b> 1 }"}})
        )
        failed, _ = anyio.run(lambda: run_task(base, bad, streaming=False))
        assert failed.status.state == TaskState.TASK_STATE_FAILED
        assert "read-only" in failed.status.message.parts[0].text

        rpc = {"Authorization": f"Bearer {TOKEN}"}
        health = httpx.post(
            base + "/a2a", headers=rpc, json={"jsonrpc": "2.0", "id": 1, "method": "_cleveragents/health/check"}
        )
        assert health.json()["result"]["status"] == "ok"
        resources = httpx.post(
            base + "/a2a",
            headers=rpc,
            json={"jsonrpc": "2.0", "id": 2, "method": "_cleveragents/registry/resource/list"},
        ).json()["result"]["resources"]
        assert [r["name"] for r in resources] == ["local/requests"]
        unknown = httpx.post(
            base + "/a2a", headers=rpc, json={"jsonrpc": "2.0", "id": 3, "method": "_cleveragents/nope"}
        )
        assert unknown.json()["error"]["code"] == -32601
        no_method = httpx.post(base + "/a2a", headers=rpc, json={"jsonrpc": "2.0", "id": 4, "method": "NoSuchMethod"})
        assert no_method.json()["error"]["code"] == -32601
        garbage = httpx.post(base + "/a2a", headers={**rpc, "Content-Type": "application/json"}, content=b"{nope")
        assert garbage.json()["error"]["code"] == -32700
        assert httpx.post(base + "/a2a", json={"jsonrpc": "2.0", "id": 5, "method": "GetTask"}).status_code == 401
        old_ids = {done.id, answered.id, failed.id}

    with serving(corpus, port) as base:  # a new process: the tasks come back from the graph

        async def after_restart() -> tuple[Any, Any]:
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
                client = await create_client(base, client_config=ClientConfig(httpx_client=http))
                return await client.get_task(GetTaskRequest(id=done.id)), await client.list_tasks(ListTasksRequest())

        again, listed = anyio.run(after_restart)
        assert again.status.state == TaskState.TASK_STATE_COMPLETED and again.artifacts == done.artifacts
        assert old_ids <= {t.id for t in listed.tasks}
