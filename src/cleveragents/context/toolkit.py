"""The toolkit for writing a context strategy: what every strategy, built-in or a user's,
needs to find, describe, render and budget UKO nodes (see strategies/README.md).

- Scope: ``scope_of`` (the resources a request may see), ``in_scope``, ``filter_of``,
  ``resource_of``; ``search_text`` (what to search for).
- Named queries: ``run`` (a ``queries/*.rq`` query with rows of values bound in one
  ``VALUES`` block), ``with_values``, ``query_text``.
- Nodes: ``node_infos`` (path, lines, names and types of nodes, one query),
  ``resolve_focus`` (paths, qualified or short names to nodes), ``named_nodes`` (what a
  request names, and how surely).
- Depth: ``base_depth`` (a request's depth for a node's type), ``deepest_level``,
  ``fallback_depths``.
- Rendering within a budget: ``Budget`` (a hard ceiling in the pipeline's tokens),
  ``render_fitting``, ``pack_nodes`` (ranked nodes to fragments), ``pack_hits`` (search
  hits to fragments), ``text_fragment`` (generated text), ``fragment``.
- ``StrategyBase``: name, capabilities and ``explain`` from class attributes.

Strategies select candidates with named queries and rank in Python; the pipeline's packer
decides at the end how much of each node is shown (see ``context.pipeline.packing``), so a
strategy renders what it ranks cheaply and lists more of its ranking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pyoxigraph as ox

from cleveragents.context.depth import resolve_for_types
from cleveragents.context.intent import Intent, expand
from cleveragents.context.model import ContextFragment, ContextRequest, FragmentProvenance, StrategyCapabilities
from cleveragents.context.protocols import BackendSet, GraphBackend
from cleveragents.context.tokens import counter_for
from cleveragents.errors import NotFoundError, UsageError, ValidationError
from cleveragents.graph import named_queries
from cleveragents.iris import SOURCE_BASE, resource_ulid_of
from cleveragents.tbox.closure import most_specific_type
from cleveragents.tbox.detail_levels import effective_levels

FULL_LEVELS = ("FULL_SOURCE", "FULL_CONTENT")  # whole text, whatever a type's map calls it
MIN_FRAGMENT_TOKENS = 10  # architecture.md [context.pipeline.budget-packer] min-fragment-tokens
# Each rendering costs about a millisecond (two lookups and a parse): a strategy renders at
# most one fragment per TOKENS_PER_FRAGMENT of its budget, between these bounds. Past that the
# tail is names at depth 0, which tell an LLM little.
MIN_FRAGMENTS, MAX_FRAGMENTS, TOKENS_PER_FRAGMENT = 48, 400, 40


def search_text(request: ContextRequest) -> str:
    """What to search for: the query, else the named entities and focus keys."""
    return (request.query or " ".join([*request.entities, *request.focus])).strip()


def fragment_cap(budget: int) -> int:
    """How many fragments a strategy renders for a budget: more budget, more of the ranking."""
    return max(MIN_FRAGMENTS, min(MAX_FRAGMENTS, budget // TOKENS_PER_FRAGMENT))


_MARKER = re.compile(r"#\s*@values[^\n]*")
_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)


@cache
def query_text(name: str) -> str:
    """The SPARQL of a built-in named query (``queries/<file>.rq``)."""
    return named_queries.get(name).text


def with_values(sparql: str, variables: Sequence[str], rows: Iterable[Sequence[ox.NamedNode | ox.Literal]]) -> str:
    """``sparql`` with ``VALUES (?a ?b) { (...) ... }`` in place of each ``# @values``
    comment line, else opening its first WHERE block.

    The GraphBackend takes query text only; the values are serialized by pyoxigraph's term
    types (which validate IRIs and escape literals), so nothing is pasted unchecked, and a
    whole frontier is bound in one query instead of one query per node. SPARQL evaluates a
    UNION branch on its own before joining, so a query with branches marks each one with
    ``# @values`` to have the values drive every branch's lookups (a comment, so the named
    query still runs as is from ``agents query run``).
    """
    names = " ".join(f"?{v}" for v in variables)
    values = " ".join("(" + " ".join(str(t) for t in row) + ")" for row in rows)
    clause = f"VALUES ({names}) {{ {values} }}"
    if _MARKER.search(sparql):
        return _MARKER.sub(lambda _: clause, sparql)
    match = _WHERE.search(sparql)
    if match is None:
        raise ValidationError("named query has no WHERE block to bind values into")
    return f"{sparql[: match.end()]}\n  {clause}\n{sparql[match.end() :]}"


def run(
    graph: GraphBackend,
    name: str,
    scope: frozenset[str] | None,
    bind: Mapping[str, Sequence[ox.NamedNode | ox.Literal]] | None = None,
) -> list[dict[str, Any]]:
    """Run a named query with its parameters bound to rows of values (one column per
    parameter, all of equal length); rows as plain Python values."""
    if scope is not None and not scope:
        return []
    sparql = query_text(name)
    if bind is not None:
        columns = list(bind.values())
        if not columns or not columns[0]:
            return []
        sparql = with_values(sparql, list(bind), list(zip(*columns, strict=True)))
    rows = graph.query_sparql(sparql, resource_filter=filter_of(scope))
    return [{k: value(v) for k, v in row.items()} for row in rows]


def value(term: Any) -> Any:
    """A row value as Python: IRIs and literals become their lexical value."""
    if term is None:
        return None
    return getattr(term, "value", term)


def resource_of(iri: str) -> str | None:
    """The resource ULID an entity IRI (or a resource IRI) belongs to."""
    return resource_ulid_of(iri)


def in_scope(iri: str, scope: frozenset[str] | None) -> bool:
    """Whether a node is visible: every node when the scope is None, else the nodes of its
    resources (an empty scope sees nothing)."""
    if scope is None:
        return True
    ulid = resource_of(iri)
    return ulid is not None and ulid in scope


def scope_of(request: ContextRequest, backends: BackendSet) -> frozenset[str] | None:
    """The resources a strategy may see: the backends' scope narrowed by the request's
    (None: no limit). An empty set is a scope that sees nothing, never everything."""
    if request.resources and backends.resources:
        return backends.resources & frozenset(request.resources)
    if request.resources or backends.resources:
        return frozenset(request.resources) or backends.resources
    return None


def filter_of(scope: frozenset[str] | None) -> set[str]:
    """A backend's ``resource_filter`` for a scope (an empty filter means the whole view)."""
    return set(scope) if scope else set()


