"""The A2A server (a2a-sdk 1.x, protocol 1.0): an agent card with the skills, the
standard operations through the SDK's request handler (send message, streaming, get,
list and cancel task), the ``_cleveragents/*`` extension methods on the same JSON-RPC
endpoint, and a task store whose records live in the graph.

A message with a data part ``{"action": NAME, "projects": [...], "arguments": {...}}``
runs the action as a plan (read-write servers only): the task follows the plan, each
phase transition and decision streamed as a working status, and it waits
(input-required) wherever the plan waits for its user; the next message of the task
moves the plan on (``execute``, ``apply``, ``resume``, ``cancel``, or guidance text).
Cancelling the task cancels the plan. Its artifacts are the plan's changeset (files and
diff per sandbox) and a markdown report; its metadata names the plan (``plan_id``).

Otherwise a task runs one of the MCP server's tools, so both surfaces share one
validated path: a data part ``{"tool": NAME, "arguments": {...}}`` runs that tool; a
text message is a question, answered with context assembled for it from the graph.
The result is the task's artifact (the tool's structured result as data, and the
assembled context as markdown).
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import httpx
from a2a.helpers.proto_helpers import (
    get_data_parts,
    new_data_part,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    TaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    ListTasksRequest,
    ListTasksResponse,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError
from a2a.utils.push_url_validator import validate_push_notification_url
from google.protobuf.json_format import MessageToJson, Parse
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cleveragents import __version__
from cleveragents.errors import CleverAgentsError, Interrupted, NotFoundError
from cleveragents.servers.operations import EXTENSION_METHODS, EXTENSION_PREFIX, Operations
from cleveragents.servers.security import IDENTITY_KEY, ServerSettings, error_text, is_loopback

RPC_PATH = "/a2a"
EXTENSION_URI = "https://cleveragents.ai/a2a/extensions/cleveragents/v1"
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
# States written to the graph: where a task ends or waits for its client. A task still
# running when the process stops cannot be resumed, so writing its working states would
# cost a validated commit each and save nothing.
PERSISTED = TERMINAL | {TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED}
QUESTION_BUDGET = 4000


def agent_card(settings: ServerSettings, base_url: str) -> AgentCard:
    skills = [
        AgentSkill(
            id="run-action",
            name="Run an action as a plan",
            description="A data part {'action': NAME, 'projects': [...], 'arguments': {...}, 'automation_level': "
            "'manual'|'review'|'auto'} runs the action as a plan (Strategize, Execute in sandboxes, Apply). The "
            "task follows the plan's phase and state, streaming each transition and decision; it waits "
            "(input-required) where the plan waits for its user, and the task's next message moves it on: "
            "'execute', 'apply', 'resume', 'cancel', or guidance text. Artifacts: the changeset and a report. "
            "Read-write servers only.",
            tags=["plan", "action", "refactoring"],
            examples=[
                '{"action": "local/rename-function", "projects": ["demo"], '
                '"arguments": {"old_name": "helper", "new_name": "increment"}}'
            ],
            input_modes=["application/json", "text/plain"],
            output_modes=["application/json", "text/markdown"],
        ),
        AgentSkill(
            id="answer-question",
            name="Answer a question about the codebase",
            description="A text message is a question: the answer is the context the graph assembles for it "
            "(the code it needs, within a token budget, with provenance), as markdown and as data.",
            tags=["code", "context", "knowledge-graph"],
            examples=["where are cookies merged into a request?"],
            input_modes=["text/plain"],
            output_modes=["text/markdown", "application/json"],
        ),
        AgentSkill(
            id="graph-tool",
            name="Query and navigate the graph",
            description="A data part {'tool': NAME, 'arguments': {...}} runs one of the graph tools: graph_query "
            "(SPARQL, as_of), find_symbol, callers, callees, references, implementations, show, history, blame, "
            "changes_between, assemble_context. Arguments are those of the MCP tool of the same name.",
            tags=["sparql", "navigation", "history"],
            examples=['{"tool": "callers", "arguments": {"iri": "https://cleveragents.ai/id/src/..."}}'],
            input_modes=["application/json"],
            output_modes=["application/json"],
        ),
        AgentSkill(
            id="assemble-context",
            name="Assemble context",
            description="{'tool': 'assemble_context', 'arguments': {'query': ..., 'focus': [...], 'budget': N}}: "
            "the most useful context for a task within a token budget.",
            tags=["context"],
            input_modes=["application/json"],
            output_modes=["text/markdown", "application/json"],
        ),
    ]
    card = AgentCard(
        name="CleverAgents",
        description="Knowledge graph of code, documents and their history: questions, navigation, SPARQL, context.",
        version=__version__,
        supported_interfaces=[
            AgentInterface(url=base_url + RPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=[
                AgentExtension(
                    uri=EXTENSION_URI,
                    description="CleverAgents platform methods on the JSON-RPC endpoint: "
                    + ", ".join(EXTENSION_PREFIX + m for m in EXTENSION_METHODS),
                    required=False,
                    params={"methods": [EXTENSION_PREFIX + m for m in EXTENSION_METHODS]},
                )
            ],
        ),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/markdown", "application/json"],
        skills=skills,
    )
    if settings.token:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList()}))
    return card


class GraphTaskStore(TaskStore):
    """Tasks in the graph (``ca:A2ATask``), with the running ones in memory.

    A task is written when it ends (or waits for input): each write is a validated
    commit. A restarted server reads old tasks back from the graph."""

    def __init__(self, ops: Operations, settings: ServerSettings) -> None:
        self.ops = ops
        self.identity = f"a2a:{settings.user}"
        self._cache: dict[str, Task] = {}
        self._written: dict[str, int] = {}  # task id -> state last written to the graph
        # Saves wait for the group commit (Operations.save_task), not for a core: as many
        # waiting threads as the load test's clients, so one commit can take them all.
        self._limiter = anyio.CapacityLimiter(32)

    async def save(self, task: Task, context: ServerCallContext | None = None) -> None:
        copy = Task()
        copy.CopyFrom(task)
        self._cache[task.id] = copy
        state = task.status.state
        if state not in PERSISTED or self._written.get(task.id) == state:
            return  # a running task lives in memory; what outlives the process is written
        self._written[task.id] = state
        payload = MessageToJson(task, indent=None)
        await anyio.to_thread.run_sync(
            lambda: self.ops.save_task(
                task.id, task.context_id, TaskState.Name(state), payload, identity=self.identity, plan=plan_of(task)
            ),
            limiter=self._limiter,
        )
        if state in TERMINAL:
            self._cache.pop(task.id, None)  # the graph holds it now

    async def get(self, task_id: str, context: ServerCallContext | None = None) -> Task | None:
        if task_id in self._cache:
            copy = Task()
            copy.CopyFrom(self._cache[task_id])
            return copy
        try:
            payload = await anyio.to_thread.run_sync(self.ops.load_task, task_id)
        except CleverAgentsError:
            return None
        return Parse(payload, Task(), ignore_unknown_fields=True) if payload else None

    async def list(self, params: ListTasksRequest, context: ServerCallContext | None = None) -> ListTasksResponse:
        payloads = await anyio.to_thread.run_sync(self.ops.list_tasks, params.context_id or None)
        tasks = {t.id: t for t in (Parse(p, Task(), ignore_unknown_fields=True) for p in payloads)}
        tasks.update(
            {t.id: t for t in self._cache.values() if not params.context_id or t.context_id == params.context_id}
        )
        listed = [t for t in tasks.values() if not params.status or t.status.state == params.status]
        size = params.page_size or len(listed) or 1
        return ListTasksResponse(tasks=listed[:size], page_size=size, total_size=len(listed))

    async def delete(self, task_id: str, context: ServerCallContext | None = None) -> None:
        self._cache.pop(task_id, None)
        await anyio.to_thread.run_sync(lambda: self.ops.delete_task(task_id, identity=self.identity))


@dataclass
class _PlanRun:
    """A plan verb running for a task: ``stop`` asks it to stop at its next step, ``done``
    is set once the task's state after the run is written."""

    stop: threading.Event = field(default_factory=threading.Event)
    done: anyio.Event = field(default_factory=anyio.Event)


