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
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.actors.agent_skills import AgentSkill, SkillBox, with_skills
from cleveragents.actors.checkpointer import GraphWriter, StoreCheckpointSaver
from cleveragents.actors.definition import ActorFile
from cleveragents.actors.providers import ProviderSettings, chat_model, is_provider_error
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
from cleveragents.graph.commit import CommitRequest
from cleveragents.plans.actor import PhaseOutcome, PlanContext
from cleveragents.plans.records import open_run
from cleveragents.plans.vocabulary import PHASE_IRI
from cleveragents.terms import XSD
from cleveragents.vocabulary import ca

GRAPH_QUERY = "graph_query"
_INT = ox.NamedNode(XSD + "integer")
_DECIMAL = ox.NamedNode(XSD + "decimal")
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
        agent_skills: Callable[[tuple[str, ...]], list[AgentSkill]] | None = None,
        price: Callable[[str, Mapping[str, int]], float | None] | None = None,
    ) -> None:
        """``agent_skills``: the Agent Skills behind an actor's ``skills:`` (the skill registry)."""
        self.actor_file = actor_file
        self.agent_skills = agent_skills
        # Cost in USD of a model's usage (the user's price table); None: unpriced.
        self.price = price
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
        box = SkillBox(self.agent_skills(llm.skills) if self.agent_skills and llm.skills else [])
        if box.skills:
            system = f"{system}\n\n{box.prompt()}"
        runtime = AgentRuntime(
            model,
            system_prompt=system,
            tools=with_skills(self._belt(ctx, phase), box),
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
        self._record_usage(ctx, phase, str(ref), self.last_run.usage)
        return PhaseOutcome(status="complete")

    def _record_usage(self, ctx: PlanContext, phase: str, model: str, thread_usage: Mapping[str, int]) -> None:
        """Token usage and cost on the phase run (``ca:PhaseRun``), one commit.

        ``thread_usage`` is the whole thread's (this attempt of the phase, across resumes);
        what earlier runs of the same attempt recorded is taken off, so summing the runs of
        a plan counts each model call once."""
        store = self.writer.store
        run = open_run(store, ctx.plan.node, phase, ctx.attempt)
        if run is None:
            return
        earlier = {"input_tokens": 0, "output_tokens": 0, "calls": 0}
        for row in store.query(
            f"SELECT ?i ?o ?c WHERE {{ ?r ca:runOfPlan {ctx.plan.node} ; ca:runPhase {PHASE_IRI[phase]} ; "
            f"ca:attempt {ox.Literal(str(ctx.attempt), datatype=_INT)} ; ca:inputTokens ?i ; ca:outputTokens ?o ; "
            "ca:modelCalls ?c }"
        ):
            for key, var in (("input_tokens", "i"), ("output_tokens", "o"), ("calls", "c")):
                earlier[key] += int(row[var].value)
        usage = {key: max(0, int(thread_usage.get(key, 0)) - earlier[key]) for key in earlier}
        add: list[Any] = [
            (run, ox.NamedNode(ca.inputTokens), ox.Literal(str(usage["input_tokens"]), datatype=_INT)),
            (run, ox.NamedNode(ca.outputTokens), ox.Literal(str(usage["output_tokens"]), datatype=_INT)),
            (run, ox.NamedNode(ca.modelCalls), ox.Literal(str(usage["calls"]), datatype=_INT)),
            (run, ox.NamedNode(ca.usageModel), ox.Literal(model)),
        ]
        cost = self.price(model, usage) if self.price is not None else None
        if cost is not None:
            add.append((run, ox.NamedNode(ca.costUsd), ox.Literal(str(Decimal(str(cost))), datatype=_DECIMAL)))
        self.writer.commit(CommitRequest(add=add, message=f"model usage of plan {ctx.plan.id} {phase}",
                                         cause="model-usage", agent=self.agent))