def graph_and_scope(
    request: ContextRequest, backends: BackendSet, budget: int, notes: list[str]
) -> tuple[GraphBackend, frozenset[str] | None] | None:
    """What a graph strategy reads: the graph backend and the scope (``scope_of``); None, with
    a note in ``notes`` saying why, when there is nothing to do: no graph backend, no budget,
    or a scope that sees nothing."""
    graph = backends.graph
    scope = scope_of(request, backends)
    if graph is None:
        notes.append("no graph backend")
    elif budget <= 0:
        notes.append("no budget")
    elif scope is not None and not scope:
        notes.append("the request's resources are outside the backends' scope")
    else:
        return graph, scope
    return None


# -- node facts ------------------------------------------------------------------------------


@dataclass
class NodeInfo:
    iri: str
    path: str | None = None
    source_range: str | None = None
    name: str | None = None
    qualified_name: str | None = None
    types: set[str] = field(default_factory=set)

    @property
    def resource(self) -> str:
        return resource_of(self.iri) or ""

    @property
    def line_range(self) -> tuple[int, int] | None:
        if not self.source_range:
            return None
        match = re.match(r"(\d+):\d+-(\d+):\d+", self.source_range)
        return (int(match.group(1)), int(match.group(2))) if match else None

    @property
    def column(self) -> int:
        """The column its source starts at (its first line's indentation in the file)."""
        match = re.match(r"\d+:(\d+)-", self.source_range or "")
        return int(match.group(1)) if match else 0

    @property
    def type(self) -> str | None:
        """The most specific type: its DetailLevelMap applies."""
        return most_specific_type(self.types)