class GraphExecutor(AgentExecutor):
    """Runs a message: an action as a plan (the run-action skill), else one of the MCP
    server's tools (see the module docstring)."""

    def __init__(self, ops: Operations, tools: MCPServer, settings: ServerSettings) -> None:
        self.ops = ops
        self.tools = tools
        self.settings = settings
        self._runs: dict[str, _PlanRun] = {}  # task id -> its running plan verb

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None  # the SDK builds a context only for a message
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        plan_id = plan_of(task)
        try:
            request = plan_request(message, plan_id)
        except ValueError as exc:
            await updater.failed(new_text_message(str(exc)))
            return
        if request is None:
            await self._run_tool(message, updater)
            return
        run = self._runs[task.id] = _PlanRun()
        try:
            await self._run_plan(plan_id, *request, updater, run, _identity(context, self.settings))
        finally:
            self._runs.pop(task.id, None)
            run.done.set()

    async def _run_tool(self, message: Any, updater: TaskUpdater) -> None:
        await updater.start_work()
        try:
            name, arguments = _tool_call(message)
            with anyio.fail_after(self.settings.request_timeout + 5):
                result = await self.tools.call_tool(name, arguments)
        except (ToolError, CleverAgentsError, ValueError, TimeoutError) as exc:
            text = str(exc) if isinstance(exc, ToolError | ValueError) else error_text(exc)
            if isinstance(exc, TimeoutError):
                text = f"Error [408] TIMEOUT: the task did not finish within {self.settings.request_timeout:g} s"
            await updater.failed(new_text_message(text.removeprefix(f"Error executing tool {name}: ")))
            return
        if result.is_error:
            text = result.content[0].text if result.content else "the tool failed"
            await updater.failed(new_text_message(text.removeprefix(f"Error executing tool {name}: ")))
            return
        data = result.structured_content or {}
        parts = [new_data_part(data, media_type="application/json")]
        if isinstance(data.get("markdown"), str):
            parts.append(new_text_part(data["markdown"], media_type="text/markdown"))
        await updater.add_artifact(parts, name=name)
        await updater.complete()

    async def _run_plan(
        self,
        plan_id: str | None,
        verb: str,
        arguments: dict[str, Any],
        updater: TaskUpdater,
        run: _PlanRun,
        identity: str,
    ) -> None:
        """Run a plan verb in a worker thread, streaming each step of the plan as a working
        status; then set the task's state from the plan's (``task_state``)."""
        if self.settings.read_only:
            await updater.reject(
                new_text_message(
                    "Error [403] FORBIDDEN: running an action as a plan writes plans and resources; "
                    "this server is read-only (agents serve --read-write)"
                )
            )
            return
        await updater.start_work(new_text_message(f"plan {verb}" + (f" {plan_id}" if plan_id else "")))
        seen: dict[str, Any] = {"id": plan_id}

        def observe(plan: dict[str, Any], event: str) -> None:  # in the worker thread
            seen["id"] = plan["id"]
            # A status nobody can receive any more (the task's queue closed) never fails the plan.
            with contextlib.suppress(Exception):
                anyio.from_thread.run(
                    updater.update_status,
                    TaskState.TASK_STATE_WORKING,
                    new_text_message(event),
                    None,
                    plan_metadata(plan),
                )
            if run.stop.is_set() and plan["state"] not in ENDED_PLAN_STATES:
                raise Interrupted("cancelled by the A2A client")

        problem = ""
        try:
            result = await anyio.to_thread.run_sync(
                lambda: self.ops.plan_verb(verb, plan_id, identity=identity, observer=observe, **arguments)
            )
            plan, allowed = result.plan, result.allowed_verbs
        except CleverAgentsError as exc:
            problem = error_text(exc)
        if problem:
            if not seen["id"]:  # no plan was made (an unknown action, a bad argument...)
                await updater.failed(new_text_message(problem))
                return
            status = await anyio.to_thread.run_sync(lambda: self.ops.plan_status(seen["id"]))
            plan, allowed = status.plan, status.allowed_verbs
        await self._settle(plan, allowed, updater, problem)

    async def _settle(self, plan: dict[str, Any], allowed: list[str], updater: TaskUpdater, problem: str) -> None:
        """The task's artifacts (the plan's changeset and report) and state after a run."""
        try:
            artifacts = await anyio.to_thread.run_sync(lambda: self.ops.plan_artifacts(plan["id"]))
        except CleverAgentsError:
            artifacts = None  # a plan with no sandbox yet has no changeset to show
        if artifacts is not None:
            changes = {"changeset": artifacts.changeset, "diff": artifacts.diff}
            await updater.add_artifact(
                [new_data_part(changes, media_type="application/json")],
                artifact_id=f"{plan['id']}-changeset",
                name="changeset",
            )
            await updater.add_artifact(
                [new_text_part(artifacts.report, media_type="text/markdown")],
                artifact_id=f"{plan['id']}-report",
                name="report",
            )
        state = task_state(plan)
        text = plan_summary(plan, allowed, problem)
        await updater.update_status(state, new_text_message(text), metadata=plan_metadata(plan))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel the task's plan: a running one stops at its next step (then its run
        cancels it and writes the task's state); a waiting one is cancelled here."""
        task = context.current_task
        if task is None:
            return
        run = self._runs.get(task.id)
        if run is not None:
            run.stop.set()
            await run.done.wait()
            return
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        plan_id = plan_of(task)
        if plan_id is None:
            await updater.cancel()
            return
        identity = _identity(context, self.settings)
        try:
            result = await anyio.to_thread.run_sync(
                lambda: self.ops.plan_verb("cancel", plan_id, identity=identity, reason="cancelled by the A2A client")
            )
        except CleverAgentsError as exc:
            raise TaskNotCancelableError(message=error_text(exc)) from None
        text = plan_summary(result.plan, result.allowed_verbs, "")
        await updater.update_status(
            TaskState.TASK_STATE_CANCELED, new_text_message(text), metadata=plan_metadata(result.plan)
        )


