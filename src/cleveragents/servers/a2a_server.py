"""The A2A server (a2a-sdk 1.x, protocol 1.0): an agent card with the skills, the
standard operations through the SDK's request handler (send message, streaming, get,
list and cancel task), the ``_cleveragents/*`` extension methods on the same JSON-RPC
endpoint, and a task store whose records live in the graph.

A task runs one of the MCP server's tools, so both surfaces share one validated path:
a message with a data part ``{"tool": NAME, "arguments": {...}}`` runs that tool; a
text message is a question, answered with context assembled for it from the graph.
The result is the task's artifact (the tool's structured result as data, and the
assembled context as markdown). Running an action as a plan joins when the plans
package lands: an A2A task will then follow the plan's phase and state.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.to_thread
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
from a2a.server.tasks import TaskStore, TaskUpdater
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
from google.protobuf.json_format import MessageToJson, Parse
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cleveragents import __version__
from cleveragents.errors import CleverAgentsError, NotFoundError
from cleveragents.servers.operations import EXTENSION_METHODS, EXTENSION_PREFIX, Operations
from cleveragents.servers.security import ServerSettings, error_text

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
            push_notifications=False,
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
        self._limiter = anyio.CapacityLimiter(4)

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
                task.id, task.context_id, TaskState.Name(state), payload, identity=self.identity
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


class GraphToolExecutor(AgentExecutor):
    """Runs a message as one of the MCP server's tools (see the module docstring)."""

    def __init__(self, tools: MCPServer, settings: ServerSettings) -> None:
        self.tools = tools
        self.settings = settings

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None  # the SDK builds a context only for a message
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
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

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is not None:
            await TaskUpdater(event_queue, task.id, task.context_id).cancel()


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


def extension_route(ops: Operations, rpc: Any) -> Route:
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
            result = await anyio.to_thread.run_sync(lambda: ops.extension(method, params))
        except NotFoundError as exc:
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


def a2a_routes(ops: Operations, tools: MCPServer, settings: ServerSettings, base_url: str) -> list[Route]:
    card = agent_card(settings, base_url)
    handler = DefaultRequestHandler(GraphToolExecutor(tools, settings), GraphTaskStore(ops, settings), card)
    (rpc,) = create_jsonrpc_routes(handler, RPC_PATH)
    return [*create_agent_card_routes(card), extension_route(ops, rpc.endpoint)]
