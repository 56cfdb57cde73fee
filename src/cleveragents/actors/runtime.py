"""The LangGraph runtime of LLM actors: a model, its tools, a checkpointed thread.

One run is a LangGraph ``StateGraph`` of two nodes, ``model`` and ``tools``, looping while
the model calls tools. Every super-step is checkpointed (by the store-backed saver in
plans), so a run killed or failed mid-way continues on the same thread from its last
checkpoint. Around the model:

* **Context per turn.** Before each model call the context provider (the ACMS) is asked
  for context sized to the model's window minus the reserved output and what the
  conversation already uses; its hash is kept in the state and added to every
  ``record_decision`` call the model makes in that turn (the decision's context snapshot).
* **Tools.** Calls go through the :class:`ToolBelt` (the plan's tool router, the graph
  tools). An unknown tool, arguments that fail the tool's JSON Schema, or a failing or
  refused call goes back to the model as the tool's result; after ``max_tool_failures``
  consecutive failures the run stops with :class:`ToolFailureLimit`.
* **Usage.** Token counts of every call are summed in the state.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

import jsonschema
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from cleveragents.errors import CleverAgentsError

RECORD_DECISION = "record_decision"


class ToolFailureLimit(CleverAgentsError):
    """The model's tool calls failed too many times in a row."""

    code = 422
    category = "TOOL_FAILURES"


@dataclass(frozen=True)
class ToolDescription:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ToolBelt:
    """The tools a run may call: their descriptions and one function calling any of them.

    ``call`` returns an object with ``ok``, ``content`` and ``error`` (the router's
    ``ToolResult``) or plain content; an exception counts as a failed call."""

    tools: list[ToolDescription]
    call: Callable[[str, dict[str, Any]], Any]

    def by_name(self) -> dict[str, ToolDescription]:
        return {tool.name: tool for tool in self.tools}


@dataclass(frozen=True)
class TurnContext:
    text: str
    hash: str | None = None
    tokens: int = 0


ContextProvider = Callable[[str, int], TurnContext]


def _add_usage(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int]:
    out = dict(left or {})
    for key, value in (right or {}).items():
        out[key] = out.get(key, 0) + int(value)
    return out


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    failures: int
    context_hash: str | None
    usage: Annotated[dict[str, int], _add_usage]


@dataclass
class RunResult:
    text: str
    usage: dict[str, int]
    messages: list[AnyMessage]
    context_hashes: list[str] = field(default_factory=list)
    resumed: bool = False
    timings: dict[str, list[float]] = field(default_factory=dict)
    # What this run alone added: its messages and its usage (``usage`` is the thread's total).
    new_messages: list[AnyMessage] = field(default_factory=list)
    run_usage: dict[str, int] = field(default_factory=dict)

    def tool_calls(self) -> list[dict[str, Any]]:
        """The tools called since the last prompt (a resumed run's earlier ones included), in
        order, each with whether it succeeded."""
        last = max((i for i, m in enumerate(self.messages) if isinstance(m, HumanMessage)), default=-1)
        return [
            {"name": m.name or "", "ok": m.status != "error"}
            for m in self.messages[last + 1 :]
            if isinstance(m, ToolMessage)
        ]


_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(name: str) -> str:
    """A tool name the provider APIs accept (``^[A-Za-z0-9_-]{1,64}$``)."""
    return _TOOL_NAME.sub("_", name)[:64]


def _estimate_tokens(messages: list[AnyMessage]) -> int:
    return sum(len(str(m.content)) for m in messages) // 4