# --- an A2A task as a plan ------------------------------------------------------------------

# Plan states after which nothing runs: a stop request no longer interrupts the plan there.
ENDED_PLAN_STATES = frozenset({"applied", "cancelled"})
# Words a follow-up message may be, to move its task's plan; other text is guidance (prompt).
MESSAGE_VERBS = ("execute", "apply", "resume", "cancel")


def task_state(plan: dict[str, Any]) -> TaskState:
    """A task's state from its plan's: done when applied, canceled when cancelled, working
    while a phase runs; anywhere else the plan waits for its user (the next verb, an
    approval, guidance after an error), which A2A calls input-required."""
    if plan["state"] == "applied":
        return TaskState.TASK_STATE_COMPLETED
    if plan["state"] == "cancelled":
        return TaskState.TASK_STATE_CANCELED
    if plan["state"] == "processing":
        return TaskState.TASK_STATE_WORKING
    return TaskState.TASK_STATE_INPUT_REQUIRED


def plan_metadata(plan: dict[str, Any]) -> dict[str, Any]:
    """What a task's metadata says of its plan (merged into the task by the SDK)."""
    return {
        "plan_id": plan["id"],
        "plan_phase": plan["phase"],
        "plan_state": plan["state"],
        "plan_attempt": plan["attempt"],
    }


