"""Context assembly as an application service (the CLI, the builtin/context skill, MCP and
A2A call it): resolve the scope (a project's resources, or all of them) and the focus
(IRIs, paths or symbols), build the scoped backends, run the pipeline, and record the
assembly in the graph so that decisions can cite it.

The pipeline, strategies and backends are imported inside the functions: they load models
and indexes, and commands that never assemble context should not pay for that.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cleveragents.config import Config
from cleveragents.context.model import AssembledContext, ContextRequest, PlanContext, TemporalScope
from cleveragents.errors import CleverAgentsError, NotFoundError, UsageError
from cleveragents.graph.commit import CommitResult
from cleveragents.graph.history import resolve_revision
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing import renderings
from cleveragents.indexing.plugins import AnalyzerSet
from cleveragents.iris import resource_iri
from cleveragents.services import context_records, entities, indexing
from cleveragents.services.context_records import RecordedAssembly

if TYPE_CHECKING:
    from cleveragents.context.protocols import GraphBackend

MAX_FOCUS_MATCHES = 25  # one focus item (a directory, a common name) expands to at most this many nodes


@dataclass
class Scope:
    """What a request may see: the project (if any), its resources' ULIDs (empty: every
    indexed resource), the revision it reads, and its focus resolved to IRIs."""

    project: str | None  # project IRI
    resources: list[str]
    revision: int
    focus: list[str]
    focus_matches: dict[str, list[str]]  # each focus item as given -> the IRIs it matched
    head: int = 0  # the store's head when the scope was resolved


@dataclass
class Assembly:
    """An assembly with what the service did around it."""

    context: AssembledContext
    request: ContextRequest
    scope: Scope
    commit: CommitResult | None  # None: not recorded, or recorded already
    recorded: bool
    seconds: float


# --- scope and focus -------------------------------------------------------------------------


def project_scope(store: GraphStore, project: str | None) -> tuple[str | None, list[str]]:
    """The project's IRI and its resources' ULIDs; (None, []) without a project.
    NotFoundError for an unknown project; UsageError for one without resources."""
    if project is None:
        return None, []
    node = entities.find(store, "Project", project, kind="project")
    ulids = sorted(
        row["u"].value for row in store.query(f"SELECT ?u WHERE {{ {node} ca:linksResource ?r . ?r ca:ulid ?u }}")
    )
    if not ulids:
        raise UsageError(
            f"project '{project}' has no linked resources: there is nothing to assemble context from",
            suggestions=[f"agents project link {project} RESOURCE"],
        )
    return node.value, ulids


def _scope_clause(resources: Sequence[str]) -> str:
    if not resources:
        return ""
    values = " ".join(f"<{resource_iri(ulid)}>" for ulid in resources)
    return f"?n uko:sourceResource ?scope . VALUES ?scope {{ {values} }}"


def resolve_focus_item(graph: GraphBackend, item: str, resources: Sequence[str]) -> list[str]:
    """The IRIs one focus item names, by the resolution the strategies use for the names
    they find: an IRI as it is, else the strongest kind of match among qualified name,
    path (a directory names its directory node), suffix and plain name; at most
    MAX_FOCUS_MATCHES of them."""
    from cleveragents.context import toolkit

    key = item.strip().strip("<>").removeprefix("./")
    key = key.rstrip("/") or key
    return sorted(toolkit.resolve_focus(graph, frozenset(resources) or None, [key])[key])[:MAX_FOCUS_MATCHES]


def close_matches(store: GraphStore, view: Any, item: str, resources: Sequence[str], n: int = 5) -> list[str]:
    """Paths and qualified names that look like ``item`` (for a focus that matched nothing)."""
    query = (
        "SELECT DISTINCT ?v WHERE { { ?n uko:sourcePath ?v } UNION { ?n uko-code:qualifiedName ?v } "
        f"{_scope_clause(resources)} }}"
    )
    names = sorted({row["v"].value for row in store.query(query, view=view)})
    # Compare like with like: 'Sesion.send' against the last two dotted parts of each name.
    sep = "/" if "/" in item else "."
    width = item.count(sep) + 1
    tails: dict[str, str] = {}
    for name in names:
        tails.setdefault(sep.join(name.split(sep)[-width:]), name)
    picked = [tails[t] for t in difflib.get_close_matches(item, list(tails), n=n, cutoff=0.7)]
    picked += difflib.get_close_matches(item, names, n=n, cutoff=0.7)
    return list(dict.fromkeys(picked))[:n]


def resolve_scope(
    ws: Workspace, request: ContextRequest, *, project: str | None = None, as_of: str | int | None = None
) -> Scope:
    """The project, resources, revision and focus IRIs of a request. A focus item that
    matches nothing is a NotFoundError listing close matches."""
    with ws.reader() as store:
        revision = resolve_revision(store, as_of if as_of is not None else request.as_of)
        project_iri, resources = project_scope(store, project)
        if project_iri and request.resources:  # a request may narrow its project's scope, never widen it
            outside = sorted(set(request.resources) - set(resources))
            if outside:
                raise UsageError(f"resources {', '.join(outside)} are not linked to project '{project}'")
        if request.resources:
            resources = sorted(set(request.resources))
        view = store.view(revision)
        from cleveragents.context.backends.graph import StoreGraphBackend

        graph = StoreGraphBackend(ws, revision)
        matches: dict[str, list[str]] = {}
        try:
            for item in request.focus:  # entities stay names: strategies match them themselves
                found = resolve_focus_item(graph, item, resources)
                if not found:
                    close = close_matches(store, view, item, resources)
                    hint = f"; close matches: {', '.join(close)}" if close else ""
                    where = f" in project '{project}'" if project else ""
                    raise NotFoundError(
                        f"focus '{item}' matches no indexed file or symbol{where} at revision {revision}{hint}",
                        suggestions=close or ["agents graph query 'SELECT ?p WHERE { ?n uko:sourcePath ?p }'"],
                        data={"focus": item, "close_matches": close},
                    )
                matches[item] = found
        finally:
            graph.close()
        head = store.head
    focus = list(dict.fromkeys(iri for found in matches.values() for iri in found))
    return Scope(project_iri, resources, revision, focus, matches, head)


# --- the request -----------------------------------------------------------------------------


def default_config(ws: Workspace) -> Config:
    return Config(ws.data_dir)


def prepare(
    ws: Workspace,
    request: ContextRequest,
    *,
    project: str | None = None,
    as_of: str | int | None = None,
    config: Config | None = None,
) -> tuple[ContextRequest, Scope, Config]:
    """Validate the request (budget, depth), resolve its scope, and return the request
    the pipeline gets: focus as IRIs, resources, budget and revision filled in."""
    from cleveragents.context.depth import validate_depth

    config = config or default_config(ws)
    budget = request.max_tokens if request.max_tokens is not None else int(config.value("context.default_budget"))
    if budget <= 0:
        raise UsageError(f"the token budget must be a positive number of tokens, got {budget}")
    depth = validate_depth(request.depth)
    ws.require()
    scope = resolve_scope(ws, request, project=project, as_of=as_of)
    head = scope.head
    temporal = request.temporal
    if scope.revision != head and temporal == TemporalScope.CURRENT:
        temporal = TemporalScope.AS_OF
    resolved = request.model_copy(
        update={
            "focus": scope.focus,
            "resources": scope.resources,
            "max_tokens": budget,
            "depth": depth,
            "as_of": str(scope.revision) if scope.revision != head else request.as_of,
            "temporal": temporal,
        }
    )
    return resolved, scope, config


def _pipeline(ws: Workspace, config: Config, request: ContextRequest, scope: Scope) -> tuple[Any, Any]:
    """The assembler (components and strategies from config) and the scoped backends."""
    from cleveragents.context.assembler import ContextAssembler
    from cleveragents.context.backends import backend_set
    from cleveragents.context.pipeline import resolve_pipeline
    from cleveragents.context.pipeline.resolver import config_scopes
    from cleveragents.context.strategy_loader import load_strategies
    from cleveragents.context.tokens import counter_for

    strategies = load_strategies(config)
    known = strategies.names()
    unknown = [name for name in request.preferred_strategies if name not in known]
    if unknown:
        close = [m for name in unknown for m in difflib.get_close_matches(name, sorted(known), n=1)]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(
            f"unknown context strategy {', '.join(repr(u) for u in unknown)}{hint}; known: {', '.join(sorted(known))}",
            suggestions=close,
        )
    # context.strategy_timeout is the executor's timeout unless [context.pipeline] sets one.
    executor = {k: t.get("strategy-executor") for k, t in config_scopes(config).items()}
    overrides: dict[str, Any] = {}
    if not any(isinstance(t, dict) and "timeout-seconds" in t for t in executor.values()):
        overrides["strategy-executor"] = {"timeout-seconds": float(config.value("context.strategy_timeout"))}
    components = resolve_pipeline(config, global_overrides=overrides)
    counter = counter_for(str(config.value("context.encoding")))
    assembler = ContextAssembler(
        components,
        strategies.strategies,
        counter,
        default_budget=int(config.value("context.default_budget")),
    )
    # The embedding model takes seconds to load: only when an offered strategy uses it.
    vector = any(s.capabilities.uses_vector for s in strategies.strategies)
    backends = backend_set(
        ws,
        scope.resources or None,
        as_of=scope.revision,
        vector=vector,
        vector_inline_limit=int(config.value("context.vector_inline_limit")),
    )
    backends.encoding = counter.encoding  # strategies budget in the tokens the pipeline counts
    return assembler, backends


def build_indexes(
    ws: Workspace,
    *,
    project: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """Build or bring up to date the text and vector indexes of the head revision, for a
    project's resources or all of them, embedding every document that lacks a vector."""
    from cleveragents.context.backends import backend_set

    with ws.reader() as store:
        _, resources = project_scope(store, project)
    return backend_set(ws, resources or None, vector=True, vector_inline_limit=None, progress=progress)


