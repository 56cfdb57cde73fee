"""``agents ontology list | show | levels | check`` through the real app (CliRunner), in
plain and the structured formats. The reasoner tests need Java and are marked ``java``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from cleveragents.cli.main import build_app
from cleveragents.tbox import list_modules

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime")

UKO_PY_MODULE_LEVELS = [
    ("MODULE_LISTING", "uko-code:"),
    ("MODULE_GRAPH", "uko-code:"),
    ("MEMBER_LISTING", "uko-code:"),
    ("CLASS_HIERARCHY", "uko-oo:"),
    ("MEMBER_SUMMARY", "uko-code:"),
    ("SIGNATURES", "uko-code:"),
    ("SIGNATURES_WITH_DOCS", "uko-code:"),
    ("DECORATED_SIGNATURES", "uko-py:"),
    ("VISIBILITY_ANNOTATED", "uko-oo:"),
    ("STRUCTURAL_OUTLINE", "uko-code:"),
    ("KEY_LOGIC", "uko-code:"),
    ("TYPE_STUBS", "uko-py:"),
    ("NEAR_COMPLETE", "uko-code:"),
    ("FULL_SOURCE", "uko-code:"),
    ("WITH_TESTS", "uko-py:"),
]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    """The real app in a clean environment (no CLEVERAGENTS_* variables, data dir and
    cwd in tmp_path)."""
    for name in list(os.environ):
        if name.startswith("CLEVERAGENTS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CLEVERAGENTS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return build_app()


def invoke(app: typer.Typer, *args: str):
    return CliRunner().invoke(app, list(args))


def as_json(app: typer.Typer, *args: str) -> dict:
    result = invoke(app, "--format", "json", *args)
    return json.loads(result.stdout)


# --- list -------------------------------------------------------------------------------


def test_list_modules_plain(cli: typer.Typer):
    result = invoke(cli, "ontology", "list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Ontology modules ({len(list_modules())})"
    assert lines[1].split() == ["Prefix", "Namespace", "Layer", "Imports", "Label", "Version"]
    rows = {line.split()[0]: line for line in lines[3:]}
    assert rows["uko-py"].split()[:4] == [
        "uko-py",
        "https://cleveragents.ai/ontology/uko/py#",
        "3",
        "uko-oo",
    ]
    assert "uko-oo, uko-func" in rows["uko-rs"]
    assert "0.1.0" in rows["uko"]
    assert result.stderr == ""


def test_list_modules_json(cli: typer.Typer):
    doc = as_json(cli, "ontology", "list")
    assert (doc["command"], doc["status"], doc["exit_code"]) == ("ontology list", "ok", 0)
    modules = doc["data"]["modules"]
    assert [m["prefix"] for m in modules] == [m.prefix for m in list_modules()]
    by_prefix = {m["prefix"]: m for m in modules}
    assert list(by_prefix["uko-py"]) == [
        "prefix",
        "namespace",
        "layer",
        "imports",
        "label",
        "version",
        "iri",
        "import_iris",
        "file",
    ]
    assert by_prefix["uko"]["layer"] == 0 and by_prefix["uko"]["imports"] == []
    assert by_prefix["uko-rs"]["imports"] == ["uko-oo", "uko-func"]
    assert by_prefix["uko-rs"]["import_iris"] == [
        "https://cleveragents.ai/ontology/uko/oo",
        "https://cleveragents.ai/ontology/uko/func",
    ]
    assert by_prefix["ca"]["layer"] is None
    assert by_prefix["uko-py"]["file"] == "uko-py.ttl"


def test_list_terms_of_a_module(cli: typer.Typer):
    result = invoke(cli, "ontology", "list", "--terms", "uko")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Terms of uko (")
    assert lines[1].split() == ["Term", "Kind", "Label", "Module"]
    assert any(line.split()[:2] == ["uko:Container", "class"] for line in lines)
    assert any(line.split()[:3] == ["uko:contains", "object", "property"] for line in lines)

    terms = as_json(cli, "ontology", "list", "--terms", "uko-py")["data"]["terms"]
    assert {t["module"] for t in terms} == {"uko-py"}
    module = next(t for t in terms if t["term"] == "uko-py:Module")
    assert module["kind"] == "class"
    assert module["iri"] == "https://cleveragents.ai/ontology/uko/py#Module"
    assert module["supers"] == ["uko-code:Module"]
    # classes come before properties
    kinds = [t["kind"] for t in terms]
    assert kinds == sorted(kinds, key=lambda k: k != "class")


def test_list_terms_of_every_module(cli: typer.Typer):
    terms = as_json(cli, "ontology", "list", "--terms")["data"]["terms"]
    modules = {t["module"] for t in terms}
    assert {"uko", "uko-code", "uko-py", "ca"} <= modules
    assert {t["kind"] for t in terms} <= {
        "class",
        "object property",
        "datatype property",
        "annotation property",
        "property",
    }


def test_list_terms_unknown_prefix(cli: typer.Typer):
    result = invoke(cli, "ontology", "list", "--terms", "uko-pi")
    assert result.exit_code == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith("Error [404] NOT_FOUND: no ontology module with prefix 'uko-pi'")
    assert "uko-py" in first


# --- show -------------------------------------------------------------------------------


def test_show_class_plain(cli: typer.Typer):
    result = invoke(cli, "ontology", "show", "uko:Container")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "uko:Container"
    fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert fields["IRI"] == "https://cleveragents.ai/ontology/uko#Container"
    assert fields["Kind"] == "class"
    assert fields["Label"] == "container"
    assert fields["Comment"].startswith("An information unit that contains")
    assert fields["Superclasses"] == "uko:InformationUnit"
    assert "uko-code:Module" in fields["Subclasses"].split(", ")
    assert fields["Defined in"] == "uko"
    assert "Domain" not in fields


def test_show_class_json(cli: typer.Typer):
    doc = as_json(cli, "ontology", "show", "uko:Container")
    term = doc["data"]["term"]
    assert list(term) == [
        "term",
        "iri",
        "kind",
        "label",
        "comment",
        "domain",
        "range",
        "supers",
        "subs",
        "types",
        "module",
    ]
    assert term["term"] == "uko:Container"
    assert term["kind"] == "class"
    assert term["supers"] == ["uko:InformationUnit"]
    assert {"uko-code:Module", "uko-oo:Class", "uko-doc:Section"} <= set(term["subs"])
    assert (term["domain"], term["range"], term["module"]) == ([], [], "uko")


def test_show_property(cli: typer.Typer):
    result = invoke(cli, "ontology", "show", "uko-code:calls")
    assert result.exit_code == 0, result.output
    assert "  Kind:            object property" in result.stdout
    assert "  Superproperties: uko:dependsOn" in result.stdout
    assert "  Domain:" in result.stdout and "  Range:" in result.stdout
    term = as_json(cli, "ontology", "show", "uko-code:calls")["data"]["term"]
    assert term["supers"] == ["uko:dependsOn"] and term["module"] == "uko-code"


def test_show_unknown_term(cli: typer.Typer):
    result = invoke(cli, "ontology", "show", "uko:Contaner")
    assert result.exit_code == 1
    assert result.stdout == ""
    first = result.stderr.splitlines()[0]
    assert first.startswith("Error [404] NOT_FOUND: unknown ontology term 'uko:Contaner'")
    assert "did you mean: uko:Container" in first

    doc = as_json(cli, "ontology", "show", "Container")
    assert (doc["status"], doc["exit_code"]) == ("error", 1)
    assert doc["error"]["code"] == "NOT_FOUND" and doc["error"]["status"] == 404
    assert "agents ontology show uko:Container" in doc["error"]["suggestions"]


# --- levels -----------------------------------------------------------------------------


def test_levels_json(cli: typer.Typer):
    doc = as_json(cli, "ontology", "levels", "uko-py:Module")
    assert doc["exit_code"] == 0
    assert doc["data"]["target"] == "uko-py:Module"
    levels = doc["data"]["levels"]
    assert len(levels) == 15
    assert levels == [
        {"name": name, "depth": depth, "defined_in": where} for depth, (name, where) in enumerate(UKO_PY_MODULE_LEVELS)
    ]
    assert levels[-1] == {"name": "WITH_TESTS", "depth": 14, "defined_in": "uko-py:"}
    # the module prefix gives the same map as its type
    assert as_json(cli, "ontology", "levels", "uko-py")["data"]["levels"] == levels


def test_levels_plain_and_yaml(cli: typer.Typer):
    result = invoke(cli, "ontology", "levels", "uko-doc:Section")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Detail levels of uko-doc:Section (")
    assert lines[1].split() == ["Name", "Depth", "Defined", "in"]
    assert lines[3].split() == ["TITLE_ONLY", "0", "uko-doc:"]

    doc = yaml.safe_load(invoke(cli, "-f", "yaml", "ontology", "levels", "uko-py:Module").stdout)
    assert doc["data"]["levels"][14]["name"] == "WITH_TESTS"


def test_levels_resolve(cli: typer.Typer):
    result = invoke(cli, "ontology", "levels", "uko-py:Module", "--resolve", "SIGNATURES")
    assert result.exit_code == 0, result.output
    assert result.stdout == "5\n"
    doc = as_json(cli, "ontology", "levels", "uko-py:Module", "--resolve", "WITH_TESTS")
    assert doc["data"]["resolved"] == {
        "target": "uko-py:Module",
        "name": "WITH_TESTS",
        "depth": 14,
    }
    assert invoke(cli, "ontology", "levels", "uko-py", "--resolve", "7").stdout == "7\n"


def test_levels_errors(cli: typer.Typer):
    result = invoke(cli, "ontology", "levels", "uko-py:Module", "--resolve", "SIGNATURE")
    assert result.exit_code == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith("Error [404] NOT_FOUND: unknown detail level 'SIGNATURE'")
    assert "SIGNATURES" in first

    # a misspelt type must not fall back to its namespace's map
    result = invoke(cli, "ontology", "levels", "uko-py:Modul")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error [404] NOT_FOUND: unknown ontology term 'uko-py:Modul'")
    assert "uko-py:Module" in result.stderr.splitlines()[0]

    result = invoke(cli, "ontology", "levels", "uko-py:Module", "--resolve", "-1")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error [422] VALIDATION_FAILED:")


# --- check ------------------------------------------------------------------------------


def test_check_without_java(cli: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    empty = tmp_path / "no-java"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = invoke(cli, "ontology", "check")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error [503] DEPENDENCY_MISSING: Java is not installed")
    doc = as_json(cli, "ontology", "check")
    assert doc["error"]["code"] == "DEPENDENCY_MISSING" and doc["exit_code"] == 1


@pytest.mark.java
@needs_java
def test_check_consistent(cli: typer.Typer):
    doc = as_json(cli, "ontology", "check")
    assert (doc["status"], doc["exit_code"]) == ("ok", 0)
    report = doc["data"]["consistency"]
    assert (report["consistent"], report["ok"], report["unsatisfiable"]) == (True, True, [])
    assert report["triples"] > 1000
    assert doc["messages"][0]["level"] == "ok"
    assert doc["messages"][0]["text"].startswith("The ontology is consistent")


@pytest.mark.java
@needs_java
def test_check_inconsistent_extension(cli: typer.Typer, tmp_path: Path):
    # A commit is a prov:Activity, a resource a prov:Entity; PROV makes them disjoint.
    bad = tmp_path / "bad.ttl"
    bad.write_text(
        "@prefix ca: <https://cleveragents.ai/ontology/ca#> .\n<https://example.org/x> a ca:Resource , ca:Commit .\n",
        encoding="utf-8",
    )
    result = invoke(cli, "ontology", "check", str(bad))
    assert result.exit_code == 1
    assert "[ERROR] INCONSISTENT" in result.output