def node_infos(graph: GraphBackend, scope: frozenset[str] | None, iris: Iterable[str]) -> dict[str, NodeInfo]:
    """Path, range, names and types of nodes, in one query (context-node-info)."""
    wanted = sorted(set(iris))
    out: dict[str, NodeInfo] = {}
    for start in range(0, len(wanted), 400):  # keep each VALUES block a reasonable size
        chunk = [ox.NamedNode(i) for i in wanted[start : start + 400]]
        for row in run(graph, "context-node-info", scope, {"node": chunk}):
            info = out.setdefault(row["node"], NodeInfo(row["node"]))
            info.path = info.path or row.get("path")
            info.source_range = info.source_range or row.get("range")
            info.name = info.name or row.get("name")
            info.qualified_name = info.qualified_name or row.get("qname")
            if row.get("type"):
                info.types.add(row["type"])
    return out


def resolve_focus(graph: GraphBackend, scope: frozenset[str] | None, keys: Sequence[str]) -> dict[str, list[str]]:
    """Each focus key (IRI, path, qualified name or plain name) -> the nodes it names.

    An IRI, qualified name or path names one node; a suffix or short name may name
    several (all kept, ranked by the caller). A key that names nothing maps to [].
    """
    out: dict[str, list[str]] = {k: [] for k in keys}
    iris = [k for k in keys if k.startswith(SOURCE_BASE)]
    for iri in node_infos(graph, scope, iris) if iris else {}:
        if in_scope(iri, scope):
            out[iri].append(iri)
    names = [k for k in keys if k not in iris and k.strip()]
    # The last segment is looked up by name: a file name after the last '/', and a member
    # name after the last '.' (sessions.py is both a path and a dotted name: try both).
    pairs = list(
        dict.fromkeys(
            (k, tail)
            for k in names
            for last in [k.rstrip("/").rsplit("/", 1)[-1]]
            for tail in (last, last.rsplit(".", 1)[-1])
            if tail
        )
    )
    rows = run(
        graph,
        "context-resolve-focus",
        scope,
        {"key": [ox.Literal(k) for k, _ in pairs], "tail": [ox.Literal(t) for _, t in pairs]},
    )
    # Keep only the strongest match kind per key: qualified name > path > suffix > name.
    rank = {"qname": 0, "path": 1, "suffix": 2, "name": 3}
    best: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: (rank.get(r["how"], 9), r["node"])):
        key, node = row["key"], row["node"]
        if not in_scope(node, scope):
            continue
        level = rank.get(row["how"], 9)
        if best.setdefault(key, level) == level and node not in out[key]:
            out[key].append(node)
    return out


def named_nodes(
    graph: GraphBackend,
    scope: frozenset[str] | None,
    request: ContextRequest,
    intent: Intent,
    *,
    inferred_weight: float = 1.0,
) -> dict[str, float]:
    """The nodes a request names, each with how surely it names it: its focus and entities
    1.0, paths and symbols found in its query 0.8, plain words 0.3 (a word may name many
    things). A key naming several nodes shares its strength among them; a key naming
    dozens ("get") names nothing in particular, and a query naming many things (a paragraph
    of prose) is about none of them in particular either. ``inferred_weight`` scales what
    is only inferred from the query's text."""
    strength = {k: 1.0 for k in [*request.focus, *request.entities]}
    for key in [*intent.paths, *intent.symbols]:
        strength.setdefault(key, 0.8)
    for word in intent.words:
        strength.setdefault(word, 0.3)
    resolved = resolve_focus(graph, scope, list(strength)) if strength else {}
    found = {k: nodes for k, nodes in resolved.items() if nodes and len(nodes) <= 8}
    inferred = [k for k in found if k not in request.focus and k not in request.entities]
    dilution = max(1, len(inferred)) ** 0.5
    named: dict[str, float] = {}
    for key, nodes in found.items():
        share = strength[key] / len(nodes) ** 0.5
        if key in inferred:
            share *= inferred_weight / dilution
        for node in nodes:
            named[node] = max(named.get(node, 0.0), share)
    return named


# -- depth -------------------------------------------------------------------------------------


