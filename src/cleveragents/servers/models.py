"""What the servers answer: one pydantic model per tool result.

Models (rather than bare dicts) give every MCP tool an output schema that a client can
validate against, and the A2A skills return the same shapes as artifact data. RDF terms
are written in N-Triples syntax (``<iri>``, ``"text"``, ``"1"^^<...#integer>``), as the
CLI's json output writes them, so a client can tell an IRI from a string.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class CommitSummary(BaseModel):
    """A write: the revision it made and what it changed."""

    revision: int
    commit: str | None
    added: int
    removed: int
    changed: bool
    audit_event: str | None = Field(default=None, description="IRI of the ca:AuditEvent recording the write")


class QueryResult(BaseModel):
    form: Literal["select", "ask", "graph", "update"]
    revision: int
    variables: list[str] = Field(default_factory=list)
    rows: list[dict[str, str | None]] = Field(
        default_factory=list, description="SELECT rows, terms in N-Triples syntax"
    )
    boolean: bool | None = None
    triples: list[list[str]] = Field(default_factory=list, description="CONSTRUCT/DESCRIBE triples (s, p, o)")
    truncated: bool = Field(default=False, description="True when rows or triples were cut at the row limit")
    commit: CommitSummary | None = None


class Symbol(BaseModel):
    iri: str
    name: str | None = None
    qualified_name: str | None = None
    kind: str | None = Field(default=None, description="most specific class, e.g. uko-py:Method")
    path: str | None = None
    range: str | None = Field(default=None, description="line:col-line:col")


class SymbolMatches(BaseModel):
    revision: int
    matches: list[Symbol]


class Edge(BaseModel):
    symbol: Symbol
    relation: str = Field(description="compact predicate, e.g. uko-code:calls")
    confidence: float | None = None
    resolved_by: str | None = None


class Related(BaseModel):
    subject: Symbol
    revision: int
    edges: list[Edge]


class Rendering(BaseModel):
    iri: str
    type: str
    level: str
    depth: int
    path: str
    range: str | None
    revision: int
    text: str


class HistoryEntry(BaseModel):
    predicate: str
    object: str
    from_revision: int
    until_revision: int | None
    from_time: str | None = None
    until_time: str | None = None
    inferred: bool = False


class History(BaseModel):
    iri: str
    entries: list[HistoryEntry]


class BlameEntry(BaseModel):
    predicate: str
    object: str
    revision: int
    time: str | None
    agent: str | None
    message: str | None
    external_id: str | None = Field(default=None, description="the git sha of an imported commit")


class Blame(BaseModel):
    iri: str
    lines: list[BlameEntry]


class ChangedEntity(BaseModel):
    entity: str
    change: str = Field(description="added, removed, changed, formatting (text but not tokens) or moved")
    kind: str = Field(description="definitions, docstrings, imports or attributes")
    name: str | None
    path: str | None
    from_range: str | None = None
    to_range: str | None = None


class Changes(BaseModel):
    from_revision: int
    to_revision: int
    triples_added: int
    triples_removed: int
    entities: list[ChangedEntity]


class Provenance(BaseModel):
    resource: str
    path: str | None = None
    line_range: tuple[int, int] | None = None
    revision: int | None = None
    strategy: str | None = None


class Fragment(BaseModel):
    uko_node: str
    content: str
    detail_depth: int
    token_count: int
    relevance_score: float
    provenance: Provenance


class ContextResult(BaseModel):
    context_hash: str
    budget: int
    total_tokens: int
    strategies_used: list[str]
    fragments: list[Fragment]
    markdown: str = Field(description="the assembled context as an LLM reads it")
    recorded: bool = Field(description="whether the assembly was committed as a ca:ContextAssembly")


class IndexedResource(BaseModel):
    resource: str
    revision: int | None
    files_seen: int
    analyzed: int
    unchanged: int
    deleted: int
    entities_added: int
    entities_changed: int
    entities_removed: int
    errors: int
    seconds: float


class IndexResult(BaseModel):
    resources: list[IndexedResource]
    audit_event: str | None = None


class PlanResult(BaseModel):
    """A plan as ``agents plan status --format json`` shows it, and the verbs it allows now."""

    plan: dict[str, Any]
    allowed_verbs: list[str]
    audit_event: str | None = None


class PlanArtifacts(BaseModel):
    """What a plan has produced: an A2A task's artifacts, ``_cleveragents/plan/artifacts``."""

    plan: dict[str, Any]
    changeset: list[dict[str, Any]] = Field(
        description="per sandbox: resource, kind, branch, fork, changed files (status, path), checkpoints"
    )
    diff: dict[str, str] = Field(description="resource name -> unified diff of its sandbox against the fork")
    report: str = Field(description="markdown: the plan, its outcome, its decisions and the files it changed")


class PlanTree(BaseModel):
    plan: dict[str, Any]
    decisions: list[dict[str, Any]] = Field(description="the plan's decisions and its subplans', in sequence")
    plans: list[dict[str, Any]] = Field(description="the plan and its descendant plans")


class DecisionExplanation(BaseModel):
    decision: dict[str, Any]
    context: list[dict[str, Any]] = Field(description="the UKO nodes of the decision's context snapshot")
