"""``agents session ...``: sessions, and ``session tell`` through the orchestrator actor.

The orchestrator is an LLM actor (``--actor``, else the session's actor, else the default
actor) whose tools are CleverAgents itself: a SPARQL query over the graph, context
assembly, ``action list``, and ``plan use|execute|status|tree|explain|list``. Each tool
runs the same service the CLI command runs, so what the orchestrator does is what the
user could have typed; a failing one goes back to the model as its result. The
conversation is checkpointed on the session's thread (see ``actors/sessions.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.actors import pricing, sessions
from cleveragents.actors.agent_skills import SkillBox, with_skills
from cleveragents.actors.checkpointer import StoreCheckpointSaver, WorkspaceWriter
from cleveragents.actors.providers import chat_model
from cleveragents.actors.runtime import AgentRuntime, ToolBelt, ToolDescription
from cleveragents.actors.sessions import SessionInfo, TellResult
from cleveragents.actors.standalone import model_options, resolve_llm, settings_for
from cleveragents.config import Config
from cleveragents.context.model import ContextRequest
from cleveragents.errors import NotFoundError, UsageError
from cleveragents.graph.workspace import Workspace
from cleveragents.services import actor_registry, plan_actors, providers, skill_registry

MAX_ROWS = 200

ORCHESTRATOR_INSTRUCTIONS = (
    "You are the CleverAgents orchestrator of this session. Do what the user asks by calling the tools, "
    "which are CleverAgents' own commands: find actions with action_list, start a plan with plan_use, "
    "follow it with plan_status, plan_tree and plan_explain, advance it with plan_execute, read the "
    "knowledge graph with graph_query and context. Then say briefly what you did."
)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_PLAN = {"plan": {"type": "string", "description": "Plan id (ULID) or IRI."}}

TOOLS = [
    ToolDescription("graph_query", "Run a read-only SPARQL query over the knowledge graph; prefixes uko:, "
                    "uko-code:, ca:, prov: are predeclared.",
                    _schema({"sparql": {"type": "string"}}, ["sparql"])),
    ToolDescription("context", "Assemble context (code and documents from the graph) for a question.",
                    _schema({"query": {"type": "string"},
                             "max_tokens": {"type": "integer", "minimum": 100, "maximum": 32000},
                             "project": {"type": "string"}}, ["query"])),
    ToolDescription("action_list", "The actions (plan templates) available.", _schema({}, [])),
    ToolDescription("plan_use", "Create a plan from an action for projects, and run its Strategize phase.",
                    _schema({"action": {"type": "string"},
                             "projects": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                             "arguments": {"type": "object"},
                             "automation_level": {"type": "string"}}, ["action", "projects"])),
    ToolDescription("plan_execute", "Run the Execute phase of a plan.", _schema(_PLAN, ["plan"])),
    ToolDescription("plan_status", "A plan's phase, state and the verbs it allows now.", _schema(_PLAN, ["plan"])),
    ToolDescription("plan_tree", "A plan's decisions.", _schema(_PLAN, ["plan"])),
    ToolDescription("plan_explain", "One decision: what was chosen and why.",
                    _schema({"decision": {"type": "string"}}, ["decision"])),
    ToolDescription("plan_list", "The plans, newest first.", _schema({}, [])),
]


def orchestrator_tools(ws: Workspace, config: Config, *, agent: str) -> ToolBelt:
    """CleverAgents' commands as the orchestrator's tools."""
    from cleveragents.services import context as context_service
    from cleveragents.services import plans

    def plan_summary(plan: Any) -> dict[str, Any]:
        return {k: v for k, v in plan.as_dict().items() if k in (
            "id", "action", "description", "phase", "state", "projects", "error", "automation_level")}

    handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
        "graph_query": lambda a: _rows(ws, a["sparql"]),
        "context": lambda a: context_service.markdown(context_service.assemble(
            ws, ContextRequest(query=a["query"], max_tokens=int(a.get("max_tokens", 4000))),
            project=a.get("project"), record=False, config=config, agent=agent)),
        "action_list": lambda a: [
            {k: v for k, v in act.as_dict().items() if k in ("name", "description", "arguments", "state")}
            for act in plans.list_actions(ws)],
        "plan_use": lambda a: plan_summary(plans.use(
            ws, a["action"], a["projects"], dict(a.get("arguments") or {}),
            automation_level=a.get("automation_level"), agent=agent)),
        "plan_execute": lambda a: plan_summary(plans.execute(ws, a["plan"], agent=agent)),
        "plan_status": lambda a: (lambda found: {**plan_summary(found[0]), "allowed": list(found[1])})(
            plans.status(ws, a["plan"])),
        "plan_tree": lambda a: [
            {"id": d.id, "type": d.type, "phase": d.phase, "chosen": d.chosen}
            for d in plans.tree(ws, a["plan"])[1].values()],
        "plan_explain": lambda a: plans.explain(ws, a["decision"])[0].as_dict(),
        "plan_list": lambda a: [plan_summary(p) for p in plans.list_plans(ws)],
    }

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return handlers[name](arguments)

    return ToolBelt(list(TOOLS), call)


def _rows(ws: Workspace, sparql: str) -> dict[str, Any]:
    """SELECT or ASK on a read-only store: the orchestrator reads the graph, it never updates it."""
    with ws.reader() as store:
        result = store.query(sparql)
        if isinstance(result, bool | ox.QueryBoolean):
            return {"result": bool(result)}
        names = [variable.value for variable in result.variables]
        rows = [{k: (row[k].value if row[k] is not None else None) for k in names} for row in result]
    return {"rows": rows[:MAX_ROWS], "truncated": len(rows) > MAX_ROWS}


def _actor_ref(ws: Workspace, session: SessionInfo, actor: str | None) -> str:
    ref = actor or session.actor
    if ref:
        return ref
    try:
        return actor_registry.default_actor(ws).name
    except NotFoundError:
        raise UsageError(
            f"session {session.name} has no actor and no default actor is set",
            suggestions=["agents session tell ... --actor NAME", "agents actor set-default NAME"],
        ) from None


def tell(
    ws: Workspace,
    config: Config,
    prompt: str,
    *,
    session: str | None = None,
    actor: str | None = None,
    on_token: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
    agent: str = "cleveragents",
) -> TellResult:
    """The orchestrator answers ``prompt`` on the session (default: the most recent one)."""
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    info = sessions.resolve(ws, session)
    ref = _actor_ref(ws, info, actor)
    if actor_registry.builtin(ref) is not None:
        actor_file = plan_actors.builtin_file(ref, env)
    else:
        actor_file = actor_registry.resolve(ws, ref, env=env)[1]
    llm, model_ref = resolve_llm(actor_file, actor_file.actor())
    model = chat_model(model_ref, settings_for(llm, providers.settings(config), model_ref.provider),
                       options=model_options(llm), env=env)
    system = actor_file.render_prompt(llm, {"session": info.as_dict()}) if llm.system_prompt else ""
    system = f"{system}\n\n{ORCHESTRATOR_INSTRUCTIONS}".strip()
    box = SkillBox(skill_registry.agent_skills_of(ws, llm.skills) if llm.skills else [])
    if box.skills:
        system = f"{system}\n\n{box.prompt()}"
    runtime = AgentRuntime(
        model,
        system_prompt=system,
        tools=with_skills(orchestrator_tools(ws, config, agent=agent), box),
        checkpointer=StoreCheckpointSaver(WorkspaceWriter(ws), ws.data_dir / "checkpoints", agent=agent),
        context_window=int(llm.config.get("context_window", 128_000)),
        reserved_output=int(llm.config.get("reserved_output", llm.config.get("max_tokens", 4096))),
        max_tool_failures=int(llm.config.get("max_tool_failures", 3)),
        on_token=on_token,
    )
    prices = pricing.load_prices(Path(config.value("providers.prices_file")))
    return sessions.tell(ws, info, prompt, runtime, model=str(model_ref),
                         price=lambda usage: pricing.cost(prices, str(model_ref), usage), agent=agent)
