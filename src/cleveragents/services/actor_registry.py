"""The actor registry as graph data: ``ca:Actor`` nodes holding the file they came from.

The stored configuration is the file's text as written (before Jinja2 and ``${ENV}``), so
a registered actor resolves the environment when it runs, and no secret the environment
holds is ever written to the graph. Registering validates the file as a run would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.actors import definition
from cleveragents.actors.definition import ActorFile
from cleveragents.actors.providers import PROVIDERS, ModelRef
from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.names import parse_name
from cleveragents.services import entities
from cleveragents.terms import CA, XSD
from cleveragents.vocabulary import ca

CLASS = "Actor"
ACTOR = ox.NamedNode(CA + CLASS)
P = {
    key: ox.NamedNode(CA + key)
    for key in (
        "description",
        "configuration",
        "actorType",
        "model",
        "isDefaultActor",
        "unsafe",
        "actorOptions",
        "ulid",
        "updatedAt",
    )
}
_BOOL = ox.NamedNode(XSD + "boolean")


@dataclass(frozen=True)
class ActorInfo:
    iri: str
    name: str
    description: str
    type: str
    model: str
    default: bool
    unsafe: bool
    options: dict[str, Any] = field(default_factory=dict)
    actors: tuple[str, ...] = ()
    created: str = ""
    configuration: str = ""

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0] if "/" in self.model else ""

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "configuration"}
        return {**out, "provider": self.provider, "actors": list(self.actors)}


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` overrides; values are JSON when they parse as JSON (numbers, booleans)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"option '{pair}' is not key=value")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def _summary(actor_file: ActorFile) -> tuple[str, str]:
    """(type, model) of the file's default actor, following config.actor references."""
    actor = actor_file.actor()
    kind = "llm" if actor.is_llm else actor.type
    ref = actor.model_ref()
    seen: set[str] = set()
    while ref is None and actor.is_llm and actor.config.get("actor") in actor_file.actors and actor.name not in seen:
        seen.add(actor.name)
        actor = actor_file.actors[actor.config["actor"]]
        ref = actor.model_ref()
    return kind, str(ref) if ref else str(actor.config.get("actor", ""))


