"""Configuration trees shared by the infrastructure and configuration analyzers (not a plugin).

A parsed file (YAML, TOML, .env, INI) becomes a neutral ``Node`` tree with spans; ``Outline``
collects the entities, notes and secret masks of one file; ``config_tree`` turns a node into
ConfigBlock / ConfigKey entities under caps that keep big files lean; ``render`` draws any
node at any uko-infra level from that outline. Secrets are masked on the way in (stored
values) and on the way out (every rendering, source slices included).
"""

from __future__ import annotations

import codecs
import json
import posixpath
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, Span, Value
from cleveragents.vocabulary import detail_levels, uko_infra

CONFIG_FILE = uko_infra.ConfigFile
CONFIG_BLOCK = uko_infra.ConfigBlock
CONFIG_KEY = uko_infra.ConfigKey
ENV_VAR = uko_infra.EnvironmentVariable
SERVICE = uko_infra.Service
DEPLOYMENT_UNIT = uko_infra.DeploymentUnit
PORT = uko_infra.Port
ENDPOINT = uko_infra.Endpoint

CONNECTS_TO = uko_infra.connectsTo
EXPOSES = uko_infra.exposes
USES_CONFIG = uko_infra.usesConfig

KEY_PATH = uko_infra.keyPath
CONFIG_VALUE = uko_infra.configValue
IS_SECRET = uko_infra.isSecret
IMAGE = uko_infra.image
PORT_NUMBER = uko_infra.portNumber
PUBLISHED_PORT = uko_infra.publishedPort
PROTOCOL = uko_infra.protocol
REPLICAS = uko_infra.replicas
RESOURCE_KIND = uko_infra.resourceKind
CLUSTER_NAMESPACE = uko_infra.clusterNamespace
HOST_NAME = uko_infra.hostName
ROUTE_PATH = uko_infra.routePath

MASK = "****"
# Caps that keep big files (pyproject.toml, CRDs, alias bombs) lean; beyond them content
# collapses into the parent's value or is left out of the entity tree.
MAX_DEPTH = 6
MAX_LIST = 50
MAX_ENTITIES = 5000
# Entities a file may make by expanding shared (aliased) nodes again; an alias bomb stops here.
MAX_REPEATED = 1000
VALUE_LIMIT = 1000
MAX_PROBLEMS = 20

# File nodes can be found by path, e.g. from a Compose ``env_file``.
CONFIG_NAMESPACE = "config"

# ── Secrets ────────────────────────────────────────────────────────

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "passphrase",
        "secret",
        "token",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "bearer",
        "apikey",
        "privatekey",
        "accesskey",
        "secretkey",
        "dsn",
    }
)
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("private", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("client", "secret"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("session", "key"),
        ("account", "key"),
        ("connection", "string"),
    }
)
# A name ending in one of these describes a secret (where it is, what kind) rather than holding it.
_NOT_VALUE_WORDS = frozenset(
    {
        "url",
        "uri",
        "endpoint",
        "path",
        "file",
        "dir",
        "type",
        "name",
        "names",
        "ref",
        "length",
        "ttl",
        "expiry",
        "expires",
        "lifetime",
        "header",
        "prefix",
        "mode",
        "method",
        "enabled",
        "required",
        "policy",
        "env",
        "id",
    }
)


def is_secret_name(key: str) -> bool:
    """Whether a key's value is a secret, judged on its last segment (``db.password`` -> yes)."""
    last = re.split(r"[./\[\]]", key.strip().strip("\"'"))
    segment = next((s for s in reversed(last) if s), "")
    words = [w.lower() for w in _WORDS.findall(segment)]
    if not words or words[-1] in _NOT_VALUE_WORDS:
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in pairwise(words))


def hides(key: str, inherited: bool) -> bool:
    """Whether the value at ``key`` is secret, under a parent whose value is (``inherited``) or not.

    Below a secret key everything is secret, except keys that say where or what the secret is
    (``db_password: {file: ./db_password.txt}``).
    """
    if is_secret_name(key):
        return True
    words = _WORDS.findall(key)
    return inherited and not (words and words[-1].lower() in _NOT_VALUE_WORDS)


