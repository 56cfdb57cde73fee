"""YAML files: Docker Compose, Kubernetes manifests, otherwise generic configuration.

PyYAML composes node graphs (never constructed objects), which keeps line marks for spans,
leaves custom tags (``!Ref``) alone and does not expand aliases: a node shared through an
alias is converted once, so an alias bomb stays small; the tree builder caps what it expands.
Kubernetes objects are found across files by ``("k8s", "<namespace>/<Kind>/<name>")``; a
workload also defines ``"<namespace>/pods/<k=v,...>"`` for subsets of its pod labels, which
is what a Service's selector names, so a Service finds a Deployment in another file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import combinations

import yaml

from cleveragents.indexing.model import Entity, FileAnalysis, Reference, RenderRequest, SourceFile, Span

from ._config_tree import (
    CLUSTER_NAMESPACE,
    CONFIG_BLOCK,
    CONFIG_FILE,
    CONFIG_KEY,
    CONFIG_NAMESPACE,
    CONFIG_VALUE,
    CONNECTS_TO,
    DEPLOYMENT_UNIT,
    ENDPOINT,
    ENV_VAR,
    EXPOSES,
    HOST_NAME,
    IMAGE,
    IS_SECRET,
    KEY_PATH,
    MASK,
    PORT,
    PORT_NUMBER,
    PROTOCOL,
    PUBLISHED_PORT,
    REPLICAS,
    RESOURCE_KIND,
    ROUTE_PATH,
    SERVICE,
    USES_CONFIG,
    Item,
    Node,
    Outline,
    config_tree,
    dotted,
    flow,
    is_secret_name,
    render,
    stored,
)

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NULL_TAG = "tag:yaml.org,2002:null"
# Deeper YAML than this is not converted (libyaml itself stops at 1000 levels).
_MAX_NESTING = 100
# Characters YAML refuses anywhere; replaced one for one so marks keep their columns.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff\ud800-\udfff]")
_PROPERTIES = re.compile(rb"(?:[&!][^\s]*\s+)+")
# A colon that separates port parts, not one inside a ``${VAR:-default}`` interpolation.
_PORT_COLON = re.compile(r":(?![^{]*\})")
_COMPOSE_NAME = re.compile(r"(docker-)?compose([.-][\w.-]+)?\.ya?ml")

K8S = "k8s"
WORKLOADS = frozenset(
    {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob", "Pod"}
)
CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "PriorityClass",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "APIService",
    }
)
# Label subsets a workload publishes for selectors: all of them up to this many labels,
# else subsets of up to three labels plus the full set.
_ALL_SUBSETS_UP_TO = 6
_MAX_LABELS = 10


def is_compose_name(path: str) -> bool:
    return _COMPOSE_NAME.fullmatch(posixpath.basename(path).lower()) is not None


class InfrastructureAnalyzer:
    name = "infrastructure"
    version = "1"

    def handles(self, path: str) -> bool:
        return path.lower().endswith((".yaml", ".yml"))

    def file_types(self, path: str) -> tuple[str, ...]:
        return (CONFIG_FILE, DEPLOYMENT_UNIT) if is_compose_name(path) else (CONFIG_FILE,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        return outline(source.path, source.data).analysis()

    def render(self, request: RenderRequest) -> str:
        return render(_rendered(request.path, request.content), request)


ANALYZERS = [InfrastructureAnalyzer()]


@lru_cache(maxsize=16)
def _rendered(path: str, data: bytes) -> Outline:
    """Renderings of one file come in runs (a node at several levels, nodes of one file): analyze once."""
    return outline(path, data)


def outline(path: str, data: bytes) -> Outline:
    out = Outline(path, data)
    docs = _load(out)
    if is_compose_name(path) or (len(docs) == 1 and _looks_compose(docs[0])):
        out.file_node((CONFIG_FILE, DEPLOYMENT_UNIT))
        out.titles[""] = f"{out.entities[0].name} (Compose)"
        describe = _compose
    elif any(_is_k8s(doc) for doc in docs):
        out.file_node((CONFIG_FILE,))
        out.titles[""] = f"{out.entities[0].name} (Kubernetes)"
        describe = _kubernetes
    else:
        out.file_node((CONFIG_FILE,))
        describe = _generic
    out.problems.sort(key=lambda p: p.span.start_byte if p.span else 0)
    for doc in docs:
        out.hide(doc)
    try:
        describe(out, docs)
    except Exception as exc:  # a bug must cost one file's detail, not the index run
        out.problem(f"analyzer error: {type(exc).__name__}")  # the message may quote a value
    return out


# ── YAML to nodes ──────────────────────────────────────────────────


def _load(out: Outline) -> list[Node]:
    text = _FORBIDDEN.sub("\ufffd", out.index.text)
    if text != out.index.text and "\ufffd" not in out.index.text:
        first = _FORBIDDEN.search(out.index.text)
        at = first.start() if first else 0
        out.problem(
            "characters YAML does not allow (control characters) read as U+FFFD", out.index.char_span(at, at + 1)
        )
    docs: list[Node] = []
    try:
        for document in yaml.compose_all(text, Loader=_LOADER):
            if document is not None:
                # Node ids are reused once a document is freed: one memo per document.
                docs.append(_Converter(out).node(document, 0))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        span = out.index.span((mark.line, mark.column), (mark.line, mark.column)) if mark else None
        message = "; ".join(part for part in (exc.context, exc.problem) if part)
        out.problem(f"YAML syntax error: {message}", span)
    except yaml.YAMLError as exc:
        out.problem(f"YAML error: {type(exc).__name__}")
    except RecursionError:
        out.problem("YAML nested too deeply")
    return docs


class _Converter:
    def __init__(self, out: Outline) -> None:
        self.index = out.index
        self.memo: dict[int, Node] = {}

    def span(self, start: yaml.Mark, end: yaml.Mark) -> Span:
        return self.index.span((start.line, start.column), (end.line, end.column))

    def value_only(self, span: Span) -> Span:
        """A scalar's span without its anchor and tag (``&pw !!str value``): masks keep them."""
        data = self.index.data
        properties = _PROPERTIES.match(data, span.start_byte, span.end_byte)
        if properties is None or properties.end() >= span.end_byte:
            return span
        return self.index.byte_span(properties.end(), span.end_byte)

    def node(self, source: yaml.Node, depth: int) -> Node:
        found = self.memo.get(id(source))
        if found is not None:
            return found
        span = self.span(source.start_mark, source.end_mark)
        if isinstance(source, yaml.ScalarNode) or depth > _MAX_NESTING:
            text = source.value if isinstance(source, yaml.ScalarNode) else "…"
            node = Node("scalar", self.value_only(span), text=text, null=source.tag == _NULL_TAG)
            self.memo[id(source)] = node
            return node
        node = Node("seq" if isinstance(source, yaml.SequenceNode) else "map", span)
        self.memo[id(source)] = node  # before the children: a recursive alias finds it
        if isinstance(source, yaml.SequenceNode):
            node.elements = [self.node(child, depth + 1) for child in source.value]
        elif isinstance(source, yaml.MappingNode):  # the only other kind of yaml node
            node.items = self.items(source, depth)
        return node

    def items(self, source: yaml.MappingNode, depth: int) -> list[Item]:
        """Mapping items, merge keys (``<<``) resolved in place; explicit keys win."""
        items: list[Item] = []
        merged: list[Item] = []
        merge_at: int | None = None
        for key, value in source.value:
            if key.tag == _MERGE_TAG:
                sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
                for merged_source in sources:
                    converted = self.node(merged_source, depth + 1)
                    merged += converted.items if converted.kind == "map" else []
                merge_at = len(items) if merge_at is None else merge_at
                continue
            label = key.value if isinstance(key, yaml.ScalarNode) else flow(self.node(key, depth + 1), limit=100)
            items.append(Item(str(label), self.node(value, depth + 1), self.span(key.start_mark, value.end_mark)))
        if merge_at is not None:
            taken = {item.key for item in items}
            extra: list[Item] = []
            for item in merged:
                if item.key not in taken:
                    taken.add(item.key)
                    extra.append(item)
            items[merge_at:merge_at] = extra
        return items


