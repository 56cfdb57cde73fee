"""Actor files: load, preprocess, validate (the spec's v3 schema, ADR-032's order).

1. JSON is tried first; otherwise the text is YAML.
2. Jinja2 (sandboxed) renders the YAML text before it is parsed, with the file's
   ``global_context`` and the actor arguments as ``context``. ``system_prompt`` values are
   protected from this pass: they are templates rendered at run time, when the plan,
   session and invocation context exist.
3. After parsing, ``${VAR}``, ``${VAR:default}`` and ``${VAR:-default}`` in every string
   are replaced from the environment (a value that is wholly one reference is coerced to
   bool/int/float); an unset variable without a default is an error naming it.
4. The result is checked against :data:`ACTOR_FILE_SCHEMA`; an error names the file, the
   line and the key path. Then references are checked: routes, nodes, edges, the default
   actor and composition cycles.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from cleveragents.actors import templates
from cleveragents.actors.providers import PROVIDERS, ModelRef
from cleveragents.actors.schema import ACTOR_FILE_SCHEMA
from cleveragents.errors import ValidationError

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-?([^}]*))?\}")
# The spec's sentinels for Jinja delimiters in system_prompt values during the load-time pass.
_PROTECT = {
    "{{": "<<<TEMPLATE_START>>>",
    "}}": "<<<TEMPLATE_END>>>",
    "{%": "<<<BLOCK_START>>>",
    "%}": "<<<BLOCK_END>>>",
    "{#": "<<<COMMENT_START>>>",
    "#}": "<<<COMMENT_END>>>",
}
_PROMPT_KEY = re.compile(r"^(?P<indent>[ \t]*)(?:- )?system_prompt:[ \t]*(?P<rest>.*)$")


@dataclass(frozen=True)
class ActorSpec:
    """One actor of a file, after preprocessing; ``system_prompt`` is still a template."""

    name: str
    type: str
    description: str
    config: dict[str, Any]
    skills: tuple[str, ...] = ()
    tools: tuple[Any, ...] = ()
    lsp: Any = None
    route: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def is_llm(self) -> bool:
        return self.type in ("llm", "agent")

    def model_ref(self) -> ModelRef | None:
        """``provider/model`` from ``config.actor`` or ``config.provider`` + ``config.model``."""
        if self.config.get("provider") and self.config.get("model"):
            return ModelRef(str(self.config["provider"]), str(self.config["model"]))
        actor = self.config.get("actor")
        if actor and actor.split("/", 1)[0] in PROVIDERS:
            return ModelRef.parse(actor)
        return None

    @property
    def system_prompt(self) -> str:
        return str(self.config.get("system_prompt") or "")


@dataclass(frozen=True)
class ActorFile:
    """A loaded actor file: its actors, routes and context, and where it came from."""

    source: str
    text: str
    name: str | None
    description: str
    default_actor: str
    actors: dict[str, ActorSpec]
    routes: dict[str, Any]
    global_context: dict[str, Any]
    data: dict[str, Any]

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.text.encode()).hexdigest()

    def actor(self, name: str | None = None) -> ActorSpec:
        key = name or self.default_actor
        try:
            return self.actors[key]
        except KeyError:
            raise ValidationError(f"{self.source}: no actor '{key}' (actors: {', '.join(self.actors)})") from None

    def render_prompt(self, actor: ActorSpec, context: Mapping[str, Any]) -> str:
        """The system prompt with the merged context (runtime > plan > session > global)."""
        merged = {**self.global_context, **context}
        return templates.render(actor.system_prompt, merged, where=f"{self.source}: actors.{actor.name}.system_prompt")


# --- step 1-3: text to data ---------------------------------------------------------------


def _protect_prompts(text: str) -> str:
    """Hide Jinja delimiters inside ``system_prompt`` values from the load-time pass."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _PROMPT_KEY.match(line.rstrip("\n"))
        if not match:
            out.append(line)
            index += 1
            continue
        out.append(_hide(line))
        index += 1
        if match["rest"].strip()[:1] in ("|", ">"):
            base = len(match["indent"]) + (2 if line.lstrip().startswith("- ") else 0)
            while index < len(lines):
                body = lines[index]
                if body.strip() and len(body) - len(body.lstrip()) <= base:
                    break
                out.append(_hide(body))
                index += 1
    return "".join(out)


