"""semantic-embedding: the query embedded with all-MiniLM-L6-v2, the nearest nodes from
the vector backend, rendered at the requested depth. Finds related code without shared
words."""

from __future__ import annotations

from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.protocols import BackendSet
from cleveragents.strategies import _common as common

NAME = "semantic-embedding"
THRESHOLD = 0.2  # MiniLM cosine: below this, neighbors are noise for code queries


class SemanticEmbedding(common.StrategyBase):
    """Vector similarity -> fragments."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(uses_vector=True, uko_levels=["0"], quality_score=0.6)
    description = "Nearest nodes to the query's embedding (all-MiniLM-L6-v2, FAISS)."

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.vector is None or not common.search_text(request):
            return 0.0
        return 0.7 if request.query else 0.3  # prose queries are where embeddings help most

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        vector, query = backends.vector, common.search_text(request)
        scope = common.scope_of(request, backends)
        if vector is None or not query or budget <= 0 or (scope is not None and not scope):
            self._notes.append("nothing to search for, no vector backend, no budget or an empty scope")
            return []
        [embedding] = vector.embed([query])
        results = vector.search(
            embedding, resource_filter=common.filter_of(scope), limit=common.fragment_cap(budget), threshold=THRESHOLD
        )
        hits = [
            common.Hit(r.uko_node, r.resource_ulid, None, None, r.content, max(0.0, min(1.0, r.similarity)))
            for r in results
            if common.in_scope(r.uko_node, scope)
        ]
        fragments = common.pack_hits(NAME, request, backends, scope, hits, common.Budget(budget, backends.encoding))
        self._notes.append(f"{len(results)} neighbor(s) with similarity >= {THRESHOLD}, {len(fragments)} packed")
        return fragments


STRATEGIES = [SemanticEmbedding]
