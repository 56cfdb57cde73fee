"""An A2A task as a plan, over real HTTP on 127.0.0.1 with the a2a-sdk client: the rename
example (a real git repository, indexed) run as a task that streams the plan's steps,
waits for 'apply', and completes with the changeset and report as artifacts, with push
notifications to a real local HTTP receiver; cancelling a running plan and a waiting one;
the ``_cleveragents/plan/*`` methods."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
import yaml
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf.json_format import MessageToDict

from cleveragents.config import Config
from cleveragents.errors import ConflictError, ForbiddenError, NotFoundError, ValidationError
from cleveragents.graph.workspace import Workspace
from cleveragents.servers.app import build_app
from cleveragents.servers.security import ServerSettings
from cleveragents.services import indexing, plans, projects, resources
from cleveragents.services.serving import workspace_operations
from tests.plans.conftest import write_action
from tests.plans.test_lifecycle import SCRIPT
from tests.plans.test_rename_example import EXAMPLE

from .test_mcp_processes import free_port

TOKEN = "plan-task-token"
AGENT = "tester"
# A plan that runs long enough to be cancelled while it runs: Execute sleeps in the sandbox.
SLOW_SCRIPT = {
    "strategize": [{"key": "how", "decision": "strategy_choice", "question": "How?", "chosen": "wait"}],
    "execute": [
        {"key": "wait", "decision": "implementation_choice", "question": "What?", "chosen": "sleep"},
        {"tool": "run_command", "decision_key": "wait", "arguments": {"command": "sleep 2"}},
        {"decision": "validation_response", "question": "Done?", "chosen": "yes", "influenced_by": ["wait"]},
    ],
}


@dataclass
class Served:
    base: str
    ws: Workspace
    repo: Path
    port: int


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small handwritten package in a git repository: the protocol mapping is under test
    here; tests/plans/test_rename_example.py runs the same example on a pinned corpus."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("def helper(x):\n    return x + 1\n")
    (root / "pkg" / "app.py").write_text(
        "from pkg.util import helper\n\n\ndef run(values):\n    return [helper(v) for v in values]\n"
    )
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "-C", str(root), *args], check=True)
    return root


@pytest.fixture
def served(repo: Path, tmp_path: Path) -> Iterator[Served]:
    ws = Workspace(tmp_path / "data", writer_wait=30)
    ws.initialize()
    info, _ = resources.add(ws, repo, type_name="git-checkout", name="local/repo")
    indexing.index(ws, [info])
    projects.create(ws, "local/demo", agent=AGENT)
    projects.link(ws, "local/demo", "local/repo", agent=AGENT)
    plans.create_action(ws, EXAMPLE, {}, agent=AGENT)
    (tmp_path / "slow.yaml").write_text(yaml.safe_dump(SLOW_SCRIPT))
    slow = tmp_path / "slow-action.yaml"
    slow.write_text(
        yaml.safe_dump(
            {
                "name": "local/slow",
                "description": "Wait a little",
                "definition_of_done": "waited",
                "strategy_actor": "scripted:slow.yaml",
                "execution_actor": "scripted:slow.yaml",
                "automation_level": "auto",
            }
        )
    )
    plans.create_action(ws, slow, {}, agent=AGENT)
    port = free_port()
    with running(ws, port):
        yield Served(f"http://127.0.0.1:{port}", ws, repo, port)


@contextmanager
def running(ws: Workspace, port: int) -> Iterator[None]:
    """``agents serve --read-write`` in this process (uvicorn in a thread), on 127.0.0.1."""
    settings = ServerSettings(port=port, token=TOKEN, read_only=False, user="alice")
    app = build_app(workspace_operations(ws.data_dir, Config(ws.data_dir), read_only=False), settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(20)


@contextmanager
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP endpoint on 127.0.0.1 that keeps every push notification it gets."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"token": self.headers.get("X-A2A-Notification-Token"), **json.loads(body)})
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}/hook", received
    finally:
        http.shutdown()


def request(*parts: Any, task: Any = None, push: str | None = None) -> SendMessageRequest:
    message = Message(message_id=f"m-{time.monotonic_ns()}", role=Role.ROLE_USER, parts=parts)
    if task is not None:
        message.task_id, message.context_id = task.id, task.context_id
    config = SendMessageConfiguration()
    if push:
        config.task_push_notification_config.CopyFrom(TaskPushNotificationConfig(url=push, token="hook-secret"))
    return SendMessageRequest(message=message, configuration=config)


RENAME = {
    "action": "local/rename-function",
    "projects": ["demo"],
    "arguments": {"old_name": "helper", "new_name": "increment"},
}


async def stream(base: str, req: SendMessageRequest) -> tuple[Any, list[Any]]:
    """Send a message with streaming; the task as GetTask then returns it, and the status
    updates seen on the way."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
        client = await create_client(base, client_config=ClientConfig(httpx_client=http, streaming=True))
        updates, task_id = [], ""
        async for event in client.send_message(req):
            if event.HasField("task"):
                task_id = event.task.id
            if event.HasField("status_update"):
                updates.append(event.status_update)
                task_id = event.status_update.task_id
        return await client.get_task(GetTaskRequest(id=task_id)), updates