def _hide(text: str) -> str:
    for marker, sentinel in _PROTECT.items():
        text = text.replace(marker, sentinel)
    return text


def _reveal(value: Any) -> Any:
    if isinstance(value, str):
        for marker, sentinel in _PROTECT.items():
            value = value.replace(sentinel, marker)
        return value
    if isinstance(value, list):
        return [_reveal(v) for v in value]
    if isinstance(value, dict):
        return {k: _reveal(v) for k, v in value.items()}
    return value


def _yaml(text: str, source: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ValidationError(f"{where}: not valid YAML: {problem}") from None


def _load_context(protected: str, source: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``global_context`` (or ``context.global``) read before rendering, plus the arguments."""
    try:
        data = yaml.safe_load(protected)
    except yaml.YAMLError:
        # Templates make the structure: read the top-level context block on its own.
        data = _top_level_block(protected, ("global_context", "context"))
    context: dict[str, Any] = {}
    if isinstance(data, dict):
        block = data.get("global_context") or (data.get("context") or {}).get("global") or {}
        if isinstance(block, dict):
            context.update(_reveal(block))
    context.update(arguments)
    return context


def _top_level_block(text: str, keys: tuple[str, ...]) -> dict[str, Any] | None:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if any(line.startswith(f"{key}:") for key in keys):
            end = next(
                (
                    j
                    for j in range(index + 1, len(lines))
                    if lines[j].strip() and not lines[j][0].isspace() and not lines[j].startswith("#")
                ),
                len(lines),
            )
            try:
                block = yaml.safe_load("\n".join(lines[index:end]))
            except yaml.YAMLError:
                return None
            return block if isinstance(block, dict) else None
    return None


def interpolate_env(value: Any, env: Mapping[str, str], source: str, path: str = "") -> Any:
    """Replace ``${VAR}`` / ``${VAR:default}`` / ``${VAR:-default}`` in every string."""
    if isinstance(value, dict):
        return {k: interpolate_env(v, env, source, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_env(v, env, source, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match[1], match[2]
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ValidationError(
            f"{source}: {path}: environment variable {name} is not set and has no default "
            f"(write ${{{name}:-default}} to give one)",
            data={"variable": name, "path": path},
        )

    whole = _ENV_REF.fullmatch(value)
    replaced = _ENV_REF.sub(substitute, value)
    return _coerce(replaced) if whole else replaced


def _coerce(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    return text


# --- step 4: schema and references --------------------------------------------------------


def _lines(text: str) -> dict[tuple[Any, ...], int]:
    """Key path -> 1-based line, from the YAML node tree (JSON is YAML here)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    found: dict[tuple[Any, ...], int] = {}

    def walk(node: yaml.Node, path: tuple[Any, ...]) -> None:
        found[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, child in node.value:
                found[(*path, key.value)] = key.start_mark.line + 1
                walk(child, (*path, key.value))
                found[(*path, key.value)] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, child in enumerate(node.value):
                walk(child, (*path, i))

    if root is not None:
        walk(root, ())
    return found


def _key_path(path: Iterator[Any] | Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _schema_error(error: jsonschema.ValidationError, source: str, lines: dict[tuple[Any, ...], int]) -> ValidationError:
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        extra = sorted(set(error.instance) - set(allowed))
        if extra:
            path = (*path, extra[0])
            message = f"unknown key '{extra[0]}' (allowed: {', '.join(allowed)})"
        else:
            message = error.message
    elif error.validator == "oneOf" and not path:
        message = "not an actor file: it needs an 'actors' (or 'agents') map, not both"
    else:
        message = error.message
    line = next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), None)
    where = f"{source}:{line}" if line else source
    return ValidationError(f"{where}: {_key_path(path)}: {message}", data={"path": _key_path(path), "line": line})


def _check_is_actor_file(data: Any, source: str) -> None:
    if not isinstance(data, dict):
        raise ValidationError(
            f"{source}: not an actor file: expected a mapping with 'actors', got {type(data).__name__}"
        )
    if "actors" not in data and "agents" not in data:
        raise ValidationError(
            f"{source}: not an actor file: no 'actors' (or 'agents') map "
            f"(top-level keys: {', '.join(map(str, data)) or 'none'})"
        )


def _check_schema(data: Any, text: str, source: str) -> None:
    validator = jsonschema.Draft202012Validator(ACTOR_FILE_SCHEMA)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        # The deepest error names the bad key best (anyOf/oneOf report at their parent).
        best = jsonschema.exceptions.best_match(errors)
        raise _schema_error(best, source, _lines(text))


def _check_references(actors: dict[str, ActorSpec], routes: dict[str, Any], default: str, source: str) -> None:
    if default not in actors:
        raise ValidationError(
            f"{source}: cleveragents.default_actor: no actor '{default}' (actors: {', '.join(actors)})"
        )
    for actor in actors.values():
        where = f"{source}: actors.{actor.name}"
        if actor.is_llm and actor.model_ref() is None and not actor.config.get("actor"):
            raise ValidationError(
                f"{where}.config: an llm actor needs config.actor (provider/model) or config.provider and config.model"
            )
        if actor.is_llm and actor.model_ref() is None:
            target = actor.config["actor"]
            if target not in actors and "/" not in target:
                raise ValidationError(
                    f"{where}.config.actor: '{target}' is neither provider/model, "
                    "an actor of this file nor a registered actor name"
                )
        if actor.system_prompt:
            templates.check(actor.system_prompt, where=f"{where}.config.system_prompt")
        if actor.type == "graph":
            if not actor.route:
                raise ValidationError(f"{where}: a graph actor needs 'route' naming one of the file's routes")
            if actor.route not in routes:
                raise ValidationError(
                    f"{where}.route: no route '{actor.route}' (routes: {', '.join(routes) or 'none'})"
                )
        if actor.type == "tool" and not (actor.tools or actor.config.get("tools")):
            raise ValidationError(f"{where}: a tool actor needs at least one tool")
    for name, route in routes.items():
        if route.get("type") == "graph":
            _check_graph(name, route, actors, routes, source)
    _check_cycles(actors, routes, source)


_TERMINALS = {"start", "START", "end", "END"}


def _check_graph(
    name: str, route: dict[str, Any], actors: dict[str, ActorSpec], routes: dict[str, Any], source: str
) -> None:
    where = f"{source}: routes.{name}"
    nodes: dict[str, Any] = route["nodes"]
    known = set(nodes) | {"start", "end"}
    if route["entry_point"] not in known:
        raise ValidationError(f"{where}.entry_point: no node '{route['entry_point']}'")
    for node_name, node in nodes.items():
        kind = node["type"]
        if kind == "agent":
            agent = node.get("agent")
            if not agent:
                raise ValidationError(f"{where}.nodes.{node_name}: an agent node needs 'agent'")
            if agent not in actors and "/" not in agent:
                raise ValidationError(f"{where}.nodes.{node_name}.agent: no actor '{agent}'")
        elif kind == "tool" and not (node.get("tool") or node.get("tools")):
            raise ValidationError(f"{where}.nodes.{node_name}: a tool node needs 'tool' (a registered tool name)")
        elif kind == "subgraph" and node.get("subgraph") not in routes:
            raise ValidationError(f"{where}.nodes.{node_name}.subgraph: no route '{node.get('subgraph')}'")
        elif kind == "message_router" and not node.get("rules"):
            raise ValidationError(f"{where}.nodes.{node_name}: a message_router needs rules")
        elif kind in ("function", "conditional"):
            raise ValidationError(
                f"{where}.nodes.{node_name}: '{kind}' nodes run Python named in the file; "
                "this runtime does not run them (use edge conditions or a tool node)"
            )
    # Ordered (entry first, then the file's order) so every report is the same on every run.
    order = [route["entry_point"], *nodes, "start", "end"]
    successors: dict[str, list[str]] = {n: [] for n in dict.fromkeys(order)}
    for index, edge in enumerate(route["edges"]):
        for end in ("source", "target"):
            if edge[end] not in known:
                raise ValidationError(f"{where}.edges[{index}].{end}: no node '{edge[end]}'")
        successors[edge["source"]].append(edge["target"])
    reached, frontier = set(), [route["entry_point"]]
    while frontier:
        node_name = frontier.pop()
        if node_name not in reached:
            reached.add(node_name)
            frontier.extend(successors.get(node_name, []))
    _check_acyclic(successors, where)
    unreachable = sorted(set(nodes) - reached - _TERMINALS)
    if unreachable:
        raise ValidationError(f"{where}: nodes not reachable from '{route['entry_point']}': {', '.join(unreachable)}")


def _check_acyclic(successors: dict[str, list[str]], where: str) -> None:
    """The spec's rule: a route's graph is acyclic (loops live inside agent nodes)."""
    done: set[str] = set()

    def visit(node: str, stack: list[str]) -> None:
        if node in stack:
            cycle = " -> ".join([*stack[stack.index(node) :], node])
            raise ValidationError(f"{where}: the graph has a cycle: {cycle}")
        if node in done:
            return
        for target in successors.get(node, []):
            visit(target, [*stack, node])
        done.add(node)

    for node in list(successors):
        visit(node, [])


def _check_cycles(actors: dict[str, ActorSpec], routes: dict[str, Any], source: str) -> None:
    """Composition must be acyclic: an actor may not reach itself through config.actor or routes."""

    def refs(actor: ActorSpec) -> list[str]:
        out = []
        if actor.is_llm and actor.model_ref() is None and actor.config.get("actor") in actors:
            out.append(actor.config["actor"])
        if actor.type == "graph" and actor.route in routes:
            out += [
                n.get("agent")
                for n in routes[actor.route].get("nodes", {}).values()
                if n.get("type") == "agent" and n.get("agent") in actors
            ]
        return out

    def visit(name: str, stack: list[str]) -> None:
        if name in stack:
            cycle = " -> ".join([*stack[stack.index(name) :], name])
            raise ValidationError(f"{source}: circular actor reference: {cycle}")
        for target in refs(actors[name]):
            visit(target, [*stack, name])

    for name in actors:
        visit(name, [])


# --- the entry points ---------------------------------------------------------------------


def parse(
    text: str,
    source: str,
    *,
    arguments: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> ActorFile:
    """An actor file from its text; ``source`` names it in errors."""
    env = os.environ if env is None else env
    arguments = dict(arguments or {})
    try:
        data = json.loads(text)
        rendered = text
    except ValueError:
        protected = _protect_prompts(text)
        rendered = protected
        engine_off = re.search(r"template_engine:\s*['\"]?NONE", text) is not None
        if templates.has_template(protected) and not engine_off:
            rendered = templates.render(protected, _load_context(protected, source, arguments), where=source)
        data = _reveal(_yaml(rendered, source))
    _check_is_actor_file(data, source)
    data = interpolate_env(data, env, source)
    _check_schema(data, _reveal(rendered), source)
    meta = data.get("cleveragents") or {}
    actor_map = data.get("actors") or data.get("agents") or {}
    actors = {
        name: ActorSpec(
            name=name,
            type=body["type"],
            description=str(body.get("description", "")),
            config=dict(body.get("config") or {}),
            skills=tuple(body.get("skills") or ()),
            tools=tuple(body.get("tools") or ()),
            lsp=body.get("lsp"),
            route=body.get("route"),
            arguments={**(data.get("arguments") or {}), **(body.get("arguments") or {})},
            raw=body,
        )
        for name, body in actor_map.items()
    }
    routes = dict(data.get("routes") or {})
    default = str(meta.get("default_actor") or next(iter(actors)))
    _check_references(actors, routes, default, source)
    global_context = dict(data.get("global_context") or (data.get("context") or {}).get("global") or {})
    return ActorFile(
        source=source,
        text=text,
        name=data.get("name"),
        description=str(data.get("description") or actors[default].description),
        default_actor=default,
        actors=actors,
        routes=routes,
        global_context={**global_context, **arguments},
        data=data,
    )


def load(
    path: str | Path, *, arguments: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> ActorFile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"cannot read the actor file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValidationError(f"{path}: not a text file (UTF-8)") from None
    return parse(text, str(path), arguments=arguments, env=env)