def assemble(
    ws: Workspace,
    request: ContextRequest,
    *,
    project: str | None = None,
    as_of: str | int | None = None,
    explain: bool = False,
    record: bool = True,
    plan_context: PlanContext | None = None,
    config: Config | None = None,
    agent: str = "cleveragents",
) -> AssembledContext:
    """Assemble context for ``request`` (see ``assemble_detailed``)."""
    return assemble_detailed(
        ws,
        request,
        project=project,
        as_of=as_of,
        explain=explain,
        record=record,
        plan_context=plan_context,
        config=config,
        agent=agent,
    ).context


def assemble_detailed(
    ws: Workspace,
    request: ContextRequest,
    *,
    project: str | None = None,
    as_of: str | int | None = None,
    explain: bool = False,
    record: bool = True,
    plan_context: PlanContext | None = None,
    config: Config | None = None,
    agent: str = "cleveragents",
) -> Assembly:
    """Assemble context, within the budget, from the project's resources (or all of them)
    at ``as_of`` (default: the head); with ``record``, commit it as a ca:ContextAssembly
    (the same hash twice writes nothing). ``explain`` keeps the pipeline's explanation."""
    started = time.perf_counter()
    resolved, scope, config = prepare(ws, request, project=project, as_of=as_of, config=config)
    assembler, backends = _pipeline(ws, config, resolved, scope)
    plan = plan_context or PlanContext(project=scope.project)
    if plan.project is None and scope.project:
        plan = plan.model_copy(update={"project": scope.project})
    context = assembler.assemble(resolved, backends, plan)
    if context.total_tokens > context.budget:  # the pipeline's guarantee, checked at the boundary
        raise RuntimeError(f"context assembly exceeded its budget: {context.total_tokens} > {context.budget}")
    reason = str(context.explanation.get("empty_reason", ""))
    if not context.fragments and reason.startswith("the budget"):
        raise UsageError(
            f"{reason}; give a larger --budget",
            data={"budget": context.budget, "explanation": context.explanation.get("budget", {})},
        )
    if not explain:  # why a result is empty, and warnings, are part of the answer
        kept = {k: context.explanation[k] for k in ("empty_reason", "warnings") if context.explanation.get(k)}
        context = context.model_copy(update={"explanation": kept})
    commit = None
    if record and context.fragments:
        with renderings.rendering_session(ws, _analyzers(config), as_of=str(scope.revision)) as session:
            commit = context_records.record(
                ws,
                context,
                resolved,
                revision=scope.revision,
                project=scope.project,
                resources=scope.resources,
                renderer=lambda node, depth: session.render(node, str(depth)).text,
                agent=agent,
            )
    return Assembly(context, resolved, scope, commit, record and bool(context.fragments), time.perf_counter() - started)