def _triples(node: ox.NamedNode, info: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    return [
        (node, P["description"], ox.Literal(info["description"])),
        (node, P["configuration"], ox.Literal(info["configuration"])),
        (node, P["actorType"], ox.Literal(info["type"])),
        (node, P["model"], ox.Literal(info["model"])),
        (node, P["unsafe"], ox.Literal(str(info["unsafe"]).lower(), datatype=_BOOL)),
        (node, P["actorOptions"], ox.Literal(json.dumps(info["options"], sort_keys=True))),
    ]


def _read_config(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"cannot read the actor file {path}: {exc.strerror}") from None


def _defaults(store: GraphStore) -> list[ox.NamedNode]:
    rows = store.query(f"SELECT ?a WHERE {{ ?a a <{CA}Actor> ; ca:isDefaultActor true }}")
    return [row["a"] for row in rows]


def _default_changes(store: GraphStore, node: ox.NamedNode) -> tuple[list[Any], list[Any]]:
    remove = [(other, P["isDefaultActor"], ox.Literal("true", datatype=_BOOL)) for other in _defaults(store)]
    return remove, [(node, P["isDefaultActor"], ox.Literal("true", datatype=_BOOL))]


def add(
    ws: Workspace,
    name: str,
    config: Path,
    *,
    unsafe: bool = False,
    set_default: bool = False,
    options: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    agent: str = "cleveragents",
) -> tuple[ActorInfo, CommitResult]:
    full = parse_name(name, kind="actor name")
    if full.split("/", 1)[0] in PROVIDERS:
        raise ValidationError(f"'{full}' is a built-in actor name (provider/model); register under another namespace")
    text = _read_config(config)
    actor_file = definition.parse(text, str(config), env=env)
    kind, model = _summary(actor_file)
    node, ulid = entities.new_iri("actor")
    with ws.writer() as session:
        if entities.name_taken(session.store, CLASS, full):
            raise ConflictError(f"actor '{full}' exists already", suggestions=[f"agents actor update {full} -c FILE"])
        add_triples = [
            (node, entities.TYPE, ACTOR),
            (node, entities.NAME, ox.Literal(full)),
            (node, P["ulid"], ox.Literal(ulid)),
            (node, entities.CREATED, entities.now_literal()),
            *_triples(
                node,
                {
                    "description": actor_file.description,
                    "configuration": text,
                    "type": kind,
                    "model": model,
                    "unsafe": unsafe,
                    "options": dict(options or {}),
                },
            ),
        ]
        remove: list[Any] = []
        if set_default:
            remove, extra = _default_changes(session.store, node)
            add_triples += extra
        result = session.commit(
            CommitRequest(add=add_triples, remove=remove, message=f"actor add {full}", cause="actor-add", agent=agent)
        )
        return describe(session.store, node), result


def update(
    ws: Workspace,
    ref: str,
    *,
    config: Path | None = None,
    unsafe: bool | None = None,
    set_default: bool = False,
    options: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    agent: str = "cleveragents",
) -> tuple[ActorInfo, CommitResult]:
    with ws.writer() as session:
        node = entities.find(session.store, CLASS, ref, kind="actor")
        current = describe(session.store, node)
        text = _read_config(config) if config else current.configuration
        actor_file = definition.parse(text, str(config) if config else current.name, env=env)
        kind, model = _summary(actor_file)
        info = {
            "description": actor_file.description,
            "configuration": text,
            "type": kind,
            "model": model,
            "unsafe": current.unsafe if unsafe is None else unsafe,
            "options": {**current.options, **(options or {})},
        }
        old = {quad.predicate.value: quad for quad in session.store.live_quads(node)}
        remove = [
            (node, old[p.value].predicate, old[p.value].object) for _, p, _ in _triples(node, info) if p.value in old
        ]
        add_triples = [*_triples(node, info), (node, P["updatedAt"], entities.now_literal())]
        if P["updatedAt"].value in old:
            remove.append((node, P["updatedAt"], old[P["updatedAt"].value].object))
        if set_default:
            more_remove, extra = _default_changes(session.store, node)
            remove += [t for t in more_remove if t[0] != node]
            add_triples += extra if not current.default else []
        result = session.commit(
            CommitRequest(
                add=add_triples,
                remove=remove,
                message=f"actor update {current.name}",
                cause="actor-update",
                agent=agent,
            )
        )
        return describe(session.store, node), result


def set_default(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[ActorInfo, CommitResult | None]:
    with ws.writer() as session:
        node = entities.find(session.store, CLASS, ref, kind="actor")
        if describe(session.store, node).default:
            return describe(session.store, node), None
        remove, add_triples = _default_changes(session.store, node)
        result = session.commit(
            CommitRequest(
                add=add_triples,
                remove=remove,
                message=f"actor set-default {ref}",
                cause="actor-set-default",
                agent=agent,
            )
        )
        return describe(session.store, node), result


def remove(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[ActorInfo, CommitResult]:
    with ws.writer() as session:
        node = entities.find(session.store, CLASS, ref, kind="actor")
        info = describe(session.store, node)
        result = session.commit(
            CommitRequest(
                retract_subjects=[node], message=f"actor remove {info.name}", cause="actor-remove", agent=agent
            )
        )
        return info, result


def list_all(ws: Workspace) -> list[ActorInfo]:
    with ws.reader() as store:
        return [describe(store, node) for node in entities.named(store, CLASS)]


def show(ws: Workspace, ref: str) -> ActorInfo:
    with ws.reader() as store:
        return describe(store, entities.find(store, CLASS, ref, kind="actor"))


def default_actor(ws: Workspace) -> ActorInfo:
    with ws.reader() as store:
        nodes = _defaults(store)
        if not nodes:
            raise NotFoundError("no default actor is set", suggestions=["agents actor set-default NAME"])
        return describe(store, nodes[0])


def resolve(ws: Workspace, ref: str, *, env: Mapping[str, str] | None = None) -> tuple[ActorInfo, ActorFile]:
    """A registered actor, its file parsed with the environment of now; options applied."""
    info = show(ws, ref)
    actor_file = definition.parse(info.configuration, info.name, env=env)
    if info.options:
        actor = actor_file.actor()
        actor.config.update(info.options)
    return info, actor_file


def builtin(ref: str) -> ModelRef | None:
    """``openai/gpt-4o`` and the like name built-in LLM actors (a provider and a model)."""
    head = ref.split("/", 1)[0]
    return ModelRef.parse(ref) if head in PROVIDERS and "/" in ref else None


def describe(store: GraphStore, node: ox.NamedNode) -> ActorInfo:
    props = entities.properties(store, node)
    text = entities.single(props, P["configuration"].value) or ""
    try:
        inner = tuple(definition.parse(text, "stored").actors)
    except ValidationError:
        inner = ()
    return ActorInfo(
        iri=node.value,
        name=entities.single(props, ca.name) or "",
        description=entities.single(props, P["description"].value) or "",
        type=entities.single(props, P["actorType"].value) or "",
        model=entities.single(props, P["model"].value) or "",
        default=entities.single(props, P["isDefaultActor"].value) == "true",
        unsafe=entities.single(props, P["unsafe"].value) == "true",
        options=json.loads(entities.single(props, P["actorOptions"].value) or "{}"),
        actors=inner,
        created=entities.single(props, ca.createdAt) or "",
        configuration=text,
    )