def plan_of(task: Task | None) -> str | None:
    if task is None or "plan_id" not in task.metadata:
        return None
    return str(task.metadata["plan_id"])


def plan_summary(plan: dict[str, Any], allowed: list[str], problem: str) -> str:
    text = f"Plan {plan['id']}: phase {plan['phase']}, state {plan['state']}."
    if problem:
        text += f" {problem}"
    elif plan.get("error"):
        text += f" {plan['error']}"
    if task_state(plan) != TaskState.TASK_STATE_INPUT_REQUIRED:
        return text
    words = [v for v in MESSAGE_VERBS if v in allowed]
    if words:
        text += " Reply with " + " or ".join(repr(w) for w in words)
        text += ", or with guidance for the plan as text." if "prompt" in allowed else "."
    return text


def plan_request(message: Any, plan_id: str | None) -> tuple[str, dict[str, Any]] | None:
    """The plan verb a message asks for, or None for a tool call or a question.

    A new task: a data part ``{"action": NAME, "projects": [...], "arguments": {...},
    "automation_level": ...}`` runs the action as a plan (``use``). A task that has a plan:
    a data part ``{"verb": V}`` or a text that is one of ``MESSAGE_VERBS``; any other text
    is guidance for the plan (``prompt``)."""
    data = next((d for d in get_data_parts(message.parts) if isinstance(d, dict)), None)
    text = "\n".join(p.text for p in message.parts if p.HasField("text")).strip()
    if plan_id is None:
        if data is None or "action" not in data:
            return None
        projects, arguments = data.get("projects"), data.get("arguments") or {}
        if not isinstance(data["action"], str) or not isinstance(projects, list) or not isinstance(arguments, dict):
            raise ValueError(
                "Error [422] VALIDATION_FAILED: run an action as {'action': NAME, 'projects': [PROJECT, ...], "
                "'arguments': {...}, 'automation_level': 'manual'|'review'|'auto'}"
            )
        level = data.get("automation_level")
        return "use", {
            "action": data["action"],
            "projects": [str(p) for p in projects],
            "arguments": arguments,
            "automation_level": str(level) if level else None,
        }
    verb = str(data.get("verb", "")) if data else text.lower()
    if verb in MESSAGE_VERBS:
        return verb, {"reason": "cancelled by the A2A client"} if verb == "cancel" else {}
    if data and data.get("verb"):
        raise ValueError(f"Error [422] VALIDATION_FAILED: 'verb' is one of {', '.join(MESSAGE_VERBS)}")
    if not text:
        raise ValueError("Error [422] VALIDATION_FAILED: send a verb or guidance text for the task's plan")
    return "prompt", {"guidance": text}


