"""The ``builtin/context`` skill: the tools an actor uses to pull context while it reasons:
``request_context``, ``query_history`` and ``get_context_budget``.

Each tool is a plain function over a ``ContextSession`` (the actor's workspace, scope and
token budget) with a JSON-Schema input (a pydantic model) and a JSON-ready result, so the
orchestration, MCP and A2A surfaces expose the same definitions. Tool definitions have the
shape of the LSP tools' (``lsp/tools.py``): name, description, input_schema, output.

Every request is a new assembly within the budget that remains: what was delivered before
is charged against the session's budget, so the actor never gets more than it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from cleveragents.context.model import AssembledContext, ContextRequest, PlanContext, TemporalScope
from cleveragents.errors import UsageError
from cleveragents.graph.workspace import Workspace

SKILL_NAME = "builtin/context"
SKILL_DESCRIPTION = "Request additional context during reasoning"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
HISTORY_STRATEGIES = ("temporal-archaeology", "plan-decision-context")


@dataclass
class ContextSession:
    """One actor's use of the skill: where it may look and how many tokens it may receive
    in all (``budget``); ``used`` grows with every delivered assembly."""

    ws: Workspace
    budget: int
    project: str | None = None
    plan_context: PlanContext = field(default_factory=PlanContext)
    as_of: str | None = None
    record: bool = True  # record assemblies in the graph (decisions cite their hashes)
    used: int = 0
    assemblies: list[str] = field(default_factory=list)  # context hashes, in order
    encoding: str = "o200k_base"

    @property
    def remaining(self) -> int:
        return max(self.budget - self.used, 0)

    @classmethod
    def from_config(cls, ws: Workspace, *, budget: int | None = None, **kwargs: Any) -> ContextSession:
        """A session with the configured budget (context.default_budget) and encoding."""
        from cleveragents.services.context import default_config

        config = default_config(ws)
        total = budget if budget is not None else int(config.value("context.default_budget"))
        return cls(ws, total, encoding=str(config.value("context.encoding")), **kwargs)


# --- arguments -------------------------------------------------------------------------------


class RequestContextArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    query: str = Field("", description="What information do you need?")
    focus: list[str] = Field(
        default_factory=list, description="Specific files, classes, or functions to focus on (paths, symbols or IRIs)"
    )
    breadth: int = Field(2, ge=0, le=5, description="How many dependency hops outward (0-5)")
    depth: Annotated[int, Field(ge=0)] | str = Field(
        "FULL_SOURCE",
        description="The deepest detail shown: an integer (0-N) or a named level from the active DetailLevelMap "
        "(e.g. 'SIGNATURES'); the default shows the most relevant code in full",
        json_schema_extra={"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]},
    )
    purpose: str = Field(min_length=1, description="Why do you need this context?")


class QueryHistoryArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    query: str = Field(min_length=1, description="What past decisions or changes are you looking for?")
    scope: Literal["current_plan", "plan_tree", "all_plans"] = Field(
        "plan_tree", description="Whose decisions: this plan's, its plan tree's (with ancestors), or every plan's"
    )


class GetContextBudgetArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# --- the tools -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextTool:
    """One tool of the skill: its name, what it does, its arguments and its result."""

    name: str
    description: str
    arguments: type[BaseModel]
    output: str
    run: Callable[[ContextSession, Any], dict[str, Any]]

    @property
    def input_schema(self) -> dict[str, Any]:
        """The arguments as a JSON Schema (draft 2020-12)."""
        schema = self.arguments.model_json_schema()
        schema.pop("description", None)
        for prop in schema.get("properties", {}).values():  # the spec's oneOf, not pydantic's anyOf
            if "oneOf" in prop:
                prop.pop("anyOf", None)
        return {"$schema": SCHEMA_DIALECT, **schema, "title": self.name, "description": self.description}

    def parse(self, arguments: Mapping[str, Any]) -> BaseModel:
        """The arguments checked against the schema; UsageError names the bad one."""
        if not isinstance(arguments, Mapping):
            raise UsageError(f"{self.name}: the arguments are an object of names and values, not {arguments!r}")
        try:
            return self.arguments.model_validate(dict(arguments))
        except PydanticValidationError as exc:
            raise UsageError(f"{self.name}: {describe_errors(exc, self.arguments)}") from None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "skill": SKILL_NAME,
            "description": self.description,
            "input_schema": self.input_schema,
            "output": self.output,
        }


def describe_errors(exc: PydanticValidationError, model: type[BaseModel]) -> str:
    """pydantic's errors as ``argument 'x': problem`` phrases."""
    parts: dict[str, str] = {}  # one problem per argument (a union reports one per member)
    for error in exc.errors(include_url=False):
        name = ".".join(str(part) for part in error["loc"][:1])
        if name in parts:
            continue
        if error["type"] == "missing":
            problem = "is required"
        elif error["type"] == "extra_forbidden":
            problem = f"is not an argument; the arguments are: {', '.join(model.model_fields) or 'none'}"
        else:
            problem = error["msg"][:1].lower() + error["msg"][1:]
            if "input" in error and not isinstance(error["input"], dict | list):
                problem += f" (got {error['input']!r})"
        parts[name] = f"argument '{name}': {problem}" if name else problem
    return "; ".join(parts.values())


