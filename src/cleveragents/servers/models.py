"""What the servers answer: one pydantic model per tool result.

Models (rather than bare dicts) give every MCP tool an output schema that a client can
validate against, and the A2A skills return the same shapes as artifact data. RDF terms
are written in N-Triples syntax (``<iri>``, ``"text"``, ``"1"^^<...#integer>``), as the
CLI's json output writes them, so a client can tell an IRI from a string.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def _nullable_as_type_list(schema: dict[str, Any]) -> None:
    """``{"anyOf": [{"type": "string"}, {"type": "null"}]}`` -> ``{"type": ["string", "null"]}``:
    the same constraint, which a client's jsonschema validator checks without trying two
    branches per value (on a 176-edge ``callers`` result, validation took 3x less time)."""
    for prop in schema.get("properties", {}).values():
        options = prop.get("anyOf")
        if (
            isinstance(options, list)
            and {"type": "null"} in options
            and all(set(o) == {"type"} and isinstance(o["type"], str) for o in options)
        ):
            del prop["anyOf"]
            prop["type"] = [o["type"] for o in options]


class ServerModel(BaseModel):
    """The base of every result model: plain nullable types in the published schema."""

    model_config = ConfigDict(json_schema_extra=_nullable_as_type_list)


class CommitSummary(ServerModel):
    """A write: the revision it made and what it changed."""

    revision: int
    commit: str | None
    added: int
    removed: int
    changed: bool
    audit_event: str | None = Field(default=None, description="IRI of the ca:AuditEvent recording the write")


class QueryResult(ServerModel):
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


class Symbol(ServerModel):
    iri: str
    name: str | None = None
    qualified_name: str | None = None
    kind: str | None = Field(default=None, description="most specific class, e.g. uko-py:Method")
    path: str | None = None
    range: str | None = Field(default=None, description="line:col-line:col")


class SymbolMatches(ServerModel):
    revision: int
    matches: list[Symbol]


class Edge(ServerModel):
    symbol: Symbol
    relation: str = Field(description="compact predicate, e.g. uko-code:calls")
    confidence: float | None = None
    resolved_by: str | None = None


class Related(ServerModel):
    subject: Symbol
    revision: int
    edges: list[Edge]


class Rendering(ServerModel):
    iri: str
    type: str
    level: str
    depth: int
    path: str
    range: str | None
    revision: int
    text: str


class HistoryEntry(ServerModel):
    predicate: str
    object: str
    from_revision: int
    until_revision: int | None
    from_time: str | None = None
    until_time: str | None = None
    inferred: bool = False


class History(ServerModel):
    iri: str
    entries: list[HistoryEntry]


class BlameEntry(ServerModel):
    predicate: str
    object: str
    revision: int
    time: str | None
    agent: str | None
    message: str | None
    external_id: str | None = Field(default=None, description="the git sha of an imported commit")


class Blame(ServerModel):
    iri: str
    lines: list[BlameEntry]


class ChangedEntity(ServerModel):
    entity: str
    change: str = Field(description="added, removed, changed, formatting (text but not tokens) or moved")
    kind: str = Field(description="definitions, docstrings, imports or attributes")
    name: str | None
    path: str | None
    from_range: str | None = None
    to_range: str | None = None


class Changes(ServerModel):
    from_revision: int
    to_revision: int
    triples_added: int
    triples_removed: int
    entities: list[ChangedEntity]


class Provenance(ServerModel):
    resource: str
    path: str | None = None
    line_range: tuple[int, int] | None = None
    revision: int | None = None
    strategy: str | None = None


class Fragment(ServerModel):
    uko_node: str
    content: str
    detail_depth: int
    token_count: int
    relevance_score: float
    provenance: Provenance


class ContextResult(ServerModel):
    context_hash: str
    budget: int
    total_tokens: int
    strategies_used: list[str]
    fragments: list[Fragment]
    markdown: str = Field(description="the assembled context as an LLM reads it")
    recorded: bool = Field(description="whether the assembly was committed as a ca:ContextAssembly")


class IndexedResource(ServerModel):
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


class IndexResult(ServerModel):
    resources: list[IndexedResource]
    audit_event: str | None = None


class PlanResult(ServerModel):
    """A plan as ``agents plan status --format json`` shows it, and the verbs it allows now."""

    plan: dict[str, Any]
    allowed_verbs: list[str]
    audit_event: str | None = None


class PlanArtifacts(ServerModel):
    """What a plan has produced: an A2A task's artifacts, ``_cleveragents/plan/artifacts``."""

    plan: dict[str, Any]
    changeset: list[dict[str, Any]] = Field(
        description="per sandbox: resource, kind, branch, fork, changed files (status, path), checkpoints"
    )
    diff: dict[str, str] = Field(description="resource name -> unified diff of its sandbox against the fork")
    report: str = Field(description="markdown: the plan, its outcome, its decisions and the files it changed")


class PlanTree(ServerModel):
    plan: dict[str, Any]
    decisions: list[dict[str, Any]] = Field(description="the plan's decisions and its subplans', in sequence")
    plans: list[dict[str, Any]] = Field(description="the plan and its descendant plans")


class DecisionExplanation(ServerModel):
    decision: dict[str, Any]
    context: list[dict[str, Any]] = Field(description="the UKO nodes of the decision's context snapshot")
