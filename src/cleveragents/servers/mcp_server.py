"""The MCP server: graph, navigation, history and context tools, the ontology and named
queries as resources, entity renderings by IRI, and a few prompts.

Built on the SDK's ``MCPServer`` (mcp 2.x). Each tool declares its input with typed,
constrained parameters (the SDK turns them into JSON Schema) and returns a pydantic
model (the SDK publishes its output schema and sends structured content). Failures are
``ToolError`` with the product's ``Error [code] CATEGORY: message`` text: the client sees
``isError`` and the reason, and the server keeps serving.
"""

# No `from __future__ import annotations`: the SDK evaluates tool annotations, and some
# are built inside build_mcp_server from the settings.
import contextlib
import itertools
import json
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST, ToolAnnotations
from pydantic import Field

from cleveragents import __version__
from cleveragents.errors import CleverAgentsError, QueryTimeoutError
from cleveragents.servers import models
from cleveragents.servers.operations import Operations, PlanStep
from cleveragents.servers.security import IDENTITY_KEY, ServerSettings, error_text

NAME = "cleveragents"
MAX_SPARQL_CHARS = 100_000
MAX_ROWS = 10_000
RELATION_DOCS = {
    "callers": "The callables that call this one, with each call edge's confidence and how it was resolved.",
    "callees": "The callables this one calls, with each call edge's confidence and how it was resolved.",
    "references": "Everything that depends on or refers to this entity (calls, imports, type references, inheritance).",
    "implementations": "The classes implementing or inheriting from this one, and the methods overriding it.",
}

T = TypeVar("T")

Iri = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="An entity IRI (https://cleveragents.ai/id/src/...), <IRI> or prefixed name; "
        "find_symbol turns a name into one",
    ),
]
AsOf = Annotated[
    str | None,
    Field(default=None, max_length=200, description="Revision number, ISO time or git sha; default: the head"),
]

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)

INSTRUCTIONS = (
    "CleverAgents knowledge graph of the indexed code, documents and their history. Start with "
    "find_symbol to turn a name into an IRI, then callers/callees/references/implementations/show; "
    "assemble_context gives the most useful code for a question within a token budget; graph_query "
    "runs SPARQL (prefixes uko:, uko-code:, uko-py:, ca:, prov: are predeclared)."
)


def identity_of(ctx: Context, settings: ServerSettings) -> str:
    """Who is calling, for the audit log: the HTTP guard's identity, else the stdio user."""
    try:
        request = ctx.request_context.request
    except ValueError:  # called in process, not over MCP: the A2A server runs its tasks so
        return f"a2a:{settings.user}"
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    who = state.get(IDENTITY_KEY) if isinstance(state, dict) else None
    return f"mcp:{settings.user}:{who or 'stdio'}"


class Runner:
    """Runs a blocking operation off the event loop under the request time limit, and
    turns its failure into a ToolError the client can read."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        # Tools share the store; more threads than cores only queue inside Oxigraph.
        self.limiter = anyio.CapacityLimiter(8)

    async def __call__(self, fn: Callable[[], T], *, timeout: float | None = None) -> T:
        limit = timeout or self.settings.request_timeout
        try:
            with anyio.fail_after(limit + 1.0):  # SPARQL enforces its own limit first
                return await anyio.to_thread.run_sync(fn, limiter=self.limiter, abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(
                error_text(QueryTimeoutError(f"the request did not finish within {limit:g} s (server.request_timeout)"))
            ) from None
        except CleverAgentsError as exc:
            raise ToolError(error_text(exc)) from None


def progress_bridge(ctx: Context) -> Callable[[float, float | None, str], None]:
    """A thread-side progress callback that sends MCP progress notifications."""

    def report(done: float, total: float | None, message: str) -> None:
        with contextlib.suppress(Exception):  # a client that went away does not fail the operation
            anyio.from_thread.run(partial(ctx.report_progress, done, total, message))

    return report


def plan_progress(ctx: Context) -> PlanStep:
    """Each step of a running plan (a transition, a decision) as an MCP progress notification."""
    report = progress_bridge(ctx)
    steps = itertools.count(1)

    def observe(plan: dict[str, Any], event: str) -> None:
        report(next(steps), None, f"{plan['phase']} {plan['state']}: {event}")

    return observe


class MessageSizeLimit:
    """MCP middleware: a request whose params exceed the limit is refused before any
    handler runs (stdio has no HTTP guard; this holds for every transport)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.params is not None:
            size = len(json.dumps(ctx.params, default=str))
            if size > self.limit:
                raise MCPError(
                    INVALID_REQUEST,
                    f"Error [413] REQUEST_TOO_LARGE: request params of {size} bytes exceed the "
                    f"limit of {self.limit} bytes (server.max_request_bytes)",
                )
        return await call_next(ctx)