def _looks_compose(doc: Node) -> bool:
    services = doc.mapping("services")
    return services is not None and any(
        item.node.kind == "map" and (item.node.get("image") is not None or item.node.get("build") is not None)
        for item in services.items
    )


def _is_k8s(doc: Node) -> bool:
    return doc.scalar("apiVersion") is not None and doc.scalar("kind") is not None


def _text(node: Node | None) -> str | None:
    return node.scalar() if node is not None else None


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def _port_number(text: str | None) -> int | None:
    number = _int(text)
    return number if number is not None and number <= 65535 else None


def _scalars(node: Node | None) -> dict[str, str]:
    """A mapping of plain values (labels, selectors) as a dict."""
    if node is None or node.kind != "map":
        return {}
    return {item.key: item.node.text for item in node.items if item.node.kind == "scalar" and not item.node.null}


def _names(node: Node | None) -> list[str]:
    """Names listed as a sequence of scalars or as the keys of a mapping."""
    if node is None:
        return []
    if node.kind == "seq":
        return [e.text for e in node.elements if e.kind == "scalar" and not e.null]
    if node.kind == "map":
        return [item.key for item in node.items]
    return [] if node.null else [node.text]


def _generic(out: Outline, docs: list[Node]) -> None:
    if len(docs) == 1:
        config_tree(out, docs[0], parent="", key_prefix="")
        return
    for number, doc in enumerate(docs, 1):
        _document_block(out, doc, number)