def _analyzers(config: Config) -> AnalyzerSet:
    return indexing.analyzer_set(str(config.value("analyzers.path")))


def simulate(
    ws: Workspace,
    request: ContextRequest,
    *,
    project: str | None = None,
    as_of: str | int | None = None,
    plan_context: PlanContext | None = None,
    config: Config | None = None,
) -> dict[str, Any]:
    """What an assembly would do, without rendering anything: the resolved request and
    scope, the strategies selected with their confidences, and their allocations."""
    resolved, scope, config = prepare(ws, request, project=project, as_of=as_of, config=config)
    assembler, backends = _pipeline(ws, config, resolved, scope)
    plan = plan_context or PlanContext(project=scope.project)
    plan_out = assembler.simulate(resolved, backends, plan)
    return {
        "request": resolved.model_dump(mode="json"),
        "scope": scope_dict(scope),
        "plan": plan_out if isinstance(plan_out, dict) else getattr(plan_out, "__dict__", plan_out),
    }


def scope_dict(scope: Scope) -> dict[str, Any]:
    return {
        "project": scope.project,
        "resources": scope.resources,
        "revision": scope.revision,
        "focus": scope.focus_matches,
    }


# --- recorded assemblies ---------------------------------------------------------------------


@dataclass
class ShownAssembly:
    """A recorded assembly re-rendered from the content stored at its revision."""

    recorded: RecordedAssembly
    context: AssembledContext
    verified: bool  # the re-rendered payload has the recorded hash
    problems: list[str]  # fragments that could not be re-rendered, and why


