"""``agents init``, ``agents graph ...`` and ``agents query ...`` on a real store in tmp_path.

Commands run in-process through ``run()`` (the console entry point) with captured output;
the lock test and the binary stdout export run the CLI in a subprocess.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.cli.main import run
from cleveragents.graph.store import GraphStore


def _have_validator() -> bool:
    try:
        return importlib.util.find_spec("cleveragents.validation.compiler") is not None
    except ModuleNotFoundError:
        return False


HAVE_VALIDATOR = _have_validator()
needs_validator = pytest.mark.skipif(
    not HAVE_VALIDATOR,
    reason="SHACL validation needs cleveragents.validation.compiler (not written yet)",
)

EX = "https://ex.org/"
MODULE = f"<{EX}mod>"
CODE = "https://cleveragents.ai/ontology/uko/code#"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> dict:
        return json.loads(self.out)


class Cli:
    """Runs ``agents --data-dir DIR ...`` in-process and captures its output."""

    def __init__(self, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.data_dir = data_dir
        self.capsys = capsys

    def __call__(self, *args: str, fmt: str | None = None) -> Result:
        argv = ["--data-dir", str(self.data_dir), *(["--format", fmt] if fmt else []), *args]
        self.capsys.readouterr()
        code = run(argv)
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def ok(self, *args: str, fmt: str | None = None) -> Result:
        result = self(*args, fmt=fmt)
        assert result.code == 0, (args, result.out, result.err)
        return result

    def update(self, text: str, message: str = "") -> dict:
        args = ["graph", "update", text] + (["-m", message] if message else [])
        return self.ok(*args, fmt="json").json()["data"]["commit"]

    def export_nq(self, path: Path) -> bytes:
        self.ok("graph", "export", "--format", "nq", "-o", str(path))
        return path.read_bytes()


def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No CLEVERAGENTS_* settings from outside; HOME and cwd inside tmp_path."""
    for name in list(os.environ):
        if name.startswith("CLEVERAGENTS_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USER", "tester")
    monkeypatch.chdir(tmp_path)
    if not HAVE_VALIDATOR:
        # Commits would fail to import the validator; everything else is still tested.
        monkeypatch.setenv("CLEVERAGENTS_STORE_VALIDATE_ON_COMMIT", "false")


def initialized_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """A clean environment and an initialized store in tmp_path/data."""
    clean_env(monkeypatch, tmp_path)
    runner = Cli(tmp_path / "data", capsys)
    runner.ok("init")
    return runner


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