def base_depth(info: NodeInfo, depth: int | str) -> int:
    """The integer depth a request's depth means for a node's type (named levels resolve
    through the node's DetailLevelMap), clamped to the type's deepest level."""
    deepest = deepest_level(info.type) if info.type else None
    if depth in FULL_LEVELS and deepest is not None:  # "everything" for a type without that name
        try:
            number = resolve_for_types(info.types, depth)
        except UsageError:
            return deepest
    else:
        number = resolve_for_types(info.types, depth)
    return min(number, deepest) if deepest is not None else number


@cache
def deepest_level(node_type: str) -> int | None:
    try:
        levels = effective_levels(node_type)
    except NotFoundError:
        return None
    return levels[-1].depth if levels else None


def fallback_depths(depth: int) -> list[int]:
    """Depths to try, most detailed first, when a rendering does not fit."""
    steps = [depth, *(d for d in (9, 5, 2, 0) if d < depth)]
    return list(dict.fromkeys(steps))


# -- rendering and packing ---------------------------------------------------------------------


class Budget:
    """A hard token ceiling: every fragment is counted before it is accepted."""

    def __init__(self, total: int, encoding: str | None = None) -> None:
        self.total = max(0, total)
        self.used = 0
        self.counter = counter_for(encoding) if encoding else counter_for()

    @property
    def left(self) -> int:
        return self.total - self.used

    def count(self, text: str) -> int:
        return self.counter.count(text)

    def take(self, tokens: int) -> bool:
        if tokens > self.left:
            return False
        self.used += tokens
        return True


def render_fitting(graph: GraphBackend, info: NodeInfo, depth: int, budget: Budget) -> tuple[str, int, int] | None:
    """The node rendered at ``depth`` or, if that does not fit, at a lower fallback depth
    that does: (text, depth, tokens). None when nothing fits or there is no content.
    Renderings cost milliseconds each, so a far-too-large one jumps straight to depth 0."""
    deepest = deepest_level(info.type) if info.type else None
    if deepest is not None:
        depth = min(depth, deepest)
    if budget.left < 64:  # a few dozen tokens hold a name or a member listing, never a body
        depth = min(depth, 2)
    steps = fallback_depths(depth)
    while steps:
        step = steps.pop(0)
        try:
            rendered = graph.render(info.iri, step)
        except (NotFoundError, ValidationError):
            return None
        if rendered is None:
            return None
        text, used = rendered
        tokens = budget.count(text)
        if tokens and tokens <= budget.left:
            return text, used, tokens
        if tokens > 10 * budget.left:
            steps = steps[-1:]  # only the shallowest level can fit
    return None


def fragment(
    strategy: str,
    info: NodeInfo,
    text: str,
    depth: int,
    tokens: int,
    relevance: float,
    *,
    revision: int | None = None,
    **metadata: Any,
) -> ContextFragment:
    return ContextFragment(
        uko_node=info.iri,
        content=text,
        detail_depth=depth,
        token_count=tokens,
        relevance_score=min(1.0, max(0.0, relevance)),
        provenance=FragmentProvenance(
            resource=info.resource,
            path=info.path,
            line_range=info.line_range,
            revision=revision,
            uko_node=info.iri,
            strategy=strategy,
        ),
        metadata={
            **({"uko_type": info.type} if info.type else {}),
            **({"column": info.column} if info.column else {}),
            **metadata,
        },
    )


def revision_of(backends: BackendSet) -> int | None:
    """The revision the backends read at (provenance)."""
    rev = getattr(backends, "revision", None)
    return rev if isinstance(rev, int) else None


def pack_nodes(
    strategy: str,
    backends: BackendSet,
    graph: GraphBackend,
    infos: dict[str, NodeInfo],
    ranked: Sequence[tuple[str, float, int]],
    budget: Budget,
    **metadata_by_node: dict[str, Any],
) -> list[ContextFragment]:
    """Render ranked (node, relevance, depth) items greedily into the budget, lowering
    depth when an item does not fit and skipping it when nothing fits."""
    out: list[ContextFragment] = []
    revision = revision_of(backends)
    misses = 0
    cap = fragment_cap(budget.total)
    for node, relevance, depth in ranked:
        # Below the spec's min-fragment-tokens, or after four misses in a row, the budget is spent.
        if budget.left < MIN_FRAGMENT_TOKENS or misses >= 4 or len(out) >= cap:
            break
        info = infos.get(node)
        if info is None:
            continue
        rendered = render_fitting(graph, info, depth, budget)
        if rendered is None:
            misses += 1
            continue
        misses = 0
        text, used, tokens = rendered
        budget.take(tokens)
        extra = {k: v[node] for k, v in metadata_by_node.items() if node in v}
        out.append(fragment(strategy, info, text, used, tokens, relevance, revision=revision, **extra))
    return out