_URL_CREDENTIALS = re.compile(r"(\b[a-zA-Z][\w+.-]*://[^:/?#@\s]*:)([^@/?#\s]+)(?=@)")
_LINE_ASSIGNMENT = re.compile(
    r"(?m)^([ \t]*(?:-[ \t]+)?(?:export[ \t]+)?([\"']?)([A-Za-z_][\w.\-]*)\2[ \t]*(?:=|:(?=[ \t]))[ \t]*)"
    r"([^\s#|>*{\[][^\n]*?)[ \t]*$"
)
_QUOTED_ASSIGNMENT = re.compile(r"([\"'])([\w.\-]+)\1(\s*[:=]\s*)(\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')")
_FLAG_ASSIGNMENT = re.compile(r"((?<![\w-])--?([A-Za-z][\w-]*)=)([^\s\"',\]}]+)")


def scrub(text: str) -> str:
    """Mask secrets written inside free text: URL passwords and ``secret_key = value`` forms."""
    if not text:
        return text
    text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + MASK, text)

    def line(m: re.Match[str]) -> str:
        value = m.group(4)
        # In free text a dotted name is one name ("secret.key=..." in a properties file).
        if not is_secret_name(m.group(3).replace(".", "_")) or MASK in value:
            return m.group(0)
        return m.group(1) + MASK

    text = _LINE_ASSIGNMENT.sub(line, text)
    text = _QUOTED_ASSIGNMENT.sub(
        lambda m: (
            m.group(1) + m.group(2) + m.group(1) + m.group(3) + f'"{MASK}"'
            if is_secret_name(m.group(2))
            else m.group(0)
        ),
        text,
    )
    return _FLAG_ASSIGNMENT.sub(lambda m: m.group(1) + MASK if is_secret_name(m.group(2)) else m.group(0), text)


def stored(text: str) -> str:
    """A value as stored in the graph: scrubbed and capped."""
    text = scrub(text)
    return text if len(text) <= VALUE_LIMIT else text[:VALUE_LIMIT] + "…"


# ── Positions ──────────────────────────────────────────────────────