def _result_text(result: Any) -> tuple[bool, str]:
    ok = getattr(result, "ok", True)
    if not ok:
        code = getattr(result, "error_code", None)
        return False, f"Error{f' [{code}]' if code else ''}: {getattr(result, 'error', None) or 'the tool failed'}"
    content = getattr(result, "content", result)
    if isinstance(content, str):
        return True, content
    try:
        return True, json.dumps(content, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return True, str(content)


class AgentRuntime:
    """Runs one LLM actor over a thread; build one per (model, tools, checkpointer)."""

    def __init__(
        self,
        model: Any,
        *,
        system_prompt: str,
        tools: ToolBelt,
        checkpointer: Any,
        context_provider: ContextProvider | None = None,
        context_window: int = 128_000,
        reserved_output: int = 4_096,
        max_tool_failures: int = 3,
        max_turns: int = 50,
        on_token: Callable[[str], None] | None = None,
    ) -> None:
        """``on_token``: the model's answers are streamed and each piece of text is passed to it."""
        self.model = model
        self.on_token = on_token
        self.system_prompt = system_prompt
        self.tools = tools
        self.checkpointer = checkpointer
        self.context_provider = context_provider
        self.context_window = context_window
        self.reserved_output = reserved_output
        self.max_tool_failures = max_tool_failures
        self.max_turns = max_turns
        self.timings: dict[str, list[float]] = {"context": [], "model": [], "tools": []}
        self._names = {wire_name(t.name): t for t in tools.tools}
        self._bound = (
            model.bind_tools(
                [
                    {
                        "type": "function",
                        "function": {"name": wire, "description": t.description, "parameters": t.input_schema},
                    }
                    for wire, t in self._names.items()
                ]
            )
            if tools.tools
            else model
        )
        self.graph = self._build().compile(checkpointer=checkpointer)

    # --- nodes ----------------------------------------------------------------------------

    def _context(self, messages: list[AnyMessage]) -> TurnContext | None:
        if self.context_provider is None:
            return None
        used = _estimate_tokens(messages) + len(self.system_prompt) // 4
        budget = self.context_window - self.reserved_output - used
        if budget <= 0:
            return None
        question = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        return self.context_provider(question, budget)

    def _model_node(self, state: AgentState) -> dict[str, Any]:
        messages = list(state.get("messages", []))
        started = time.perf_counter()
        turn = self._context(messages)
        self.timings["context"].append(time.perf_counter() - started)
        system = self.system_prompt
        if turn and turn.text:
            system = f"{system}\n\n# Context\n\n{turn.text}" if system else turn.text
        prompt = ([SystemMessage(system)] if system else []) + messages
        started = time.perf_counter()
        reply = self._invoke(prompt)
        self.timings["model"].append(time.perf_counter() - started)
        usage = {k: int(v) for k, v in (reply.usage_metadata or {}).items() if isinstance(v, int)}
        return {"messages": [reply], "context_hash": turn.hash if turn else None, "usage": {**usage, "calls": 1}}

    def _invoke(self, prompt: list[AnyMessage]) -> AIMessage:
        if self.on_token is None:
            return self._bound.invoke(prompt)
        merged: Any = None
        for chunk in self._bound.stream(prompt):
            piece = chunk.text if isinstance(chunk.text, str) else ""
            if piece:
                self.on_token(piece)
            merged = chunk if merged is None else merged + chunk
        if merged is None:
            return AIMessage("")
        # A streamed reply is a chunk; the thread keeps a plain message (tool calls parsed).
        return AIMessage(
            content=merged.content,
            tool_calls=merged.tool_calls,
            usage_metadata=merged.usage_metadata,
            response_metadata=merged.response_metadata,
            id=merged.id,
        )

    def _tools_node(self, state: AgentState) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        failures = int(state.get("failures", 0))
        replies: list[ToolMessage] = []
        started = time.perf_counter()
        for call in last.tool_calls:
            ok, text = self._call(call["name"], call.get("args") or {}, state.get("context_hash"))
            replies.append(
                ToolMessage(
                    content=text, tool_call_id=call["id"], name=call["name"], status="success" if ok else "error"
                )
            )
            failures = 0 if ok else failures + 1
            if failures >= self.max_tool_failures:
                raise ToolFailureLimit(
                    f"{failures} consecutive tool calls failed; the last: {call['name']}: {text}",
                    data={"tool": call["name"], "failures": failures},
                )
        self.timings["tools"].append(time.perf_counter() - started)
        return {"messages": replies, "failures": failures}

    def _call(self, wire: str, arguments: Mapping[str, Any], context_hash: str | None) -> tuple[bool, str]:
        tool = self._names.get(wire)
        if tool is None:
            available = ", ".join(sorted(self._names)) or "none"
            return False, f"Error: unknown tool '{wire}' (available: {available})"
        args = dict(arguments)
        if tool.name == RECORD_DECISION and context_hash and "context_hash" not in args:
            properties = tool.input_schema.get("properties", {})
            if "context_hash" in properties or tool.input_schema.get("additionalProperties", True) is not False:
                args["context_hash"] = context_hash
        try:
            jsonschema.validate(args, tool.input_schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(map(str, exc.absolute_path)) or "(arguments)"
            return False, f"Error: arguments of '{tool.name}' do not match its schema at {where}: {exc.message}"
        try:
            return _result_text(self.tools.call(tool.name, args))
        except CleverAgentsError as exc:
            if getattr(exc, "category", "") == "AWAITING_APPROVAL":
                raise
            return False, f"Error: {exc.headline()}"
        except Exception as exc:  # a tool bug is the model's information, not the run's end
            return False, f"Error: {type(exc).__name__}: {exc}"

    @staticmethod
    def _route(state: AgentState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    def _build(self) -> StateGraph:
        builder = StateGraph(AgentState)
        builder.add_node("model", self._model_node)
        builder.add_node("tools", self._tools_node)
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", self._route, ["tools", END])
        builder.add_edge("tools", "model")
        return builder

    # --- running --------------------------------------------------------------------------

    def _config(self, thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}, "recursion_limit": 2 * self.max_turns + 1}

    def pending(self, thread_id: str) -> bool:
        """Whether the thread stopped mid-run (killed or failed) and ``run`` would resume it."""
        return bool(self.graph.get_state(self._config(thread_id)).next)

    def history(self, thread_id: str) -> list[AnyMessage]:
        """The thread's messages at its last checkpoint."""
        return list(self.graph.get_state(self._config(thread_id)).values.get("messages", []))

    def run(self, thread_id: str, prompt: str, *, seed: list[AnyMessage] | None = None) -> RunResult:
        """Start the thread with ``prompt`` (after the ``seed`` messages, e.g. an imported
        conversation), or continue it from its last checkpoint."""
        """Start the thread with ``prompt``, or continue it from its last checkpoint."""
        try:
            return self._run(thread_id, prompt, seed or [])
        finally:
            # Batched graph records of the checkpoints: written when the run ends, however it ends.
            flush = getattr(self.checkpointer, "flush", None)
            if flush is not None:
                flush()

    def _run(self, thread_id: str, prompt: str, seed: list[AnyMessage]) -> RunResult:
        config = self._config(thread_id)
        state = self.graph.get_state(config)
        resumed = bool(state.values) and bool(state.next)
        before = len(state.values.get("messages", [])) if state.values else 0
        usage_before = dict(state.values.get("usage") or {}) if state.values else {}
        if state.values and not state.next:
            # A finished thread: a new prompt continues the conversation on it.
            final = self.graph.invoke({"messages": [HumanMessage(prompt)]}, config)
        elif resumed:
            final = self.graph.invoke(None, config)
        else:
            final = self.graph.invoke({"messages": [*seed, HumanMessage(prompt)], "failures": 0}, config)
        messages = final["messages"]
        usage = dict(final.get("usage") or {})
        answer = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        hashes = [s.values.get("context_hash") for s in self.graph.get_state_history(config)]
        return RunResult(
            text=answer.text if answer is not None else "",
            usage=usage,
            messages=messages,
            context_hashes=sorted({h for h in hashes if h}),
            resumed=resumed,
            timings=self.timings,
            new_messages=list(messages[before:]),
            run_usage={k: v - usage_before.get(k, 0) for k, v in usage.items() if v - usage_before.get(k, 0)},
        )
