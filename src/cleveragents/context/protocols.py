"""The ACMS extension points as protocols: context strategies and the backends of the
Backend Abstraction Layer (architecture.md "Backend Abstraction Layer", core-concepts.md
"Context Strategy Protocol"). Built-in and user implementations satisfy the same ones."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from cleveragents.context.model import (
    ContextFragment,
    ContextRequest,
    PlanContext,
    StrategyCapabilities,
    TextResult,
    VectorResult,
)


@runtime_checkable
class TextBackend(Protocol):
    """Lexical search (BM25) over code and documents, one entry per UKO node."""

    def search(self, query: str, *, resource_filter: set[str], limit: int = 20) -> list[TextResult]: ...


@runtime_checkable
class VectorBackend(Protocol):
    """Embedding similarity over UKO nodes."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def search(
        self, embedding: Sequence[float], *, resource_filter: set[str], limit: int = 20, threshold: float = 0.3
    ) -> list[VectorResult]: ...


@runtime_checkable
class GraphBackend(Protocol):
    """The store, queried with SPARQL at the request's revision."""

    def query_sparql(self, sparql: str, *, resource_filter: AbstractSet[str] = frozenset()) -> list[dict[str, Any]]:
        """SELECT rows as dicts of Python values (ASK: ``[{"result": bool}]``), limited to the
        request's scope and, when given, to ``resource_filter`` (resource ULIDs)."""
        ...

    def render(self, uko_node: str, depth: int | str) -> tuple[str, int] | None:
        """The node rendered at a depth (named levels resolve through its DetailLevelMap),
        with the integer depth used; None if the node has no stored content."""
        ...


@dataclass
class BackendSet:
    """The backends a request may use, each already scoped to its resources. A backend
    that is not installed or not built is None: strategies that need it answer 0 from
    ``can_handle``."""

    text: TextBackend | None = None
    vector: VectorBackend | None = None
    graph: GraphBackend | None = None
    resources: frozenset[str] = frozenset()  # the scope, as resource ULIDs
    revision: int | None = None  # the store revision every backend reads
    notes: list[str] = field(default_factory=list)  # what was rebuilt, updated or left out, and why
    encoding: str | None = None  # the encoding the pipeline counts tokens in (None: the default)

    def available(self) -> set[str]:
        return {name for name in ("text", "vector", "graph") if getattr(self, name) is not None}


@runtime_checkable
class ContextStrategy(Protocol):
    """A pluggable context assembly strategy."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> StrategyCapabilities: ...

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        """0.0-1.0 confidence that this strategy can usefully contribute."""
        ...

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        """Execute the strategy. The fragments' token counts must sum to at most ``budget``."""
        ...

    def explain(self) -> str: ...