class LineIndex:
    """Maps (line, character column) and character offsets of the decoded text to byte spans.

    Undecodable bytes decode to U+FFFD, so a character column is not a byte column on such
    lines; the mapping walks the original bytes there.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.text = data.decode("utf-8", errors="replace")
        self._byte_starts = [0, *(m.end() for m in re.finditer(b"\n", data))]
        self._char_starts = [0, *(m.end() for m in re.finditer("\n", self.text))]

    @property
    def lines(self) -> int:
        return len(self._byte_starts)

    def byte(self, line: int, col: int) -> int:
        """Byte offset of a 0-based line and character column (clamped into the file)."""
        if line >= len(self._byte_starts):
            return len(self.data)
        start = self._byte_starts[max(line, 0)]
        end = self._byte_starts[line + 1] if line + 1 < len(self._byte_starts) else len(self.data)
        raw = self.data[start:end]
        if raw.isascii():
            return start + min(max(col, 0), len(raw))
        try:
            return start + len(raw.decode("utf-8")[: max(col, 0)].encode("utf-8"))
        except UnicodeDecodeError:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            chars = 0
            for i in range(len(raw)):
                if chars >= col:
                    return start + i
                chars += len(decoder.decode(raw[i : i + 1]))
            return end

    def point(self, offset: int) -> tuple[int, int]:
        """(0-based line, character column) of a character offset in ``text``."""
        line = bisect_right(self._char_starts, offset) - 1
        return line, offset - self._char_starts[line]

    def span(self, start: tuple[int, int], end: tuple[int, int]) -> Span:
        return self.byte_span(self.byte(*start), self.byte(*end))

    def char_span(self, start: int, end: int) -> Span:
        return self.span(self.point(start), self.point(end))

    def byte_span(self, start: int, end: int) -> Span:
        start, end = max(0, min(start, len(self.data))), max(0, min(end, len(self.data)))
        end = max(start, end)
        sl = bisect_right(self._byte_starts, start) - 1
        el = bisect_right(self._byte_starts, end) - 1
        return Span(sl + 1, start - self._byte_starts[sl], el + 1, end - self._byte_starts[el], start, end)

    def trimmed(self, span: Span) -> Span:
        """The span without trailing blank lines and comment lines indented at most as its start.

        A YAML block ends where the next one starts, which takes in the comments above it.
        """
        start, end = span.start_byte, span.end_byte
        indent = span.start_col
        while end > start:
            line_start = self.data.rfind(b"\n", start, end - 1) + 1
            if line_start <= start:
                break
            line = self.data[line_start:end]
            stripped = line.strip()
            if stripped and not (stripped.startswith(b"#") and len(line) - len(line.lstrip()) <= indent):
                break
            end = line_start
        while end > start and self.data[end - 1 : end] in (b" ", b"\t", b"\n", b"\r"):
            end -= 1
        return self.byte_span(start, end)


def utf8_problem(index: LineIndex) -> Problem | None:
    try:
        index.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        span = index.byte_span(exc.start, exc.end)
        return Problem(f"invalid UTF-8 (byte {exc.start}); undecodable bytes read as U+FFFD", span)
    return None


# ── Neutral tree ───────────────────────────────────────────────────


@dataclass(eq=False, slots=True)
class Node:
    """A parsed value: a mapping, a sequence or a scalar, with where it is written.

    YAML aliases make this a graph (shared nodes, even cycles): walkers must cap depth.
    """

    kind: str  # "map" | "seq" | "scalar"
    span: Span | None
    text: str = ""  # a scalar as written, without quotes
    null: bool = False
    items: list[Item] = field(default_factory=list)
    elements: list[Node] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        if self.kind != "map":
            return None
        return next((item.node for item in self.items if item.key == key), None)

    def item(self, key: str) -> Item | None:
        if self.kind != "map":
            return None
        return next((item for item in self.items if item.key == key), None)

    def scalar(self, key: str | None = None) -> str | None:
        """The text of this scalar (or of the scalar at ``key``), None if absent or not a scalar."""
        node = self if key is None else self.get(key)
        if node is None or node.kind != "scalar" or node.null:
            return None
        return node.text

    def mapping(self, key: str) -> Node | None:
        node = self.get(key)
        return node if node is not None and node.kind == "map" else None

    def sequence(self, key: str) -> list[Node]:
        node = self.get(key)
        return node.elements if node is not None and node.kind == "seq" else []


@dataclass(frozen=True, slots=True)
class Item:
    key: str
    node: Node
    span: Span | None  # from the key through the value


def segment(key: str) -> str:
    """A key as one segment of a dotted path (quoted when it holds a dot or a space)."""
    return key if key and re.fullmatch(r"[^.\s\"'\[\]]+", key) else json.dumps(key, ensure_ascii=False)


def dotted(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + segment(part)
    return out


def flow(node: Node, secret: bool = False, limit: int = VALUE_LIMIT) -> str:
    """A compact one-line rendering of a value (secrets masked, cut at ``limit``)."""
    out: list[str] = []
    size = 0

    def put(text: str) -> bool:
        nonlocal size
        out.append(text)
        size += len(text)
        return size < limit

    def scalar(text: str) -> str:
        plain = text and not re.search(r"[\s,\[\]{}:\"'#]", text)
        return text if plain else json.dumps(text, ensure_ascii=False)

    def walk(current: Node, hidden: bool, depth: int) -> bool:
        if depth > 2 * MAX_DEPTH:
            return put("…")
        if current.kind == "scalar":
            return put(MASK if hidden and not current.null else ("null" if current.null else scalar(current.text)))
        if current.kind == "seq":
            if not put("["):
                return False
            for i, element in enumerate(current.elements):
                if (i and not put(", ")) or not walk(element, hidden, depth + 1):
                    return False
            return put("]")
        if not put("{"):
            return False
        for i, item in enumerate(current.items):
            if (i and not put(", ")) or not put(f"{scalar(item.key)}: "):
                return False
            if not walk(item.node, hides(item.key, hidden), depth + 1):
                return False
        return put("}")

    complete = walk(node, secret, 0)
    text = "".join(out)
    return text if complete and len(text) <= limit else text[:limit] + "…"


def secret_scalars(root: Node, secret: bool = False) -> list[Node]:
    """Every scalar held under a secret-looking key (each shared node once)."""
    found: list[Node] = []
    seen: set[tuple[int, bool]] = set()
    stack = [(root, secret)]
    while stack:
        node, hidden = stack.pop()
        if (id(node), hidden) in seen:
            continue
        seen.add((id(node), hidden))
        if node.kind == "scalar":
            if hidden and not node.null:
                found.append(node)
        elif node.kind == "seq":
            stack.extend((element, hidden) for element in node.elements)
        else:
            stack.extend((item.node, hides(item.key, hidden)) for item in node.items)
    return found


# ── One file's outline ─────────────────────────────────────────────


class Outline:
    """Everything one file yields: entities and references, plus what renderings need."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.index = LineIndex(data)
        self.entities: list[Entity] = []
        self.references: list[Reference] = []
        self.problems: list[Problem] = []
        # key -> (depth from which it shows, line): edges, details, limits for the renderer.
        self.notes: dict[str, list[tuple[int, str]]] = {}
        self.titles: dict[str, str] = {}
        # key -> key of the deployment descriptor holding it (a Kubernetes document, a Compose service).
        self.descriptors: dict[str, str] = {}
        self.masks: list[tuple[int, int]] = []
        # Scalars found under a secret key anywhere: a YAML alias may show one under a plain key too.
        self.secret_ids: set[int] = set()
        self.by_path: dict[tuple[str, tuple[str | int, ...]], str] = {}
        self.omitted = 0
        self.expanded: set[int] = set()  # ids of nodes already expanded into entities
        self.repeated = 0  # entities made by expanding such nodes again
        self.capped = False
        self._keys: dict[str, int] = {}
        self._by_key: dict[str, Entity] = {}

    def add(
        self,
        key: str,
        types: tuple[str, ...],
        name: str,
        parent: str | None,
        span: Span | None,
        values: dict[str, Value] | None = None,
        symbols: tuple[tuple[str, str], ...] = (),
    ) -> Entity:
        """A new entity; a key already taken gets a ``~2``, ``~3`` suffix in source order."""
        count = self._keys.get(key, 0) + 1
        self._keys[key] = count
        unique = key if count == 1 else f"{key}~{count}"
        entity = Entity(unique, types, name, parent, span, symbols=symbols)
        for predicate, value in (values or {}).items():
            entity.add(predicate, value)
        self.entities.append(entity)
        self._by_key[unique] = entity
        return entity

    def get(self, key: str) -> Entity | None:
        return self._by_key.get(key)

    def full(self) -> bool:
        return len(self.entities) >= MAX_ENTITIES

    def note(self, key: str, depth: int, text: str) -> None:
        self.notes.setdefault(key, []).append((depth, scrub(text)))

    def link(self, source: str, predicate: str, target: str) -> None:
        entity = self._by_key.get(source)
        if entity is not None and (predicate, target) not in entity.links:
            entity.links.append((predicate, target))

    def mask(self, span: Span | None) -> None:
        if span is not None and span.end_byte > span.start_byte:
            self.masks.append((span.start_byte, span.end_byte))

    def hide(self, root: Node, secret: bool = False) -> None:
        """Mask every secret scalar of ``root`` (all of its scalars when ``secret``)."""
        for node in secret_scalars(root, secret):
            self.secret_ids.add(id(node))
            if node.span is None:
                continue
            start, end = node.span.start_byte, node.span.end_byte
            written = self.index.data[start:end]
            if len(written) >= 2 and written[:1] in (b'"', b"'") and written[-1:] == written[:1]:
                start, end = start + 1, end - 1  # a quoted value stays quoted
            self.mask(self.index.byte_span(start, end))

    def hidden(self, node: Node) -> bool:
        return id(node) in self.secret_ids

    def problem(self, message: str, span: Span | None = None) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(message, span))

    def analysis(self) -> FileAnalysis:
        return FileAnalysis(self.entities, self.references, self.problems)

    def file_node(self, types: tuple[str, ...]) -> Entity:
        name = posixpath.basename(self.path) or self.path
        entity = self.add("", types, name, None, None, symbols=((CONFIG_NAMESPACE, self.path),))
        problem = utf8_problem(self.index)
        if problem is not None:
            self.problems.append(problem)
        return entity


