"""Faults of the machine get their own coded errors, never ``INTERNAL``, and leave the
store with whole commits only: a full disk (a file-size limit on a real ``agents``
process), store files truncated or missing, and a content blob changed on disk."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

AGENTS = [sys.executable, "-c", "import sys; from cleveragents.cli.main import run; sys.exit(run())"]


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    src = tmp_path / "src"
    src.mkdir()
    (src / "app.py").write_text("def main():\n    return 1\n\n\ndef helper(x):\n    return x * 2\n")
    runner.ok("resource", "add", str(src), "--type", "fs-directory", "--name", "local/app")
    return runner


def error_of(result) -> dict:
    return json.loads(result.out)["error"]


def head(cli: Cli) -> int:
    commits = cli.ok("graph", "log", fmt="json").json()["data"]["commits"]
    return max(c["revision"] for c in commits)


def test_a_full_disk_is_disk_full_and_keeps_no_part_of_the_write(cli: Cli, tmp_path: Path):
    data = tmp_path / "big.nt"
    data.write_text("".join(f"<urn:ex:s{i}> <urn:ex:p> \"value number {i} of the import\" .\n" for i in range(40_000)))
    before = head(cli)
    limit = 256 * 1024  # bytes per file this process may write: the import's store files need more

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    env = {**os.environ, "CLEVERAGENTS_FORMAT": "json"}
    argv = [*AGENTS, "--data-dir", str(cli.data_dir), "graph", "import", str(data)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, preexec_fn=limited, timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "DISK_FULL" and error["status"] == 507, error
    assert "space" in error["suggestions"][0]
    # Nothing of it was kept; the store is whole, and the same import now succeeds.
    assert head(cli) == before
    cli.ok("graph", "validate")
    # A failed or killed bulk load can leave its part-written file (seen after a full disk
    # during an index); a stand-in here, since this one cleaned up after itself.
    leftover = cli.data_dir / "store" / "oxigraph" / "bulk-1234567890.sst"
    leftover.write_bytes(b"\0" * 4096)
    cli.ok("graph", "import", str(data))
    assert head(cli) == before + 1
    assert not leftover.exists()  # the next writer removed it


WRITER_AND_READER = (
    ("graph", "update", "INSERT DATA { <urn:ex:a> <urn:ex:p> 1 }"),
    ("graph", "query", "ASK { ?s ?p ?o }"),
)


def largest_sst(cli: Cli) -> Path:
    return max((cli.data_dir / "store" / "oxigraph").glob("*.sst"), key=lambda p: p.stat().st_size)


def test_a_truncated_store_file_is_store_corrupt_for_writers_and_readers(cli: Cli):
    cli.ok("index")
    sst = largest_sst(cli)
    with sst.open("r+b") as handle:
        handle.truncate(sst.stat().st_size // 3)
    for args in WRITER_AND_READER:
        result = cli(*args, fmt="json")
        assert result.code == 1, result.out
        error = error_of(result)
        assert error["code"] == "STORE_CORRUPT" and sst.name in error["message"], error
        assert any("graph restore" in s for s in error["suggestions"])


def test_a_missing_current_file_is_store_corrupt(cli: Cli):
    (cli.data_dir / "store" / "oxigraph" / "CURRENT").unlink()
    for args in WRITER_AND_READER:
        result = cli(*args, fmt="json")
        assert result.code == 1, result.out
        assert error_of(result)["code"] == "STORE_CORRUPT", result.out


def test_a_blob_changed_on_disk_is_content_corrupt_at_render_and_index_full_repairs_it(cli: Cli):
    cli.ok("index")
    found = cli.ok("graph", "query", 'SELECT ?e WHERE { ?e uko:name "main" }', fmt="json").json()
    entity = found["data"]["results"][0]["e"].strip("<>")
    assert "return 1" in cli.ok("show", entity, "--depth", "FULL_SOURCE").out
    blob = next(p for p in (cli.data_dir / "content").rglob("*") if p.is_file())
    blob.write_bytes(zlib.compress(b"def main():\n    return 2\n"))  # same name, other bytes
    result = cli("show", entity, "--depth", "FULL_SOURCE", fmt="json")
    assert result.code == 1
    error = error_of(result)
    assert error["code"] == "CONTENT_CORRUPT" and str(blob) in error["message"], error
    assert "return 2" not in result.out
    blob.write_bytes(b"not zlib at all")
    assert error_of(cli("show", entity, "--depth", "FULL_SOURCE", fmt="json"))["code"] == "CONTENT_CORRUPT"
    cli.ok("index", "--full")
    assert "return 1" in cli.ok("show", entity, "--depth", "FULL_SOURCE").out
