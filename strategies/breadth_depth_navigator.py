"""breadth-depth-navigator: the depth/breadth projection over the UKO graph
(core-concepts.md "Depth/Breadth Projection").

The focus (IRIs, paths, qualified or plain names) is resolved by the named query
context-resolve-focus; each hop is one context-neighbors query over the whole frontier
(uko:dependsOn both ways, uko:references, inverse uko:contains). Python ranks by distance,
edge kind and edge confidence, and packs with the depth gradient: detail falls with
distance, and an item that does not fit is rendered shallower or skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox

from cleveragents.context import intent as intents
from cleveragents.context import toolkit
from cleveragents.context.depth import gradient
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.protocols import BackendSet, GraphBackend
from cleveragents.errors import UsageError

NAME = "breadth-depth-navigator"

# How much one hop over an edge keeps of the score: what the focus uses matters most,
# then its type hierarchy, what references it, its callers and its container.
EDGE_WEIGHTS = {
    ("calls", "out"): 1.0,
    ("inheritsFrom", "out"): 0.95,
    ("dependsOn", "out"): 0.9,
    ("ref", "ref"): 0.8,
    ("imports", "out"): 0.6,
    ("calls", "in"): 0.75,
    ("inheritsFrom", "in"): 0.6,
    ("dependsOn", "in"): 0.65,
    ("imports", "in"): 0.4,
    ("contains", "parent"): 0.7,
}
HOP_DECAY = 0.8
MAX_FRONTIER = 250  # per hop: hub nodes (a base class of Django) have thousands of users


@dataclass
class Reached:
    distance: int
    score: float
    edge: str  # the edge it was first reached over ("focus" for a focus node)
    via: str | None = None


def edge_weight(edge_iri: str, direction: str) -> float:
    local = edge_iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    if direction == "ref":
        return EDGE_WEIGHTS[("ref", "ref")]
    return EDGE_WEIGHTS.get((local, direction), EDGE_WEIGHTS.get(("dependsOn", direction), 0.5))


def best_edges(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, str, float]]:
    """One (node, neighbor, edge, direction, confidence) per hop: a predicate a reifier
    vouches for (uko-code:calls at 0.8) wins over the bare inferred uko:dependsOn; an
    unreified edge (an asserted containment, a closure-only edge) counts as certain."""
    hops: dict[tuple[str, str, str], tuple[str, float, bool]] = {}
    for row in rows:
        key = (row["node"], row["neighbor"], row["direction"])
        reified = row.get("confidence") is not None
        edge = str(row["edge"])
        confidence = float(row["confidence"]) if reified else 1.0
        weight = edge_weight(edge, row["direction"]) * confidence
        current = hops.get(key)
        if (
            current is None
            or (reified and not current[2])
            or (reified == current[2] and weight > edge_weight(current[0], key[2]) * current[1])
        ):
            hops[key] = (edge, confidence, reified)
    return [(n, nb, e, d, c) for (n, nb, d), (e, c, _) in sorted(hops.items())]


def traverse(
    graph: GraphBackend, scope: frozenset[str] | None, seeds: dict[str, float], breadth: int
) -> dict[str, Reached]:
    """Best-first over ``breadth`` hops: each node keeps its shortest distance and, at
    that distance, its best score (product of edge weights, confidences and decay)."""
    reached = {node: Reached(0, score, "focus") for node, score in seeds.items()}
    frontier = sorted(seeds)
    for distance in range(1, breadth + 1):
        if not frontier:
            break
        rows = toolkit.run(graph, "context-neighbors", scope, {"node": [ox.NamedNode(n) for n in frontier]})
        found: dict[str, Reached] = {}
        for node, neighbor, edge, direction, confidence in best_edges(rows):
            if neighbor in reached or not toolkit.in_scope(neighbor, scope):
                continue
            score = reached[node].score * edge_weight(edge, direction) * confidence * HOP_DECAY
            best = found.get(neighbor)
            if best is None or score > best.score:
                local = edge.rsplit("#", 1)[-1]
                found[neighbor] = Reached(distance, score, f"{local}:{direction}", node)
        ranked = sorted(found, key=lambda n: (-found[n].score, n))[:MAX_FRONTIER]
        reached.update((n, found[n]) for n in ranked)
        frontier = ranked
    return reached


def focus_keys(request: ContextRequest) -> list[str]:
    """The focus the request gives (focus, entities); empty when only its query may name one."""
    return list(dict.fromkeys([*request.focus, *request.entities]))


class BreadthDepthNavigator(toolkit.StrategyBase):
    """Graph traversal from the focus with the depth gradient."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(
        uses_graph=True,
        supports_depth_breadth=True,
        uko_levels=["0", "1", "2", "3"],
        quality_score=0.85,
    )
    description = (
        "Resolves the focus in the graph, walks uko:dependsOn (both ways), uko:references and "
        "inverse uko:contains to `breadth` hops, ranks by distance, edge kind and confidence, "
        "and renders with detail falling by distance."
    )

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.graph is None:
            return 0.0
        if request.focus:
            return 0.95
        if request.entities:
            return 0.85
        # Only a query: names in it may still resolve, but that is a guess.
        return 0.4 if request.query and intents.analyze(request).keys() else 0.0

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        if (readable := toolkit.graph_and_scope(request, backends, budget, self._notes)) is None:
            return []
        graph, scope = readable
        given = focus_keys(request)
        seeds: dict[str, float] = {}
        if given:
            resolved = toolkit.resolve_focus(graph, scope, given)
            for nodes in resolved.values():
                # A key naming several nodes (a short name) shares its weight among them.
                for node in nodes:
                    seeds[node] = max(seeds.get(node, 0.0), 1.0 / len(nodes) ** 0.5)
            unmatched = [k for k, nodes in resolved.items() if not nodes]
            if unmatched:
                self._notes.append(f"focus matched nothing: {', '.join(unmatched)}")
        else:  # names guessed from the query count as surely as they name something
            seeds = toolkit.named_nodes(graph, scope, request, intents.analyze(request))
        if not seeds:
            self._notes.append("no focus node found; nothing to traverse")
            return []
        reached = traverse(graph, scope, seeds, request.breadth)
        infos = toolkit.node_infos(graph, scope, reached)
        ranked: list[tuple[str, float, int]] = []
        for node, hit in sorted(reached.items(), key=lambda kv: (kv[1].distance, -kv[1].score, kv[0])):
            info = infos.get(node)
            if info is None:
                continue
            try:
                depth = toolkit.base_depth(info, request.depth)
            except UsageError:
                if hit.distance == 0:
                    raise  # an unknown named depth for the focus itself is the caller's error
                depth = toolkit.deepest_level(info.type or "") or 0  # a name another kind of node lacks
            if request.depth_gradient:
                # Breadth 1 keeps half the detail one hop out instead of none (the spec shows breadth 2).
                depth = gradient(depth, hit.distance, max(request.breadth, 2))
            ranked.append((node, hit.score, depth))
        # Distance counts from a focus the request gave; from names guessed in its text it is
        # no measure of closeness to what the request is about, so the scorer gets none.
        distance = {n: r.distance for n, r in reached.items()} if given else {}
        fragments = toolkit.pack_nodes(
            NAME,
            backends,
            graph,
            infos,
            ranked,
            toolkit.Budget(budget, backends.encoding),
            distance=distance,
            edge={n: r.edge for n, r in reached.items()},
        )
        self._notes.append(
            f"{len(seeds)} focus node(s), {len(reached)} reached within {request.breadth} hop(s), "
            f"{len(fragments)} rendered in {sum(f.token_count for f in fragments)}/{budget} tokens"
        )
        return fragments


STRATEGIES = [BreadthDepthNavigator]
