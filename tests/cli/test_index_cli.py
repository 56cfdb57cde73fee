"""``agents index``, ``agents show`` and eager indexing from ``resource add``, on a real store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cleveragents import iris
from tests.cli.test_graph_cli import Cli, initialized_cli
from tests.signals import interruptible

SUMMARY_KEYS = {
    "resource", "files_seen", "analyzed", "unchanged", "deleted", "skipped", "errors", "parse_problems",
    "hidden_entities", "cut_off", "entities_added", "entities_changed", "entities_removed", "triples_added",
    "triples_closed", "edges", "unresolved_references", "revision", "seconds", "resolution", "enrichment",
}  # fmt: skip

SOURCE = '''"""Shapes."""


class Shape:
    """A shape."""

    def area(self) -> float:
        if self.empty():
            return 0.0
        return self.compute()

    def empty(self) -> bool:
        return False


def total(shapes: list[Shape]) -> float:
    return sum(s.area() for s in shapes)
'''


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "shapes.py").write_text(SOURCE)
    (root / "pkg" / "broken.py").write_text("def fine():\n    pass\n\ndef broken(:\n    pass\n")
    (root / "README.md").write_text("# Shapes\n\nSee `Shape.area` for the area.\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    return root


def test_resource_add_indexes_and_index_reports_in_json(cli: Cli, project: Path):
    added = cli.ok("resource", "add", str(project), "--type", "fs-directory", "--name", "local/proj", fmt="json")
    summary = added.json()["data"]["index"]
    assert set(summary) == SUMMARY_KEYS
    assert summary["analyzed"] == 4 and summary["revision"] == 2
    assert summary["skipped"] == [{"path": "logo.png", "reason": "no analyzer for this file type"}]
    assert summary["parse_problems"] == {"pkg/broken.py": 1}
    again = cli.ok("index", "local/proj", fmt="json").json()["data"]["index"]
    assert [s["revision"] for s in again] == [None] and again[0]["unchanged"] == 4
    text = cli.ok("index", "local/proj").out
    assert "Revision:                 no commit (no change)" in text


def test_show_renders_levels_now_and_as_of(cli: Cli, project: Path):
    info = cli.ok("resource", "add", str(project), "--type", "fs-directory", "--name", "local/proj", fmt="json")
    ulid = info.json()["data"]["resource"]["ulid"]
    area = iris.file_iri(ulid, "pkg/shapes.py", "Shape.area")
    signatures = cli.ok("show", area, "--depth", "SIGNATURES", fmt="json").json()["data"]["rendering"]
    assert signatures["level"] == "SIGNATURES" and signatures["revision"] == 2
    assert "def area(self) -> float" in signatures["text"] and "return" not in signatures["text"]
    full = cli.ok("show", area, "--depth", "FULL_SOURCE", fmt="json").json()["data"]["rendering"]
    assert full["text"] == SOURCE[SOURCE.index("    def area") + 4 : SOURCE.index("    def empty") - 2]
    assert full["range"] == "7:4-10:29"
    outline = cli.ok("show", area, "--depth", "STRUCTURAL_OUTLINE").out
    assert "if" in outline and "self.empty()" not in outline

    (project / "pkg" / "shapes.py").write_text(SOURCE.replace("return 0.0", "return -1.0"))
    cli.ok("index", "local/proj")
    assert "-1.0" in cli.ok("show", area, "--depth", "FULL_SOURCE").out
    assert "-1.0" not in cli.ok("show", area, "--depth", "FULL_SOURCE", "--as-of", "2").out


def test_index_and_show_bad_input(cli: Cli, project: Path, tmp_path: Path):
    info = cli.ok("resource", "add", str(project), "--type", "fs-directory", "--name", "local/proj", fmt="json")
    ulid = info.json()["data"]["resource"]["ulid"]
    area = iris.file_iri(ulid, "pkg/shapes.py", "Shape.area")
    unknown_level = cli("show", area, "--depth", "SIGNATURE")
    assert unknown_level.code == 1 and "unknown detail level 'SIGNATURE'" in unknown_level.err
    assert "SIGNATURES" in unknown_level.err  # the suggestion
    missing = cli("show", iris.file_iri(ulid, "pkg/shapes.py", "Nope"))
    assert missing.code == 1 and "does not exist at revision" in missing.err
    not_source = cli("show", "https://example.org/x")
    assert not_source.code == 1 and "is not an indexed file or entity" in not_source.err
    assert cli("index", "--max-commits", "3").code == 2
    assert cli("index", "local/proj", "--project", "local/p").code == 2
    unknown = cli("index", "local/nope")
    assert unknown.code == 1 and "resource 'local/nope' not found" in unknown.err
    no_git = cli("index", "local/proj", "--history")
    assert no_git.code == 1 and "needs a git-checkout resource" in no_git.err


def test_watch_reindexes_on_change_and_stops_on_ctrl_c(tmp_path: Path, project: Path):
    data = tmp_path / "watch-data"
    env = {**os.environ, "CLEVERAGENTS_DATA_DIR": str(data)}
    agents = [sys.executable, "-c", "import sys; from cleveragents.cli.main import run; sys.exit(run())"]
    subprocess.run([*agents, "init"], env=env, check=True, capture_output=True)
    subprocess.run(
        [*agents, "resource", "add", str(project), "--type", "fs-directory", "--name", "local/proj"],
        env=env,
        check=True,
        capture_output=True,
    )
    watcher = subprocess.Popen(
        [*agents, "--format", "plain", "index", "local/proj", "--watch"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    try:
        # The watcher may take a while to start on a loaded machine, and a write made before
        # its observer runs is never seen: the file is written again until the graph has it.
        deadline = time.monotonic() + 90
        found = ""
        attempt = 0
        while time.monotonic() < deadline and "added" not in found:
            if attempt % 5 == 0:
                (project / "pkg" / "extra.py").write_text(f"def added():\n    return {attempt}\n")
            attempt += 1
            time.sleep(1)
            query = subprocess.run(
                [
                    *agents,
                    "--format",
                    "plain",
                    "graph",
                    "query",
                    "SELECT ?n WHERE { ?f uko:name ?n FILTER(?n = 'added') }",
                ],
                env=env,
                capture_output=True,
                text=True,
            )
            found = query.stdout
        assert "added" in found
    finally:
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 130, (out, err)
    assert "watching 1 resource(s)" in out + err
