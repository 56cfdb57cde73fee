"""The skill registry as graph data (``ca:Skill``): ``agents skill add|list|show|tools|remove``.

A skill is a namespaced collection of tools. It is registered either from an **Agent Skill
folder** (a ``SKILL.md``, agentskills.io), which becomes a tool of source ``agent_skill``
(``ca:skillFolder`` names the folder) and a skill of that one tool; or from a **skill YAML**
(``skill:`` with ``tools:`` naming registered tools, ``includes:`` naming registered skills,
``agent_skills:`` listing folders). Links are triples (``ca:usesTool``,
``ca:includesSkill``), so ``skill tools`` flattens the includes by a SPARQL path, and a
skill another includes cannot be removed. Each registration is one commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import yaml

from cleveragents.actors import agent_skills
from cleveragents.actors.agent_skills import AgentSkill
from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.names import parse_name
from cleveragents.services import entities, tool_registry
from cleveragents.terms import CA
from cleveragents.tools import Capability
from cleveragents.vocabulary import ca

P = {key: ox.NamedNode(CA + key) for key in (
    "description", "configuration", "usesTool", "includesSkill", "skillFolder", "ulid", "toolSource")}
# Reading a skill's instructions and files changes nothing; what the instructions then
# have the model do goes through the tools it calls, each with its own capability.
AGENT_SKILL_CAPABILITY = Capability(read_only=True)


@dataclass(frozen=True)
class SkillInfo:
    iri: str
    name: str
    description: str
    tools: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()
    definition: dict[str, Any] = field(default_factory=dict)
    created: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _find(store: GraphStore, cls: str, name: str) -> ox.NamedNode | None:
    rows = list(store.query(f"SELECT ?e WHERE {{ ?e a <{CA}{cls}> ; ca:name {ox.Literal(name)} }}"))
    return rows[0]["e"] if rows else None


def _agent_skill_tool(store: GraphStore, skill: AgentSkill, namespace: str, update: bool) -> tuple[
        ox.NamedNode, list[Any], list[Any]]:
    """The ``agent_skill`` tool of a folder: its node and the triples to add and remove."""
    name = parse_name(f"{namespace}/{skill.name}", kind="tool name")
    body = {"name": name, "description": skill.description, "source": "agent_skill", "path": str(skill.root),
            "front_matter": skill.front_matter(), "input_schema": agent_skills.ACTIVATE_SCHEMA}
    existing = _find(store, "Tool", name)
    if existing is not None and not update:
        same = tool_registry.describe(store, existing).definition
        if same.get("source") == "agent_skill" and same.get("path") == str(skill.root):
            return existing, [], []  # the folder's tool, registered by another skill: shared
        raise ConflictError(f"tool '{name}' is registered already", suggestions=["add --update to replace it"])
    node = existing if existing is not None else entities.new_iri("tool")[0]
    wanted = [*tool_registry.entry_triples(node, "tool", name, body, "agent_skill", AGENT_SKILL_CAPABILITY),
              (node, P["skillFolder"], ox.Literal(str(skill.root)))]
    if existing is None:
        return node, [*wanted, (node, P["ulid"], ox.Literal(node.value.rsplit("/", 1)[-1]))], []
    return node, wanted, [(node, q.predicate, q.object) for q in store.live_quads(node)
                          if q.predicate not in (P["ulid"],)]


def _load_config(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ValidationError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("skill"), dict):
        raise ValidationError(f"{path}: not a skill file: it needs a 'skill:' block (name, description, tools...)")
    return data["skill"]


def _names(body: dict[str, Any], key: str, where: str) -> list[str]:
    raw = body.get(key) or []
    if not isinstance(raw, list):
        raise ValidationError(f"{where}.{key}: a list")
    out = []
    for i, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name:
            raise ValidationError(f"{where}.{key}[{i}]: a name (namespace/name) or {{name: ...}}")
        out.append(parse_name(name, kind=f"{key[:-1]} name"))
    return out


def add(ws: Workspace, source: Path, *, namespace: str = "local", update: bool = False,
        agent: str = "cleveragents") -> tuple[SkillInfo, CommitResult]:
    """Register a skill from an Agent Skill folder or a skill YAML file, in one commit."""
    folder_skill = source.is_dir()
    if folder_skill:
        loaded = agent_skills.load(source)
        name = parse_name(f"{namespace}/{loaded.name}", kind="skill name")
        body: dict[str, Any] = {"name": name, "description": loaded.description,
                                "agent_skills": [{"path": str(loaded.root)}]}
        folders = [loaded]
        tool_names: list[str] = []
        includes: list[str] = []
    else:
        body = _load_config(source)
        where = f"{source}: skill"
        if not body.get("name"):
            raise ValidationError(f"{where}: needs a name (namespace/name)")
        name = parse_name(str(body["name"]), kind="skill name")
        tool_names = _names(body, "tools", where)
        includes = _names(body, "includes", where)
        folders = []
        for i, item in enumerate(body.get("agent_skills") or []):
            path = item.get("path") if isinstance(item, dict) else item
            if not isinstance(path, str):
                raise ValidationError(f"{where}.agent_skills[{i}]: {{path: FOLDER}}")
            folders.append(agent_skills.load(source.parent / path))
    with ws.writer() as session:
        store = session.store
        existing = _find(store, "Skill", name)
        if existing is not None and not update:
            raise ConflictError(f"skill '{name}' is registered already", suggestions=["add --update to replace it"])
        add_triples: list[Any] = []
        remove: list[Any] = []
        tools: list[ox.NamedNode] = []
        for tool in tool_names:
            node = _find(store, "Tool", tool)
            if node is None:
                raise ValidationError(f"{source}: skill.tools: no registered tool '{tool}'",
                                      suggestions=["agents tool add --config TOOL.yaml first"])
            tools.append(node)
        for folder in folders:
            node, more, fewer = _agent_skill_tool(store, folder, name.split("/", 1)[0], update)
            tools.append(node)
            add_triples += more
            remove += fewer
        included = []
        for other in includes:
            node = _find(store, "Skill", other)
            if node is None:
                raise ValidationError(f"{source}: skill.includes: no registered skill '{other}'",
                                      suggestions=["agents skill add the included skill first"])
            included.append(node)
        skill = existing if existing is not None else entities.new_iri("skill")[0]
        if existing is not None:
            remove += [(skill, q.predicate, q.object) for q in store.live_quads(skill) if q.predicate != P["ulid"]]
        else:
            add_triples.append((skill, P["ulid"], ox.Literal(skill.value.rsplit("/", 1)[-1])))
        add_triples += [
            (skill, entities.TYPE, ox.NamedNode(ca.Skill)),
            (skill, entities.NAME, ox.Literal(name)),
            (skill, P["description"], ox.Literal(str(body.get("description", "")))),
            (skill, P["configuration"], ox.Literal(json.dumps(body, sort_keys=True, default=str))),
            (skill, entities.CREATED, entities.now_literal()),
            *((skill, P["usesTool"], node) for node in tools),
            *((skill, P["includesSkill"], node) for node in included),
        ]
        overlap = set(add_triples) & set(remove)
        result = session.commit(CommitRequest(
            add=[t for t in add_triples if t not in overlap], remove=[t for t in remove if t not in overlap],
            message=f"skill add {name}", cause="skill-add", agent=agent))
        return describe(store, skill), result


def describe(store: GraphStore, node: ox.NamedNode) -> SkillInfo:
    props = entities.properties(store, node)

    def names(predicate: ox.NamedNode) -> tuple[str, ...]:
        return tuple(sorted(entities.single(entities.properties(store, n), ca.name) or n.value
                            for n in props.get(predicate.value, []) if isinstance(n, ox.NamedNode)))

    return SkillInfo(
        iri=node.value,
        name=entities.single(props, ca.name) or "",
        description=entities.single(props, P["description"].value) or "",
        tools=names(P["usesTool"]),
        includes=names(P["includesSkill"]),
        definition=json.loads(entities.single(props, P["configuration"].value) or "{}"),
        created=entities.single(props, ca.createdAt) or "",
    )


def list_all(ws: Workspace) -> list[SkillInfo]:
    with ws.reader() as store:
        return [describe(store, node) for node in entities.named(store, "Skill")]


def show(ws: Workspace, ref: str) -> SkillInfo:
    with ws.reader() as store:
        return describe(store, entities.find(store, "Skill", ref, kind="skill"))


def flattened_tools(store: GraphStore, skill: ox.NamedNode) -> list[tool_registry.ToolInfo]:
    """Every tool of the skill and of the skills it includes, at any depth."""
    rows = store.query(f"SELECT DISTINCT ?t WHERE {{ {skill} ca:includesSkill* ?s . ?s ca:usesTool ?t }}")
    return sorted((tool_registry.describe(store, row["t"]) for row in rows), key=lambda t: t.name)


def tools(ws: Workspace, ref: str) -> tuple[SkillInfo, list[tool_registry.ToolInfo]]:
    with ws.reader() as store:
        node = entities.find(store, "Skill", ref, kind="skill")
        return describe(store, node), flattened_tools(store, node)


def agent_skills_of(ws: Workspace, refs: list[str] | tuple[str, ...]) -> list[AgentSkill]:
    """The Agent Skill folders behind the named skills (an actor's ``skills:``), loaded now."""
    with ws.reader() as store:
        return agent_skills_in(store, refs)


def agent_skills_in(store: GraphStore, refs: list[str] | tuple[str, ...]) -> list[AgentSkill]:
    found: dict[str, AgentSkill] = {}
    for ref in refs:
        try:
            node = entities.find(store, "Skill", ref, kind="skill")
        except NotFoundError:
            raise NotFoundError(f"the actor uses skill '{ref}', which is not registered",
                                suggestions=["agents skill add PATH", "agents skill list"]) from None
        for tool in flattened_tools(store, node):
            if tool.source == "agent_skill":
                loaded = agent_skills.load(Path(tool.definition["path"]))
                found[loaded.name] = loaded
    return list(found.values())


def remove(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[SkillInfo, CommitResult]:
    """Retract a skill (history keeps it); refused while another skill includes it. Its
    ``agent_skill`` tools go with it unless another skill uses them."""
    with ws.writer() as session:
        store = session.store
        node = entities.find(store, "Skill", ref, kind="skill")
        info = describe(store, node)
        users = [row["n"].value for row in store.query(
            f"SELECT ?n WHERE {{ ?o ca:includesSkill {node} ; ca:name ?n }}")]
        if users:
            raise ConflictError(f"skill '{info.name}' is included by {', '.join(sorted(users))}; remove them first")
        orphans = [row["t"] for row in store.query(
            f"SELECT ?t WHERE {{ {node} ca:usesTool ?t . ?t ca:toolSource \"agent_skill\" . "
            f"FILTER NOT EXISTS {{ ?o ca:usesTool ?t FILTER(?o != {node}) }} }}")]
        result = session.commit(CommitRequest(retract_subjects=[node, *orphans], message=f"skill remove {info.name}",
                                              cause="skill-remove", agent=agent))
        return info, result
