"""The application service behind the MCP and A2A servers: the operations they expose,
implemented with the same service functions the CLI calls, and the entry points that
run the servers.

The protocol layer (``cleveragents.servers``) sits below the services; this module is
where the two meet: it implements ``servers.operations.Operations`` over a workspace.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cleveragents.config import Config
from cleveragents.errors import (
    CleverAgentsError,
    DatabaseError,
    ForbiddenError,
    Interrupted,
    NotFoundError,
    ValidationError,
)
from cleveragents.graph import named_queries
from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing import renderings
from cleveragents.indexing.plugins import AnalyzerSet
from cleveragents.iris import parse_iri
from cleveragents.plans.decisions import Decision
from cleveragents.plans.records import PlanRecord
from cleveragents.resources import data_path
from cleveragents.servers import models
from cleveragents.servers.operations import (
    EXTENSION_METHODS,
    EXTENSION_PREFIX,
    PLAN_READS,
    PLAN_VERBS,
    PLAN_WRITES,
    PlanStep,
    ProgressReport,
)
from cleveragents.servers.security import HttpGuard, ServerSettings, check_bind
from cleveragents.services import audit, graph_service, indexing, navigation, task_records
from cleveragents.services.plan_progress import PlanObserver, PlanProgress
from cleveragents.services.sparql_update import parse_update
from cleveragents.terms import compact


@dataclass
class _PendingTask:
    record: task_records.TaskRecord
    error: str | None = None  # why the group commit that held this task failed


class WorkspaceOperations:
    """``servers.operations.Operations`` over one data dir."""

    def __init__(self, ws: Workspace, config: Config | None = None, *, project: str | None = None) -> None:
        self.ws = ws
        self.config = config or Config(ws.data_dir)
        self.project = project  # limits symbol search, context and index to its resources
        self._analyzers: AnalyzerSet | None = None
        self._resources: list[str] | None = None
        self._write_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending_tasks: dict[str, _PendingTask] = {}  # saved, waiting for the next group commit

    def project_resources(self) -> list[str]:
        """The project's resource ULIDs (empty without a project: every resource)."""
        if self._resources is None:
            from cleveragents.services.context import project_scope

            with self.ws.reader() as store:
                self._resources = project_scope(store, self.project)[1]
        return self._resources

    @property
    def analyzers(self) -> AnalyzerSet:
        if self._analyzers is None:
            self._analyzers = indexing.analyzer_set(str(self.config.value("analyzers.path") or ""))
        return self._analyzers

    # --- SPARQL --------------------------------------------------------------------------

    def graph_query(
        self, sparql: str, *, as_of: str | None, limit: int, timeout: float, read_only: bool, identity: str
    ) -> models.QueryResult:
        if is_update(sparql):
            if read_only:
                raise ForbiddenError(
                    "SPARQL updates are refused: this server is read-only",
                    suggestions=["restart it with --read-write to allow writes"],
                )
            if as_of is not None:
                raise ValidationError("as_of applies to queries; an update always writes on top of the head")
            event, triples = audit.event("graph_update", identity, {"sparql": sparql})
            result = graph_service.update(
                self.ws, sparql, message="graph update (server)", agent=identity, extra=triples
            )
            summary = graph_service.commit_summary(result)
            commit = models.CommitSummary(
                revision=summary["revision"],
                commit=summary["commit"],
                added=summary["added"],
                removed=summary["removed"],
                changed=summary["changed"],
                audit_event=event.value,
            )
            return models.QueryResult(form="update", revision=result.revision, commit=commit)
        outcome = graph_service.query(self.ws, sparql, as_of=as_of, timeout=timeout)
        rows = [{k: (str(v) if v is not None else None) for k, v in row.items()} for row in outcome.rows[:limit]]
        triples = [[str(t.subject), str(t.predicate), str(t.object)] for t in outcome.triples[:limit]]
        return models.QueryResult(
            form=outcome.form,  # type: ignore[arg-type]
            revision=outcome.revision,
            variables=outcome.variables,
            rows=rows,
            boolean=outcome.boolean,
            triples=triples,
            truncated=len(outcome.rows) > limit or len(outcome.triples) > limit,
        )

    # --- navigation ----------------------------------------------------------------------

    def find_symbol(self, name: str, *, as_of: str | None) -> models.SymbolMatches:
        revision, found = navigation.find_symbol(self.ws, name, as_of=as_of, resources=self.project_resources())
        return models.SymbolMatches(
            revision=revision, matches=[models.Symbol.model_validate(s.as_dict()) for s in found]
        )

    def related(self, relation: str, iri: str, *, as_of: str | None) -> models.Related:
        functions = {
            "callers": navigation.callers,
            "callees": navigation.callees,
            "references": navigation.references,
            "implementations": navigation.implementations,
        }
        if relation not in functions:
            raise ValidationError(f"unknown relation '{relation}'; one of {', '.join(functions)}")
        found = functions[relation](self.ws, iri, as_of=as_of)
        return models.Related(
            subject=models.Symbol.model_validate(found.subject.as_dict()),
            revision=found.revision,
            edges=[
                models.Edge(
                    symbol=models.Symbol.model_validate(e.symbol.as_dict()),
                    relation=e.relation,
                    confidence=e.confidence,
                    resolved_by=e.resolved_by,
                )
                for e in found.edges
            ],
        )

    def show(self, iri: str, *, depth: str, as_of: str | None) -> models.Rendering:
        node = parse_iri(iri)
        rendering = renderings.render(self.ws, node.value, depth, self.analyzers, as_of=as_of)
        return models.Rendering.model_validate(rendering.as_dict())

    # --- history -------------------------------------------------------------------------

    def history(self, iri: str) -> models.History:
        spans, commits = graph_service.node_history(self.ws, iri)
        entries = [
            models.HistoryEntry(
                predicate=compact(s.predicate.value),
                object=str(s.object),
                from_revision=s.start,
                until_revision=s.end,
                from_time=commits[s.start].time if s.start in commits else None,
                until_time=commits[s.end].time if s.end is not None and s.end in commits else None,
                inferred=s.inferred,
            )
            for s in spans
        ]
        return models.History(iri=parse_iri(iri).value, entries=entries)

    def blame(self, iri: str) -> models.Blame:
        lines = [
            models.BlameEntry(
                predicate=compact(line.span.predicate.value),
                object=str(line.span.object),
                revision=line.span.start,
                time=line.asserted_by.time if line.asserted_by else None,
                agent=line.asserted_by.agent if line.asserted_by else None,
                message=line.asserted_by.message if line.asserted_by else None,
                external_id=line.asserted_by.external_id if line.asserted_by else None,
            )
            for line in graph_service.blame(self.ws, iri)
        ]
        return models.Blame(iri=parse_iri(iri).value, lines=lines)

    def changes_between(self, old: str, new: str, *, include: str = "definitions") -> models.Changes:
        from cleveragents.graph.history import resolve_revision
        from cleveragents.services.query_runner import evaluate

        query = named_queries.get("entities-changed")
        with self.ws.reader() as store:
            a, b = resolve_revision(store, old), resolve_revision(store, new)
            bindings = named_queries.bind(query, {"from": str(a), "to": str(b), "include": include})
            outcome = evaluate(store, query.text, None, bindings)
        commits = [c for c in graph_service.log(self.ws) if a < c.revision <= b]

        def text(row: dict, key: str) -> str | None:
            return row[key].value if row.get(key) is not None else None

        entities = [
            models.ChangedEntity(
                entity=row["entity"].value,
                change=str(text(row, "change")),
                kind=str(text(row, "kind")),
                name=text(row, "name"),
                path=text(row, "path"),
                from_range=text(row, "fromRange"),
                to_range=text(row, "toRange"),
            )
            for row in outcome.rows
        ]
        return models.Changes(
            from_revision=a,
            to_revision=b,
            triples_added=sum(c.added for c in commits),
            triples_removed=sum(c.removed for c in commits),
            entities=entities,
        )

    # --- context and indexing ------------------------------------------------------------

    def assemble_context(
        self,
        *,
        query: str | None,
        focus: list[str],
        budget: int,
        depth: str | None,
        as_of: str | None,
        record: bool,
        identity: str,
        progress: ProgressReport | None,
    ) -> models.ContextResult:
        from cleveragents.context.model import ContextRequest
        from cleveragents.services import context

        if progress:
            progress(0, 2, "assembling context")
        request = ContextRequest(
            query=query,
            focus=focus,
            depth=int(depth) if depth and depth.isdigit() else (depth or 3),
            max_tokens=budget,
        )
        done = context.assemble_detailed(
            self.ws, request, project=self.project, as_of=as_of, record=record, config=self.config, agent=identity
        )
        if progress:
            progress(2, 2, f"assembled {len(done.context.fragments)} fragments")
        ctx = done.context
        fragments = [
            models.Fragment(
                uko_node=f.uko_node,
                content=f.content,
                detail_depth=f.detail_depth,
                token_count=f.token_count,
                relevance_score=f.relevance_score,
                provenance=models.Provenance(
                    resource=f.provenance.resource,
                    path=f.provenance.path,
                    line_range=f.provenance.line_range,
                    revision=f.provenance.revision,
                    strategy=f.provenance.strategy,
                ),
            )
            for f in ctx.fragments
        ]
        return models.ContextResult(
            context_hash=ctx.context_hash,
            budget=ctx.budget,
            total_tokens=ctx.total_tokens,
            strategies_used=ctx.strategies_used,
            fragments=fragments,
            markdown=context.markdown(ctx),
            recorded=done.recorded,
        )

    def index(
        self, resources: list[str], *, full: bool, identity: str, progress: ProgressReport | None
    ) -> models.IndexResult:
        infos = indexing.resources_to_index(self.ws, resources, self.project)

        def report(phase: str, done: int, total: int) -> None:
            if progress:
                progress(done, total or None, phase)

        summaries = indexing.index(
            self.ws,
            infos,
            full=full,
            agent=identity,
            analyzers=self.analyzers,
            options=indexing.options_from(self.config),
            progress=report,
        )
        done = [
            models.IndexedResource(
                resource=s.resource,
                revision=s.revision,
                files_seen=s.files_seen,
                analyzed=s.analyzed,
                unchanged=s.unchanged,
                deleted=s.deleted,
                entities_added=s.entities_added,
                entities_changed=s.entities_changed,
                entities_removed=s.entities_removed,
                errors=len(s.errors),
                seconds=round(s.seconds, 3),
            )
            for s in summaries
        ]
        event_iri = None
        written = [d.revision for d in done if d.revision is not None]
        if written:  # the index commits are the indexer's; the audit record follows them
            event, triples = audit.event(
                "resource_indexed", identity, {"resources": [d.resource for d in done], "revisions": written}
            )
            with self.ws.writer() as session:
                session.commit(
                    CommitRequest(add=triples, message="audit: index (server)", cause="audit", agent=identity)
                )
            event_iri = event.value
        return models.IndexResult(resources=done, audit_event=event_iri)

    # --- resources -----------------------------------------------------------------------

    def ontology_modules(self) -> dict[str, str]:
        return {p.stem: p.read_text(encoding="utf-8") for p in sorted(data_path("ontology").glob("*.ttl"))}

    def named_queries(self) -> dict[str, str]:
        return {name: q.text for name, q in named_queries.catalog().items()}

    # --- plans -------------------------------------------------------------------------

    def plan_status(self, ref: str | None) -> models.PlanResult:
        from cleveragents.services import plans

        plan, verbs = plans.status(self.ws, ref)
        return models.PlanResult(plan=plan.as_dict(), allowed_verbs=list(verbs))

    def plan_tree(self, ref: str | None) -> models.PlanTree:
        from cleveragents.services import plans

        plan, decisions, subplans = plans.tree(self.ws, ref)
        ordered = sorted(decisions.values(), key=lambda d: (d.plan, d.sequence))
        return models.PlanTree(
            plan=plan.as_dict(),
            decisions=[d.as_dict() for d in ordered],
            plans=[p.as_dict() for p in subplans.values()],
        )

    def explain_decision(self, ref: str) -> models.DecisionExplanation:
        from cleveragents.services import plans

        decision, context = plans.explain(self.ws, ref)
        return models.DecisionExplanation(decision=decision.as_dict(), context=context)

    def plan_verb(
        self, verb: str, ref: str | None, *, identity: str, observer: PlanStep | None = None, **kwargs: Any
    ) -> models.PlanResult:
        """Run a plan verb as the CLI does, then record it as an audit event. When the
        observer stops the plan (``Interrupted``), the plan is cancelled with its reason."""
        from cleveragents.plans import lifecycle
        from cleveragents.services import plans

        if verb not in PLAN_VERBS:
            raise ValidationError(f"unknown plan verb '{verb}'", suggestions=list(PLAN_VERBS))
        seen: dict[str, str] = {"plan": ref or ""}

        def watch(step: PlanProgress) -> None:
            seen["plan"] = step.plan.id
            if observer is not None:
                observer(step.plan.as_dict(), step.message)

        stopped = ""
        with self._write_lock:
            plan: PlanRecord | None = None
            try:
                plan = self._run_verb(verb, ref, identity, watch, kwargs)
            except Interrupted as exc:
                stopped = exc.message
            if plan is None:  # outside the except block: its traceback holds the writer's store
                plan = plans.cancel(self.ws, seen["plan"], stopped, agent=identity)
            event = self._audit(f"plan_{verb}", identity, {"plan": plan.id, **kwargs, "stopped": stopped or None})
        return models.PlanResult(
            plan=plan.as_dict(), allowed_verbs=list(lifecycle.allowed_verbs(plan)), audit_event=event
        )

    def _run_verb(
        self, verb: str, ref: str | None, identity: str, watch: PlanObserver, kwargs: dict[str, Any]
    ) -> PlanRecord:
        from cleveragents.services import plans

        if verb == "use":
            return plans.use(
                self.ws,
                kwargs["action"],
                kwargs["projects"],
                kwargs.get("arguments") or {},
                automation_level=kwargs.get("automation_level"),
                agent=identity,
                observer=watch,
            )
        if ref is None and verb != "execute":
            raise ValidationError(f"plan {verb} needs the plan's id")
        if verb == "prompt":
            return plans.prompt(self.ws, str(ref), str(kwargs.get("guidance") or ""), agent=identity, observer=watch)[0]
        if verb == "cancel":
            return plans.cancel(self.ws, str(ref), str(kwargs.get("reason") or ""), agent=identity)
        return getattr(plans, verb)(self.ws, ref, agent=identity, observer=watch)

    def _audit(self, event_type: str, identity: str, details: dict[str, Any]) -> str:
        """One ``ca:AuditEvent`` in its own commit: who wrote what through a server, when."""
        event, triples = audit.event(event_type, identity, details)
        with self.ws.writer() as session:
            session.commit(
                CommitRequest(add=triples, message=f"audit: {event_type} (server)", cause="audit", agent=identity)
            )
        return event.value

    def plan_artifacts(self, ref: str) -> models.PlanArtifacts:
        from cleveragents.services import plans, sandboxes

        plan, found, _ = plans.tree(self.ws, ref)
        changeset = sandboxes.artifacts(self.ws, plan.id)
        diff = sandboxes.diff(self.ws, plan.id)
        current = sorted((d for d in found.values() if d.current and d.plan == plan.iri), key=lambda d: d.sequence)
        return models.PlanArtifacts(
            plan=plan.as_dict(),
            changeset=[c.as_dict() for c in changeset],
            diff=diff,
            report=plan_report(plan, current, changeset),
        )

    # --- A2A -----------------------------------------------------------------------------

    def save_task(
        self, task_id: str, context_id: str, state: str, payload: str, *, identity: str, plan: str | None = None
    ) -> None:
        """Group commit: a save waits for the writer, then commits every task saved
        meanwhile in one commit (a commit costs ~2 s on Django's store whatever its size, so
        32 clients' tasks go in a few commits, not 32). Returns once the task is in the graph."""
        task_records.task_iri(task_id)  # a bad id is refused here, alone, not in a batch with others
        entry = _PendingTask(task_records.TaskRecord(task_id, context_id, state, payload, plan))
        with self._pending_lock:
            self._pending_tasks[task_id] = entry  # a later save of the same task replaces this one
        with self._write_lock:  # one writer per process at a time; other processes wait in open()
            with self._pending_lock:
                batch, self._pending_tasks = self._pending_tasks, {}
            if batch:
                try:
                    task_records.save_many(self.ws, [e.record for e in batch.values()], agent=identity)
                except Exception as exc:  # every save of the batch learns it failed, not only this one
                    reason = exc.headline() if isinstance(exc, CleverAgentsError) else f"{type(exc).__name__}: {exc}"
                    for waiting in batch.values():
                        waiting.error = reason
        if entry.error is not None:  # this task's batch failed (whoever committed it)
            raise DatabaseError(f"A2A task {task_id} was not saved: {entry.error}")

    def load_task(self, task_id: str) -> str | None:
        return task_records.load(self.ws, task_id)

    def list_tasks(self, context_id: str | None) -> list[str]:
        return task_records.list_payloads(self.ws, context_id)

    def delete_task(self, task_id: str, *, identity: str) -> None:
        with self._write_lock:
            task_records.delete(self.ws, task_id, agent=identity)

    def extension(self, method: str, params: dict[str, Any], *, identity: str, read_only: bool) -> dict[str, Any]:
        """The ``_cleveragents/*`` methods this server implements (the spec's catalog is larger)."""
        from cleveragents import __version__
        from cleveragents.services import context, projects
        from cleveragents.services import resources as resource_service

        name = method.removeprefix(EXTENSION_PREFIX)
        if name.startswith("plan/"):
            return self._plan_extension(name, params, identity=identity, read_only=read_only)
        if name == "health/check":
            with self.ws.reader() as store:
                head = store.head
            return {"status": "ok", "version": __version__, "head_revision": head}
        if name == "registry/resource/list":
            listed = resource_service.list_all(self.ws)
            return {"resources": [{"name": r.name, "ulid": r.ulid, "type": r.type, "iri": r.iri} for r in listed]}
        if name == "registry/project/list":
            return {"projects": [{**p.as_dict()} for p in projects.list_all(self.ws)]}
        if name == "context/show":
            ref = str(params.get("hash") or params.get("context_hash") or "")
            if not ref:
                raise ValidationError("_cleveragents/context/show needs params.hash (a context hash or prefix)")
            shown = context.show(self.ws, ref, analyzers=self.analyzers)
            return {
                "context_hash": shown.context.context_hash,
                "verified": shown.verified,
                "problems": shown.problems,
                "markdown": context.markdown(shown.context),
            }
        raise _unknown_method(method)

    def _plan_extension(self, name: str, params: dict[str, Any], *, identity: str, read_only: bool) -> dict[str, Any]:
        """``_cleveragents/plan/*``: the plan lifecycle, as ``agents plan ...`` runs it.
        Params follow the spec's example (``plan_id``); writes need a read-write server."""
        from cleveragents.services import plans, sandboxes

        if name not in PLAN_READS + PLAN_WRITES:
            raise _unknown_method(EXTENSION_PREFIX + name)
        if name in PLAN_WRITES and read_only:
            raise ForbiddenError(
                f"{EXTENSION_PREFIX}{name} changes a plan: this server is read-only",
                suggestions=["agents serve --read-write"],
            )

        def need(key: str) -> str:
            value = params.get(key)
            if not isinstance(value, str) or not value:
                raise ValidationError(f"{EXTENSION_PREFIX}{name} needs params.{key} (a string)")
            return value

        verb = name.removeprefix("plan/")
        if verb == "status":
            return self.plan_status(need("plan_id")).model_dump()
        if verb == "tree":
            return self.plan_tree(need("plan_id")).model_dump()
        if verb == "explain":
            return self.explain_decision(need("decision_id")).model_dump()
        if verb == "artifacts":
            return self.plan_artifacts(need("plan_id")).model_dump()
        if verb == "diff":
            return {"plan_id": need("plan_id"), "diff": sandboxes.diff(self.ws, need("plan_id"))}
        if verb == "list":
            filters = {k: params.get(k) for k in ("phase", "state", "project", "action") if params.get(k)}
            return {"plans": [p.as_dict() for p in plans.list_plans(self.ws, **filters)]}
        if verb == "use":
            arguments = params.get("arguments") or {}
            projects_ = params.get("projects")
            if not isinstance(arguments, dict) or not isinstance(projects_, list):
                raise ValidationError(
                    f"{EXTENSION_PREFIX}plan/use needs params.projects (a list) and arguments (an object)"
                )
            return self.plan_verb(
                "use",
                None,
                identity=identity,
                action=need("action"),
                projects=[str(p) for p in projects_],
                arguments=arguments,
                automation_level=params.get("automation_level"),
            ).model_dump()
        if verb in ("execute", "apply"):
            return self.plan_verb(verb, need("plan_id"), identity=identity).model_dump()
        if verb == "cancel":
            return self.plan_verb(
                "cancel", need("plan_id"), identity=identity, reason=str(params.get("reason") or "")
            ).model_dump()
        if verb == "prompt":
            return self.plan_verb("prompt", need("plan_id"), identity=identity, guidance=need("guidance")).model_dump()
        with self._write_lock:
            if verb == "correct":
                result, plan = plans.correct(
                    self.ws, need("decision_id"), need("mode"), need("guidance"), agent=identity
                )
                event = self._audit("plan_correct", identity, {"decision": need("decision_id"), "mode": need("mode")})
                correction = {
                    "attempt": result.attempt,
                    "mode": result.mode,
                    "impact": result.impact.as_dict(),
                    **result.extra,
                }
                return {"correction": correction, "plan": plan.as_dict(), "audit_event": event}
            restored = sandboxes.rollback(self.ws, need("plan_id"), need("checkpoint"))
            event = self._audit("plan_rollback", identity, {"plan": need("plan_id"), "checkpoint": need("checkpoint")})
            return {"rolled_back": [r.as_dict() for r in restored], "audit_event": event}


