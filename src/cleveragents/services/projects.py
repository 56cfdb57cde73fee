"""Projects as graph data: create, link and unlink resources, list, show, delete."""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from cleveragents.errors import ConflictError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.names import parse_name
from cleveragents.services import entities
from cleveragents.vocabulary import ca

PROJECT = ox.NamedNode(ca.Project)
LINKS = ox.NamedNode(ca.linksResource)
# ca:description is what the ontology declares and cas:ProjectShape checks.
DESCRIPTION = ox.NamedNode(ca.description)


@dataclass(frozen=True)
class ProjectInfo:
    iri: str
    name: str
    created: str
    resources: tuple[str, ...]
    description: str = ""

    def as_dict(self) -> dict[str, object]:
        return {**self.__dict__, "resources": list(self.resources)}


def create(
    ws: Workspace, name: str, *, description: str | None = None, agent: str = "cleveragents"
) -> tuple[ProjectInfo, CommitResult]:
    full = parse_name(name, kind="project name")
    node, ulid = entities.new_iri("project")
    with ws.writer() as session:
        if entities.name_taken(session.store, "Project", full):
            raise ConflictError(f"project '{full}' exists already")
        triples = [
            (node, entities.TYPE, PROJECT),
            (node, entities.NAME, ox.Literal(full)),
            (node, ox.NamedNode(ca.ulid), ox.Literal(ulid)),
            (node, entities.CREATED, entities.now_literal()),
        ]
        if description:
            triples.append((node, DESCRIPTION, ox.Literal(description)))
        result = session.commit(
            CommitRequest(add=triples, message=f"project create {full}", cause="project-create", agent=agent)
        )
        return describe(session.store, node), result


def link(
    ws: Workspace, project: str, resource: str, *, unlink: bool = False, agent: str = "cleveragents"
) -> tuple[ProjectInfo, CommitResult]:
    with ws.writer() as session:
        store = session.store
        pnode = entities.find(store, "Project", project, kind="project")
        rnode = entities.find(store, "Resource", resource, kind="resource")
        edge = [(pnode, LINKS, rnode)]
        verb = "unlink-resource" if unlink else "link-resource"
        request = CommitRequest(
            remove=edge if unlink else (),
            add=() if unlink else edge,
            message=f"project {verb} {project} {resource}",
            cause=f"project-{verb}",
            agent=agent,
        )
        result = session.commit(request)
        return describe(store, pnode), result


def list_all(ws: Workspace) -> list[ProjectInfo]:
    with ws.reader() as store:
        return [describe(store, node) for node in entities.named(store, "Project")]


def show(ws: Workspace, ref: str) -> ProjectInfo:
    with ws.reader() as store:
        return describe(store, entities.find(store, "Project", ref, kind="project"))


def delete(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[ProjectInfo, CommitResult]:
    with ws.writer() as session:
        node = entities.find(session.store, "Project", ref, kind="project")
        info = describe(session.store, node)
        result = session.commit(
            CommitRequest(
                retract_subjects=[node],
                message=f"project delete {info.name}",
                cause="project-delete",
                agent=agent,
            )
        )
        return info, result


def describe(store: GraphStore, node: ox.NamedNode) -> ProjectInfo:
    props = entities.properties(store, node)
    names = sorted(
        row["n"].value for row in store.query(f"SELECT ?n WHERE {{ {node} ca:linksResource ?r . ?r ca:name ?n }}")
    )
    return ProjectInfo(
        iri=node.value,
        name=entities.single(props, ca.name) or "",
        created=entities.single(props, ca.createdAt) or "",
        resources=tuple(names),
        description=entities.single(props, DESCRIPTION.value) or "",
    )