def _identity(context: RequestContext, settings: ServerSettings) -> str:
    """Who is calling, for the audit log: the HTTP guard's identity (token fingerprint and
    address), kept by the call context builder."""
    call = context.call_context
    who = call.state.get(IDENTITY_KEY) if call is not None else None
    return f"a2a:{settings.user}:{who or 'local'}"


class IdentityContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, plus the caller's identity from the HTTP guard."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        state = request.scope.get("state") or {}
        context.state[IDENTITY_KEY] = state.get(IDENTITY_KEY) if isinstance(state, dict) else None
        return context


def _tool_call(message: Any) -> tuple[str, dict[str, Any]]:
    """The tool a message asks for: its first data part's {'tool', 'arguments'}, else its
    text as a question (assemble_context with that query)."""
    for data in get_data_parts(message.parts):
        if isinstance(data, dict) and "tool" in data:
            arguments = data.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise ValueError("Error [422] VALIDATION_FAILED: 'arguments' must be an object")
            if data["tool"] == "index":
                raise ValueError("Error [403] FORBIDDEN: index is an MCP tool only")
            return str(data["tool"]), arguments
    text = "\n".join(p.text for p in message.parts if p.HasField("text")).strip()
    if not text:
        raise ValueError(
            "Error [422] VALIDATION_FAILED: send a question as text, or a data part {'tool': NAME, 'arguments': {...}}"
        )
    return "assemble_context", {"query": text, "budget": QUESTION_BUDGET}


def extension_route(ops: Operations, rpc: Any, settings: ServerSettings) -> Route:
    """The JSON-RPC endpoint: ``_cleveragents/*`` methods here, the rest to the SDK."""

    async def endpoint(request: Request) -> Response:
        body = await request.body()  # Starlette caches it: the SDK's dispatcher reads it again
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if not (isinstance(method, str) and method.startswith(EXTENSION_PREFIX)):
            return await rpc(request)
        request_id = message.get("id")
        params = message.get("params") or {}
        try:
            if not isinstance(params, dict):
                raise ValueError("params must be an object")
            state = request.scope.get("state") or {}
            identity = f"a2a:{settings.user}:{state.get(IDENTITY_KEY) or 'local'}"
            result = await anyio.to_thread.run_sync(
                lambda: ops.extension(method, params, identity=identity, read_only=settings.read_only)
            )
        except NotFoundError as exc:
            if "extension method" not in exc.message:  # a plan or decision that does not exist
                return _rpc_error(request_id, -32001, exc)
            return _rpc_error(request_id, -32601, exc)
        except CleverAgentsError as exc:
            return _rpc_error(request_id, -32001, exc)
        except ValueError as exc:
            return JSONResponse(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"Invalid params: {exc}"}}
            )
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})

    return Route(RPC_PATH, endpoint=endpoint, methods=["POST"])


def _rpc_error(request_id: Any, code: int, exc: CleverAgentsError) -> JSONResponse:
    error = {"code": code, "message": error_text(exc), "data": exc.to_dict()}
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error})


def a2a_routes(
    ops: Operations, tools: MCPServer, settings: ServerSettings, base_url: str
) -> tuple[list[Route], Callable[[], Awaitable[None]]]:
    """The A2A routes, and what closes their HTTP client (push notifications) at shutdown.

    Push notification configs live in memory: a restarted server forgets them (its tasks'
    records are in the graph)."""
    card = agent_card(settings, base_url)
    push_configs = InMemoryPushNotificationConfigStore()
    push_client = httpx.AsyncClient(timeout=10)
    allowed = push_url_policy(settings)
    handler = DefaultRequestHandler(
        GraphExecutor(ops, tools, settings),
        GraphTaskStore(ops, settings),
        card,
        push_config_store=push_configs,
        push_sender=BasePushNotificationSender(push_client, push_configs, push_url_validator=allowed),
        push_url_validator=allowed,
    )
    (rpc,) = create_jsonrpc_routes(handler, RPC_PATH, context_builder=IdentityContextBuilder())

    async def close() -> None:
        await push_client.aclose()

    return [*create_agent_card_routes(card), extension_route(ops, rpc.endpoint, settings)], close


def push_url_policy(settings: ServerSettings) -> Callable[[str], Awaitable[bool]]:
    """Where the server may POST push notifications. Bound to loopback, its clients are on
    this machine: only loopback URLs. Bound elsewhere: the SDK's screening (http(s), no
    loopback, private or metadata addresses), so a client cannot aim it inside the network."""
    if not settings.loopback:
        return validate_push_notification_url

    async def loopback_only(url: str) -> bool:
        parsed = urllib.parse.urlsplit(url)
        return parsed.scheme in ("http", "https") and is_loopback(parsed.hostname or "")

    return loopback_only
