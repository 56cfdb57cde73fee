"""Sessions: a user's conversation with an orchestrator actor, kept as graph data.

A session is a ``ca:Session`` node (a stable ULID, a name, the orchestrator actor, the
user's metadata, the LangGraph thread id). Each prompt and each answer is a
``ca:SessionMessage`` (role, text, index; an answer also carries the tools it called, its
token usage, model and cost), written in **one commit per ``tell``**, so the store never
holds a prompt without its answer and history keeps every message, deleted ones included.

The conversation the model sees (tool calls and results included) is the thread's
checkpoints in the store-backed checkpointer: the next ``tell`` continues it, and a ``tell``
killed mid-turn is finished by the next one before its own prompt is sent. An imported
session has no checkpoints; its messages seed the thread at its first ``tell``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pyoxigraph as ox
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from ulid import ULID

from cleveragents.actors.providers import ProviderError, is_provider_error
from cleveragents.actors.runtime import AgentRuntime, RunResult
from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.terms import ID, RDF_TYPE, XSD
from cleveragents.vocabulary import ca

EXPORT_FORMAT = "cleveragents-session/1"
_TYPE = ox.NamedNode(RDF_TYPE)
_INT = ox.NamedNode(XSD + "integer")
_DECIMAL = ox.NamedNode(XSD + "decimal")
_DATETIME = ox.NamedNode(XSD + "dateTime")
_P = {
    name: ox.NamedNode(getattr(ca, name))
    for name in (
        "name", "ulid", "createdAt", "sessionActor", "sessionMetadata", "sessionThread", "inSession",
        "messageRole", "messageText", "messageIndex", "toolCallsMade", "inputTokens", "outputTokens",
        "modelCalls", "costUsd", "usageModel",
    )
}


@dataclass
class SessionMessage:
    index: int
    role: str
    text: str
    created: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SessionInfo:
    iri: str
    id: str
    name: str
    actor: str
    metadata: dict[str, str]
    thread: str
    created: str
    updated: str = ""
    messages: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    # Summed over the priced answers; None when no answer was priced.
    cost_usd: float | None = None

    @property
    def node(self) -> ox.NamedNode:
        return ox.NamedNode(self.iri)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class TellResult:
    session: SessionInfo
    answer: str
    resumed_prompt: str | None
    run: RunResult
    commit: CommitResult


def _now() -> ox.Literal:
    return ox.Literal(datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"), datatype=_DATETIME)


def _int(value: int) -> ox.Literal:
    return ox.Literal(str(int(value)), datatype=_INT)


# --- reading -------------------------------------------------------------------------------


def find(store: GraphStore, ref: str) -> ox.NamedNode:
    """The live session named ``ref``, or with that ULID or IRI."""
    literal = ox.Literal(ref)
    rows = store.query(
        f"SELECT ?s WHERE {{ ?s a ca:Session ; ca:name ?n ; ca:ulid ?u . "
        f"FILTER(?n = {literal} || ?u = {literal} || STR(?s) = {literal}) }}"
    )
    for row in rows:
        return row["s"]
    raise NotFoundError(f"session '{ref}' not found", suggestions=["agents session list"])


def _props(store: GraphStore, node: ox.NamedNode) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for quad in store.live_quads(node):
        out.setdefault(quad.predicate.value, []).append(quad.object)
    return out


def _one(props: Mapping[str, list[Any]], key: str, default: str = "") -> str:
    values = props.get(_P[key].value)
    return values[0].value if values else default


def messages(store: GraphStore, node: ox.NamedNode) -> list[SessionMessage]:
    out = []
    for row in store.query(f"SELECT ?m WHERE {{ ?m ca:inSession {node} }}"):
        props = _props(store, row["m"])
        cost = _one(props, "costUsd")
        out.append(
            SessionMessage(
                index=int(_one(props, "messageIndex", "0")),
                role=_one(props, "messageRole"),
                text=_one(props, "messageText"),
                created=_one(props, "createdAt"),
                tool_calls=json.loads(_one(props, "toolCallsMade", "[]")),
                model=_one(props, "usageModel"),
                input_tokens=int(_one(props, "inputTokens", "0")),
                output_tokens=int(_one(props, "outputTokens", "0")),
                calls=int(_one(props, "modelCalls", "0")),
                cost_usd=float(cost) if cost else None,
            )
        )
    return sorted(out, key=lambda m: m.index)


def describe(store: GraphStore, node: ox.NamedNode) -> SessionInfo:
    props = _props(store, node)
    info = SessionInfo(
        iri=node.value,
        id=_one(props, "ulid"),
        name=_one(props, "name"),
        actor=_one(props, "sessionActor"),
        metadata=json.loads(_one(props, "sessionMetadata", "{}")),
        thread=_one(props, "sessionThread"),
        created=_one(props, "createdAt"),
    )
    # Totals by aggregate, so listing many sessions does not read every message.
    totals = store.query(
        "SELECT (COUNT(?m) AS ?n) (MAX(?t) AS ?last) (SUM(COALESCE(?i, 0)) AS ?in) (SUM(COALESCE(?o, 0)) AS ?out) "
        "(SUM(COALESCE(?c, 0)) AS ?calls) (SUM(COALESCE(?usd, 0.0)) AS ?cost) (COUNT(?usd) AS ?priced) "
        f"WHERE {{ ?m ca:inSession {node} ; ca:createdAt ?t . "
        "OPTIONAL { ?m ca:inputTokens ?i } OPTIONAL { ?m ca:outputTokens ?o } OPTIONAL { ?m ca:modelCalls ?c } "
        "OPTIONAL { ?m ca:costUsd ?usd } }"
    )
    for row in totals:
        info.messages = int(row["n"].value)
        info.updated = row["last"].value if row["last"] is not None else info.created
        info.input_tokens = int(row["in"].value) if row["in"] is not None else 0
        info.output_tokens = int(row["out"].value) if row["out"] is not None else 0
        info.calls = int(row["calls"].value) if row["calls"] is not None else 0
        priced = int(row["priced"].value) if row["priced"] is not None else 0
        info.cost_usd = round(float(row["cost"].value), 6) if priced and row["cost"] is not None else None
    return info


def list_all(ws: Workspace) -> list[SessionInfo]:
    """Every live session, the most recently used first."""
    with ws.reader() as store:
        found = [describe(store, row["s"]) for row in store.query("SELECT ?s WHERE { ?s a ca:Session }")]
    return sorted(found, key=lambda s: (s.updated or s.created, s.id), reverse=True)


def resolve(ws: Workspace, ref: str | None) -> SessionInfo:
    """A session by name, ULID or IRI; without one, the most recently used."""
    if ref is None:
        found = list_all(ws)
        if not found:
            raise NotFoundError("there is no session yet", suggestions=["agents session create --name NAME"])
        return found[0]
    with ws.reader() as store:
        return describe(store, find(store, ref))


def show(ws: Workspace, ref: str | None) -> tuple[SessionInfo, list[SessionMessage]]:
    with ws.reader() as store:
        info = describe(store, find(store, ref)) if ref else None
    info = info or resolve(ws, None)
    with ws.reader() as store:
        return info, messages(store, info.node)


# --- writing -------------------------------------------------------------------------------


def _check_name(store: GraphStore, name: str) -> None:
    if not name.strip() or any(c.isspace() for c in name):
        raise ValidationError(f"session name '{name}': one word, without spaces")
    if store.query(f"ASK {{ ?s a ca:Session ; ca:name {ox.Literal(name)} }}"):
        raise ConflictError(f"a session named '{name}' exists already", suggestions=["agents session list"])


def _session_triples(
    node: ox.NamedNode, ulid: str, name: str, actor: str, metadata: Mapping[str, str]
) -> list[tuple[Any, Any, Any]]:
    triples: list[tuple[Any, Any, Any]] = [
        (node, _TYPE, ox.NamedNode(ca.Session)),
        (node, _P["ulid"], ox.Literal(ulid)),
        (node, _P["name"], ox.Literal(name)),
        (node, _P["sessionThread"], ox.Literal(f"session/{ulid}")),
        (node, _P["sessionMetadata"], ox.Literal(json.dumps(dict(metadata), sort_keys=True))),
        (node, _P["createdAt"], _now()),
    ]
    if actor:
        triples.append((node, _P["sessionActor"], ox.Literal(actor)))
    return triples


def create(
    ws: Workspace,
    *,
    name: str | None = None,
    actor: str = "",
    metadata: Mapping[str, str] | None = None,
    agent: str = "cleveragents",
) -> tuple[SessionInfo, CommitResult]:
    ulid = str(ULID())
    name = name or f"session-{ulid[-8:].lower()}"
    node = ox.NamedNode(f"{ID}session/{ulid}")
    with ws.writer() as writer:
        _check_name(writer.store, name)
        result = writer.commit(
            CommitRequest(
                add=_session_triples(node, ulid, name, actor, metadata or {}),
                message=f"session create {name}",
                cause="session-created",
                agent=agent,
            )
        )
        return describe(writer.store, node), result


def delete(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[SessionInfo, CommitResult]:
    """Retract the session and its messages (history keeps them; checkpoints stay on disk)."""
    with ws.writer() as writer:
        node = find(writer.store, ref)
        info = describe(writer.store, node)
        nodes = [row["m"] for row in writer.store.query(f"SELECT ?m WHERE {{ ?m ca:inSession {node} }}")]
        result = writer.commit(
            CommitRequest(
                retract_subjects=[node, *nodes],
                message=f"session delete {info.name}",
                cause="session-deleted",
                agent=agent,
            )
        )
        return info, result


def _message_triples(node: ox.NamedNode, session: ox.NamedNode, message: SessionMessage) -> list[Any]:
    triples: list[Any] = [
        (node, _TYPE, ox.NamedNode(ca.SessionMessage)),
        (node, _P["inSession"], session),
        (node, _P["messageRole"], ox.Literal(message.role)),
        (node, _P["messageText"], ox.Literal(message.text)),
        (node, _P["messageIndex"], _int(message.index)),
        (node, _P["createdAt"], ox.Literal(message.created, datatype=_DATETIME) if message.created else _now()),
    ]
    if message.role == "assistant":
        triples += [
            (node, _P["toolCallsMade"], ox.Literal(json.dumps(message.tool_calls))),
            (node, _P["inputTokens"], _int(message.input_tokens)),
            (node, _P["outputTokens"], _int(message.output_tokens)),
            (node, _P["modelCalls"], _int(message.calls)),
        ]
        if message.model:
            triples.append((node, _P["usageModel"], ox.Literal(message.model)))
        if message.cost_usd is not None:
            triples.append((node, _P["costUsd"], ox.Literal(str(Decimal(str(message.cost_usd))), datatype=_DECIMAL)))
    return triples


def _append(
    ws: Workspace, session: SessionInfo, new: list[SessionMessage], *, agent: str, message: str, cause: str
) -> tuple[SessionInfo, CommitResult]:
    with ws.writer() as writer:
        node = find(writer.store, session.id)
        count = len(messages(writer.store, node))
        add: list[Any] = []
        for offset, item in enumerate(new):
            item.index = count + offset
            add += _message_triples(ox.NamedNode(f"{ID}session-message/{ULID()}"), node, item)
        result = writer.commit(CommitRequest(add=add, message=message, cause=cause, agent=agent))
        return describe(writer.store, node), result


def export(ws: Workspace, ref: str) -> dict[str, Any]:
    info, found = show(ws, ref)
    return {
        "format": EXPORT_FORMAT,
        "session": {k: v for k, v in info.as_dict().items() if k in ("id", "name", "actor", "metadata", "created")},
        "messages": [m.as_dict() for m in found],
    }


def import_(
    ws: Workspace, data: Any, *, name: str | None = None, source: str = "input", agent: str = "cleveragents"
) -> tuple[SessionInfo, CommitResult]:
    """A new session (new id, new thread) holding an exported session's messages."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ValidationError(f"{source}: not a session export (expected \"format\": \"{EXPORT_FORMAT}\")")
    head = data.get("session") or {}
    rows = data.get("messages") or []
    if not isinstance(head, dict) or not isinstance(rows, list):
        raise ValidationError(f"{source}: 'session' is an object and 'messages' a list")
    loaded = []
    fields = set(SessionMessage.__dataclass_fields__)
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or row.get("role") not in ("user", "assistant") or not isinstance(
            row.get("text"), str
        ):
            raise ValidationError(f"{source}: messages[{i}] needs a role ('user' or 'assistant') and a text")
        loaded.append(SessionMessage(**{k: v for k, v in row.items() if k in fields}))
    ulid = str(ULID())
    name = name or str(head.get("name") or f"session-{ulid[-8:].lower()}")
    node = ox.NamedNode(f"{ID}session/{ulid}")
    metadata = {str(k): str(v) for k, v in (head.get("metadata") or {}).items()}
    with ws.writer() as writer:
        _check_name(writer.store, name)
        add = _session_triples(node, ulid, name, str(head.get("actor") or ""), metadata)
        for index, item in enumerate(sorted(loaded, key=lambda m: m.index)):
            item.index = index
            add += _message_triples(ox.NamedNode(f"{ID}session-message/{ULID()}"), node, item)
        result = writer.commit(CommitRequest(add=add, message=f"session import {name}", cause="session-imported",
                                             agent=agent))
        return describe(writer.store, node), result