def build_mcp_server(ops: Operations, settings: ServerSettings) -> MCPServer:
    mode = "read-only" if settings.read_only else "read-write"
    server: MCPServer = MCPServer(
        NAME,
        title="CleverAgents knowledge graph",
        instructions=INSTRUCTIONS + f" This server is {mode}.",
        version=__version__,
        middleware=[MessageSizeLimit(settings.max_request_bytes)],
        log_level="WARNING",
    )
    run = Runner(settings)

    forms = "A SPARQL SELECT, ASK, CONSTRUCT or DESCRIBE" + ("" if settings.read_only else ", or an update")
    sparql_text = Annotated[str, Field(min_length=1, max_length=MAX_SPARQL_CHARS, description=forms)]

    @server.tool(annotations=READ if settings.read_only else WRITE)
    async def graph_query(
        sparql: sparql_text,  # type: ignore[valid-type]
        ctx: Context,
        as_of: AsOf = None,
        limit: Annotated[int, Field(ge=1, le=MAX_ROWS, description="Most rows or triples returned")] = 1000,
    ) -> models.QueryResult:
        """Run SPARQL over the graph's current state or as of a past revision. Updates are
        accepted only by a read-write server and go through the same validated commit as
        the CLI's; LOAD is refused, and SERVICE always on a read-only server."""
        who = identity_of(ctx, settings)
        return await run(
            lambda: ops.graph_query(
                sparql,
                as_of=as_of,
                limit=limit,
                timeout=settings.request_timeout,
                read_only=settings.read_only,
                identity=who,
            )
        )

    @server.tool(annotations=READ)
    async def find_symbol(
        name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="A qualified name (requests.sessions.Session.send), dotted suffix "
                "(Session.send), plain name, file path or IRI",
            ),
        ],
        as_of: AsOf = None,
    ) -> models.SymbolMatches:
        """Find the code entities (or files) a name names; the strongest kind of match wins."""
        return await run(lambda: ops.find_symbol(name, as_of=as_of))

    def _related_tool(relation: str, doc: str) -> None:
        async def tool(iri: Iri, as_of: AsOf = None) -> models.Related:
            return await run(lambda: ops.related(relation, iri, as_of=as_of))

        tool.__doc__ = doc
        server.tool(name=relation, annotations=READ)(tool)

    for relation, doc in RELATION_DOCS.items():
        _related_tool(relation, doc)

    @server.tool(annotations=READ)
    async def show(
        iri: Iri,
        depth: Annotated[
            str,
            Field(
                min_length=1,
                max_length=64,
                description="A DetailDepth level name of the entity's type (NAME_ONLY, SIGNATURES, "
                "FULL_SOURCE, ...) or an integer",
            ),
        ] = "FULL_SOURCE",
        as_of: AsOf = None,
    ) -> models.Rendering:
        """Render an entity from stored content at a DetailDepth, now or at a past revision."""
        return await run(lambda: ops.show(iri, depth=depth, as_of=as_of))

    @server.tool(annotations=READ)
    async def history(iri: Iri) -> models.History:
        """Every triple the entity ever had, with the revisions (and times) it held from and until."""
        return await run(lambda: ops.history(iri))

    @server.tool(annotations=READ)
    async def blame(iri: Iri) -> models.Blame:
        """For each current triple of the entity: the commit that asserted it (revision, time,
        agent, message, git sha)."""
        return await run(lambda: ops.blame(iri))

    @server.tool(annotations=READ)
    async def changes_between(
        from_revision: Annotated[str, Field(min_length=1, max_length=200, description="Revision, ISO time or git sha")],
        to_revision: Annotated[
            str, Field(min_length=1, max_length=200, description="Revision, ISO time, git sha or 'head'")
        ] = "head",
        include: Annotated[
            str,
            Field(
                pattern=r"^(all|[a-z, ]+)$",
                max_length=100,
                description="Kinds, comma-separated: definitions, docstrings, imports, attributes, or all",
            ),
        ] = "definitions",
    ) -> models.Changes:
        """What changed between two revisions (or git shas), entity by entity: added, removed,
        changed, formatting only, or moved."""
        return await run(lambda: ops.changes_between(from_revision, to_revision, include=include))

    @server.tool(annotations=READ if settings.read_only else WRITE)
    async def assemble_context(
        ctx: Context,
        query: Annotated[
            str | None, Field(default=None, max_length=10_000, description="What the context is for")
        ] = None,
        focus: Annotated[
            list[Annotated[str, Field(max_length=1000)]],
            Field(max_length=50, description="IRIs, paths or symbol names to centre on"),
        ] = [],  # noqa: B006 - the SDK reads the default into the schema; never mutated
        budget: Annotated[int, Field(ge=100, le=200_000, description="Token budget (a hard ceiling)")] = 4000,
        depth: Annotated[
            str | None, Field(default=None, max_length=64, description="DetailDepth for the focus")
        ] = None,
        as_of: AsOf = None,
    ) -> models.ContextResult:
        """Assemble the most useful context for a question and/or focus within a token budget,
        with provenance for every fragment. A read-write server records the assembly."""
        if not query and not focus:
            raise ToolError("Error [422] VALIDATION_FAILED: give a query, a focus, or both")
        who = identity_of(ctx, settings)
        report = progress_bridge(ctx)
        return await run(
            lambda: ops.assemble_context(
                query=query,
                focus=list(focus),
                budget=budget,
                depth=depth,
                as_of=as_of,
                record=not settings.read_only,
                identity=who,
                progress=report,
            )
        )

    @server.tool(annotations=WRITE)
    async def index(
        ctx: Context,
        resources: Annotated[
            list[Annotated[str, Field(max_length=200)]],
            Field(max_length=100, description="Resource names or ULIDs; empty: every registered resource"),
        ] = [],  # noqa: B006 - the SDK reads the default into the schema; never mutated
        full: Annotated[bool, Field(description="Re-read and re-analyze every file")] = False,
    ) -> models.IndexResult:
        """Refresh registered resources in the graph (incremental: only changed files are
        analyzed; an unchanged tree writes nothing). It only mirrors the registered
        resources' files, so a read-only server allows it; each run is audited."""
        who = identity_of(ctx, settings)
        report = progress_bridge(ctx)
        return await run(
            lambda: ops.index(list(resources), full=full, identity=who, progress=report),
            timeout=max(settings.request_timeout, 600.0),
        )

    _register_plan_tools(server, ops, settings, run)
    _register_resources(server, ops, run)
    _register_prompts(server)
    return server