def _document_block(out: Outline, doc: Node, number: int) -> None:
    block = out.add(f"doc{number}", (CONFIG_BLOCK,), f"document {number}", "", doc.span and out.index.trimmed(doc.span))
    if doc.kind == "scalar" and not doc.null:
        block.add(CONFIG_VALUE, MASK if out.hidden(doc) else stored(doc.text))
    config_tree(out, doc, parent=block.key, key_prefix=f"{block.key}/", scope=block.key)


# ── Docker Compose ─────────────────────────────────────────────────

# Service keys described by entities of their own rather than by the config tree.
_COMPOSE_OWN = ("image", "ports", "expose", "environment", "depends_on", "links")


def _compose(out: Outline, docs: list[Node]) -> None:
    if not docs:
        return
    root = docs[0]
    for number, doc in enumerate(docs[1:], 2):
        _document_block(out, doc, number)
    if root.kind != "map":
        return
    services = root.mapping("services")
    skip = frozenset({("services",)}) if services is not None else frozenset()
    config_tree(out, root, parent="", key_prefix="", skip=skip)
    if services is None:
        return
    names = {item.key for item in services.items}
    for item in services.items:
        if out.full():
            out.omitted += 1
            continue
        start = len(out.entities)
        service = _compose_service(out, item, names)
        for entity in out.entities[start:]:
            out.descriptors[entity.key] = service


def _compose_service(out: Outline, item: Item, names: set[str]) -> str:
    name, node = item.key, item.node
    span = out.index.trimmed(item.span) if item.span else None
    service = out.add(f"service/{name}", (SERVICE, DEPLOYMENT_UNIT), name, "", span)
    key = service.key
    if node.kind != "map":
        return key
    base: tuple[str | int, ...] = ("services", name)
    image = node.scalar("image")
    if image is not None:
        service.add(IMAGE, stored(image))
        out.note(key, 1, f"image {image}")
    _compose_build(out, key, node.get("build"))
    for internal, field in ((False, "ports"), (True, "expose")):
        for element in node.sequence(field):
            _compose_port(out, key, element, internal)
    _compose_environment(out, key, base, node.get("environment"))
    _compose_env_files(out, key, node.get("env_file"))
    _compose_dependencies(out, key, node, names)
    _compose_uses(out, key, node)
    _compose_resources(out, service, node)
    skip = frozenset((*base, field) for field in _COMPOSE_OWN)
    config_tree(out, node, parent=key, key_prefix=f"{key}/", path=base, skip=skip)
    return key


def _compose_build(out: Outline, key: str, build: Node | None) -> None:
    if build is None:
        return
    context = _text(build) if build.kind == "scalar" else build.scalar("context")
    dockerfile = build.scalar("dockerfile") if build.kind == "map" else None
    context = context or "."
    out.note(key, 1, f"build {context}")
    where = posixpath.normpath(posixpath.join(posixpath.dirname(out.path), context))
    out.note(key, 8, f"built from {posixpath.join(where, dockerfile or 'Dockerfile')}")


def _compose_port(out: Outline, service: str, element: Node, internal: bool) -> None:
    """One ``ports:``/``expose:`` entry, short ("127.0.0.1:8080:80/udp") or long syntax."""
    host_ip = published = mode = None
    if element.kind == "map":
        target = element.scalar("target")
        published = element.scalar("published")
        protocol = element.scalar("protocol") or "tcp"
        host_ip = element.scalar("host_ip")
        mode = element.scalar("mode")
    elif element.kind == "scalar" and not element.null:
        text, _, protocol = element.text.strip().partition("/")
        protocol = protocol or "tcp"
        if text.startswith("["):  # an IPv6 host address
            host_ip, _, text = text[1:].partition("]")
            text = text.lstrip(":")
        parts = _PORT_COLON.split(text)
        target = parts[-1]
        if len(parts) >= 2:
            published = parts[-2] or None
        if len(parts) >= 3 and host_ip is None:
            host_ip = ":".join(parts[:-2]) or None
    else:
        return
    if not target:
        return
    protocol = protocol.lower()
    label = f"{published}:{target}/{protocol}" if published else f"{target}/{protocol}"
    values: dict[str, str | int | bool | float] = {PROTOCOL: protocol}
    number = _port_number(target.split("-")[0])
    if number is not None:
        values[PORT_NUMBER] = number
    if published and _port_number(published.split("-")[0]) is not None:
        values[PUBLISHED_PORT] = int(published.split("-")[0])
    span = out.index.trimmed(element.span) if element.span else None
    port = out.add(f"{service}/port/{label}", (PORT, ENDPOINT), label, service, span, values).key
    out.link(service, EXPOSES, port)
    detail = [f"container port {target}", f"protocol {protocol}"]
    if published:
        detail.append(f"published on {host_ip or 'all interfaces'}:{published}")
    if internal:
        detail.append("exposed to other services only")
    if mode:
        detail.append(f"mode {mode}")
    out.note(port, 3, ", ".join(detail))