def subprocess_cli(data_dir: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    code = "import sys; from cleveragents.cli.main import run; sys.exit(run())"
    return subprocess.run(
        [sys.executable, "-c", code, "--data-dir", str(data_dir), *args],
        capture_output=True,
        input=stdin,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )


# --- init ----------------------------------------------------------------------------------


def test_init_creates_store_and_reports_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    clean_env(monkeypatch, tmp_path)
    runner = Cli(tmp_path / "data", capsys)
    first = runner.ok("init")
    assert f"Data dir:         {tmp_path / 'data'}" in first.out
    assert str(tmp_path / "data" / "store") in first.out
    assert "Ontology triples:" in first.out and "Shape triples:" in first.out
    assert "[OK] Initialized a new store" in first.out
    assert (tmp_path / "data" / "config.toml").is_file()

    doc = runner.ok("init", fmt="json").json()
    info = doc["data"]["init"]
    assert set(info) == {
        "data_dir",
        "store",
        "config",
        "ontology_triples",
        "closure_pairs",
        "shape_triples",
        "head",
        "reset",
    }
    assert info["ontology_triples"] > 1000 and info["shape_triples"] > 100
    assert info["closure_pairs"] > 0 and info["head"] == 0
    assert "data and history kept" in doc["messages"][0]["text"]


def test_reset_needs_yes_and_wipes(cli: Cli):
    cli.update(f"INSERT DATA {{ {MODULE} <{EX}p> 1 }}")
    refused = cli("init", "--reset")
    assert refused.code == 2
    assert refused.err.startswith("Error [400] USAGE: --reset deletes every graph")
    assert "--yes" in refused.err
    assert cli.ok("graph", "stats", fmt="json").json()["data"]["stats"]["head"] == 1

    done = cli.ok("init", "--reset", "--yes", fmt="json").json()
    assert done["data"]["init"]["head"] == 0 and done["data"]["init"]["reset"] is True
    assert cli.ok("graph", "query", f"ASK {{ {MODULE} ?p ?o }}").out.strip() == "no"


def test_commands_need_an_initialized_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    clean_env(monkeypatch, tmp_path)
    result = Cli(tmp_path / "empty", capsys)("graph", "query", "ASK {}")
    assert result.code == 1
    assert result.err.startswith("Error [522] DATABASE_ERROR: no store in")
    assert "agents init" in result.err


# --- query ---------------------------------------------------------------------------------


@pytest.fixture
def module_cli(cli: Cli) -> Cli:
    cli.update(
        f"PREFIX ex: <{EX}> INSERT DATA {{ {MODULE} a uko-code:Module ; "
        f'uko:sourceResource ex:repo ; rdfs:label "mod, \\"one\\"" ; ex:size 42 }}',
        "add a module",
    )
    return cli


def test_select_table_json_csv_tsv(module_cli: Cli):
    cli = module_cli
    query = f"SELECT ?t ?label WHERE {{ {MODULE} a ?t ; rdfs:label ?label }} ORDER BY ?t"
    plain = cli.ok("graph", "query", query).out
    lines = plain.splitlines()
    assert lines[0].split() == ["t", "label"]
    assert any(line.startswith("uko-code:Module") for line in lines)  # compact in human formats
    assert any(line.startswith("uko:Container") for line in lines)  # the RDFS closure
    assert 'mod, "one"' in plain
    assert "[INFO] 3 row(s) at revision 1" in plain

    doc = cli.ok("graph", "query", query, fmt="json").json()
    assert list(doc) == ["command", "status", "exit_code", "data", "messages", "timing"]
    assert doc["command"] == "graph query" and doc["status"] == "ok"
    data = doc["data"]
    assert list(data) == ["form", "revision", "variables", "results"]
    assert data["form"] == "select" and data["revision"] == 1
    assert data["variables"] == ["t", "label"]
    assert data["results"][-1] == {
        "t": f"<{CODE}Module>",
        "label": '"mod, \\"one\\""',
    }

    # The command's own --format overrides the global one.
    rows = list(csv.reader(io.StringIO(cli.ok("graph", "query", "--format", "csv", query).out)))
    assert rows[0] == ["t", "label"]
    assert [f"{CODE}Module", 'mod, "one"'] in rows  # plain values, full IRIs
    tsv = cli.ok("graph", "query", query, fmt="tsv").out.splitlines()
    assert tsv[0] == "t\tlabel"
    assert f'{CODE}Module\tmod, "one"' in tsv

    unbound = cli.ok("graph", "query", "SELECT ?x ?y WHERE { BIND(1 AS ?x) }", fmt="json").json()
    assert unbound["data"]["results"] == [{"x": '"1"^^<http://www.w3.org/2001/XMLSchema#integer>', "y": None}]


def test_ask_and_construct(module_cli: Cli):
    cli = module_cli
    assert cli.ok("graph", "query", f"ASK {{ {MODULE} a uko:InformationUnit }}").out == "yes\n"
    assert cli.ok("graph", "query", f"ASK {{ {MODULE} a uko:Atom }}").out == "no\n"
    doc = cli.ok("graph", "query", f"ASK {{ {MODULE} ?p ?o }}", fmt="json").json()
    assert doc["data"]["form"] == "ask" and doc["data"]["boolean"] is True
    assert cli.ok("graph", "query", "--format", "csv", "ASK {}").out == "boolean\ntrue\n"

    construct = f"CONSTRUCT {{ ?s <{EX}size> ?o }} WHERE {{ ?s <{EX}size> ?o }}"
    text = cli.ok("graph", "query", construct).out  # Turtle in human formats, then a count
    assert text.endswith("\n[INFO] 1 triple(s) at revision 1\n")
    assert "<https://ex.org/mod> <https://ex.org/size> 42 ." in text
    turtle = cli.ok("graph", "query", "--format", "turtle", construct).out
    parsed = list(ox.parse(turtle.encode(), ox.RdfFormat.TURTLE))
    assert [(q.subject.value, q.object.value) for q in parsed] == [(f"{EX}mod", "42")]
    assert "[INFO]" not in turtle  # turtle output is only Turtle

    described = cli.ok("graph", "query", f"DESCRIBE {MODULE}").out
    assert "@prefix uko-code: <https://cleveragents.ai/ontology/uko/code#>" in described
    assert "uko-code:Module" in described

    doc = cli.ok("graph", "query", construct, fmt="json").json()
    assert doc["data"]["form"] == "graph"
    assert doc["data"]["triples"] == [
        {
            "subject": MODULE,
            "predicate": f"<{EX}size>",
            "object": '"42"^^<http://www.w3.org/2001/XMLSchema#integer>',
        }
    ]

    wrong = cli("graph", "query", "--format", "turtle", "ASK {}")
    assert wrong.code == 2 and "CONSTRUCT and DESCRIBE" in wrong.err


def test_universal_view_finds_subclass_instances(module_cli: Cli):
    doc = module_cli.ok("graph", "query", "SELECT ?x WHERE { ?x a uko:Container }", fmt="json").json()
    assert {"x": MODULE} in doc["data"]["results"]


def test_query_from_file_and_usage_errors(module_cli: Cli, tmp_path: Path):
    path = tmp_path / "q.rq"
    path.write_text(f"SELECT ?o WHERE {{ {MODULE} <{EX}size> ?o }}")
    assert module_cli.ok("graph", "query", "-f", str(path)).out.splitlines()[2] == "42"
    both = module_cli("graph", "query", "ASK {}", "-f", str(path))
    assert both.code == 2 and "not both or neither" in both.err
    assert module_cli("graph", "query").code == 2
    missing = module_cli("graph", "query", "-f", str(tmp_path / "nope.rq"))
    assert missing.code == 1 and "cannot read" in missing.err
    bad_format = module_cli("graph", "query", "--format", "xml", "ASK {}")
    assert bad_format.code == 2 and "unknown --format 'xml'" in bad_format.err


def test_malformed_sparql_reports_line_and_column(cli: Cli):
    result = cli("graph", "query", "SELECT ?x WHERE {\n  ?x ?y }")
    assert result.code == 1
    assert result.out == ""
    first = result.err.splitlines()[0]
    assert first.startswith("Error [422] SYNTAX_ERROR: malformed SPARQL at line 2, column")
    assert "line" in first and "column" in first
    doc = cli("graph", "query", "SELEKT *", fmt="json").json()
    assert doc["status"] == "error" and doc["error"]["code"] == "SYNTAX_ERROR"


def test_as_of(module_cli: Cli):
    cli = module_cli
    cli.update(f"DELETE DATA {{ {MODULE} <{EX}size> 42 }} ; INSERT DATA {{ {MODULE} <{EX}size> 43 }}")
    query = f"SELECT ?o WHERE {{ {MODULE} <{EX}size> ?o }}"
    assert cli.ok("graph", "query", query).out.splitlines()[2] == "43"
    old = cli.ok("graph", "query", "--as-of", "1", query, fmt="json").json()["data"]
    assert old["revision"] == 1
    assert old["results"] == [{"o": '"42"^^<http://www.w3.org/2001/XMLSchema#integer>'}]

    unknown = cli("graph", "query", "--as-of", "nonsense", query)
    assert unknown.code == 1 and unknown.out == ""
    assert unknown.err.splitlines()[0] == (
        "Error [404] NOT_FOUND: unknown --as-of 'nonsense': not a revision number, "
        "an ISO timestamp or a known external id"
    )
    assert "Traceback" not in unknown.err
    future = cli("graph", "query", "--as-of", "99", query)
    assert future.code == 1
    assert future.err.splitlines() == ["Error [404] NOT_FOUND: unknown revision 99: the store has revisions 0..2"]


def test_query_timeout(cli: Cli):
    triples = " ".join(f"<{EX}n{i}> <{EX}p> {i} ." for i in range(300))
    cli.update(f"INSERT DATA {{ {triples} }}", "300 triples")
    started = time.monotonic()
    result = cli(
        "graph",
        "query",
        "--timeout",
        "0.5",
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
    )
    assert time.monotonic() - started < 15
    assert result.code == 1
    assert result.err.splitlines()[0] == "Error [408] TIMEOUT: query cancelled after 0.5 s"


# --- update, validation, import and export ---------------------------------------------------


def test_update_reports_the_commit(cli: Cli):
    result = cli.ok("graph", "update", "-m", "first", f"INSERT DATA {{ {MODULE} <{EX}p> 1 }}")
    assert result.out == "[OK] Committed revision 1 (update): +1 -0 triples\n"
    commit = cli.update(f"INSERT DATA {{ {MODULE} <{EX}p> 1 }}")
    assert commit == {
        "revision": 1,
        "commit": None,
        "added": 0,
        "removed": 0,
        "inferred_added": 0,
        "inferred_removed": 0,
        "changed": False,
    }
    again = cli.ok("graph", "update", f"INSERT DATA {{ {MODULE} <{EX}p> 1 }}")
    assert again.out.startswith("[INFO] No change")
    unsupported = cli("graph", "update", "DROP ALL")
    assert unsupported.code == 1 and "not supported" in unsupported.err


@needs_validator
def test_update_violating_shapes_is_rejected_and_writes_nothing(cli: Cli, tmp_path: Path):
    cli.update(f"INSERT DATA {{ {MODULE} <{EX}p> 1 }}")
    before = cli.export_nq(tmp_path / "before.nq")
    bad = 'INSERT DATA { <https://cleveragents.ai/id/project/bad> a ca:Project ; ca:name "Not A Valid Name" }'
    result = cli("graph", "update", bad)
    assert result.code == 1
    assert result.err.splitlines()[0].startswith("Error [422] SHACL_VIOLATION: commit rejected")
    assert "https://cleveragents.ai/id/project/bad" in result.out  # the report table
    assert "ca:name" in result.out
    assert cli.export_nq(tmp_path / "after.nq") == before

    doc = cli("graph", "update", bad, fmt="json").json()
    assert doc["status"] == "error" and doc["error"]["code"] == "SHACL_VIOLATION"
    violation = doc["data"]["violations"][0]
    for key in ("focus_node", "result_path", "constraint", "message", "value"):
        assert key in violation
    assert cli.export_nq(tmp_path / "after2.nq") == before


@needs_validator
def test_validate_command(cli: Cli):
    result = cli.ok("graph", "validate", fmt="json").json()
    assert result["data"]["conforms"] is True


def test_import_turtle_and_malformed(cli: Cli, tmp_path: Path):
    good = tmp_path / "data.ttl"
    good.write_text(f'@prefix ex: <{EX}> .\nex:a ex:p "1" ; ex:q ex:b .\n_:x ex:r ex:a .\n')
    result = cli.ok("graph", "import", str(good), "-m", "load data")
    assert result.out == "[OK] Committed revision 1 (import data.ttl): +3 -0 triples\n"
    log = cli.ok("graph", "log", fmt="json").json()["data"]["commits"]
    assert log[0]["message"] == "load data" and log[0]["cause"] == "import"
    assert log[0]["agent"] == "tester"

    before = cli.export_nq(tmp_path / "before.nq")
    bad = tmp_path / "bad.ttl"
    bad.write_text(f'@prefix ex: <{EX}> .\nex:a ex:p "1" .\nex:c ex:p ex:d ex:e .\n')
    failed = cli("graph", "import", str(bad))
    assert failed.code == 1
    assert failed.err.startswith("Error [422] SYNTAX_ERROR: malformed Turtle in")
    assert "line 3" in failed.err
    assert cli.export_nq(tmp_path / "after.nq") == before

    nt = tmp_path / "data.txt"
    nt.write_text(f"<{EX}c> <{EX}p> <{EX}d> .\n")
    unknown = cli("graph", "import", str(nt))
    assert unknown.code == 1 and "unknown RDF format 'txt'" in unknown.err
    cli.ok("graph", "import", str(nt), "--rdf-format", "nt")
    assert cli.ok("graph", "query", f"ASK {{ <{EX}c> <{EX}p> <{EX}d> }}").out == "yes\n"


def _content(data: bytes, fmt: ox.RdfFormat) -> set[tuple[str, str, str]]:
    return {
        (str(q.subject), str(q.predicate), str(q.object))
        for q in ox.parse(data, fmt)
        if str(q.subject).startswith(f"<{EX}")
    }


def test_export_round_trip(cli: Cli, tmp_path: Path):
    cli.update(f'PREFIX ex: <{EX}> INSERT DATA {{ ex:a ex:p "x"@en ; ex:q ex:b , 3 }}')
    cli.update(f"PREFIX ex: <{EX}> DELETE DATA {{ ex:a ex:q 3 }}")
    ttl = tmp_path / "state.ttl"
    result = cli.ok("graph", "export", "--format", "ttl", "-o", str(ttl))
    assert result.out.startswith("[OK] Exported ") and str(ttl) in result.out
    exported = _content(ttl.read_bytes(), ox.RdfFormat.TURTLE)
    assert exported == {
        (f"<{EX}a>", f"<{EX}p>", '"x"@en'),
        (f"<{EX}a>", f"<{EX}q>", f"<{EX}b>"),
    }
    old = tmp_path / "old.nt"
    cli.ok("graph", "export", "--format", "nt", "--as-of", "1", "-o", str(old))
    assert len(_content(old.read_bytes(), ox.RdfFormat.N_TRIPLES)) == 3

    # Re-import into a fresh store: the same content comes back out.
    other = Cli(tmp_path / "other", cli.capsys)
    other.ok("init")
    other.ok("graph", "import", str(ttl))
    again = tmp_path / "again.ttl"
    other.ok("graph", "export", "--format", "ttl", "-o", str(again))
    assert _content(again.read_bytes(), ox.RdfFormat.TURTLE) == exported

    # Full-fidelity nq to stdout is byte-identical to the file export.
    nq = cli.export_nq(tmp_path / "full.nq")
    piped = subprocess_cli(cli.data_dir, "graph", "export")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == nq and piped.stderr == b""
    assert len(list(ox.parse(nq, ox.RdfFormat.N_QUADS))) > 3000  # ontology and history too
    bad = cli("graph", "export", "--format", "xlsx", "-o", str(tmp_path / "x"))
    assert bad.code == 1 and "unknown export format 'xlsx'" in bad.err
    assert not list(tmp_path.glob("x*"))  # no partial file left behind


# --- history -------------------------------------------------------------------------------


@pytest.fixture
def history_cli(cli: Cli) -> Cli:
    cli.update(f"PREFIX ex: <{EX}> INSERT DATA {{ ex:a ex:p 1 }}", "r1 add p")
    cli.update(f"PREFIX ex: <{EX}> DELETE DATA {{ ex:a ex:p 1 }} ; INSERT DATA {{ ex:a ex:p 2 }}", "r2 change p")
    cli.update(f"PREFIX ex: <{EX}> INSERT DATA {{ ex:a ex:q ex:b . ex:c ex:r ex:a }}", "r3 add q")
    return cli


INT = "^^<http://www.w3.org/2001/XMLSchema#integer>"


def test_log(history_cli: Cli):
    text = history_cli.ok("graph", "log").out.splitlines()
    assert text[0] == "Commits"
    assert "r3 add q" in text[3] and "tester" in text[3]
    commits = history_cli.ok("graph", "log", "--limit", "2", fmt="json").json()["data"]["commits"]
    assert [c["revision"] for c in commits] == [3, 2]
    assert set(commits[0]) == {
        "revision",
        "time",
        "agent",
        "cause",
        "message",
        "added",
        "removed",
        "external_id",
        "commit",
    }
    assert commits[1]["added"] == 1 and commits[1]["removed"] == 1
    assert commits[1]["cause"] == "sparql-update" and commits[1]["message"] == "r2 change p"


def test_diff(history_cli: Cli):
    doc = history_cli.ok("graph", "diff", "1", "3", fmt="json").json()
    assert doc["data"]["diff"] == {"from": 1, "to": 3, "added": 3, "removed": 1}
    changes = {(c["change"], c["subject"], c["predicate"], c["object"]) for c in doc["data"]["changes"]}
    assert changes == {
        ("+", f"<{EX}a>", f"<{EX}p>", f'"2"{INT}'),
        ("+", f"<{EX}a>", f"<{EX}q>", f"<{EX}b>"),
        ("+", f"<{EX}c>", f"<{EX}r>", f"<{EX}a>"),
        ("-", f"<{EX}a>", f"<{EX}p>", f'"1"{INT}'),
    }
    text = history_cli.ok("graph", "diff", "1", "2").out
    assert "+  https://ex.org/a  https://ex.org/p  2" in text
    assert "-  https://ex.org/a  https://ex.org/p  1" in text
    assert "[INFO] r1 → r2: 1 added, 1 removed" in text
    # Commit records show with --all only.
    everything = history_cli.ok("graph", "diff", "1", "2", "--all", fmt="json").json()
    assert everything["data"]["diff"]["added"] > 1
    backwards = history_cli.ok("graph", "diff", "2", "1", fmt="json").json()["data"]["diff"]
    assert (backwards["added"], backwards["removed"]) == (1, 1)


def test_history(history_cli: Cli):
    rows = history_cli.ok("graph", "history", f"{EX}a", fmt="json").json()["data"]["history"]
    spans = {(r["predicate"], r["object"], r["from"], r["until"]) for r in rows}
    assert spans == {
        (f"<{EX}p>", f'"1"{INT}', 1, 2),
        (f"<{EX}p>", f'"2"{INT}', 2, None),
        (f"<{EX}q>", f"<{EX}b>", 3, None),
    }
    closed = next(r for r in rows if r["until"] == 2)
    assert closed["from_time"] < closed["until_time"]
    incoming = history_cli.ok("graph", "history", f"<{EX}a>", "--incoming", fmt="json").json()
    assert (f"<{EX}c>", f"<{EX}r>") in {(r["subject"], r["predicate"]) for r in incoming["data"]["history"]}
    text = history_cli.ok("graph", "history", f"{EX}a").out
    assert text.splitlines()[0] == "History of https://ex.org/a"
    unknown = history_cli("graph", "history", f"{EX}never")
    assert unknown.code == 1 and "has never been in the graph" in unknown.err


def test_blame(history_cli: Cli):
    rows = history_cli.ok("graph", "blame", f"{EX}a", fmt="json").json()["data"]["blame"]
    lines = {(r["predicate"], r["revision"], r["message"], r["agent"]) for r in rows}
    assert lines == {(f"<{EX}p>", 2, "r2 change p", "tester"), (f"<{EX}q>", 3, "r3 add q", "tester")}
    every = history_cli.ok("graph", "blame", f"{EX}a", "--all", fmt="json").json()["data"]["blame"]
    retracted = [r for r in every if r["retracted"] is not None]
    assert [(r["object"], r["revision"], r["retracted"]) for r in retracted] == [(f'"1"{INT}', 1, 2)]
    text = history_cli.ok("graph", "blame", f"{EX}a").out
    assert "r3 add q" in text and "Retracted" not in text


def test_stats_json(history_cli: Cli):
    stats = history_cli.ok("graph", "stats", fmt="json").json()["data"]["stats"]
    assert set(stats) == {
        "head",
        "asserted",
        "inferred",
        "historical",
        "graphs",
        "ontology",
        "shapes",
        "disk_bytes",
    }
    assert stats["head"] == 3 and stats["historical"] >= 1 and stats["ontology"] > 1000
    assert "Head revision:" in history_cli.ok("graph", "stats").out


# --- named queries -------------------------------------------------------------------------


def test_named_queries(history_cli: Cli):
    cli = history_cli
    listed = cli.ok("query", "list", fmt="json").json()["data"]["queries"]
    names = {q["name"] for q in listed}
    assert {"blame", "current-state", "node-history", "all-containers"} <= names
    assert set(listed[0]) == {"name", "params", "description", "param_list", "file"}

    shown = cli.ok("query", "show", "current-state").out
    assert "node (iri)" in shown and "SELECT" in shown

    doc = cli.ok("query", "run", "current-state", "--param", f"node={EX}a", fmt="json").json()
    assert {(r["predicate"], r["object"]) for r in doc["data"]["results"]} == {
        (f"<{EX}p>", f'"2"{INT}'),
        (f"<{EX}q>", f"<{EX}b>"),
    }
    old = cli.ok("query", "run", "current-state", "-p", f"node={EX}a", "--as-of", "1", fmt="json")
    assert [r["object"] for r in old.json()["data"]["results"]] == [f'"1"{INT}']
    # Bound parameters are constant columns: hidden on screen.
    text = cli.ok("query", "run", "current-state", "-p", f"node={EX}a").out
    assert text.splitlines()[0].split() == ["predicate", "object"]

    history = cli.ok("query", "run", "node-history", "-p", f"node={EX}a", fmt="json").json()
    assert len(history["data"]["results"]) == 3

    missing = cli("query", "run", "current-state")
    assert missing.code == 1 and "needs --param node=VALUE" in missing.err
    malformed = cli("query", "run", "current-state", "-p", "node")
    assert malformed.code == 2 and "NAME=VALUE" in malformed.err
    unknown = cli("query", "show", "nope")
    assert unknown.code == 1 and unknown.err.startswith("Error [404] NOT_FOUND: no named query 'nope'")


# --- locking -------------------------------------------------------------------------------


@pytest.fixture
def held_store(cli: Cli) -> Iterator[Path]:
    store = GraphStore.open(cli.data_dir / "store")
    try:
        yield cli.data_dir
    finally:
        store.close()


def test_locked_store_gives_one_line_error(held_store: Path):
    result = subprocess_cli(held_store, "--wait", "0", "graph", "update", f"INSERT DATA {{ {MODULE} <{EX}p> 1 }}")
    err = result.stderr.decode()
    assert result.returncode == 1, err
    first = err.splitlines()[0]
    assert first.startswith("Error [423] STORE_LOCKED: the store at ")
    assert f"pid {os.getpid()}" in first
    assert "Traceback" not in err
    # Readers work beside the writer.
    reader = subprocess_cli(held_store, "graph", "query", "ASK {}")
    assert reader.returncode == 0 and reader.stdout == b"yes\n"