PlanRef = Annotated[
    str | None, Field(default=None, max_length=200, description="Plan ULID or prefix; default: the latest plan")
]


def _register_plan_tools(server: MCPServer, ops: Operations, settings: ServerSettings, run: Runner) -> None:
    @server.tool(annotations=READ)
    async def plan_status(plan: PlanRef = None) -> models.PlanResult:
        """A plan's phase, state, attempt and action, and the verbs it allows now."""
        return await run(lambda: ops.plan_status(plan))

    @server.tool(annotations=READ)
    async def plan_tree(plan: PlanRef = None) -> models.PlanTree:
        """A plan's decisions (the structural tree and what influenced each) and its subplans."""
        return await run(lambda: ops.plan_tree(plan))

    @server.tool(annotations=READ)
    async def explain_decision(
        decision: Annotated[str, Field(min_length=1, max_length=200, description="Decision ULID or prefix")],
    ) -> models.DecisionExplanation:
        """A decision: question, choice, alternatives, rationale, confidence, and the code it saw."""
        return await run(lambda: ops.explain_decision(decision))

    if settings.read_only:
        return  # plan_use / plan_execute / plan_apply change plans and resources

    @server.tool(annotations=WRITE)
    async def plan_use(
        ctx: Context,
        action: Annotated[str, Field(min_length=1, max_length=200, description="The action's name")],
        projects: Annotated[list[Annotated[str, Field(max_length=200)]], Field(min_length=1, max_length=20)],
        arguments: Annotated[dict[str, Any], Field(description="The action's arguments")] = {},  # noqa: B006
    ) -> models.PlanResult:
        """Create a plan from an action and run Strategize (and what its automation level allows)."""
        who = identity_of(ctx, settings)
        return await run(
            lambda: ops.plan_verb(
                "use",
                None,
                identity=who,
                observer=plan_progress(ctx),
                action=action,
                projects=list(projects),
                arguments=arguments,
            ),
            timeout=max(settings.request_timeout, 600.0),
        )

    @server.tool(annotations=WRITE)
    async def plan_execute(ctx: Context, plan: PlanRef = None) -> models.PlanResult:
        """Run the plan's Execute phase in its sandboxes."""
        who = identity_of(ctx, settings)
        return await run(
            lambda: ops.plan_verb("execute", plan, identity=who, observer=plan_progress(ctx)),
            timeout=max(settings.request_timeout, 600.0),
        )

    @server.tool(annotations=WRITE)
    async def plan_apply(ctx: Context, plan: Annotated[str, Field(min_length=1, max_length=200)]) -> models.PlanResult:
        """Apply the plan's changes from its sandboxes to the real resources."""
        who = identity_of(ctx, settings)
        return await run(
            lambda: ops.plan_verb("apply", plan, identity=who, observer=plan_progress(ctx)),
            timeout=max(settings.request_timeout, 600.0),
        )


