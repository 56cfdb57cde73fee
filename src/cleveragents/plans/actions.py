"""Actions: reusable plan templates, defined by a YAML file (CLI flags override it) and
stored as graph data (``ca:Action`` with its ``ca:ActionArgument`` nodes), SHACL-checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import yaml

from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore

from .arguments import ArgumentSpec, spec_from_mapping
from .vocabulary import (
    ACTION_STATES,
    AUTOMATION_LEVELS,
    TYPE,
    Writer,
    action_iri,
    boolean,
    ca,
    decimal,
    new_ulid,
    text,
    time_literal,
    ulid_of,
)

_KEYS = {
    "name",
    "description",
    "short_description",
    "long_description",
    "definition_of_done",
    "strategy_actor",
    "execution_actor",
    "estimation_actor",
    "invariant_actor",
    "args",
    "arguments",
    "inputs_schema",
    "invariants",
    "reusable",
    "read_only",
    "automation_level",
    "automation_profile",
    "tags",
    "state",
    "available",
}


@dataclass(frozen=True)
class ActionDefinition:
    name: str
    definition_of_done: str
    strategy_actor: str
    execution_actor: str
    description: str = ""
    long_description: str = ""
    estimation_actor: str | None = None
    invariant_actor: str | None = None
    arguments: tuple[ArgumentSpec, ...] = ()
    invariants: tuple[str, ...] = ()
    reusable: bool = True
    read_only: bool = False
    automation_level: str | None = None
    tags: tuple[str, ...] = ()
    state: str = "available"
    # Set once stored.
    iri: str = ""
    created: str = ""

    @property
    def id(self) -> str:
        return ulid_of(self.iri) if self.iri else ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "state": self.state,
            "description": self.description,
            "long_description": self.long_description,
            "definition_of_done": self.definition_of_done,
            "strategy_actor": self.strategy_actor,
            "execution_actor": self.execution_actor,
            "estimation_actor": self.estimation_actor,
            "invariant_actor": self.invariant_actor,
            "arguments": [a.as_dict() for a in self.arguments],
            "invariants": list(self.invariants),
            "reusable": self.reusable,
            "read_only": self.read_only,
            "automation_level": self.automation_level,
            "tags": list(self.tags),
            "created": self.created,
            "iri": self.iri,
        }


def _actor_ref(value: Any, base: Path, key: str) -> str | None:
    """An actor by registered name, or ``scripted:PATH`` with PATH made absolute against
    the YAML file's folder (so the action works from any working directory)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{key} must be an actor name or 'scripted:PATH', not {type(value).__name__}")
    if value.startswith("scripted:"):
        path = Path(value.removeprefix("scripted:")).expanduser()
        path = (base / path).resolve() if not path.is_absolute() else path
        if not path.is_file():
            raise ValidationError(f"{key}: the script {path} does not exist")
        return f"scripted:{path}"
    return value