def _compose_environment(out: Outline, service: str, base: tuple[str | int, ...], env: Node | None) -> None:
    if env is None:
        return
    # name, value, whether an alias shares it with a secret, entity span, value span
    entries: list[tuple[str, str | None, bool, Span | None, Span | None]] = []
    if env.kind == "map":
        for item in env.items:
            value = None if item.node.null else (item.node.text if item.node.kind == "scalar" else flow(item.node))
            # The value of a secret-named key is masked with the whole document's secrets.
            entries.append((item.key, value, out.hidden(item.node), item.span, None))
    elif env.kind == "seq":
        for element in env.elements:
            if element.kind != "scalar" or element.null or element.span is None:
                continue
            name, equals, value = element.text.partition("=")
            value_span = _after_equals(out, element.span)
            entries.append((name.strip(), value if equals else None, out.hidden(element), element.span, value_span))
    for name, value, shared, span, value_span in entries:
        secret = is_secret_name(name) or shared
        values: dict[str, str | int | bool | float] = {KEY_PATH: dotted((*base, "environment", name))}
        if secret:
            values[IS_SECRET] = True
            out.mask(value_span)
        if value is not None:
            values[CONFIG_VALUE] = MASK if secret else stored(value)
        out.add(f"{service}/env/{name}", (ENV_VAR,), name, service, span, values)


def _after_equals(out: Outline, span: Span) -> Span | None:
    """The value part of a ``NAME=value`` list entry as written (inside its quotes)."""
    raw = out.index.data[span.start_byte : span.end_byte]
    equals = raw.find(b"=")
    if equals < 0:
        return None
    end = span.end_byte - (1 if raw[:1] in (b'"', b"'") and raw.endswith(raw[:1]) and len(raw) > 1 else 0)
    return out.index.byte_span(span.start_byte + equals + 1, end)


def _compose_env_files(out: Outline, service: str, env_file: Node | None) -> None:
    if env_file is None:
        return
    elements = env_file.elements if env_file.kind == "seq" else [env_file]
    for element in elements:
        path = element.scalar("path") if element.kind == "map" else _text(element)
        if not path:
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(out.path), path))
        line = element.span.start_line if element.span else 0
        out.references.append(Reference(service, USES_CONFIG, CONFIG_NAMESPACE, ((target, 0.9),), line=line))
        out.note(service, 8, f"environment from {target}")


def _compose_dependencies(out: Outline, service: str, node: Node, names: set[str]) -> None:
    depends = node.get("depends_on")
    described: list[str] = []
    for name in _names(depends):
        condition = None
        if depends is not None and depends.kind == "map":
            condition = (depends.mapping(name) or Node("map", None)).scalar("condition")
        if name in names:
            out.link(service, CONNECTS_TO, f"service/{name}")
        described.append(f"{name} ({condition})" if condition else name)
    for link in _names(node.get("links")):
        name = link.split(":")[0]
        if name in names:
            out.link(service, CONNECTS_TO, f"service/{name}")
        described.append(f"{name} (link)")
    if described:
        out.note(service, 1, "depends on " + ", ".join(described))
    networks = _names(node.get("networks"))
    if networks:
        out.note(service, 1, "networks " + ", ".join(networks))


def _compose_uses(out: Outline, service: str, node: Node) -> None:
    """``usesConfig`` links to the top-level volumes, secrets and configs a service mounts."""
    for section in ("volumes", "secrets", "configs"):
        for element in node.sequence(section):
            if element.kind == "map":
                name = element.scalar("source")
            else:
                name = (_text(element) or "").split(":")[0]
                if section == "volumes" and name.startswith((".", "/", "~", "$")):
                    name = None  # a bind mount, not a named volume
            target = out.by_path.get(("", (section, name))) if name else None
            if target is not None:
                out.link(service, USES_CONFIG, target)