# --- telling -------------------------------------------------------------------------------


def _last_prompt(run: RunResult) -> str:
    return next((str(m.content) for m in reversed(run.messages) if isinstance(m, HumanMessage)), "")


def _answer(run: RunResult, model: str, cost: float | None) -> SessionMessage:
    usage = run.run_usage
    return SessionMessage(
        index=0,
        role="assistant",
        text=run.text,
        created="",
        tool_calls=run.tool_calls(),
        model=model,
        input_tokens=int(usage.get("input_tokens", 0)),
        output_tokens=int(usage.get("output_tokens", 0)),
        calls=int(usage.get("calls", 0)),
        cost_usd=cost,
    )


def _seed(found: list[SessionMessage]) -> list[AnyMessage]:
    return [HumanMessage(m.text) if m.role == "user" else AIMessage(m.text) for m in found]


def tell(
    ws: Workspace,
    session: SessionInfo,
    prompt: str,
    runtime: AgentRuntime,
    *,
    model: str,
    price: Any = None,
    agent: str = "cleveragents",
) -> TellResult:
    """Send ``prompt`` on the session's thread and record the prompt and the answer.

    ``price``: a callable from a run's usage to its cost in USD (or None when unpriced)."""
    if not prompt.strip():
        raise ValidationError("the prompt is empty")
    try:
        return _tell(ws, session, prompt, runtime, model=model, price=price, agent=agent)
    except Exception as exc:
        if is_provider_error(exc):
            raise ProviderError(
                f"provider of {model}: {type(exc).__name__}: {exc}",
                suggestions=["agents session tell again: the interrupted request is finished first"],
            ) from exc
        raise


def _tell(
    ws: Workspace, session: SessionInfo, prompt: str, runtime: AgentRuntime, *, model: str, price: Any, agent: str
) -> TellResult:
    new: list[SessionMessage] = []
    resumed_prompt = None
    if runtime.pending(session.thread):
        # The last tell stopped mid-turn: finish that turn first (its prompt is in the checkpoint).
        earlier = runtime.run(session.thread, prompt)
        resumed_prompt = _last_prompt(earlier)
        new += [
            SessionMessage(index=0, role="user", text=resumed_prompt, created=""),
            _answer(earlier, model, price(earlier.run_usage) if price else None),
        ]
    seed: list[AnyMessage] = []
    if not runtime.history(session.thread):
        with ws.reader() as store:
            seed = _seed(messages(store, session.node))
    result = runtime.run(session.thread, prompt, seed=seed)
    new += [
        SessionMessage(index=0, role="user", text=prompt, created=""),
        _answer(result, model, price(result.run_usage) if price else None),
    ]
    info, commit = _append(ws, session, new, agent=agent, message=f"session tell {session.name}",
                           cause="session-tell")
    return TellResult(session=info, answer=result.text, resumed_prompt=resumed_prompt, run=result, commit=commit)
