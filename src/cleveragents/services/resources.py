"""Resources as graph data: add, list, show, remove."""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.names import default_name, parse_name
from cleveragents.services import entities
from cleveragents.terms import CA
from cleveragents.vocabulary import ca

USER_ADDABLE = ("fs-directory", "git-checkout")


def resource_type_iri(name: str) -> ox.NamedNode:
    return ox.NamedNode(f"{CA}type-{name}")


@dataclass(frozen=True)
class ResourceInfo:
    iri: str
    ulid: str
    name: str
    type: str
    location: str
    content_hash: str
    created: str
    projects: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {**self.__dict__, "projects": list(self.projects)}


def add(
    ws: Workspace,
    path: Path,
    *,
    type_name: str,
    name: str | None = None,
    agent: str = "cleveragents",
) -> tuple[ResourceInfo, CommitResult]:
    if type_name not in USER_ADDABLE:
        raise ValidationError(
            f"resource type '{type_name}' cannot be added by hand; use one of: {', '.join(USER_ADDABLE)}"
        )
    location = path.expanduser().resolve()
    if not location.is_dir():
        raise NotFoundError(f"{path} is not a directory")
    digest = git_tree_hash(location) if type_name == "git-checkout" else directory_hash(location)
    full_name = parse_name(name, kind="resource name") if name else default_name(location.name)
    node, ulid = entities.new_iri("resource")
    with ws.writer() as session:
        if entities.name_taken(session.store, "Resource", full_name):
            raise ConflictError(f"a resource named '{full_name}' exists already", suggestions=["--name local/OTHER"])
        created = entities.now_literal()
        triples = [
            (node, entities.TYPE, ox.NamedNode(ca.Resource)),
            (node, entities.NAME, ox.Literal(full_name)),
            (node, ox.NamedNode(ca.ulid), ox.Literal(ulid)),
            (node, ox.NamedNode(ca.resourceType), resource_type_iri(type_name)),
            (node, ox.NamedNode(ca.location), ox.Literal(str(location))),
            (node, ox.NamedNode(ca.contentHash), ox.Literal(digest)),
            (node, entities.CREATED, created),
        ]
        result = session.commit(
            CommitRequest(add=triples, message=f"resource add {full_name}", cause="resource-add", agent=agent)
        )
        return describe(session.store, node), result


def list_all(ws: Workspace) -> list[ResourceInfo]:
    with ws.reader() as store:
        return [describe(store, node) for node in entities.named(store, "Resource")]


def show(ws: Workspace, ref: str) -> ResourceInfo:
    with ws.reader() as store:
        return describe(store, entities.find(store, "Resource", ref, kind="resource"))


def remove(ws: Workspace, ref: str, *, agent: str = "cleveragents") -> tuple[ResourceInfo, CommitResult]:
    """Retract the resource and its project links (history keeps them)."""
    with ws.writer() as session:
        node = entities.find(session.store, "Resource", ref, kind="resource")
        info = describe(session.store, node)
        links = [
            (q.subject, q.predicate, q.object)
            for q in session.store.live_quads(None, ox.NamedNode(ca.linksResource), node)
        ]
        result = session.commit(
            CommitRequest(
                remove=links,
                retract_subjects=[node],
                message=f"resource remove {info.name}",
                cause="resource-remove",
                agent=agent,
            )
        )
        return info, result


def describe(store: GraphStore, node: ox.NamedNode) -> ResourceInfo:
    props = entities.properties(store, node)
    rtype = entities.single(props, ca.resourceType) or ""
    projects = tuple(
        sorted(row["n"].value for row in store.query(f"SELECT ?n WHERE {{ ?p ca:linksResource {node} ; ca:name ?n }}"))
    )
    return ResourceInfo(
        iri=node.value,
        ulid=entities.single(props, ca.ulid) or node.value.rsplit("/", 1)[-1],
        name=entities.single(props, ca.name) or "",
        type=rtype.removeprefix(CA + "type-"),
        location=entities.single(props, ca.location) or "",
        content_hash=entities.single(props, ca.contentHash) or "",
        created=entities.single(props, ca.createdAt) or "",
        projects=projects,
    )


def directory_hash(root: Path) -> str:
    """sha256 over the sorted (path, size, content digest) of every regular file."""
    outer = hashlib.sha256()
    entries: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        entries += [(os.path.relpath(os.path.join(dirpath, f), root), Path(dirpath, f)) for f in filenames]
    for rel, path in sorted(entries):
        if not path.is_file() or path.is_symlink():
            continue
        inner = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    inner.update(chunk)
        except OSError:
            continue  # unreadable files do not contribute; indexing reports them
        outer.update(f"{rel}\0{inner.hexdigest()}\n".encode(errors="surrogateescape"))
    return "sha256:" + outer.hexdigest()


def git_tree_hash(root: Path) -> str:
    """The checkout's HEAD tree id, marked dirty when the work tree has changes."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ValidationError(f"{root} is not a usable git checkout: {done.stderr.strip() or 'git failed'}")
        return done.stdout.strip()

    if not (root / ".git").exists():
        raise ValidationError(f"{root} is not a git checkout (no .git)", suggestions=["--type fs-directory"])
    tree = git("rev-parse", "HEAD^{tree}")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return f"git-tree:{tree}" + ("+dirty" if dirty else "")