def _delivered(session: ContextSession, context: AssembledContext) -> dict[str, Any]:
    """Charge an assembly to the session and describe it for the actor."""
    session.used += context.total_tokens
    session.encoding = context.encoding
    if context.fragments:
        session.assemblies.append(context.context_hash)
    return {
        "context": context.render(),
        "context_hash": context.context_hash,
        "tokens": context.total_tokens,
        "encoding": context.encoding,
        "budget_remaining": session.remaining,
        "strategies": context.strategies_used,
        "fragments": [
            {
                "node": f.uko_node,
                "path": f.provenance.path,
                "lines": list(f.provenance.line_range) if f.provenance.line_range else None,
                "depth": f.detail_depth,
                "tokens": f.token_count,
                "strategy": f.provenance.strategy,
                "score": f.metadata.get("score", round(f.relevance_score, 6)),
            }
            for f in context.fragments
        ],
    }


def _exhausted(session: ContextSession) -> dict[str, Any]:
    return {
        "context": "",
        "context_hash": None,
        "tokens": 0,
        "encoding": session.encoding,
        "budget_remaining": 0,
        "strategies": [],
        "fragments": [],
        "note": f"the context budget of {session.budget} tokens is used up; work with what you have",
    }


def _assemble(session: ContextSession, request: ContextRequest, plan_context: PlanContext) -> dict[str, Any]:
    from cleveragents.services import context as service

    if session.remaining <= 0:
        return _exhausted(session)
    context = service.assemble(
        session.ws,
        request.model_copy(update={"max_tokens": session.remaining}),
        project=session.project,
        as_of=session.as_of,
        record=session.record,
        plan_context=plan_context,
    )
    return _delivered(session, context)


def _request_context(session: ContextSession, args: RequestContextArguments) -> dict[str, Any]:
    request = ContextRequest(
        query=args.query or None, focus=list(args.focus), breadth=args.breadth, depth=args.depth, purpose=args.purpose
    )
    return _assemble(session, request, session.plan_context)


def _query_history(session: ContextSession, args: QueryHistoryArguments) -> dict[str, Any]:
    from cleveragents.context.strategy_loader import load_strategies
    from cleveragents.services.context import default_config

    available = set(load_strategies(default_config(session.ws)).names())
    plan = session.plan_context
    if args.scope == "current_plan":
        plan = plan.model_copy(update={"ancestors": []})
    elif args.scope == "all_plans":
        plan = PlanContext(project=plan.project, skeleton_ratio=plan.skeleton_ratio)
    request = ContextRequest(
        query=args.query,
        temporal=TemporalScope.HISTORY,
        preferred_strategies=[name for name in HISTORY_STRATEGIES if name in available],
        purpose=f"query_history ({args.scope})",
    )
    result = _assemble(session, request, plan)
    return {**result, "scope": args.scope}


def _get_context_budget(session: ContextSession, _: GetContextBudgetArguments) -> dict[str, Any]:
    return {
        "budget": session.budget,
        "used": session.used,
        "remaining": session.remaining,
        "encoding": session.encoding,
        "assemblies": list(session.assemblies),
    }


_DELIVERY = (
    "context: the text to read; context_hash (cite it in decisions); tokens; budget_remaining; "
    "strategies; fragments: [{node, path, lines, depth, tokens, strategy}]"
)

# In the spec's order.
TOOLS: tuple[ContextTool, ...] = (
    ContextTool(
        "request_context",
        "Request specific context to be added to the conversation",
        RequestContextArguments,
        _DELIVERY,
        _request_context,
    ),
    ContextTool(
        "query_history",
        "Query historical context about past decisions and changes",
        QueryHistoryArguments,
        _DELIVERY + "; scope",
        _query_history,
    ),
    ContextTool(
        "get_context_budget",
        "Check remaining context token budget",
        GetContextBudgetArguments,
        "budget, used, remaining (tokens), encoding, assemblies: the hashes delivered so far",
        _get_context_budget,
    ),
)


def find_tool(name: str) -> ContextTool:
    """The tool called ``name`` (``builtin/context/`` may prefix it)."""
    wanted = name.strip().removeprefix(SKILL_NAME + "/")
    for tool in TOOLS:
        if tool.name == wanted:
            return tool
    raise UsageError(f"unknown context tool '{name}'; the tools are: {', '.join(t.name for t in TOOLS)}")


def tool_definitions() -> list[dict[str, Any]]:
    """The skill's tools as definitions (name, description, input_schema, output)."""
    return [tool.as_dict() for tool in TOOLS]


def skill_definition() -> dict[str, Any]:
    """The ``builtin/context`` skill, injected into every actor's skill set."""
    return {"name": SKILL_NAME, "description": SKILL_DESCRIPTION, "tools": tool_definitions()}


def call(session: ContextSession, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run one tool with JSON arguments (validated against its schema)."""
    tool = find_tool(name)
    return tool.run(session, tool.parse(arguments or {}))


# The tools as plain functions, with keyword arguments.


def request_context(session: ContextSession, **arguments: Any) -> dict[str, Any]:
    return call(session, "request_context", arguments)


def query_history(session: ContextSession, **arguments: Any) -> dict[str, Any]:
    return call(session, "query_history", arguments)


def get_context_budget(session: ContextSession) -> dict[str, Any]:
    return call(session, "get_context_budget", {})
