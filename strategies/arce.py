"""arce (Analyze, Retrieve, Contextualize, Execute): text, vector and graph combined.

- Analyze: intent analysis of the request (``cleveragents.context.intent``): the paths, symbols, words and UKO
  types it names, confirmed by a lookup in the graph, and the actor pattern its purpose asks
  for (architecture.md "Strategy: arce": strategy, execution, estimation).
- Retrieve: BM25 hits, embedding neighbors, and a graph traversal from the named nodes
  (or, when nothing is named, from the best search hits) over the navigator's edges.
- Contextualize: a weighted sum of the sources' normalized scores, boosted by the requested
  types and the actor pattern's preferred kinds of node (and, for estimation, churn).
- Execute: render best first, detail falling with fused rank, within the budget.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from cleveragents.context import intent as intents
from cleveragents.context import toolkit
from cleveragents.context.depth import gradient
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.protocols import BackendSet, GraphBackend
from cleveragents.errors import UsageError
from cleveragents.strategies.breadth_depth_navigator import traverse
from cleveragents.strategies.temporal_archaeology import change_counts
from cleveragents.vocabulary import uko

NAME = "arce"


@dataclass(frozen=True)
class ActorPattern:
    """How an actor type shapes retrieval (architecture.md "Actor-type-specific graph
    traversal patterns")."""

    breadth_delta: int  # broader (+) or narrower (-) traversal
    depth_scale: float  # shallower (< 1) or as requested (1)
    preferred: frozenset[str]  # UKO types whose nodes are boosted
    temporal: bool = False  # boost by change frequency


PATTERNS = {
    "strategy": ActorPattern(1, 0.5, frozenset({uko.Container, uko.Boundary})),
    "execution": ActorPattern(-1, 1.0, frozenset({uko.Atom})),
    "estimation": ActorPattern(0, 0.4, frozenset(), temporal=True),
    "": ActorPattern(0, 1.0, frozenset()),
}
# Weights of the sources' 0..1 scores. text and vector: BM25 over the top score, cosine
# similarity min-max scaled over the hits (0.6 / 0.4 was best on the localization benchmark);
# named: what the request names, by how surely it names it (names found in the query's text
# at INFERRED_NAME_WEIGHT: the names in a paragraph of prose are mostly context, not its
# subject); graph: the traversal from a given focus, or at EXPANSION_WEIGHT when it only
# expands inferred names or the best hits. Both were tuned on the localization benchmark.
WEIGHTS = {"text": 0.6, "vector": 0.4, "named": 1.0, "graph": 1.0}
INFERRED_NAME_WEIGHT = 0.25
EXPANSION_WEIGHT = 0.2


def min_max(scores: dict[str, float]) -> dict[str, float]:
    """Scores scaled to 0..1 over their own range (one score alone: 1.0)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {n: (s - low) / span if span > 0 else 1.0 for n, s in scores.items()}


def top_of(scores: dict[str, float], n: int) -> list[str]:
    return sorted(scores, key=lambda k: (-scores[k], k))[:n]


class Arce(toolkit.StrategyBase):
    """Multi-modal retrieval with intent analysis and rank fusion."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(
        uses_text=True,
        uses_vector=True,
        uses_graph=True,
        uses_temporal=True,
        supports_depth_breadth=True,
        uko_levels=["0", "1", "2", "3"],
        quality_score=0.95,
    )
    description = "Intent analysis, then BM25, embeddings and graph traversal fused by reciprocal rank."

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        # The spec's selector tries arce first and only with every backend present.
        if backends.graph is None or backends.text is None or backends.vector is None:
            return 0.0
        if request.query:
            return 0.9
        return 0.6 if (request.focus or request.entities) else 0.0

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        if (readable := toolkit.graph_and_scope(request, backends, budget, self._notes)) is None:
            return []
        graph, scope = readable
        # Analyze
        intent = intents.analyze(request)
        pattern = PATTERNS[intent.actor]
        breadth = max(0, min(10, request.breadth + pattern.breadth_delta))
        named = toolkit.named_nodes(graph, scope, request, intent, inferred_weight=INFERRED_NAME_WEIGHT)
        # Retrieve: each source scores nodes in 0..1
        found: dict[str, dict[str, float]] = {}
        limit = toolkit.fragment_cap(budget)
        query = toolkit.search_text(request)
        if query and backends.text is not None:
            hits = backends.text.search(query, resource_filter=toolkit.filter_of(scope), limit=limit)
            top = max((h.score for h in hits), default=0.0) or 1.0
            found["text"] = {
                h.uko_node: h.score / top for h in hits if h.uko_node and toolkit.in_scope(h.uko_node, scope)
            }
        if query and backends.vector is not None:
            [embedding] = backends.vector.embed([query])
            near = backends.vector.search(
                embedding, resource_filter=toolkit.filter_of(scope), limit=limit, threshold=0.0
            )
            found["vector"] = min_max({h.uko_node: h.similarity for h in near if toolkit.in_scope(h.uko_node, scope)})
        given = bool(request.focus or request.entities)
        best_hits = {n for source in ("text", "vector") for n in top_of(found.get(source, {}), 2)}
        seeds = dict(named) or dict.fromkeys(best_hits, 0.6)  # with nothing named, expand the best hits
        reached = traverse(graph, scope, seeds, breadth) if seeds else {}
        # Nodes the search already scored gain nothing from being their own seeds.
        found["graph"] = {n: r.score for n, r in reached.items() if given or named or r.distance > 0}
        found["named"] = named
        # Contextualize: a weighted sum of the sources' scores (CombSUM); a sum of normalized
        # scores kept BM25's lead on docstring-like queries where reciprocal-rank fusion lost it.
        fused: dict[str, float] = defaultdict(float)
        for source, scored in found.items():
            weight = WEIGHTS[source] if source != "graph" or given else EXPANSION_WEIGHT
            for node, score in scored.items():
                fused[node] += weight * score
        infos = toolkit.node_infos(graph, scope, fused)
        boosts = self._boosts(graph, scope, infos, intent, pattern, backends)
        scores = {n: s * boosts.get(n, 1.0) for n, s in fused.items() if n in infos and s > 0}
        order = sorted(scores, key=lambda n: (-scores[n], n))
        # Execute
        top = scores[order[0]] if order else 1.0
        ranked_items: list[tuple[str, float, int]] = []
        for rank, node in enumerate(order):
            info = infos[node]
            try:
                base = toolkit.base_depth(info, request.depth)
            except UsageError:
                if node in named:
                    raise  # an unknown level for what the request names is the caller's error
                base = toolkit.deepest_level(info.type or "") or 0
            base = int(base * pattern.depth_scale) if node not in named else base
            # Detail falls with fused rank: the best few in full, the next at half, the rest as names.
            tier = 0 if node in named or rank < 3 else (1 if rank < 12 else 2)
            depth = gradient(base, tier, 2) if request.depth_gradient else base
            ranked_items.append((node, scores[node] / top, depth))
        fragments = toolkit.pack_nodes(
            NAME,
            backends,
            graph,
            infos,
            ranked_items,
            toolkit.Budget(budget, backends.encoding),
            sources={n: sorted(s for s, scored in found.items() if n in scored) for n in scores},
        )
        self._notes.append(
            f"intent: {len(named)} named node(s), types {len(intent.uko_types)}, actor {intent.actor or 'any'}; "
            + ", ".join(f"{s} {len(r)}" for s, r in found.items())
            + f"; fused {len(scores)}, packed {len(fragments)}"
        )
        return fragments

    @staticmethod
    def _boosts(
        graph: GraphBackend,
        scope: frozenset[str] | None,
        infos: dict[str, toolkit.NodeInfo],
        intent: intents.Intent,
        pattern: ActorPattern,
        backends: BackendSet,
    ) -> dict[str, float]:
        """Multipliers: nodes of the types the request names, of the kinds the actor
        pattern prefers, and (estimation) the files that changed most."""
        boosts = {n: 1.0 for n in infos}
        wanted = set(intent.uko_types)
        for node, info in infos.items():
            if wanted and wanted & info.types:
                boosts[node] *= 1.5
            if pattern.preferred & info.types:
                boosts[node] *= 1.3
        if pattern.temporal and infos:
            to = toolkit.revision_of(backends)
            paths = sorted({i.path for i in infos.values() if i.path})[:50]
            if to is not None and paths:
                churn: dict[str, int] = defaultdict(int)
                for row in change_counts(graph, scope, paths, to):
                    churn[row["entity"]] += int(row["changes"])
                most = max(churn.values(), default=0)
                for node in infos:
                    if most > 1 and churn.get(node, 0) > 1:
                        boosts[node] *= 1.0 + churn[node] / most
        return boosts


STRATEGIES = [Arce]
