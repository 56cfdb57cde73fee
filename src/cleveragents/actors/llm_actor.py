"""LLM actors in plans: plans' ``Actor`` protocol over the LangGraph runtime.

Strategize and Execute are each one thread (``<plan>/<phase>/<attempt>``) of the actor's
default LLM agent. The model records decisions with ``record_decision`` (the same recorder
the scripted actor uses), reads the graph with ``graph_query``, and in Execute acts
through the plan's tool router. A provider failure (after the SDK's retries) or too many
failed tool calls end the phase as errored with the message; the next run of the phase
(``plan resume``) continues the same thread from its last checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cleveragents.actors.checkpointer import GraphWriter, StoreCheckpointSaver
from cleveragents.actors.definition import ActorFile
from cleveragents.actors.providers import ProviderSettings, chat_model
from cleveragents.actors.runtime import (
    RECORD_DECISION,
    AgentRuntime,
    ContextProvider,
    RunResult,
    ToolBelt,
    ToolDescription,
    ToolFailureLimit,
)
from cleveragents.actors.standalone import model_options, resolve_llm, settings_for
from cleveragents.errors import CleverAgentsError
from cleveragents.plans.actor import PhaseOutcome, PlanContext

GRAPH_QUERY = "graph_query"
MAX_QUERY_ROWS = 200

RECORD_DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "description": "Decision type, e.g. strategy_choice, implementation_choice."},
        "chosen": {"type": "string", "description": "What was chosen."},
        "question": {"type": "string"},
        "alternatives": {"type": "array", "items": {"type": "string"}},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string"},
        "context_hash": {"type": "string"},
    },
    "required": ["type", "chosen"],
    "additionalProperties": False,
}

GRAPH_QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"sparql": {"type": "string", "description": "A SPARQL SELECT or ASK over the current graph."}},
    "required": ["sparql"],
    "additionalProperties": False,
}

PHASE_INSTRUCTIONS = {
    "strategize": (
        "You are in the Strategize phase. Decide how the work will be done and record each choice with "
        "record_decision (type strategy_choice, resource_selection or implementation_choice). Do not change files."
    ),
    "execute": (
        "You are in the Execute phase. Carry out the strategy with the tools; record each choice you make with "
        "record_decision (type implementation_choice or tool_invocation)."
    ),
}


def is_provider_error(exc: BaseException) -> bool:
    """An error of a provider SDK or its HTTP transport (after the SDK's own retries)."""
    import anthropic
    import httpx
    import openai

    return isinstance(exc, openai.APIError | anthropic.APIError | httpx.HTTPError)


class LLMActor:
    """A registered (or file-given) actor answering for a plan's phases."""

    def __init__(
        self,
        actor_file: ActorFile,
        *,
        settings: ProviderSettings,
        writer: GraphWriter,
        data_dir: Path,
        env: Mapping[str, str] | None = None,
        context_provider: ContextProvider | None = None,
        tool_descriptions: Callable[[PlanContext], list[ToolDescription]] | None = None,
        agent: str = "cleveragents",
    ) -> None:
        self.actor_file = actor_file
        self.settings = settings
        self.writer = writer
        self.data_dir = data_dir
        self.env = env
        self.context_provider = context_provider
        self.tool_descriptions = tool_descriptions
        self.agent = agent
        self.last_run: RunResult | None = None

    def strategize(self, ctx: PlanContext) -> PhaseOutcome:
        return self._run(ctx, "strategize")

    def execute(self, ctx: PlanContext) -> PhaseOutcome:
        return self._run(ctx, "execute")

    # --- tools ---------------------------------------------------------------------------

    def _belt(self, ctx: PlanContext, phase: str) -> ToolBelt:
        tools = [
            ToolDescription(
                RECORD_DECISION, "Record a decision of this plan (what was chosen and why).", RECORD_DECISION_SCHEMA
            ),
            ToolDescription(
                GRAPH_QUERY,
                "Run a read-only SPARQL query over the knowledge graph (code, plans, "
                "decisions); prefixes uko:, uko-code:, ca:, prov: are predeclared.",
                GRAPH_QUERY_SCHEMA,
            ),
        ]
        routed: set[str] = set()
        if phase == "execute" and ctx.call_tool is not None and self.tool_descriptions is not None:
            for tool in self.tool_descriptions(ctx):
                if tool.name not in (RECORD_DECISION, GRAPH_QUERY):
                    tools.append(tool)
                    routed.add(tool.name)

        def call(name: str, args: dict[str, Any]) -> Any:
            if name == RECORD_DECISION:
                fields = dict(args)
                kind, chosen = fields.pop("type"), fields.pop("chosen")
                if "alternatives" in fields:
                    fields["alternatives"] = tuple(fields["alternatives"])
                decision = ctx.record_decision(kind, chosen, **fields)
                return {"recorded": decision.iri, "sequence": decision.sequence}
            if name == GRAPH_QUERY:
                rows = ctx.query(args["sparql"])
                return {"rows": rows[:MAX_QUERY_ROWS], "truncated": len(rows) > MAX_QUERY_ROWS}
            if name in routed and ctx.call_tool is not None:
                return ctx.call_tool(name, args)
            raise CleverAgentsError(f"tool '{name}' is not available in {phase}")

        return ToolBelt(tools, call)

    # --- the run -------------------------------------------------------------------------

    def _prompt(self, ctx: PlanContext, phase: str) -> str:
        plan = ctx.plan
        parts = [f"Plan {plan.id}: {plan.description}"]
        if plan.definition_of_done:
            parts.append(f"Definition of done: {plan.definition_of_done}")
        if plan.arguments:
            parts.append("Arguments: " + json.dumps(plan.arguments, default=str))
        if plan.projects:
            parts.append("Projects: " + ", ".join(plan.projects))
        if phase == "execute":
            decided = [f"- [{d.type}] {d.chosen}" for d in ctx.decisions()]
            if decided:
                parts.append("Decisions so far:\n" + "\n".join(decided))
        if ctx.findings:
            parts.append(f"Findings from Execute (revise the strategy): {ctx.findings}")
        if ctx.guidance:
            parts.append("Guidance from the user:\n" + "\n".join(f"- {g}" for g in ctx.guidance))
        return "\n\n".join(parts)

    def _run(self, ctx: PlanContext, phase: str) -> PhaseOutcome:
        chosen = self.actor_file.actor()
        llm, ref = resolve_llm(self.actor_file, chosen)
        model = chat_model(
            ref, settings_for(llm, self.settings, ref.provider), options=model_options(llm), env=self.env
        )
        context = {
            **ctx.plan.arguments,
            "plan": {"id": ctx.plan.id, "description": ctx.plan.description},
            "phase": phase,
        }
        system = self.actor_file.render_prompt(llm, context) if llm.system_prompt else ""
        system = f"{system}\n\n{PHASE_INSTRUCTIONS[phase]}".strip()
        runtime = AgentRuntime(
            model,
            system_prompt=system,
            tools=self._belt(ctx, phase),
            checkpointer=StoreCheckpointSaver(self.writer, self.data_dir / "checkpoints", agent=self.agent),
            context_provider=self.context_provider,
            context_window=int(llm.config.get("context_window", 128_000)),
            reserved_output=int(llm.config.get("reserved_output", llm.config.get("max_tokens", 4096))),
            max_tool_failures=int(llm.config.get("max_tool_failures", 3)),
        )
        try:
            self.last_run = runtime.run(f"{ctx.plan.id}/{phase}/{ctx.attempt}", self._prompt(ctx, phase))
        except ToolFailureLimit as exc:
            return PhaseOutcome(status="error", error=exc.headline())
        except Exception as exc:
            if is_provider_error(exc):
                return PhaseOutcome(status="error", error=f"provider {ref}: {type(exc).__name__}: {exc}")
            raise
        return PhaseOutcome(status="complete")