def test_an_action_runs_as_a_task_that_follows_its_plan(served: Served) -> None:
    with receiver() as (hook, pushed):
        task, updates = anyio.run(stream, served.base, request(new_data_part(RENAME), push=hook))
        # review: Strategize then Execute run by themselves; the plan waits for 'apply'.
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, task.status.message
        plan_id = task.metadata["plan_id"]
        assert (task.metadata["plan_phase"], task.metadata["plan_state"]) == ("execute", "complete")
        assert "Reply with 'apply'" in task.status.message.parts[0].text
        steps = [(u.metadata["plan_phase"], u.metadata["plan_state"]) for u in updates if "plan_phase" in u.metadata]
        assert ("strategize", "processing") in steps and ("execute", "processing") in steps
        assert steps.index(("strategize", "complete")) < steps.index(("execute", "processing"))  # causal order
        texts = [u.status.message.parts[0].text for u in updates if u.status.message.parts]
        assert any("decision strategy_choice" in t for t in texts)  # decisions stream as they are made
        changes = MessageToDict(next(a for a in task.artifacts if a.name == "changeset").parts[0])["data"]
        assert "+def increment(x):" in changes["diff"]["local/repo"]
        assert "def helper(" in (served.repo / "pkg" / "util.py").read_text()  # nothing real changed yet

        # The waiting task outlives its server: another server (a new app: its own executor
        # and task store, no memory of the task) reads it back from the graph and takes the
        # task's next message. Push configs live in memory: the client gives it again.
        other = free_port()
        with running(served.ws, other):
            apply = request(new_text_part("apply"), task=task, push=hook)
            done, _ = anyio.run(stream, f"http://127.0.0.1:{other}", apply)
        assert done.status.state == TaskState.TASK_STATE_COMPLETED, done.status.message
        assert done.id == task.id and done.metadata["plan_state"] == "applied"
        assert "def increment(x)" in (served.repo / "pkg" / "util.py").read_text()
        report = next(a for a in done.artifacts if a.name == "report").parts[0].text
        assert f"# Plan {plan_id}" in report and "**strategy_choice**" in report and "util.py" in report
        assert len([a for a in done.artifacts if a.name == "changeset"]) == 1  # replaced, not appended

        deadline = time.monotonic() + 10  # delivery is asynchronous
        while not any(_state(p) == "TASK_STATE_COMPLETED" for p in pushed) and time.monotonic() < deadline:
            time.sleep(0.1)
    states = [_state(p) for p in pushed]
    assert "TASK_STATE_WORKING" in states and "TASK_STATE_INPUT_REQUIRED" in states
    assert "TASK_STATE_COMPLETED" in states and {p["token"] for p in pushed} == {"hook-secret"}

    rpc = {"Authorization": f"Bearer {TOKEN}"}

    def call(method: str, **params: Any) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": f"_cleveragents/plan/{method}", "params": params}
        return httpx.post(served.base + "/a2a", headers=rpc, json=body, timeout=60).json()

    assert call("status", plan_id=plan_id)["result"]["plan"]["state"] == "applied"
    tree = call("tree", plan_id=plan_id)["result"]
    assert "implementation_choice" in {d["type"] for d in tree["decisions"]}
    assert [p["id"] for p in call("list", state="applied")["result"]["plans"]] == [plan_id]
    assert "util.py" in call("artifacts", plan_id=plan_id)["result"]["report"]
    assert call("status", plan_id="01NOSUCHPLAN")["error"]["code"] == -32001
    assert call("use", action="local/nope", projects=["demo"])["error"]["code"] == -32001
    with served.ws.reader() as store:
        audited = {
            r["t"].value
            for r in store.query("SELECT ?t WHERE { ?e a ca:AuditEvent ; ca:eventType ?t ; ca:userIdentity ?who }")
        }
        linked = store.query(f'ASK {{ ?t a ca:A2ATask ; ca:taskPlan ?p . ?p ca:ulid "{plan_id}" }}')
    assert {"plan_use", "plan_apply"} <= audited
    assert bool(linked)


def _state(pushed: dict[str, Any]) -> str:
    for key in ("statusUpdate", "task"):
        if key in pushed:
            return pushed[key]["status"]["state"]
    return ""


