"""The ACMS core data types (core-concepts.md "Core Data Types", architecture.md "Backend
Abstraction Layer"): what a context request asks for, what strategies return, and what
an assembly delivers. Pydantic models, so the CRP skill functions get JSON Schemas and
requests from the CLI, MCP and A2A are validated the same way."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cleveragents.context import markdown


class TemporalScope(StrEnum):
    """Which states of the graph a request may see."""

    CURRENT = "current"  # the head revision
    AS_OF = "as_of"  # one earlier state (ContextRequest.as_of: revision, ISO time or git sha)
    HISTORY = "history"  # the head plus what changed (temporal strategies)


class ContextRequest(BaseModel):
    """A structured request for context, issued by an actor or skill (the CRP)."""

    model_config = ConfigDict(extra="forbid")

    # What to find
    query: str | None = None
    entities: list[str] = Field(default_factory=list)  # named entities (symbols) to focus on
    uko_types: list[str] = Field(default_factory=list)  # e.g. "uko-py:Class"; empty: any
    # Scope control
    focus: list[str] = Field(default_factory=list)  # IRIs, paths or symbols
    breadth: int = Field(default=2, ge=0, le=10)  # hops outward in the dependency graph
    # A raw integer or a named level of the target node's DetailLevelMap: the deepest any
    # node is shown at. The default lets the packer show the most relevant in full.
    depth: int | str = "FULL_SOURCE"
    depth_gradient: bool = True  # items closer to the focus get more detail
    # Temporal scope
    temporal: TemporalScope = TemporalScope.CURRENT
    as_of: str | None = None  # with TemporalScope.AS_OF
    # Budget
    max_tokens: int | None = Field(default=None, ge=0)
    # Strategy hints
    preferred_strategies: list[str] = Field(default_factory=list)
    required_backends: list[str] = Field(default_factory=list)  # "text", "vector", "graph"
    # Priority and purpose
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    purpose: str = ""
    # Scope: the resources the request may see (a project's, a plan's); empty: all indexed ones
    resources: list[str] = Field(default_factory=list)  # resource ULIDs

    @field_validator("depth")
    @classmethod
    def _depth(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 0:
            raise ValueError("depth must be a non-negative integer or a named level")
        return value


class FragmentProvenance(BaseModel):
    """Where a fragment came from: resource, path, line range, revision and UKO node."""

    resource: str  # resource ULID
    path: str | None = None  # POSIX path inside the resource
    line_range: tuple[int, int] | None = None  # 1-based, inclusive
    revision: int | None = None  # graph revision the content was read at
    uko_node: str | None = None
    strategy: str | None = None  # the strategy that produced it


class ContextFragment(BaseModel):
    """A single piece of context produced by a strategy."""

    uko_node: str
    content: str
    detail_depth: int
    token_count: int
    relevance_score: float = Field(ge=0.0, le=1.0)
    provenance: FragmentProvenance
    metadata: dict[str, Any] = Field(default_factory=dict)


class ScoredFragment(BaseModel):
    fragment: ContextFragment
    composite_score: float
    score_components: dict[str, float] = Field(default_factory=dict)  # e.g. {"relevance": 0.9, ...}


class AssembledContext(BaseModel):
    """The fused, budget-respecting context payload."""

    fragments: list[ContextFragment]
    total_tokens: int  # counted by ``encoding``, preamble included
    budget: int
    budget_used: float  # total_tokens / budget (0.0-1.0)
    strategies_used: list[str]
    context_hash: str  # 'sha256:<hex>' over the rendered payload
    preamble: str | None = None
    provenance_map: dict[str, FragmentProvenance] = Field(default_factory=dict)  # uko_node -> provenance
    encoding: str = "o200k_base"
    explanation: dict[str, Any] = Field(default_factory=dict)  # what --explain shows

    def render(self) -> str:
        """The text an LLM receives, as markdown grouped by file (``context.markdown``):
        the budget is counted on it and its hash is the assembly's."""
        return markdown.render(self.fragments, self.preamble)


class StrategyCapabilities(BaseModel):
    """Declares what a strategy is capable of."""

    uses_text: bool = False
    uses_vector: bool = False
    uses_graph: bool = False
    uses_temporal: bool = False
    uko_levels: list[str] = Field(default_factory=list)
    resource_types: list[str] = Field(default_factory=list)
    supports_depth_breadth: bool = False
    supports_plan_hierarchy: bool = False
    supports_temporal: bool = False
    quality_score: float = 0.5


class PlanContext(BaseModel):
    """What a strategy knows of the plan it assembles for (empty outside a plan)."""

    plan: str | None = None  # plan IRI
    ancestors: list[str] = Field(default_factory=list)  # parent first, root last
    project: str | None = None  # project IRI
    parent_skeleton: list[ContextFragment] = Field(default_factory=list)  # inherited at depth 0/1
    parent_context_hash: str | None = None  # the parent assembly the skeleton came from
    skeleton_ratio: float = Field(default=0.15, ge=0.0, le=1.0)


# -- Backend Abstraction Layer results --------------------------------------------------------


class TextResult(BaseModel):
    resource_ulid: str
    path: str
    line_range: tuple[int, int]
    content: str
    score: float
    uko_node: str | None = None


class VectorResult(BaseModel):
    resource_ulid: str
    uko_node: str
    content: str
    similarity: float
    metadata: dict[str, Any] = Field(default_factory=dict)
