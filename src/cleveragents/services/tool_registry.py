"""The tool and validation registries as graph data (``ca:Tool``, ``ca:Validation``).

Tools come from YAML files (``tool:`` with an input schema and the full capability
metadata, or ``wraps:`` an existing tool with an ``argument_mapping``) or from an MCP server
(every tool it lists). Validations (``validation:``) wrap a registered tool and must be
read-only: a validation whose tool writes is refused at registration. The definition is
kept as JSON in ``ca:configuration``; the capability is also spelled out as triples so
SPARQL can select tools by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pyoxigraph as ox
import yaml

from cleveragents.actors.mcp_source import McpToolSource
from cleveragents.errors import ConflictError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.names import parse_name
from cleveragents.services import entities
from cleveragents.terms import CA, XSD
from cleveragents.tools import Capability

_BOOL = ox.NamedNode(XSD + "boolean")
P = {key: ox.NamedNode(CA + key) for key in (
    "description", "configuration", "toolSource", "readOnly", "checkpointable", "validationMode", "wraps", "ulid",
)}
SOURCES = ("custom", "mcp", "agent_skill", "builtin", "wrapped")
_CAPABILITY_KEYS = {"read_only", "writes", "checkpointable", "checkpoint_scope", "side_effects", "environment",
                    "human_approval_required", "write_scope"}


@dataclass(frozen=True)
class ToolInfo:
    iri: str
    name: str
    kind: str  # tool | validation
    description: str
    source: str
    read_only: bool
    checkpointable: bool
    definition: dict[str, Any] = field(default_factory=dict)
    mode: str = ""
    wraps: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _bool(value: bool) -> ox.Literal:
    return ox.Literal(str(bool(value)).lower(), datatype=_BOOL)


def capability_of(raw: dict[str, Any] | None, where: str) -> Capability:
    raw = dict(raw or {})
    unknown = set(raw) - _CAPABILITY_KEYS
    if unknown:
        raise ValidationError(
            f"{where}: unknown capability keys {sorted(unknown)} (allowed: {sorted(_CAPABILITY_KEYS)})")
    writes = bool(raw.get("writes", False))
    try:
        return Capability(
            read_only=bool(raw.get("read_only", not writes)),
            writes=writes,
            checkpointable=bool(raw.get("checkpointable", False)),
            checkpoint_scope=raw.get("checkpoint_scope"),
            side_effects=tuple(raw.get("side_effects") or ()),
            environment=str(raw.get("environment", "any")),
        )
    except ValueError as exc:
        raise ValidationError(f"{where}: capability: {exc}") from None


def _load_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ValidationError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not ({"tool", "validation"} & set(data)):
        raise ValidationError(f"{path}: not a tool or validation file: it needs a 'tool:' or 'validation:' block")
    return data


def entry_triples(node: ox.NamedNode, kind: str, name: str, body: dict[str, Any], source: str,
             capability: Capability) -> list[tuple[Any, Any, Any]]:
    cls = "Validation" if kind == "validation" else "Tool"
    return [
        (node, entities.TYPE, ox.NamedNode(CA + cls)),
        (node, entities.NAME, ox.Literal(name)),
        (node, P["description"], ox.Literal(str(body.get("description", "")))),
        (node, P["configuration"], ox.Literal(json.dumps(body, sort_keys=True, default=str))),
        (node, P["toolSource"], ox.Literal(source)),
        (node, P["readOnly"], _bool(capability.read_only)),
        (node, P["checkpointable"], _bool(capability.checkpointable)),
        (node, entities.CREATED, entities.now_literal()),
    ]


def _register(ws: Workspace, rows: list[tuple[str, str, dict[str, Any], str, Capability, dict[str, Any]]],
              *, update: bool, agent: str, message: str) -> tuple[list[ToolInfo], CommitResult]:
    """rows: (kind, name, body, source, capability, extra) -> one commit."""
    with ws.writer() as session:
        store = session.store
        add: list[Any] = []
        remove: list[Any] = []
        nodes = []
        for kind, name, body, source, capability, extra in rows:
            existing = _find_optional(store, name)
            if existing is not None and not update:
                raise ConflictError(f"tool '{name}' is registered already", suggestions=["add --update to replace it"])
            node = existing if existing is not None else entities.new_iri("tool")[0]
            wanted = entry_triples(node, kind, name, body, source, capability)
            if extra.get("wraps") is not None:
                wanted.append((node, P["wraps"], extra["wraps"]))
            if kind == "validation":
                wanted.append((node, P["validationMode"], ox.Literal(extra.get("mode", "required"))))
            if existing is None:
                wanted.append((node, P["ulid"], ox.Literal(node.value.rsplit("/", 1)[-1])))
                add += wanted
            else:
                # Same node, so what wraps it keeps pointing at it; identity and creation time stay.
                live = {(q.predicate, q.object) for q in store.live_quads(node)}
                keep = {P["ulid"], entities.CREATED}
                wanted = [t for t in wanted if t[1] != entities.CREATED]
                remove += [(node, p, o) for p, o in live if p not in keep and (node, p, o) not in wanted]
                add += [t for t in wanted if (t[1], t[2]) not in live]
            nodes.append(node)
        result = session.commit(CommitRequest(add=add, remove=remove, message=message,
                                              cause="tool-add", agent=agent))
        return [describe(store, node) for node in nodes], result


def _find_optional(store: GraphStore, name: str) -> ox.NamedNode | None:
    rows = list(store.query(f"SELECT ?t WHERE {{ ?t a ca:Tool ; ca:name {ox.Literal(name)} }}"))
    return rows[0]["t"] if rows else None


def add_config(ws: Workspace, path: Path, *, update: bool = False, agent: str = "cleveragents") -> tuple[
        list[ToolInfo], CommitResult]:
    data = _load_yaml(path)
    kind = "validation" if "validation" in data else "tool"
    body = data[kind]
    where = f"{path}: {kind}"
    if not isinstance(body, dict) or not body.get("name"):
        raise ValidationError(f"{where}: needs a name (namespace/name)")
    name = parse_name(str(body["name"]), kind=f"{kind} name")
    extra: dict[str, Any] = {}
    wraps_name = body.get("wraps")
    base: ToolInfo | None = None  # the wrapped tool, described
    with ws.reader() as store:
        wrapped = None
        if wraps_name:
            wrapped = _find_optional(store, parse_name(str(wraps_name), kind="tool name"))
            if wrapped is None:
                raise ValidationError(f"{where}.wraps: no registered tool '{wraps_name}'",
                                      suggestions=["agents tool add --config THE_TOOL.yaml first"])
            extra["wraps"] = wrapped
            base = describe(store, wrapped)
    if kind == "validation":
        if base is None:
            raise ValidationError(f"{where}: a validation wraps a registered tool ('wraps: namespace/name')")
        if not base.read_only:
            raise ValidationError(
                f"{where}: validations are read-only, and '{base.name}' can modify resources; "
                "wrap a read-only tool", data={"tool": base.name})
        mode = str(body.get("mode", "required"))
        if mode not in ("required", "informational"):
            raise ValidationError(f"{where}.mode: 'required' or 'informational', not '{mode}'")
        extra["mode"] = mode
        capability = Capability()
        source = "wrapped"
    else:
        source = str(body.get("source", "wrapped" if wrapped is not None else "custom"))
        if source not in SOURCES:
            raise ValidationError(f"{where}.source: one of {', '.join(SOURCES)}, not '{source}'")
        schema = body.get("input_schema") or (base.definition.get("input_schema") if base is not None else None)
        if not isinstance(schema, dict):
            raise ValidationError(f"{where}.input_schema: a JSON Schema object is required")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValidationError(f"{where}.input_schema: not a valid JSON Schema: {exc.message}") from None
        capability = capability_of(body.get("capability"), where)
        mapping = body.get("argument_mapping")
        if mapping is not None and (not isinstance(mapping, dict) or wrapped is None):
            raise ValidationError(f"{where}.argument_mapping: a mapping of this tool's arguments to the wrapped "
                                  "tool's, with 'wraps'")
    return _register(ws, [(kind, name, body, source, capability, extra)], update=update, agent=agent,
                     message=f"{kind} add {name}")


def add_mcp(ws: Workspace, server: str, *, namespace: str = "local", update: bool = False,
            agent: str = "cleveragents") -> tuple[list[ToolInfo], CommitResult]:
    """Register every tool the MCP server lists as ``<namespace>/<tool>``."""
    specs = McpToolSource(server).list_tools()
    if not specs:
        raise ValidationError(f"MCP server '{server}' lists no tools")
    rows = []
    for spec in specs:
        name = parse_name(f"{namespace}/{spec.name.lower()}", kind="tool name")
        body = {"name": name, "description": spec.description, "source": "mcp", "input_schema": spec.input_schema,
                "mcp_server": {"command": server}, "tool_name": spec.name, "capability": spec.capability.as_dict()}
        rows.append(("tool", name, body, "mcp", spec.capability, {}))
    return _register(ws, rows, update=update, agent=agent, message=f"tool add --mcp {server} ({len(rows)} tools)")


def list_all(ws: Workspace, kind: str | None = None) -> list[ToolInfo]:
    with ws.reader() as store:
        infos = [describe(store, node) for node in entities.named(store, "Tool")]
    return [i for i in infos if kind is None or i.kind == kind]


def show(ws: Workspace, ref: str) -> ToolInfo:
    with ws.reader() as store:
        return describe(store, entities.find(store, "Tool", ref, kind="tool"))


def remove(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[ToolInfo, CommitResult]:
    with ws.writer() as session:
        node = entities.find(session.store, "Tool", ref, kind="tool")
        info = describe(session.store, node)
        users = list(session.store.query(f"SELECT ?v WHERE {{ ?v ca:wraps {node} ; ca:name ?n }}"))
        if users:
            raise ConflictError(f"tool '{info.name}' is wrapped by other registered tools or validations; "
                                "remove them first")
        result = session.commit(CommitRequest(retract_subjects=[node], message=f"tool remove {info.name}",
                                              cause="tool-remove", agent=agent))
        return info, result


def describe(store: GraphStore, node: ox.NamedNode) -> ToolInfo:
    props = entities.properties(store, node)
    types = {t.value for t in props.get(entities.TYPE.value, [])}
    wraps = props.get(P["wraps"].value, [])
    wrapped_name = ""
    if wraps and isinstance(wraps[0], ox.NamedNode):
        wrapped_name = entities.single(entities.properties(store, wraps[0]), CA + "name") or ""
    return ToolInfo(
        iri=node.value,
        name=entities.single(props, CA + "name") or "",
        kind="validation" if CA + "Validation" in types else "tool",
        description=entities.single(props, P["description"].value) or "",
        source=entities.single(props, P["toolSource"].value) or "",
        read_only=entities.single(props, P["readOnly"].value) == "true",
        checkpointable=entities.single(props, P["checkpointable"].value) == "true",
        definition=json.loads(entities.single(props, P["configuration"].value) or "{}"),
        mode=entities.single(props, P["validationMode"].value) or "",
        wraps=wrapped_name,
    )
