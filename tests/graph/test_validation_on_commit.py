"""Every commit is validated against the real shapes before anything becomes visible."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.errors import ShapeViolationError
from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.services import graph_service, projects, resources

CA = "https://cleveragents.ai/ontology/ca#"
TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "data")
    workspace.initialize()
    return workspace


def fingerprint(ws: Workspace) -> tuple[int, str]:
    out = io.BytesIO()
    count = graph_service.export(ws, out, fmt="nq")
    return count, hashlib.sha256(out.getvalue()).hexdigest()


def test_a_violating_commit_writes_nothing(ws: Workspace) -> None:
    before = fingerprint(ws)
    bad = ox.NamedNode("https://example.org/p1")
    with ws.writer() as session, pytest.raises(ShapeViolationError) as caught:
        session.commit(
            CommitRequest(
                add=[
                    (bad, TYPE, ox.NamedNode(CA + "Project")),
                    (bad, ox.NamedNode(CA + "name"), ox.Literal("Bad Name")),
                ]
            )
        )
    rows = caught.value.violations
    assert any(v.focus_node.endswith("/p1") and "name" in (v.result_path or "") for v in rows)
    assert fingerprint(ws) == before
    with ws.reader() as store:
        assert store.head == 0


def test_losing_a_type_breaks_the_nodes_that_point_at_it(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    info, _ = resources.add(ws, folder, type_name="fs-directory", name="local/src")
    projects.create(ws, "local/app")
    projects.link(ws, "local/app", "local/src")
    before = fingerprint(ws)
    resource = ox.NamedNode(info.iri)
    with ws.writer() as session, pytest.raises(ShapeViolationError) as caught:
        session.commit(CommitRequest(remove=[(resource, TYPE, ox.NamedNode(CA + "Resource"))]))
    assert any(v.constraint.endswith("ClassConstraintComponent") for v in caught.value.violations)
    assert fingerprint(ws) == before


def test_an_audit_of_a_valid_store_is_clean(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    resources.add(ws, folder, type_name="fs-directory", name="local/src")
    assert [v for v in graph_service.validate_all(ws) if v.is_violation] == []