def _compose_resources(out: Outline, entity: Entity, node: Node) -> None:
    service = entity.key
    deploy = node.mapping("deploy")
    replicas = _int(deploy.scalar("replicas") if deploy else None) or _int(node.scalar("scale"))
    if replicas is not None:
        entity.add(REPLICAS, replicas)
        out.note(service, 6, f"replicas {replicas}")
    resources = deploy.mapping("resources") if deploy else None
    for kind in ("limits", "reservations"):
        values = _scalars(resources.mapping(kind) if resources else None)
        if values:
            out.note(service, 6, f"{kind} " + ", ".join(f"{k}={v}" for k, v in values.items()))
    flat = {
        k: node.scalar(k)
        for k in ("cpus", "cpu_shares", "cpu_count", "mem_limit", "mem_reservation", "memswap_limit", "shm_size")
    }
    described = [f"{k}={v}" for k, v in flat.items() if v is not None]
    if described:
        out.note(service, 6, "resources " + ", ".join(described))


# ── Kubernetes ─────────────────────────────────────────────────────


class _Kube:
    """The Kubernetes objects of one file; references resolve here first, else by the linker."""

    def __init__(self, out: Outline) -> None:
        self.out = out
        self.local: dict[str, list[str]] = {}  # symbol -> keys defining it in this file
        self.pending: list[tuple[str, str, tuple[str, ...], int]] = []  # source, predicate, symbols, line

    def refer(self, source: str, predicate: str, symbols: tuple[str, ...], node: Node | None) -> None:
        line = node.span.start_line if node is not None and node.span is not None else 0
        self.pending.append((source, predicate, symbols, line))

    def resolve(self) -> None:
        for source, predicate, symbols, line in self.pending:
            local = next((self.local[s] for s in symbols if s in self.local), None)
            if local:
                for target in local:
                    if target != source:
                        self.out.link(source, predicate, target)
            else:
                targets = tuple((symbol, 0.9) for symbol in symbols)
                self.out.references.append(Reference(source, predicate, K8S, targets, line=line))


def _manifests(doc: Node) -> Iterator[Node]:
    """A document's objects: itself, or the items of a ``kind: List`` (one level)."""
    if (doc.scalar("kind") or "").endswith("List") and doc.get("items") is not None:
        yield from (item for item in doc.sequence("items") if item.kind == "map")
    else:
        yield doc


def _kubernetes(out: Outline, docs: list[Node]) -> None:
    kube = _Kube(out)
    for number, doc in enumerate(docs, 1):
        if not _is_k8s(doc):
            _document_block(out, doc, number)
            continue
        for manifest in _manifests(doc):
            if out.full():
                out.omitted += 1
            elif _is_k8s(manifest):
                _k8s_object(kube, manifest, number)
    kube.resolve()


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _label_symbols(namespace: str, labels: dict[str, str]) -> list[str]:
    items = sorted(labels.items())
    if not items:
        return []
    head = items[:_MAX_LABELS]
    sizes = range(1, len(head) + 1) if len(head) <= _ALL_SUBSETS_UP_TO else range(1, 4)
    found = [f"{namespace}/pods/{_selector(dict(c))}" for size in sizes for c in combinations(head, size)]
    full = f"{namespace}/pods/{_selector(labels)}"
    return found if full in found else [*found, full]


def _pod_template(kind: str, doc: Node) -> tuple[Node | None, tuple[str | int, ...]]:
    """The pod template of a workload and its path (a Pod is its own template)."""
    if kind == "Pod":
        return doc, ()
    path: tuple[str | int, ...] = (
        ("spec", "jobTemplate", "spec", "template") if kind == "CronJob" else ("spec", "template")
    )
    node: Node | None = doc
    for part in path:
        node = node.mapping(str(part)) if node is not None else None
    return node, path


