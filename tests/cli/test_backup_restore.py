"""``agents graph backup PATH`` / ``graph restore PATH`` on Oxigraph's own backup.

Real store, real CLI: a backup taken at revision N, more commits, then a restore brings
back exactly revision N's log and state; the backup refuses a non-empty target, restore
refuses a directory that is not a backup and asks for --yes off a terminal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    runner.update("INSERT DATA { <urn:ex:a> <urn:ex:p> 1 }", "first")
    return runner


def _log(cli: Cli) -> list[dict]:
    return cli.ok("graph", "log", fmt="json").json()["data"]["commits"]


def _state(cli: Cli, tmp_path: Path, name: str) -> bytes:
    out = tmp_path / f"{name}.nt"
    cli.ok("graph", "export", "--format", "nt", "-o", str(out))
    return out.read_bytes()


def test_backup_then_restore_brings_back_the_backed_up_revision(cli: Cli, tmp_path: Path):
    target = tmp_path / "bk"
    done = cli.ok("graph", "backup", str(target), fmt="json").json()["data"]["backup"]
    assert done["head"] == 1 and (target / "oxigraph").is_dir()
    log, state = _log(cli), _state(cli, tmp_path, "before")

    cli.update("INSERT DATA { <urn:ex:b> <urn:ex:p> 2 }", "second")
    assert len(_log(cli)) == 2

    unconfirmed = cli("graph", "restore", str(target), fmt="json")
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.json()["error"]["message"]
    cli.ok("graph", "restore", str(target), "--yes")
    assert _log(cli) == log
    assert _state(cli, tmp_path, "after") == state
    cli.update("INSERT DATA { <urn:ex:c> <urn:ex:p> 3 }", "after restore")  # the store takes writes again
    assert _log(cli)[0]["revision"] == 2


def test_backup_and_restore_refuse_bad_paths(cli: Cli, tmp_path: Path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    assert cli("graph", "backup", str(busy), fmt="json").json()["error"]["code"] == "CONFLICT"
    missing = cli("graph", "restore", str(tmp_path), "--yes", fmt="json")
    assert missing.code == 1 and missing.json()["error"]["code"] == "NOT_FOUND"
    assert len(_log(cli)) == 1
