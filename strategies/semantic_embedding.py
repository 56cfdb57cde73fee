"""semantic-embedding: the query embedded with all-MiniLM-L6-v2, the nearest nodes from
the vector backend, rendered at the requested depth. Finds related code without shared
words."""

from __future__ import annotations

from cleveragents.context import toolkit
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.protocols import BackendSet

NAME = "semantic-embedding"
THRESHOLD = 0.2  # MiniLM cosine: below this, neighbors are noise for code queries


class SemanticEmbedding(toolkit.StrategyBase):
    """Vector similarity -> fragments."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(uses_vector=True, uko_levels=["0"], quality_score=0.6)
    description = "Nearest nodes to the query's embedding (all-MiniLM-L6-v2, FAISS)."

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.vector is None or not toolkit.search_text(request):
            return 0.0
        return 0.7 if request.query else 0.3  # prose queries are where embeddings help most

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        vector, query = backends.vector, toolkit.search_text(request)
        scope = toolkit.scope_of(request, backends)
        if vector is None or not query or budget <= 0 or (scope is not None and not scope):
            self._notes.append("nothing to search for, no vector backend, no budget or an empty scope")
            return []
        [embedding] = vector.embed([query])
        results = vector.search(
            embedding, resource_filter=toolkit.filter_of(scope), limit=toolkit.fragment_cap(budget), threshold=THRESHOLD
        )
        hits = [
            toolkit.Hit(r.uko_node, r.resource_ulid, None, None, r.content, max(0.0, min(1.0, r.similarity)))
            for r in results
            if toolkit.in_scope(r.uko_node, scope)
        ]
        fragments = toolkit.pack_hits(NAME, request, backends, scope, hits, toolkit.Budget(budget, backends.encoding))
        self._notes.append(f"{len(results)} neighbor(s) with similarity >= {THRESHOLD}, {len(fragments)} packed")
        return fragments


STRATEGIES = [SemanticEmbedding]
