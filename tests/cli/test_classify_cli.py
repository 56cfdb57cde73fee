"""``agents graph classify``: layer, primary type, source resource and relationships of a
UKO node, on a real store with an indexed directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cleveragents import iris
from tests.cli.test_graph_cli import Cli, initialized_cli

SOURCE = '''"""Helpers; see docs/guide.md."""


def load():
    return parse() + check()


def save():
    return parse() + check()


def parse():
    return 1


def check():
    return 2
'''


def last(term: str) -> str:
    """The local name of an N-Triples IRI: '<...#parse>' -> 'parse'."""
    return re.split(r"[#/]", term.strip("<>"))[-1]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


@pytest.fixture
def ulid(cli: Cli, tmp_path: Path) -> str:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "pkg" / "util.py").write_text(SOURCE)
    (root / "docs" / "guide.md").write_text("# Guide\n\nIntro.\n\n## Usage\n\nCall `load`.\n")
    added = cli.ok("resource", "add", str(root), "-t", "fs-directory", "--name", "proj", fmt="json").json()
    return added["data"]["resource"]["ulid"]


def test_classify_reports_layer_type_resource_and_relationships_in_json(cli: Cli, ulid: str):
    parse = iris.file_iri(ulid, "pkg/util.py", "parse")
    doc = cli.ok("graph", "classify", parse, "--format", "json").json()
    assert doc["exit_code"] == 0
    info = doc["data"]["classification"]
    assert list(info) == ["iri", "revision", "layer", "primary_type", "types", "source_resource"]
    assert info["iri"] == f"<{parse}>"
    assert info["layer"] == 3
    assert info["primary_type"] == "<https://cleveragents.ai/ontology/uko/py#Function>"
    assert info["source_resource"] == f"<https://cleveragents.ai/id/resource/{ulid}>"
    rows = doc["data"]["relationships"]
    assert list(rows[0]) == ["direction", "predicate", "node", "confidence", "resolved_by", "inferred"]
    found = {(r["direction"], last(r["predicate"]), last(r["node"])) for r in rows}
    assert {("in", "calls", "load"), ("in", "calls", "save"), ("in", "contains", "util.py")} <= found
    # parse and check are called together by load and save: implicit siblings, reified as inferred.
    sibling = [r for r in rows if r["predicate"].endswith("#implicitSiblingOf>")]
    assert {(r["direction"], last(r["node"])) for r in sibling} == {("out", "check"), ("in", "check")}
    assert {(r["confidence"], r["resolved_by"], r["inferred"]) for r in sibling} == {(0.7, "inference", True)}
    calls = [r for r in rows if r["predicate"].endswith("#calls>")]
    assert all(not r["inferred"] and r["resolved_by"] == "name-match" for r in calls)
    # The module's docstring names the guide.
    module = cli.ok("graph", "classify", iris.file_iri(ulid, "pkg/util.py"), fmt="json").json()["data"]
    assert module["classification"]["layer"] == 3
    implicit = [r for r in module["relationships"] if r["predicate"].endswith("#implicitDependsOn>")]
    assert [r["node"] for r in implicit] == [f"<{iris.file_iri(ulid, 'docs/guide.md')}>"]


def test_classify_layers_of_documents_and_directories(cli: Cli, ulid: str):
    section = cli.ok("graph", "classify", iris.file_iri(ulid, "docs/guide.md", "guide/usage"), fmt="json").json()
    assert section["data"]["classification"]["layer"] == 1
    assert section["data"]["classification"]["primary_type"].endswith("/doc#Subsection>")
    folder = cli.ok("graph", "classify", iris.directory_iri(ulid, "pkg"), fmt="plain").out
    assert "Layer:           1" in folder and "uko-code:Package" in folder


def test_classify_as_of_an_earlier_revision(cli: Cli, ulid: str, tmp_path: Path):
    parse = iris.file_iri(ulid, "pkg/util.py", "parse")
    before = cli.ok("graph", "classify", parse, fmt="json").json()["data"]["classification"]["revision"]
    (tmp_path / "proj" / "pkg" / "util.py").write_text(SOURCE.replace("def parse():", "def parse_all():"))
    cli.ok("index", "proj")
    assert cli("graph", "classify", parse).code == 1  # gone at the head
    old = cli.ok("graph", "classify", parse, "--as-of", str(before), fmt="json").json()["data"]
    assert old["classification"]["revision"] == before and old["classification"]["layer"] == 3


def test_classify_errors(cli: Cli, ulid: str):
    missing = cli("graph", "classify", "https://example.org/nothing")
    assert missing.code == 1 and "not in the graph" in missing.err
    malformed = cli("graph", "classify", "<not an iri>")
    assert malformed.code == 2
    resource = cli("graph", "classify", f"https://cleveragents.ai/id/resource/{ulid}")
    assert resource.code == 1 and "not a UKO node" in resource.err
    assert cli("graph", "classify", iris.file_iri(ulid, "pkg/util.py"), "--format", "turtle").code == 2
