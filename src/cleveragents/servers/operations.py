"""The operations the servers expose, as the protocol layer needs them.

The servers sit below the application services (layers import downward only), so they
do not call ``cleveragents.services`` themselves: the services implement this protocol
(``services/serving.py``) over the same functions the CLI calls, and hand it in. Every
method is synchronous and may block; the servers run them off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from cleveragents.servers import models

# The ``_cleveragents/*`` A2A extension methods implemented (the spec's catalog is larger):
# the plan lifecycle group whole, and health, two registries and context/show.
EXTENSION_PREFIX = "_cleveragents/"
PLAN_READS = ("plan/status", "plan/tree", "plan/explain", "plan/diff", "plan/artifacts", "plan/list")
PLAN_WRITES = ("plan/use", "plan/execute", "plan/apply", "plan/cancel", "plan/correct", "plan/prompt", "plan/rollback")
EXTENSION_METHODS = (
    "health/check",
    "registry/resource/list",
    "registry/project/list",
    "context/show",
    *PLAN_READS,
    *PLAN_WRITES,
)
# The plan verbs a server runs through ``Operations.plan_verb`` (each one audited).
PLAN_VERBS = ("use", "execute", "apply", "resume", "prompt", "cancel")

# (done, total, message): long operations report through it; the server forwards it as
# MCP progress notifications or A2A status updates.
ProgressReport = Callable[[float, float | None, str], None]

# (plan as ``agents plan status --format json`` shows it, what just happened): called after
# each commit of a running plan (a phase transition, a decision). Raising
# ``cleveragents.errors.Interrupted`` from it stops the plan at that step; the plan is then
# cancelled with the exception's message as the reason.
PlanStep = Callable[[dict[str, Any], str], None]


class Operations(Protocol):
    def graph_query(
        self,
        sparql: str,
        *,
        as_of: str | None,
        limit: int,
        timeout: float,
        read_only: bool,
        identity: str,
    ) -> models.QueryResult: ...

    def find_symbol(self, name: str, *, as_of: str | None) -> models.SymbolMatches: ...

    def related(self, relation: str, iri: str, *, as_of: str | None) -> models.Related:
        """``relation`` is one of callers, callees, references, implementations."""
        ...

    def show(self, iri: str, *, depth: str, as_of: str | None) -> models.Rendering: ...

    def history(self, iri: str) -> models.History: ...

    def blame(self, iri: str) -> models.Blame: ...

    def changes_between(self, old: str, new: str, *, include: str) -> models.Changes: ...

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
    ) -> models.ContextResult: ...

    def index(
        self, resources: list[str], *, full: bool, identity: str, progress: ProgressReport | None
    ) -> models.IndexResult: ...

    def ontology_modules(self) -> dict[str, str]:
        """Module name (uko, uko-py, ca...) -> its Turtle text."""
        ...

    def named_queries(self) -> dict[str, str]:
        """Query name -> its SPARQL text (with its header)."""
        ...

    # --- plans -------------------------------------------------------------------------

    def plan_status(self, ref: str | None) -> models.PlanResult: ...

    def plan_tree(self, ref: str | None) -> models.PlanTree: ...

    def explain_decision(self, ref: str) -> models.DecisionExplanation: ...

    def plan_verb(
        self, verb: str, ref: str | None, *, identity: str, observer: PlanStep | None = None, **kwargs: Any
    ) -> models.PlanResult:
        """One of ``PLAN_VERBS``: ``use`` (kwargs action, projects, arguments, automation_level),
        ``execute``, ``apply``, ``resume``, ``prompt`` (guidance), ``cancel`` (reason). Writes,
        audited. The observer follows the plan as it runs (see ``PlanStep``)."""
        ...

    def plan_artifacts(self, ref: str) -> models.PlanArtifacts:
        """What a plan has produced: its changeset (per sandbox, the changed files and the
        diff against the fork) and a markdown report of its decisions."""
        ...

    # --- A2A: tasks kept in the graph, and the _cleveragents/* extension methods ------------

    def save_task(
        self, task_id: str, context_id: str, state: str, payload: str, *, identity: str, plan: str | None = None
    ) -> None:
        """Keep the task in the graph; ``plan``: the plan it runs (a ULID), if any."""
        ...

    def load_task(self, task_id: str) -> str | None:
        """The task's protocol JSON, or None for an unknown task."""
        ...

    def list_tasks(self, context_id: str | None) -> list[str]: ...

    def delete_task(self, task_id: str, *, identity: str) -> None: ...

    def extension(self, method: str, params: dict[str, Any], *, identity: str, read_only: bool) -> dict[str, Any]:
        """Run a ``_cleveragents/...`` method; NotFoundError for one that does not exist,
        ForbiddenError for one that writes (``PLAN_WRITES``) on a read-only server."""
        ...