def config_tree(
    outline: Outline,
    node: Node,
    *,
    parent: str,
    key_prefix: str,
    path: tuple[str | int, ...] = (),
    rel: tuple[str | int, ...] = (),
    secret: bool = False,
    leaf_type: str = CONFIG_KEY,
    skip: frozenset[tuple[str | int, ...]] = frozenset(),
    scope: str = "",
) -> None:
    """ConfigBlock / ConfigKey entities for the children of a mapping or sequence ``node``.

    ``path`` is the absolute key path (the ``keyPath`` value), ``rel`` the part that names
    entities after ``key_prefix``. Containers at depth ``MAX_DEPTH``, lists longer than
    ``MAX_LIST`` and lists of plain values collapse into one key holding their flow text.
    ``skip`` holds absolute paths another pass describes; ``scope`` separates documents in
    ``outline.by_path``.
    """
    children: list[tuple[str | int, Node, Span | None]]
    if node.kind == "map":
        children = [(item.key, item.node, item.span) for item in node.items]
    elif node.kind == "seq":
        children = [(i, element, element.span) for i, element in enumerate(node.elements)]
    else:
        return
    for label, child, span in children:
        child_path, child_rel = (*path, label), (*rel, label)
        if child_path in skip:
            continue
        if outline.full():
            outline.omitted += 1
            continue
        hidden = (hides(label, secret) if isinstance(label, str) else secret) or outline.hidden(child)
        key = key_prefix + dotted(child_rel)
        name = label if isinstance(label, str) else f"{dotted(path[-1:]) if path else ''}[{label}]"
        span = outline.index.trimmed(span) if span is not None else None
        expand = child.kind != "scalar" and _expands(child, len(child_path))
        again = expand and id(child) in outline.expanded
        if again and outline.repeated >= MAX_REPEATED:
            expand = False
            if not outline.capped:
                outline.capped = True
                outline.problem("YAML aliases repeat more content than is indexed; repeats collapsed", span)
        values: dict[str, Value] = {KEY_PATH: dotted(child_path)}
        if expand:
            entity = outline.add(key, (CONFIG_BLOCK,), name, parent, span, values)
        else:
            if hidden:
                values[IS_SECRET] = True
            text = child.text if child.kind == "scalar" else flow(child, hidden)
            if not child.null:
                values[CONFIG_VALUE] = MASK if hidden and child.kind == "scalar" else stored(text)
            entity = outline.add(key, (leaf_type,), name, parent, span, values)
        outline.by_path[(scope, child_path)] = entity.key
        if expand:
            outline.expanded.add(id(child))
            before = len(outline.entities)
            config_tree(
                outline,
                child,
                parent=entity.key,
                key_prefix=key_prefix,
                path=child_path,
                rel=child_rel,
                secret=hidden,
                leaf_type=leaf_type,
                skip=skip,
                scope=scope,
            )
            if again:
                outline.repeated += len(outline.entities) - before