def _register_resources(server: MCPServer, ops: Operations, run: Runner) -> None:
    for module, text in sorted(ops.ontology_modules().items()):
        server.resource(
            f"cleveragents://ontology/{module}",
            name=f"ontology-{module}",
            description=f"The {module} ontology module (OWL in Turtle)",
            mime_type="text/turtle",
        )(_constant(text))
    for name, text in sorted(ops.named_queries().items()):
        server.resource(
            f"cleveragents://queries/{name}",
            name=f"query-{name}",
            description=_first_comment(text, "description") or f"The named query {name}",
            mime_type="application/sparql-query",
        )(_constant(text))

    # The IRI is one percent-encoded segment: it is never a path, and nothing is read
    # but the graph and the content store (renderings come from stored content by hash).
    @server.resource(
        "cleveragents://entity/{depth}/{iri}",
        name="entity",
        description="An indexed entity rendered at a DetailDepth (percent-encode the IRI)",
        mime_type="text/plain",
        security=ResourceSecurity(exempt_params=frozenset({"iri"})),
    )
    async def entity(depth: str, iri: str) -> str:
        try:
            rendering = await run(lambda: ops.show(iri, depth=depth, as_of=None))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        return rendering.text


def _constant(text: str) -> Callable[[], str]:
    def read() -> str:
        return text

    return read


def _first_comment(text: str, key: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


def _register_prompts(server: MCPServer) -> None:
    @server.prompt(description="Explain a module or file of the indexed code, grounded in the graph")
    def explain_module(module: str) -> str:
        return (
            f"Explain the module `{module}` of this codebase.\n"
            f"1. Call find_symbol with name={module!r} to get its IRI.\n"
            "2. Call show on it at depth SIGNATURES for its outline, then assemble_context with "
            f"focus=[{module!r}] and a budget of 6000 for the code around it.\n"
            "3. Call references on its main classes and functions to see who depends on it.\n"
            "Then describe its purpose, main entities, how it is used, and anything surprising. "
            "Cite entities by qualified name and file:line."
        )

    @server.prompt(description="Review what changed between two revisions (or git shas)")
    def review_change(from_revision: str, to_revision: str = "head") -> str:
        return (
            f"Review the change from {from_revision} to {to_revision}.\n"
            f"1. Call changes_between with from_revision={from_revision!r}, to_revision={to_revision!r}.\n"
            "2. For the most changed entities, call show at both revisions (as_of) and history to see "
            "what moved, and callers to see what the change can break.\n"
            "Then list the behavioural changes, their risk, and what to test."
        )


async def serve_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout, answering a line that is not JSON-RPC with a JSON-RPC
    parse error (id null), as JSON-RPC 2.0 asks; the SDK's stdio transport only drops it.

    Runs the SDK's low-level server on the transport's streams with a relay between them;
    the SDK's own in-process client reaches the low-level server the same way.
    """
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError

    lowlevel = server._lowlevel_server  # private: the SDK has no public way to run on given streams
    async with stdio_server() as (read_stream, write_stream):
        relay_in, relay_out = anyio.create_memory_object_stream[SessionMessage | Exception](16)

        async def relay() -> None:
            async with relay_in:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        reason = str(item).splitlines()[0] if str(item) else type(item).__name__
                        error = ErrorData(code=PARSE_ERROR, message=f"Parse error: not a JSON-RPC message ({reason})")
                        await write_stream.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error)))
                    else:
                        await relay_in.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            await lowlevel.run(relay_out, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()