def _k8s_object(kube: _Kube, doc: Node, number: int) -> None:
    out = kube.out
    kind = doc.scalar("kind") or "?"
    meta = doc.mapping("metadata") or Node("map", None)
    name = meta.scalar("name") or meta.scalar("generateName") or f"#{number}"
    namespace = meta.scalar("namespace") or ("_" if kind in CLUSTER_SCOPED else "default")
    key = f"{kind}/{namespace}/{name}"
    qualified = f"{namespace}/{kind}/{name}"
    template, template_path = _pod_template(kind, doc) if kind in WORKLOADS else (None, ())
    template_meta = template.mapping("metadata") if template is not None else None
    pod_labels = _scalars(template_meta.get("labels")) if template_meta is not None else {}
    label_symbols = _label_symbols(namespace, pod_labels) if kind in WORKLOADS else []
    if kind in WORKLOADS:
        types: tuple[str, ...] = (DEPLOYMENT_UNIT, SERVICE)
    elif kind in ("Service", "Ingress"):
        types = (SERVICE,)
    else:
        types = (CONFIG_BLOCK,)
    values: dict[str, str | int | bool | float] = {RESOURCE_KIND: kind}
    if namespace != "_":
        values[CLUSTER_NAMESPACE] = namespace
    symbols = ((K8S, qualified), *((K8S, s) for s in label_symbols))
    span = out.index.trimmed(doc.span) if doc.span else None
    entity = out.add(key, types, name, "", span, values, symbols)
    key = entity.key
    for symbol in (qualified, *label_symbols):
        kube.local.setdefault(symbol, []).append(key)
    out.titles[key] = f"{kind} {name}" if namespace == "_" else f"{kind} {namespace}/{name}"
    start = len(out.entities)
    skip: set[tuple[str | int, ...]] = {("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")}
    spec = doc.mapping("spec") or Node("map", None)
    if kind in WORKLOADS:
        _workload(kube, entity, namespace, spec, template, template_path, skip)
    elif kind == "Service":
        _k8s_service(kube, key, namespace, spec, skip)
    elif kind == "Ingress":
        _ingress(kube, key, namespace, spec, skip)
    elif kind in ("ConfigMap", "Secret"):
        _config_data(kube, entity, namespace, kind, doc, skip)
    elif kind == "PersistentVolumeClaim":
        resources = spec.mapping("resources")
        storage = _scalars(resources.mapping("requests") if resources is not None else None)
        if "storage" in storage:
            out.note(key, 6, f"storage {storage['storage']}")
    elif kind == "HorizontalPodAutoscaler":
        target = spec.mapping("scaleTargetRef")
        if target is not None:
            out.note(key, 1, f"scales {target.scalar('kind')}/{target.scalar('name')}")
        bounds = {k: spec.scalar(k) for k in ("minReplicas", "maxReplicas")}
        out.note(key, 6, ", ".join(f"{k} {v}" for k, v in bounds.items() if v is not None))
    config_tree(out, doc, parent=key, key_prefix=f"{key}/", skip=frozenset(skip), scope=key)
    for child in out.entities[start:]:
        out.descriptors[child.key] = key


def _workload(
    kube: _Kube,
    entity: Entity,
    namespace: str,
    spec: Node,
    template: Node | None,
    template_path: tuple[str | int, ...],
    skip: set[tuple[str | int, ...]],
) -> None:
    out, key = kube.out, entity.key
    replicas = _int(spec.scalar("replicas"))
    if replicas is not None:
        entity.add(REPLICAS, replicas)
        out.note(key, 6, f"replicas {replicas}")
    for claim in spec.sequence("volumeClaimTemplates"):
        claim_spec = claim.mapping("spec")
        resources = claim_spec.mapping("resources") if claim_spec else None
        storage = _scalars(resources.mapping("requests") if resources else None).get("storage")
        claim_name = (claim.mapping("metadata") or Node("map", None)).scalar("name")
        if storage:
            out.note(key, 6, f"volume claim {claim_name}: storage {storage}")
    pod_spec = template.mapping("spec") if template is not None else None
    if pod_spec is None:
        return
    pod_path = (*template_path, "spec")
    for field in ("initContainers", "containers"):
        skip.add((*pod_path, field))
        for position, container in enumerate(pod_spec.sequence(field)):
            if container.kind == "map":
                _container(kube, key, namespace, container, (*pod_path, field, position), field == "initContainers")
    for volume in pod_spec.sequence("volumes"):
        _volume_refs(kube, key, namespace, volume)
    account = pod_spec.scalar("serviceAccountName")
    if account:
        kube.refer(key, USES_CONFIG, (f"{namespace}/ServiceAccount/{account}",), pod_spec.get("serviceAccountName"))


def _volume_refs(kube: _Kube, key: str, namespace: str, volume: Node) -> None:
    sources = [volume, *(s for s in (volume.mapping("projected") or Node("map", None)).sequence("sources"))]
    for source in sources:
        config_map = source.mapping("configMap")
        secret = source.mapping("secret")
        claim = source.mapping("persistentVolumeClaim")
        if config_map is not None and config_map.scalar("name"):
            kube.refer(key, USES_CONFIG, (f"{namespace}/ConfigMap/{config_map.scalar('name')}",), config_map)
        if secret is not None and (secret.scalar("secretName") or secret.scalar("name")):
            target = secret.scalar("secretName") or secret.scalar("name")
            kube.refer(key, USES_CONFIG, (f"{namespace}/Secret/{target}",), secret)
        if claim is not None and claim.scalar("claimName"):
            kube.refer(key, USES_CONFIG, (f"{namespace}/PersistentVolumeClaim/{claim.scalar('claimName')}",), claim)