def _expands(node: Node, depth: int) -> bool:
    if depth >= MAX_DEPTH:
        return False
    if node.kind == "map":
        return bool(node.items)
    return 0 < len(node.elements) <= MAX_LIST and any(e.kind != "scalar" for e in node.elements)


# ── Rendering ──────────────────────────────────────────────────────

LEVELS = {name: depth for depth, name in enumerate(detail_levels.UKO_INFRA)}
FULL_CONFIG = LEVELS["FULL_CONFIG"]
WITH_DEPLOYMENT = LEVELS["WITH_DEPLOYMENT"]


def masked(outline: Outline, start: int, end: int) -> str:
    """The source bytes ``[start, end)`` with every secret replaced by ``****``."""
    data = outline.index.data
    parts: list[bytes] = []
    position = start
    for lo, hi in sorted(outline.masks):
        if hi <= position or lo >= end:
            continue
        parts += [data[position : max(lo, position)], MASK.encode()]
        position = min(hi, end)
    parts.append(data[position:end])
    return scrub(b"".join(parts).decode("utf-8", errors="replace"))


def render(outline: Outline, request: RenderRequest) -> str:
    depth = LEVELS.get(request.level, min(max(request.depth, 0), WITH_DEPLOYMENT))
    entity = outline.get(request.key) or outline.entities[0]
    if depth >= FULL_CONFIG:
        span = request.span if request.key and request.span is not None else entity.span
        text = _source(outline, span)
        if depth == FULL_CONFIG:
            return text
        return _with_deployment(outline, entity, text)
    children: dict[str, list[Entity]] = {}
    for candidate in outline.entities[1:]:
        children.setdefault(candidate.parent or "", []).append(candidate)
    for siblings in children.values():  # source order (entities come in the order passes made them)
        siblings.sort(key=lambda e: e.span.start_byte if e.span is not None else len(outline.index.data))
    lines: list[str] = []
    _outline_lines(outline, entity, children, depth, 0, lines)
    if entity.key == "" and outline.omitted and depth >= LEVELS["CONFIG_KEYS"]:
        lines.append(f"  … {outline.omitted} more keys not indexed")
    return scrub("\n".join(lines))