def _unknown_method(method: str) -> NotFoundError:
    return NotFoundError(
        f"no extension method '{method}'", suggestions=[EXTENSION_PREFIX + m for m in EXTENSION_METHODS]
    )


def plan_report(plan: PlanRecord, decisions: list[Decision], changeset: list[Any]) -> str:
    """A plan's outcome as markdown: what it was for, where it stands, why (its current
    decisions in order) and what it changed."""
    lines = [
        f"# Plan {plan.id}: {plan.description}",
        "",
        f"- action: {plan.action}; projects: {', '.join(plan.projects)}",
        f"- phase {plan.phase}, state {plan.state}, attempt {plan.attempt}",
        f"- done when: {plan.definition_of_done}",
    ]
    if plan.error:
        lines.append(f"- error: {plan.error}")
    lines += ["", "## Decisions", ""]
    for d in decisions:
        why = f" ({d.rationale})" if d.rationale else ""
        lines.append(f"{d.sequence}. **{d.type}**: {d.question} {d.chosen}{why}".replace("  ", " "))
    changed = [(c.resource, f.status, f.path) for c in changeset for f in c.changes]
    lines += ["", "## Changes", ""]
    lines += [f"- {status} {resource}:{path}" for resource, status, path in changed] or ["- none"]
    return "\n".join(lines) + "\n"


