"""HermiT (via owlready2) finds the ontology consistent, and finds broken extensions."""

from __future__ import annotations

import shutil
from pathlib import Path

import owlready2
import pytest

from cleveragents.errors import DependencyMissingError
from cleveragents.tbox.consistency import check_consistency, reasoning_document

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime")

HEADER = """
@prefix ca: <https://cleveragents.ai/ontology/ca#> .
@prefix uko: <https://cleveragents.ai/ontology/uko#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
"""


def _extension(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "extension.ttl"
    path.write_text(HEADER + body)
    return path


def test_reasoning_document_has_no_imports() -> None:
    document = reasoning_document()
    assert b"owl#imports" not in document
    assert b"https://cleveragents.ai/ontology/uko/py#Module" in document


@pytest.mark.java
@needs_java
def test_bundled_ontology_is_consistent() -> None:
    report = check_consistency()
    assert report.ok, report.summary()
    assert report.unsatisfiable == ()


@pytest.mark.java
@needs_java
def test_unsatisfiable_class_is_named(tmp_path: Path) -> None:
    # ca:Resource and ca:Project are disjoint, so nothing can be both.
    path = _extension(
        tmp_path,
        "<https://example.org/Both> a owl:Class ; rdfs:subClassOf ca:Resource , ca:Project .",
    )
    report = check_consistency([path])
    assert report.consistent
    assert report.unsatisfiable == ("https://example.org/Both",)
    assert "https://example.org/Both" in report.summary()


@pytest.mark.java
@needs_java
def test_inconsistent_individual_is_reported(tmp_path: Path) -> None:
    # A correction attempt is a prov:Activity, a resource a prov:Entity; PROV makes them disjoint.
    path = _extension(tmp_path, "<https://example.org/x> a ca:Resource , ca:CorrectionAttempt .")
    report = check_consistency([path])
    assert not report.consistent
    assert "INCONSISTENT" in report.summary()


def test_missing_java_raises_dependency_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A PATH without Java, as on a machine where none is installed.
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which(owlready2.JAVA_EXE) is None
    with pytest.raises(DependencyMissingError, match="Java") as info:
        check_consistency()
    assert info.value.suggestions