def _source(outline: Outline, span: Span | None) -> str:
    if span is None:
        return masked(outline, 0, len(outline.index.data))
    # From the line's start when only indentation (or a list dash) precedes: nested blocks keep their shape.
    data = outline.index.data
    line_start = data.rfind(b"\n", 0, span.start_byte) + 1
    start = line_start if not data[line_start : span.start_byte].strip(b" \t-") else span.start_byte
    return masked(outline, start, span.end_byte)


def _with_deployment(outline: Outline, entity: Entity, own: str) -> str:
    """The descriptor holding the node, what it uses in this file, and notes on files it names."""
    descriptor = outline.get(outline.descriptors.get(entity.key, entity.key)) or entity
    parts = [own if descriptor is entity else _source(outline, descriptor.span)]
    shown = {descriptor.key}
    inside = [e for e in outline.entities if outline.descriptors.get(e.key, e.key) == descriptor.key]
    for predicate, target in (edge for member in inside for edge in member.links):
        related = outline.get(outline.descriptors.get(target, target))
        if predicate in (USES_CONFIG, CONNECTS_TO) and related is not None and related.key not in shown:
            shown.add(related.key)
            if related.span is not None:
                parts.append(f"# {_title(outline, related, 0)}\n{_source(outline, related.span)}")
    notes = [text for depth, text in outline.notes.get(descriptor.key, []) if depth == WITH_DEPLOYMENT]
    if entity.key != descriptor.key:
        notes += [text for depth, text in outline.notes.get(entity.key, []) if depth == WITH_DEPLOYMENT]
    text = "\n---\n".join(part.rstrip("\n") for part in parts)
    return text + "".join(f"\n# {note}" for note in notes)


def _threshold(entity: Entity) -> int:
    if entity.key == "" or SERVICE in entity.types or DEPLOYMENT_UNIT in entity.types:
        return 0
    if PORT in entity.types or ENDPOINT in entity.types:
        return 2
    if CONFIG_BLOCK in entity.types and entity.parent == "":
        return 0  # top-level sections are the components of a configuration file
    return 4


def _title(outline: Outline, entity: Entity, depth: int) -> str:
    if entity.key in outline.titles:
        title = outline.titles[entity.key]
    elif entity.key == "":
        title = entity.name
    elif PORT in entity.types:
        title = f"port {entity.name}"
    elif ENDPOINT in entity.types:
        title = f"route {entity.name}"
    elif ENV_VAR in entity.types:
        title = f"env {entity.name}"
    elif SERVICE in entity.types:
        title = f"service {entity.name}"
    else:
        title = entity.name
    if depth >= LEVELS["CONFIG_VALUES"]:
        value = entity.values.get(CONFIG_VALUE)
        if value:
            text = str(value[0])
            # One line per key: multi-line or blank-edged values are shown quoted.
            shown = json.dumps(text, ensure_ascii=False) if not text or "\n" in text or text != text.strip() else text
            return f"{title} = {shown if len(shown) <= 200 else shown[:200] + '…'}"
        if entity.values.get(IS_SECRET):
            return f"{title} = {MASK}"
    return title


def _outline_lines(
    outline: Outline,
    entity: Entity,
    children: dict[str, list[Entity]],
    depth: int,
    indent: int,
    lines: list[str],
) -> None:
    pad = "  " * indent
    lines.append(pad + _title(outline, entity, depth))
    lines += [f"{pad}  {text}" for shown, text in outline.notes.get(entity.key, []) if shown <= depth]
    for child in children.get(entity.key, []):
        if _threshold(child) <= depth:
            _outline_lines(outline, child, children, depth, indent + 1, lines)