def test_cancelling_a_task_cancels_its_plan_running_or_waiting(served: Served) -> None:
    async def cancel_while_running() -> tuple[Any, Any]:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
            client = await create_client(base_url := served.base, client_config=ClientConfig(httpx_client=http))
            assert base_url
            running = anyio.Event()
            seen: dict[str, Any] = {}

            async def follow() -> None:
                slow = {"action": "local/slow", "projects": ["demo"], "arguments": {}}
                async for event in client.send_message(request(new_data_part(slow))):
                    update = event.status_update if event.HasField("status_update") else None
                    if update is not None and dict(update.metadata).get("plan_phase") == "execute":
                        seen["task"] = update.task_id
                        running.set()

            async with anyio.create_task_group() as group:
                group.start_soon(follow)
                with anyio.fail_after(60):
                    await running.wait()
                cancelled = await client.cancel_task(CancelTaskRequest(id=seen["task"]))
            return cancelled, await client.get_task(GetTaskRequest(id=seen["task"]))

    cancelled, after = anyio.run(cancel_while_running)
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert after.status.state == TaskState.TASK_STATE_CANCELED and after.metadata["plan_state"] == "cancelled"
    plan, _ = plans.status(served.ws, after.metadata["plan_id"])
    assert plan.state == "cancelled" and "cancelled by the A2A client" in plan.error

    async def cancel_while_waiting() -> Any:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
            client = await create_client(served.base, client_config=ClientConfig(httpx_client=http))
            task_id = ""
            async for event in client.send_message(request(new_data_part(RENAME))):
                if event.HasField("task"):
                    task_id = event.task.id
            waiting = await client.get_task(GetTaskRequest(id=task_id))
            assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            return await client.cancel_task(CancelTaskRequest(id=waiting.id))

    parked = anyio.run(cancel_while_waiting)
    assert parked.status.state == TaskState.TASK_STATE_CANCELED
    plan, _ = plans.status(served.ws, parked.metadata["plan_id"])
    assert plan.state == "cancelled"


def test_plan_methods_that_write_are_refused_by_a_read_only_server(ws: Workspace) -> None:
    ops = workspace_operations(ws.data_dir, Config(ws.data_dir))
    with pytest.raises(ForbiddenError, match="read-only"):
        ops.extension("_cleveragents/plan/use", {"action": "x"}, identity="t", read_only=True)
    assert ops.extension("_cleveragents/plan/list", {}, identity="t", read_only=True) == {"plans": []}


def test_the_plan_lifecycle_methods_drive_a_plan(ws: Workspace, tmp_path: Path) -> None:
    plans.create_action(
        ws, write_action(tmp_path, SCRIPT.replace("confidence: 0.6", "confidence: 0.8")), {}, agent=AGENT
    )
    ops = workspace_operations(ws.data_dir, Config(ws.data_dir), read_only=False)

    def call(method: str, **params: Any) -> Any:
        return ops.extension(f"_cleveragents/plan/{method}", params, identity="a2a:bob:local", read_only=False)

    used = call(
        "use",
        action="local/demo-action",
        projects=["demo"],
        arguments={"old": "f", "new": "g"},
        automation_level="review",
    )
    plan_id = used["plan"]["id"]
    assert (used["plan"]["phase"], used["plan"]["state"]) == ("execute", "complete")
    decisions = {d["question"]: d["id"] for d in call("tree", plan_id=plan_id)["decisions"]}
    assert call("explain", decision_id=decisions["How to rename?"])["decision"]["chosen"].startswith("Rename f to g")
    prompted = call("prompt", plan_id=plan_id, guidance="keep the old name as an alias")
    assert prompted["plan"]["state"] == "complete"
    corrected = call("correct", decision_id=decisions["How to edit?"], mode="append", guidance="use the AST")
    assert corrected["correction"]["mode"] == "append" and corrected["plan"]["phase"] == "execute"
    assert call("diff", plan_id=plan_id)["diff"] == {}  # the project has no resource: no sandbox
    assert "keep the old name as an alias" in call("artifacts", plan_id=plan_id)["report"]
    with pytest.raises(NotFoundError):
        call("rollback", plan_id=plan_id, checkpoint="nope")
    assert call("cancel", plan_id=plan_id, reason="enough")["plan"]["state"] == "cancelled"
    with pytest.raises(ConflictError, match="state cancelled"):
        call("execute", plan_id=plan_id)
    with pytest.raises(ValidationError, match=r"params\.plan_id"):
        call("status")
    with ws.reader() as store:
        events = [
            r["t"].value
            for r in store.query(
                'SELECT ?t WHERE { ?e a ca:AuditEvent ; ca:eventType ?t ; ca:userIdentity "a2a:bob:local" }'
            )
        ]
    assert sorted(events) == ["plan_cancel", "plan_correct", "plan_prompt", "plan_use"]


def test_task_saves_that_wait_for_the_writer_go_in_one_commit(ws: Workspace) -> None:
    ops = workspace_operations(ws.data_dir, Config(ws.data_dir))
    with ws.reader() as store:
        before = store.head
    with ws.writer():  # another writer holds the store: the first save waits with its task
        threads = [
            threading.Thread(
                target=ops.save_task, args=(f"t{i}", "ctx", "TASK_STATE_COMPLETED", "{}"), kwargs={"identity": "a2a:t"}
            )
            for i in range(8)
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.5)  # the other seven are queued behind it meanwhile
    for thread in threads:
        thread.join(60)
    with ws.reader() as store:
        assert store.head - before == 2  # the first task alone, then the seven that waited together
    assert {p for p in ops.list_tasks("ctx")} == {"{}"} and len(ops.list_tasks("ctx")) == 8
    with pytest.raises(ValidationError, match="not a task id"):
        ops.save_task("no spaces allowed", "ctx", "TASK_STATE_COMPLETED", "{}", identity="a2a:t")
    assert len(ops.list_tasks("ctx")) == 8