def show(ws: Workspace, context_hash: str, *, analyzers: AnalyzerSet | None = None) -> ShownAssembly:
    """The assembly recorded with ``context_hash`` (or a unique prefix), each fragment
    re-rendered at its depth from the content stored at its revision (or its stored text,
    for fragments rendering does not reproduce)."""
    recorded, texts = context_records.load(ws, context_hash)
    analyzers = analyzers if analyzers is not None else _analyzers(default_config(ws))
    problems: list[str] = []
    contents = list(texts)
    by_revision: dict[int, list[int]] = {}
    for index, (fragment, text) in enumerate(zip(recorded.fragments, texts, strict=True)):
        if text is None:
            revision = fragment.provenance.revision
            by_revision.setdefault(recorded.revision if revision is None else revision, []).append(index)
    for revision, indexes in sorted(by_revision.items()):
        with renderings.rendering_session(ws, analyzers, as_of=str(revision)) as session:
            for index in indexes:
                fragment = recorded.fragments[index]
                try:
                    text = session.render(fragment.uko_node, str(fragment.detail_depth)).text
                except CleverAgentsError as exc:  # an analyzer gone, a node unknown: say so, show the rest
                    problems.append(f"{fragment.uko_node}: {exc}")
                    text = f"[not re-renderable: {exc}]"
                if context_records.digest(text) != fragment.metadata.get("digest"):
                    problems.append(f"{fragment.uko_node}: the re-rendered text differs from the recorded one")
                contents[index] = text
    fragments = [f.model_copy(update={"content": c}) for f, c in zip(recorded.fragments, contents, strict=True)]
    context = AssembledContext(
        fragments=fragments,
        total_tokens=recorded.total_tokens,
        budget=recorded.budget,
        budget_used=recorded.total_tokens / recorded.budget if recorded.budget else 0.0,
        strategies_used=recorded.strategies,
        context_hash=recorded.context_hash,
        preamble=recorded.preamble,
        provenance_map={f.uko_node: f.provenance for f in fragments},
        encoding=recorded.encoding,
    )
    verified = context_records.digest(context.render()) == recorded.context_hash
    return ShownAssembly(recorded, context, verified, problems)


# --- presentation shared by the CLI and the skill ----------------------------------------------


def markdown(context: AssembledContext) -> str:
    """The context as an LLM gets it: markdown grouped by file (``context.markdown``)."""
    return context.render()