def load_definition(config: Path | None, overrides: Mapping[str, Any]) -> ActionDefinition:
    """The action a YAML file defines, with ``overrides`` (CLI flags; None means not given)
    taking precedence. Accepts the file's body bare or under ``cleveragents: action:``."""
    body: dict[str, Any] = {}
    base = Path.cwd()
    if config is not None:
        try:
            loaded = yaml.safe_load(config.read_text())
        except OSError as exc:
            raise ValidationError(f"cannot read {config}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ValidationError(f"{config} is not valid YAML: {exc}") from None
        if isinstance(loaded, dict) and isinstance(loaded.get("cleveragents"), dict):
            loaded = loaded["cleveragents"].get("action", loaded["cleveragents"])
        if not isinstance(loaded, dict):
            raise ValidationError(f"{config}: an action definition is a mapping of keys")
        unknown = sorted(set(loaded) - _KEYS)
        if unknown:
            raise ValidationError(f"{config}: unknown keys {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
        body = dict(loaded)
        base = config.resolve().parent
    for key, value in overrides.items():
        if value is not None and value != () and value != []:
            body[key] = value
    missing = [k for k in ("name", "definition_of_done", "strategy_actor", "execution_actor") if not body.get(k)]
    if missing:
        raise ValidationError(
            "an action needs "
            + ", ".join(missing)
            + (f" (in {config} or as flags)" if config else " (as flags or in --config)")
        )
    raw_args = body.get("args", body.get("arguments", body.get("inputs_schema"))) or {}
    if isinstance(raw_args, list):
        specs = tuple(
            a
            if isinstance(a, ArgumentSpec)
            else spec_from_mapping(str(a.get("name")), {k: v for k, v in a.items() if k != "name"})
            for a in raw_args
        )
    elif isinstance(raw_args, dict):
        specs = tuple(spec_from_mapping(str(k), v) for k, v in raw_args.items())
    else:
        raise ValidationError("args must be a mapping of name to {type, required, ...}")
    level = body.get("automation_level", body.get("automation_profile"))
    if level is not None and level not in AUTOMATION_LEVELS:
        raise ValidationError(f"automation_level '{level}' is not one of {', '.join(AUTOMATION_LEVELS)}")
    state = body.get("state") or ("available" if body.get("available", True) else "draft")
    if state not in ACTION_STATES:
        raise ValidationError(f"state '{state}' is not one of {', '.join(ACTION_STATES)}")
    invariants = body.get("invariants") or ()
    if isinstance(invariants, str):
        invariants = (invariants,)
    return ActionDefinition(
        name=str(body["name"]),
        definition_of_done=str(body["definition_of_done"]),
        strategy_actor=_actor_ref(body["strategy_actor"], base, "strategy_actor") or "",
        execution_actor=_actor_ref(body["execution_actor"], base, "execution_actor") or "",
        description=str(body.get("description", body.get("short_description")) or ""),
        long_description=str(body.get("long_description") or ""),
        estimation_actor=_actor_ref(body.get("estimation_actor"), base, "estimation_actor"),
        invariant_actor=_actor_ref(body.get("invariant_actor"), base, "invariant_actor"),
        arguments=specs,
        invariants=tuple(str(i) for i in invariants),
        reusable=bool(body.get("reusable", True)),
        read_only=bool(body.get("read_only", False)),
        automation_level=level,
        tags=tuple(str(t) for t in body.get("tags") or ()),
        state=state,
    )


def _argument_triples(node: ox.NamedNode, spec: ArgumentSpec) -> list[tuple[Any, Any, Any]]:
    arg = ox.NamedNode(f"{node.value}/arg/{spec.name}")
    out: list[tuple[Any, Any, Any]] = [
        (node, ca("hasArgument"), arg),
        (arg, TYPE, ca("ActionArgument")),
        (arg, ca("argName"), text(spec.name)),
        (arg, ca("argType"), text(spec.type)),
        (arg, ca("argRequired"), boolean(spec.required)),
    ]
    if spec.description:
        out.append((arg, ca("description"), text(spec.description)))
    if spec.minimum is not None:
        out.append((arg, ca("argMinimum"), decimal(spec.minimum)))
    if spec.maximum is not None:
        out.append((arg, ca("argMaximum"), decimal(spec.maximum)))
    if spec.default is not None:
        out.append((arg, ca("argDefault"), text(spec.default)))
    out.extend((arg, ca("argChoice"), text(c)) for c in spec.choices)
    return out


def create(writer: Writer, definition: ActionDefinition, *, agent: str) -> tuple[ActionDefinition, CommitResult]:
    """Store a new action; its invariants become action-scoped ca:Invariant nodes."""
    from .invariants import invariant_triples  # invariants.py reads actions; import on use

    name = definition.name
    if _find_by_name(writer.store, name) is not None:
        raise ConflictError(f"action '{name}' exists already", suggestions=[f"agents action show {name}"])
    ulid = new_ulid()
    node = action_iri(ulid)
    triples: list[tuple[Any, Any, Any]] = [
        (node, TYPE, ca("Action")),
        (node, ca("ulid"), text(ulid)),
        (node, ca("name"), text(name)),
        (node, ca("definitionOfDone"), text(definition.definition_of_done)),
        (node, ca("strategyActorRef"), text(definition.strategy_actor)),
        (node, ca("executionActorRef"), text(definition.execution_actor)),
        (node, ca("reusable"), boolean(definition.reusable)),
        (node, ca("readOnly"), boolean(definition.read_only)),
        (node, ca("actionState"), text(definition.state)),
        (node, ca("createdAt"), time_literal()),
        (node, ca("createdBy"), text(agent)),
    ]
    optional = {
        "description": definition.description,
        "longDescription": definition.long_description,
        "estimationActorRef": definition.estimation_actor,
        "invariantActorRef": definition.invariant_actor,
        "automationLevel": definition.automation_level,
    }
    triples += [(node, ca(p), text(v)) for p, v in optional.items() if v]
    triples += [(node, ca("tag"), text(t)) for t in definition.tags]
    for spec in definition.arguments:
        triples += _argument_triples(node, spec)
    for invariant in definition.invariants:
        triples += invariant_triples(invariant, "action", node, agent=agent)[1]
    result = writer.commit(
        CommitRequest(add=triples, message=f"action create {name}", cause="action-create", agent=agent)
    )
    return read(writer.store, node), result


def _find_by_name(store: GraphStore, name: str) -> ox.NamedNode | None:
    for row in store.query(f"SELECT ?a WHERE {{ ?a a ca:Action ; ca:name {text(name)} }} LIMIT 1"):
        return row["a"]
    return None


def find(store: GraphStore, ref: str) -> ox.NamedNode:
    """An action by name (a bare name means local/NAME), ULID or IRI."""
    names = {ref, ref if "/" in ref else f"local/{ref}"}
    for name in names:
        found = _find_by_name(store, name)
        if found is not None:
            return found
    for row in store.query(
        f"SELECT ?a WHERE {{ ?a a ca:Action . "
        f"FILTER(STR(?a) = {text(ref)} || STRENDS(STR(?a), {text('/' + ref)})) }} LIMIT 1"
    ):
        return row["a"]
    raise NotFoundError(f"action '{ref}' not found", suggestions=["agents action list"])


def _values(store: GraphStore, node: ox.NamedNode) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for quad in store.live_quads(node):
        out.setdefault(quad.predicate.value.rsplit("#", 1)[-1], []).append(quad.object)
    return out


def _one(values: dict[str, list[Any]], key: str, default: str = "") -> str:
    found = values.get(key)
    return found[0].value if found else default


def read(store: GraphStore, node: ox.NamedNode) -> ActionDefinition:
    v = _values(store, node)
    specs = []
    for arg in v.get("hasArgument", []):
        a = _values(store, arg)
        specs.append(
            ArgumentSpec(
                name=_one(a, "argName"),
                type=_one(a, "argType", "string"),
                required=_one(a, "argRequired") == "true",
                description=_one(a, "description"),
                minimum=Decimal(_one(a, "argMinimum")) if a.get("argMinimum") else None,
                maximum=Decimal(_one(a, "argMaximum")) if a.get("argMaximum") else None,
                choices=tuple(sorted(c.value for c in a.get("argChoice", []))),
                default=_one(a, "argDefault") if a.get("argDefault") else None,
            )
        )
    invariants = tuple(
        row["t"].value
        for row in store.query(
            f"SELECT ?t WHERE {{ ?i a ca:Invariant ; ca:appliesTo {node} ; ca:description ?t ; ca:createdAt ?c . "
            "FILTER NOT EXISTS { ?i ca:retired true } } ORDER BY ?c"
        )
    )
    return ActionDefinition(
        name=_one(v, "name"),
        definition_of_done=_one(v, "definitionOfDone"),
        strategy_actor=_one(v, "strategyActorRef"),
        execution_actor=_one(v, "executionActorRef"),
        description=_one(v, "description"),
        long_description=_one(v, "longDescription"),
        estimation_actor=_one(v, "estimationActorRef") or None,
        invariant_actor=_one(v, "invariantActorRef") or None,
        arguments=tuple(sorted(specs, key=lambda s: s.name)),
        invariants=invariants,
        reusable=_one(v, "reusable", "true") == "true",
        read_only=_one(v, "readOnly") == "true",
        automation_level=_one(v, "automationLevel") or None,
        tags=tuple(sorted(t.value for t in v.get("tag", []))),
        state=_one(v, "actionState", "available"),
        iri=node.value,
        created=_one(v, "createdAt"),
    )


def list_all(store: GraphStore, *, namespace: str | None = None, state: str | None = None) -> list[ActionDefinition]:
    rows = store.query("SELECT ?a WHERE { ?a a ca:Action ; ca:name ?n } ORDER BY ?n")
    out = [read(store, row["a"]) for row in rows]
    if namespace:
        out = [a for a in out if a.name.split("/", 1)[0] == namespace]
    if state:
        out = [a for a in out if a.state == state]
    return out


def set_state(writer: Writer, ref: str, state: str, *, agent: str) -> tuple[ActionDefinition, CommitResult]:
    """``action available`` / ``action archive``: move an action between its states."""
    node = find(writer.store, ref)
    current = read(writer.store, node)
    if current.state == state:
        return current, CommitResult(revision=writer.store.head, commit=None)
    result = writer.commit(
        CommitRequest(
            remove=[(node, ca("actionState"), text(current.state))],
            add=[(node, ca("actionState"), text(state))],
            message=f"action {state} {current.name}",
            cause=f"action-{state}",
            agent=agent,
        )
    )
    return replace(current, state=state), result
