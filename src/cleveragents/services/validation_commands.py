"""Validation commands of a project (``agents project set-validation``) as graph data, and
running them in a plan's sandboxes with the results recorded.

A project has at most one ``ca:ValidationCommands`` node for all its resources and one per
resource; a resource's own commands replace the project's for that resource.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace, WriteSession
from cleveragents.sandbox.records import validation_run_triples
from cleveragents.sandbox.validation import DEFAULT_TIMEOUT, ValidationCommands, ValidationRun, run_validations
from cleveragents.services import entities
from cleveragents.services.sandboxes import open_sandboxes, plan_node
from cleveragents.terms import CA, ID, RDF_TYPE, XSD
from cleveragents.vocabulary import ca

_FIELDS = {"test": "testCommand", "lint": "lintCommand", "type_check": "typeCheckCommand", "build": "buildCommand"}


def _p(name: str) -> ox.NamedNode:
    return ox.NamedNode(CA + name)


def _node(project: ox.NamedNode, resource: ox.NamedNode | None) -> ox.NamedNode:
    tail = project.value.rsplit("/", 1)[-1]
    if resource is not None:
        tail += "/" + resource.value.rsplit("/", 1)[-1]
    return ox.NamedNode(f"{ID}validation/{tail}")


def set_validation(
    ws: Workspace,
    project: str,
    *,
    resource: str | None = None,
    test: str | None = None,
    lint: str | None = None,
    type_check: str | None = None,
    build: str | None = None,
    timeout: float | None = None,
    clear: bool = False,
    agent: str = "cleveragents",
) -> tuple[ValidationCommands, CommitResult]:
    """Set (merge into what is there) or with ``clear`` remove the validation commands of a
    project, or of one of its resources."""
    given = {"test": test, "lint": lint, "type_check": type_check, "build": build}
    for name, value in given.items():
        if value is not None and not value.strip():
            raise ValidationError(f"--{name.replace('_', '-')}-command is empty")
    if timeout is not None and timeout <= 0:
        raise ValidationError(f"--timeout must be more than 0 seconds, got {timeout:g}")
    if not clear and timeout is None and all(v is None for v in given.values()):
        raise ValidationError(
            "nothing to set: give --test-command, --lint-command, --type-check-command, --build-command "
            "or --timeout (or --clear)"
        )
    with ws.writer() as session:
        store = session.store
        pnode = entities.find(store, "Project", project, kind="project")
        rnode = entities.find(store, "Resource", resource, kind="resource") if resource else None
        if rnode is not None and not store.query(f"ASK {{ {pnode} ca:linksResource {rnode} }}"):
            raise ValidationError(f"resource '{resource}' is not linked to project '{project}'")
        node = _node(pnode, rnode)
        old = [(q.subject, q.predicate, q.object) for q in store.live_quads(node)]
        link = (pnode, _p("validationCommands"), node)
        current = _read(store, node) if old else ValidationCommands()
        if clear:
            new: list[tuple[Any, Any, Any]] = []
            commands = ValidationCommands(resource=resource)
        else:
            merged = {**current.as_dict(), **{k: v for k, v in given.items() if v is not None}}
            merged["timeout"] = timeout if timeout is not None else current.timeout
            merged["resource"] = resource
            commands = ValidationCommands(**merged)
            new = _triples(node, commands, rnode)
        old_set = set(old) | ({link} if old else set())
        new_set = set(new) | ({link} if new else set())
        result = session.commit(
            CommitRequest(
                add=sorted(new_set - old_set, key=str),
                remove=sorted(old_set - new_set, key=str),
                message=f"project set-validation {project}" + (f" --resource {resource}" if resource else ""),
                cause="project-set-validation",
                agent=agent,
            )
        )
        return commands, result


def _triples(node: ox.NamedNode, commands: ValidationCommands, resource: ox.NamedNode | None) -> list[Any]:
    triples: list[Any] = [
        (node, ox.NamedNode(RDF_TYPE), _p("ValidationCommands")),
        (
            node,
            _p("timeoutSeconds"),
            ox.Literal(format(Decimal(str(commands.timeout)).normalize(), "f"), datatype=ox.NamedNode(XSD + "decimal")),
        ),
    ]
    for name, predicate in _FIELDS.items():
        value = getattr(commands, name)
        if value:
            triples.append((node, _p(predicate), ox.Literal(value)))
    if resource is not None:
        triples.append((node, _p("forResource"), resource))
    return triples


def _read(store: GraphStore, node: ox.NamedNode, resource: str | None = None) -> ValidationCommands:
    props = entities.properties(store, node)
    values = {name: entities.single(props, CA + predicate) for name, predicate in _FIELDS.items()}
    timeout = entities.single(props, ca.timeoutSeconds)
    return ValidationCommands(**values, timeout=float(timeout) if timeout else DEFAULT_TIMEOUT, resource=resource)


def project_validation(ws: Workspace, project: str) -> list[ValidationCommands]:
    """The project's validation commands: the project-wide set first, then per resource."""
    with ws.reader() as store:
        pnode = entities.find(store, "Project", project, kind="project")
        return _of_project(store, pnode)