def text_fragment(
    strategy: str, node: str, text: str, budget: Budget, relevance: float, *, depth: int = 0, **metadata: Any
) -> ContextFragment | None:
    """A fragment of generated text (history, decisions), truncated on a token boundary
    to fit; None when not even a few tokens are left."""
    tokens = budget.count(text)
    if tokens > budget.left:
        text = budget.counter.truncate(text, budget.left)
        tokens = budget.count(text)
    if tokens <= 0 or not budget.take(tokens):
        return None
    info = NodeInfo(node)
    return fragment(strategy, info, text, depth, tokens, relevance, **metadata)


@dataclass
class Hit:
    """A search result to pack: a node (rendered through the graph when there is one) or
    the backend's own text of it."""

    uko_node: str | None
    resource: str
    path: str | None
    line_range: tuple[int, int] | None
    content: str
    relevance: float


def pack_hits(
    strategy: str,
    request: ContextRequest,
    backends: BackendSet,
    scope: frozenset[str] | None,
    hits: Sequence[Hit],
    budget: Budget,
) -> list[ContextFragment]:
    """Search hits -> fragments at the request's depth, best first, within the budget.

    With a graph backend each hit's node is rendered at the depth the request names for
    its type (lower if it does not fit); without one, the backend's text is used as is,
    cut on a token boundary if needed. ``request.uko_types`` filters by type."""
    graph = backends.graph
    nodes = [h.uko_node for h in hits if h.uko_node]
    infos = node_infos(graph, scope, nodes) if graph is not None and nodes else {}
    wanted = {expand(t) for t in request.uko_types}
    out: list[ContextFragment] = []
    seen: set[str] = set()
    revision = revision_of(backends)
    cap = fragment_cap(budget.total)
    for hit in hits:
        if budget.left < MIN_FRAGMENT_TOKENS or len(out) >= cap:
            break
        key = hit.uko_node or f"{hit.resource}:{hit.path}:{hit.line_range}"
        if key in seen:
            continue
        seen.add(key)
        info = infos.get(hit.uko_node or "")
        if wanted and (info is None or not wanted & info.types):
            continue
        if graph is not None and info is not None:
            try:
                depth = base_depth(info, request.depth)
            except UsageError:  # a named level this kind of node lacks: its deepest level
                depth = deepest_level(info.type or "") or 0
            rendered = render_fitting(graph, info, depth, budget)
            if rendered is not None:
                text, used, tokens = rendered
                budget.take(tokens)
                out.append(fragment(strategy, info, text, used, tokens, hit.relevance, revision=revision))
                continue
        text = hit.content
        tokens = budget.count(text)
        if tokens > budget.left:
            text = budget.counter.truncate(text, budget.left)
            tokens = budget.count(text)
        if not tokens or not budget.take(tokens):
            continue
        node_info = info or NodeInfo(hit.uko_node or key, path=hit.path)
        depth_label = request.depth if isinstance(request.depth, int) else 0  # the backend's own text
        frag = fragment(strategy, node_info, text, depth_label, tokens, hit.relevance, revision=revision, verbatim=True)
        frag.provenance.resource = hit.resource
        frag.provenance.line_range = hit.line_range
        out.append(frag)
    return out


class StrategyBase:
    """What every built-in strategy shares: its name, capabilities and description as
    class attributes, and notes from its last run that ``explain`` appends."""

    strategy_name: str
    strategy_capabilities: StrategyCapabilities
    description: str

    def __init__(self) -> None:
        self._notes: list[str] = []

    @property
    def name(self) -> str:
        return self.strategy_name

    @property
    def capabilities(self) -> StrategyCapabilities:
        return self.strategy_capabilities

    def explain(self) -> str:
        return " ".join([self.description, *self._notes])
