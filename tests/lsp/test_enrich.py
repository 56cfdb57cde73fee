"""`agents index --lsp` with a real language server (basedpyright) on a small real project:
resolved edges replace name guesses, external symbols, diagnostics, inferred types, history,
and a server that can't be used leaves the name-match edges in place."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.indexer import IndexSummary
from cleveragents.services import indexing, lsp_registry, resources
from cleveragents.services.resources import ResourceInfo

A = """def helper(value):
    return value * 2


class Base:
    def process_batch(self):
        return helper(1)


def ambiguous():
    return "a"


def scaled(value, factor=2.5, *, label="x") -> str:
    return f"{label}{value * factor}"
"""
B = """import os

from pkg.a import Base, helper


def ambiguous():
    return "b"


class Child(Base):
    def process_batch(self):
        helper(2)
        total: int = "not a number"
        return os.path.join("x", str(total))


def make():
    return Child()


current = make()


def use(callback):
    callback()
    make()
    return current.process_batch()


def untyped():
    return "text".upper()
"""
C = """from pkg import a


def caller():
    return a.ambiguous()
"""
LSP = "lsp:cleveragents/basedpyright"


def rows(ws: Workspace, query: str, as_of: int | None = None) -> list[dict[str, str]]:
    with ws.reader() as store:
        result = store.query(query, view=store.view(as_of))
        names = [v.value for v in result.variables]
        return [{n: row[n].value for n in names if row[n] is not None} for row in result]


def calls_from(ws: Workspace, source_key: str) -> dict[str, tuple[str, str]]:
    """Targets (key after '#') of the calls from one entity -> (confidence, resolvedBy)."""
    found = rows(
        ws,
        "SELECT ?s ?o ?c ?by WHERE { ?s uko-code:calls ?o . "
        "?r rdf:reifies <<( ?s uko-code:calls ?o )>> ; ca:confidence ?c ; ca:resolvedBy ?by }",
    )
    return {r["o"].split("#")[-1]: (r["c"], r["by"]) for r in found if r["s"].endswith("#" + source_key)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text(A)
    (root / "pkg" / "b.py").write_text(B)
    (root / "pkg" / "c.py").write_text(C)
    return root


@pytest.fixture
def info(ws: Workspace, project: Path) -> ResourceInfo:
    added, _ = resources.add(ws, project, type_name="fs-directory")
    return added


def index(ws: Workspace, info: ResourceInfo, *, lsp: bool = True) -> IndexSummary:
    return indexing.index(ws, [info], lsp=lsp, lsp_timeout=30.0)[0]


def test_the_server_resolves_calls_and_corrects_guesses(ws: Workspace, info: ResourceInfo) -> None:
    plain = index(ws, info, lsp=False)
    assert plain.revision is not None
    # Name matching can only guess which `run` `current.process_batch()` calls.
    guessed = calls_from(ws, "use")
    assert guessed["Child.process_batch"][1] == guessed["Base.process_batch"][1] == "name-match"
    assert float(guessed["Child.process_batch"][0]) < 0.5, "a guess between two methods named process_batch"

    summary = index(ws, info)
    assert summary.revision is not None, "the LSP pass is a commit of its own"
    [report] = summary.enrichment
    assert report["unavailable"] is None and report["files"] == 4 and report["requests"] > 0

    use = calls_from(ws, "use")
    assert use["make"] == ("1", LSP)
    assert use["Child.process_batch"] == ("1", LSP), "pyright knows current is a Child"
    assert "Base.process_batch" not in use, "the wrong guess is gone"
    assert calls_from(ws, "Child.process_batch")["helper"] == ("1", LSP)
    assert calls_from(ws, "caller")["ambiguous"] == ("1", LSP)
    stats = summary.resolution["https://cleveragents.ai/ontology/uko/code#calls"]
    assert stats.confirmed + stats.corrected + stats.added + stats.unresolved > 0
    assert stats.confirmed >= 1


def test_calls_outside_the_resource_go_to_external_symbols(ws: Workspace, info: ResourceInfo) -> None:
    index(ws, info)
    found = rows(
        ws,
        "SELECT ?q ?lang ?where ?path WHERE { ?s uko-code:calls ?x . ?x a uko-code:ExternalSymbol ; "
        "uko-code:qualifiedName ?q ; uko-code:language ?lang ; ca:externalLocation ?where ; uko:sourcePath ?path . "
        "FILTER(STRENDS(STR(?s), '#Child.process_batch')) }",
    )
    names = {r["q"] for r in found}
    # os.path is posixpath or ntpath, by platform: the server names both.
    assert names == {"posixpath.join", "ntpath.join"}
    assert {r["lang"] for r in found} == {"python"}
    assert {r["path"] for r in found} == {"pkg/b.py"}  # the referring file's node
    assert all(r["where"].startswith("file://") for r in found)


def test_diagnostics_and_inferred_types_are_recorded(ws: Workspace, info: ResourceInfo) -> None:
    summary = index(ws, info)
    assert summary.enrichment[0]["diagnostics"] >= 1, summary.enrichment
    found = rows(
        ws,
        "SELECT ?owner ?severity ?code ?message ?range WHERE { ?owner uko:contains ?d . ?d a uko-code:Diagnostic ; "
        "uko-code:severity ?severity ; uko-code:message ?message ; uko:sourceRange ?range ; ca:resolvedBy ?by . "
        "OPTIONAL { ?d uko-code:diagnosticCode ?code } }",
    )
    assigned = [r for r in found if "not a number" in r["message"]]
    assert assigned, found
    assert assigned[0]["owner"].endswith("#Child.process_batch")
    assert assigned[0]["severity"] == "error"
    assert assigned[0]["range"].startswith("13:")
    typed = rows(
        ws,
        "SELECT ?f ?t ?by WHERE { ?f uko-code:inferredReturnType ?t ; ca:typesInferredBy ?by }",
    )
    by_name = {r["f"].split("#")[-1]: (r["t"], r["by"]) for r in typed}
    assert by_name["untyped"] == ("LiteralString", LSP)  # more precise than the syntax could say
    assert by_name["make"] == ("Child", LSP)
    assert "scaled" not in by_name, "its return type is declared"
    parameters = rows(ws, "SELECT ?f ?p ?by WHERE { ?f uko-code:inferredParameterTypes ?p ; ca:typesInferredBy ?by }")
    by_name = {r["f"].split("#")[-1]: (json.loads(r["p"]), r["by"]) for r in parameters}
    # From the defaults; `value` has nothing to infer from, and self is not a gap.
    assert by_name["scaled"] == ({"factor": "float", "label": "str"}, LSP)
    assert "Child.process_batch" not in by_name
    assert summary.enrichment[0]["typed_parameters"] >= 2


def test_reindex_is_incremental_and_keeps_history(ws: Workspace, info: ResourceInfo, project: Path) -> None:
    first = index(ws, info)
    assert index(ws, info).revision is None, "an unchanged, enriched tree writes nothing"
    # An edit re-resolves that file; without --lsp the edit falls back to name matching.
    (project / "pkg" / "c.py").write_text(C.replace("a.ambiguous()", "a.helper(3)"))
    edited = index(ws, info)
    assert edited.analyzed >= 1 and edited.revision is not None
    assert calls_from(ws, "caller") == {"helper": ("1", LSP)}
    before = {k: v for k, v in calls_from(ws, "caller").items()}
    (project / "pkg" / "c.py").write_text(C)
    index(ws, info, lsp=False)
    assert calls_from(ws, "caller")["ambiguous"][1] == "name-match"
    marks = rows(ws, "SELECT ?p WHERE { ?f ca:enrichedBy ?by ; uko:sourcePath ?p }")
    assert "pkg/c.py" not in {r["p"] for r in marks}
    # History: the resolved edge is queryable as of the revision that wrote it.
    assert first.revision is not None and edited.revision is not None
    past = rows(
        ws,
        "SELECT ?o ?by WHERE { ?s uko-code:calls ?o . ?r rdf:reifies <<( ?s uko-code:calls ?o )>> ; "
        "ca:resolvedBy ?by . FILTER(STRENDS(STR(?s), '#caller')) }",
        as_of=edited.revision,
    )
    assert {(r["o"].split("#")[-1], r["by"]) for r in past} == {(k, v[1]) for k, v in before.items()}


def test_a_server_that_cannot_start_leaves_name_matches(ws: Workspace, info: ResourceInfo, tmp_path: Path) -> None:
    config = tmp_path / "broken.yaml"
    config.write_text(
        "name: local/broken-python\ncommand: " + shutil.which("false") + "\nlanguages: [python]\n"  # type: ignore[operator]
    )
    lsp_registry.add(ws, config)
    summary = index(ws, info)
    [report] = summary.enrichment
    assert report["server"] == "local/broken-python"
    assert "could not start" in str(report["unavailable"])
    assert summary.revision is not None  # the tree-sitter index still happened
    assert calls_from(ws, "Child.process_batch")["helper"][1] == "name-match"
    assert not rows(ws, "SELECT ?f WHERE { ?f ca:enrichedBy ?by }")


def test_a_server_that_is_not_installed_is_reported_once(ws: Workspace, info: ResourceInfo, tmp_path: Path) -> None:
    config = tmp_path / "missing.yaml"
    config.write_text("name: local/missing-python\ncommand: no-such-python-server\nlanguages: [python]\n")
    lsp_registry.add(ws, config)
    summary = index(ws, info)
    unavailable = [r for r in summary.enrichment if r["unavailable"]]
    assert [r["server"] for r in unavailable] == ["local/missing-python"]
    assert "no-such-python-server" in str(unavailable[0]["unavailable"])
    # The next server registered for Python (the built-in) took over.
    used = [r for r in summary.enrichment if not r["unavailable"]]
    assert [r["server"] for r in used] == ["cleveragents/basedpyright"]


FLAKY = Path(__file__).parent / "fake_servers" / "flaky_server.py"


def register_flaky(ws: Workspace, tmp_path: Path, name: str, mode: str) -> None:
    """A FAKE Python server (tests/lsp/fake_servers/flaky_server.py) in ``mode``."""
    config = tmp_path / f"{name}.yaml"
    config.write_text(
        f"name: local/{name}\ncommand: {sys.executable}\nargs: [{str(FLAKY)!r}, {mode!r}]\nlanguages: [python]\n"
    )
    lsp_registry.add(ws, config)


def test_files_the_server_rejects_are_reported_and_keep_name_matches(
    ws: Workspace, info: ResourceInfo, tmp_path: Path
) -> None:
    register_flaky(ws, tmp_path, "rejecting-python", "reject:pkg/b.py")
    summary = index(ws, info)
    [report] = summary.enrichment
    assert report["server"] == "local/rejecting-python" and report["unavailable"] is None
    assert report["rejected"] == ["pkg/b.py"]
    assert report["failed_requests"] > 0
    # The rejected file keeps its name-match edges and is retried on the next run.
    assert calls_from(ws, "Child.process_batch")["helper"][1] == "name-match"
    enriched = {r["f"].rsplit("/", 1)[-1] for r in rows(ws, "SELECT ?f WHERE { ?f ca:enrichedBy ?by }")}
    assert "b.py" not in enriched and "a.py" in enriched


def test_a_server_that_crashes_mid_run_is_reported_once(ws: Workspace, info: ResourceInfo, tmp_path: Path) -> None:
    register_flaky(ws, tmp_path, "crashing-python", "crash-after:2")
    summary = index(ws, info)
    [report] = summary.enrichment
    assert report["server"] == "local/crashing-python"
    # With or without "; gave up after 2 restarts": whether the last crash comes before or
    # after the restarts are used up depends on how the pipelined requests interleave.
    assert str(report["unavailable"]).startswith("stopped during the run: exited with code 3"), report
    assert summary.revision is not None  # the tree-sitter index still happened
    assert calls_from(ws, "Child.process_batch")["helper"][1] == "name-match"
    assert not rows(ws, "SELECT ?f WHERE { ?f ca:enrichedBy ?by }")
