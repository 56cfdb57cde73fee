"""simple-keyword: BM25 over code and documents (the text backend), hits rendered at the
requested depth. The universal fallback (architecture.md "Fallback Degradation Path")."""

from __future__ import annotations

from cleveragents.context import toolkit
from cleveragents.context.model import ContextFragment, ContextRequest, PlanContext, StrategyCapabilities
from cleveragents.context.protocols import BackendSet

NAME = "simple-keyword"


class SimpleKeyword(toolkit.StrategyBase):
    """BM25 hits -> fragments."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(uses_text=True, uko_levels=["0"], quality_score=0.3)
    description = "BM25 search over code and documents, best hits rendered at the requested depth."

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.text is None or not toolkit.search_text(request):
            return 0.0
        return 0.5 if request.query else 0.3  # names alone are better served by the graph

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        text, query = backends.text, toolkit.search_text(request)
        scope = toolkit.scope_of(request, backends)
        if text is None or not query or budget <= 0 or (scope is not None and not scope):
            self._notes.append("nothing to search for, no text backend, no budget or an empty scope")
            return []
        results = text.search(query, resource_filter=toolkit.filter_of(scope), limit=toolkit.fragment_cap(budget))
        top = max((r.score for r in results), default=0.0) or 1.0
        hits = [
            toolkit.Hit(r.uko_node, r.resource_ulid, r.path, r.line_range, r.content, r.score / top)
            for r in results
            if toolkit.in_scope(r.uko_node or toolkit.SOURCE_BASE + r.resource_ulid, scope)
        ]
        fragments = toolkit.pack_hits(NAME, request, backends, scope, hits, toolkit.Budget(budget, backends.encoding))
        self._notes.append(f"{len(results)} BM25 hit(s) for {query[:60]!r}, {len(fragments)} packed")
        return fragments


STRATEGIES = [SimpleKeyword]