def _container(kube: _Kube, workload: str, namespace: str, node: Node, path: tuple[str | int, ...], init: bool) -> None:
    out = kube.out
    name = node.scalar("name") or f"#{path[-1]}"
    image = node.scalar("image")
    values: dict[str, str | int | bool | float] = {KEY_PATH: dotted(path)}
    if image:
        values[IMAGE] = stored(image)
    span = out.index.trimmed(node.span) if node.span else None
    key = out.add(f"{workload}/container/{name}", (DEPLOYMENT_UNIT,), name, workload, span, values).key
    out.titles[key] = f"{'init container' if init else 'container'} {name}"
    if image:
        out.note(key, 1, f"image {image}")
    for port in node.sequence("ports"):
        number = _port_number(port.scalar("containerPort"))
        if number is None:
            continue
        protocol = (port.scalar("protocol") or "TCP").lower()
        label = f"{number}/{protocol}"
        port_values: dict[str, str | int | bool | float] = {PORT_NUMBER: number, PROTOCOL: protocol}
        host_port = _port_number(port.scalar("hostPort"))
        if host_port is not None:
            port_values[PUBLISHED_PORT] = host_port
        port_span = out.index.trimmed(port.span) if port.span else None
        port_key = out.add(f"{key}/port/{label}", (PORT, ENDPOINT), label, key, port_span, port_values).key
        out.link(workload, EXPOSES, port_key)
        detail = [f"container port {number}", f"protocol {protocol}"]
        if port.scalar("name"):
            detail.insert(0, f"name {port.scalar('name')}")
        if host_port is not None:
            detail.append(f"host port {host_port}")
        out.note(port_key, 3, ", ".join(detail))
    for position, env in enumerate(node.sequence("env")):
        _container_env(kube, key, namespace, env, (*path, "env", position))
    for source in node.sequence("envFrom"):
        prefix = source.scalar("prefix")
        for field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = source.mapping(field)
            if ref is not None and ref.scalar("name"):
                kube.refer(key, USES_CONFIG, (f"{namespace}/{kind}/{ref.scalar('name')}",), ref)
                out.note(key, 4, f"env from {kind} {ref.scalar('name')}" + (f" (prefix {prefix})" if prefix else ""))
    resources = node.mapping("resources")
    for kind in ("requests", "limits"):
        amounts = _scalars(resources.mapping(kind) if resources else None)
        if amounts:
            out.note(key, 6, f"{kind} " + ", ".join(f"{k}={v}" for k, v in amounts.items()))
    skip = frozenset((*path, field) for field in ("name", "image", "ports", "env", "envFrom", "resources"))
    config_tree(out, node, parent=key, key_prefix=f"{key}/", path=path, skip=skip, scope=workload)


def _container_env(kube: _Kube, container: str, namespace: str, env: Node, path: tuple[str | int, ...]) -> None:
    out = kube.out
    name = env.scalar("name")
    if not name:
        return
    values: dict[str, str | int | bool | float] = {KEY_PATH: dotted((*path[:-1], name))}
    value = env.get("value")
    secret = is_secret_name(name) or (value is not None and out.hidden(value))
    source = env.mapping("valueFrom")
    secret_ref = source.mapping("secretKeyRef") if source else None
    if secret or secret_ref is not None:
        values[IS_SECRET] = True
    if value is not None and not value.null:
        values[CONFIG_VALUE] = MASK if secret else stored(value.text if value.kind == "scalar" else flow(value))
        if secret:
            out.hide(value, True)
    span = out.index.trimmed(env.span) if env.span else None
    key = out.add(f"{container}/env/{name}", (ENV_VAR,), name, container, span, values).key
    if source is None:
        return
    for field, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
        ref = source.mapping(field)
        if ref is not None and ref.scalar("name"):
            holder = f"{namespace}/{kind}/{ref.scalar('name')}"
            entry = ref.scalar("key")
            symbols = (f"{holder}/{entry}", holder) if entry else (holder,)
            kube.refer(key, USES_CONFIG, symbols, ref)
            out.note(key, 4, f"from {kind} {ref.scalar('name')}" + (f" key {entry}" if entry else ""))
    field_ref = source.mapping("fieldRef")
    if field_ref is not None:
        out.note(key, 4, f"from field {field_ref.scalar('fieldPath')}")
    resource_ref = source.mapping("resourceFieldRef")
    if resource_ref is not None:
        out.note(key, 4, f"from resource {resource_ref.scalar('resource')}")