def _of_project(store: GraphStore, pnode: ox.NamedNode) -> list[ValidationCommands]:
    rows = store.query(
        f"SELECT ?v ?name WHERE {{ {pnode} ca:validationCommands ?v . "
        f"OPTIONAL {{ ?v ca:forResource/ca:name ?name }} }} ORDER BY ?name"
    )
    return [_read(store, row["v"], row["name"].value if row["name"] else None) for row in rows]


def commands_for_plan(store: GraphStore, plan: ox.NamedNode) -> dict[str, ValidationCommands]:
    """By resource name: the commands that apply to each resource of the plan's projects
    (a resource's own commands over its project's)."""
    rows = store.query(f"SELECT ?p ?name WHERE {{ {plan} ca:targetsProject ?p . ?p ca:linksResource/ca:name ?name }}")
    out: dict[str, ValidationCommands] = {}
    for row in rows:
        for commands in _of_project(store, row["p"]):
            if commands.resource == row["name"].value or (commands.resource is None and row["name"].value not in out):
                out[row["name"].value] = commands
    return out


def run_for_plan(
    ws: Workspace, plan_ref: str, *, decision: str | None = None, agent: str = "cleveragents"
) -> tuple[list[ValidationRun], CommitResult | None]:
    """Run the validation commands in each of the plan's sandboxes and record every run
    (``ca:ValidationRun``) in one commit."""
    with ws.writer() as session:
        return run_in(ws, session, plan_node(session.store, plan_ref), decision=decision, agent=agent)


def run_in(
    ws: Workspace,
    session: WriteSession,
    plan: ox.NamedNode,
    *,
    decision: str | None = None,
    agent: str = "cleveragents",
    used_only: bool = False,
) -> tuple[list[ValidationRun], CommitResult | None]:
    """``run_for_plan`` in a writer session already open; ``used_only``: only in the
    sandboxes the plan has used (what the plans engine runs at the end of Execute)."""
    store = session.store
    commands = commands_for_plan(store, plan)
    sandboxes = open_sandboxes(ws, store, plan)
    runs: list[ValidationRun] = []
    triples: list[Any] = []
    at = ox.NamedNode(decision) if decision else None
    for name, sandbox in sorted(sandboxes.items()):
        if name not in commands or (used_only and not sandbox.materialized):
            continue
        for run in run_validations(sandbox, commands[name]):
            runs.append(run)
            resource = ox.NamedNode(sandbox.resource.iri) if sandbox.resource.iri else None
            triples += validation_run_triples(plan, run, resource=resource, decision=at)[1]
    if not triples:
        return runs, None
    passed = sum(run.passed for run in runs)
    result = session.commit(
        CommitRequest(
            add=triples,
            message=f"validation of plan {plan.value.rsplit('/', 1)[-1]}: {passed}/{len(runs)} passed",
            cause="plan-validation",
            agent=agent,
        )
    )
    return runs, result