def is_update(sparql: str) -> bool:
    """True for a SPARQL Update (including the forms the store refuses, such as LOAD),
    False for anything else, whose syntax the query path then reports. Nothing is
    evaluated here: the text is only tokenized."""
    try:
        parse_update(sparql)
    except ValidationError as update_error:
        return "is not supported" in update_error.message  # LOAD, CLEAR, DROP...: an update all the same
    return True


def workspace_operations(
    data_dir: Path, config: Config, *, project: str | None = None, read_only: bool = True
) -> WorkspaceOperations:
    """The operations over a data dir. A read-only server lets SPARQL call no SERVICE
    endpoint at all; a read-write one, those of config query.service_allowlist."""
    validate = bool(config.value("store.validate_on_commit"))
    allowed = () if read_only else config.value("query.service_allowlist")
    ws = Workspace(data_dir, validate_on_commit=validate, service_allowlist=allowed)
    return WorkspaceOperations(ws, config, project=project)


# --- running the servers -----------------------------------------------------------------


def server_settings(
    config: Config,
    *,
    host: str | None = None,
    port: int | None = None,
    read_only: bool = True,
) -> ServerSettings:
    """Flags first, then the ``server.*`` keys (``server.token`` also from
    $CLEVERAGENTS_SERVER_TOKEN through the config's environment layer)."""
    return ServerSettings(
        host=host or str(config.value("server.host")),
        port=int(port if port is not None else config.value("server.port")),
        token=str(config.value("server.token") or ""),
        read_only=read_only,
        max_request_bytes=int(config.value("server.max_request_bytes")),
        request_timeout=float(config.value("server.request_timeout")),
        user=str(config.value("user.name") or "cleveragents"),
    )


def serve_mcp(ops: WorkspaceOperations, settings: ServerSettings, *, transport: str = "stdio") -> None:
    """Run the MCP server until it is stopped (stdio: until the client closes stdin)."""
    import anyio

    from cleveragents.servers.mcp_server import build_mcp_server, serve_stdio

    ops.ws.require()
    server = build_mcp_server(ops, settings)
    if transport == "stdio":
        anyio.run(serve_stdio, server)
        return
    if transport != "http":
        raise ValidationError(f"unknown transport '{transport}'; choose stdio or http")
    check_bind(settings)
    app = HttpGuard(
        server.streamable_http_app(max_request_body_size=settings.max_request_bytes, host=settings.host),
        settings,
    )
    run_http(app, settings)


def run_http(app: object, settings: ServerSettings) -> None:
    import uvicorn

    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")  # type: ignore[arg-type]


def serve_all(ops: WorkspaceOperations, settings: ServerSettings) -> None:
    """``agents serve``: A2A (``/a2a``, agent card at ``/.well-known/agent-card.json``) and
    MCP (``/mcp``) on one HTTP port until Ctrl+C."""
    from cleveragents.servers.app import build_app

    ops.ws.require()
    check_bind(settings)
    run_http(build_app(ops, settings), settings)