def _k8s_service(kube: _Kube, key: str, namespace: str, spec: Node, skip: set[tuple[str | int, ...]]) -> None:
    out = kube.out
    kind = spec.scalar("type")
    if kind:
        out.note(key, 2, f"type {kind}")
    external = spec.scalar("externalName")
    if external:
        out.note(key, 1, f"external name {external}")
    skip.add(("spec", "ports"))
    for port in spec.sequence("ports"):
        number = _port_number(port.scalar("port"))
        if number is None:
            continue
        protocol = (port.scalar("protocol") or "TCP").lower()
        label = f"{number}/{protocol}"
        values: dict[str, str | int | bool | float] = {PORT_NUMBER: number, PROTOCOL: protocol}
        node_port = _port_number(port.scalar("nodePort"))
        if node_port is not None:
            values[PUBLISHED_PORT] = node_port
        span = out.index.trimmed(port.span) if port.span else None
        port_key = out.add(f"{key}/port/{label}", (PORT, ENDPOINT), label, key, span, values).key
        out.link(key, EXPOSES, port_key)
        detail = [f"port {number}", f"protocol {protocol}"]
        if port.scalar("name"):
            detail.insert(0, f"name {port.scalar('name')}")
        if port.scalar("targetPort"):
            detail.append(f"target port {port.scalar('targetPort')}")
        if node_port is not None:
            detail.append(f"node port {node_port}")
        out.note(port_key, 3, ", ".join(detail))
    selector = _scalars(spec.get("selector"))
    if selector:
        kube.refer(key, CONNECTS_TO, (f"{namespace}/pods/{_selector(selector)}",), spec.get("selector"))
        out.note(key, 1, f"selects pods {_selector(selector)}")


def _ingress(kube: _Kube, key: str, namespace: str, spec: Node, skip: set[tuple[str | int, ...]]) -> None:
    out = kube.out
    tls_hosts = {host for tls in spec.sequence("tls") for host in _names(tls.get("hosts"))}
    backends: list[str] = []

    def backend(node: Node | None) -> tuple[str | None, str | None]:
        if node is None:
            return None, None
        service = node.mapping("service")
        if service is not None:  # networking.k8s.io/v1
            port = service.mapping("port") or Node("map", None)
            return service.scalar("name"), port.scalar("number") or port.scalar("name")
        return node.scalar("serviceName"), node.scalar("servicePort")

    def connect(service: str | None, node: Node | None) -> None:
        if service:
            kube.refer(key, CONNECTS_TO, (f"{namespace}/Service/{service}",), node)
            if service not in backends:
                backends.append(service)

    for field in ("defaultBackend", "backend"):
        default = spec.mapping(field)
        service, port = backend(default)
        if service:
            connect(service, default)
            out.note(key, 3, f"default backend {service}:{port}")
    skip.add(("spec", "rules"))
    for rule in spec.sequence("rules"):
        host = rule.scalar("host")
        http = rule.mapping("http") or Node("map", None)
        for path in http.sequence("paths"):
            route = path.scalar("path") or "/"
            label = f"{host or '*'}{route}"
            values: dict[str, str | int | bool | float] = {
                ROUTE_PATH: route,
                PROTOCOL: "https" if host in tls_hosts else "http",
            }
            if host:
                values[HOST_NAME] = host
            span = out.index.trimmed(path.span) if path.span else None
            endpoint = out.add(f"{key}/route/{label}", (ENDPOINT,), label, key, span, values).key
            out.link(key, EXPOSES, endpoint)
            service, port = backend(path.mapping("backend"))
            connect(service, path.mapping("backend"))
            kind = path.scalar("pathType")
            out.note(
                endpoint, 3, f"{kind or 'path'} -> service {service}:{port}" + (" (TLS)" if host in tls_hosts else "")
            )
    if backends:
        out.note(key, 1, "routes to " + ", ".join(backends))


def _config_data(
    kube: _Kube, entity: Entity, namespace: str, kind: str, doc: Node, skip: set[tuple[str | int, ...]]
) -> None:
    """ConfigMap keys with values; Secret key names only (values are masked, never read)."""
    out, key, name = kube.out, entity.key, entity.name
    secret = kind == "Secret"
    if secret:
        entity.add(IS_SECRET, True)
        # kubectl's last-applied annotation repeats the data: mask annotations whole.
        skip.add(("metadata", "annotations"))
        annotations = (doc.mapping("metadata") or Node("map", None)).get("annotations")
        if annotations is not None:
            out.hide(annotations, True)
    for field in ("data", "stringData", "binaryData"):
        skip.add((field,))
        data = doc.get(field)
        if data is None:
            continue
        if secret:
            out.hide(data, True)
        if data.kind != "map":
            continue
        for item in data.items:
            values: dict[str, str | int | bool | float] = {KEY_PATH: dotted((field, item.key))}
            hidden = secret or is_secret_name(item.key)
            if hidden:
                values[IS_SECRET] = True
                out.hide(item.node, True)
            elif field != "binaryData" and item.node.kind == "scalar" and not item.node.null:
                values[CONFIG_VALUE] = stored(item.node.text)
            symbol = f"{namespace}/{kind}/{name}/{item.key}"
            span = out.index.trimmed(item.span) if item.span else None
            entry = out.add(f"{key}/{item.key}", (CONFIG_KEY,), item.key, key, span, values, ((K8S, symbol),)).key
            kube.local.setdefault(symbol, []).append(entry)
