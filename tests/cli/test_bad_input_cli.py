"""Bad input at the edges: each a one-line ``Error [code] CATEGORY: message`` and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, clean_env


def first_line(text: str) -> str:
    return text.strip().splitlines()[0]


def test_a_data_dir_that_cannot_be_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    clean_env(monkeypatch, tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = Cli(blocker / "data", capsys)("init")
    assert result.code == 1
    line = first_line(result.err)
    assert line.startswith("Error [525] CONFIGURATION_ERROR:") and str(blocker / "data") in line
    assert "Not a directory" in line


def test_unknown_as_of_and_invalid_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    clean_env(monkeypatch, tmp_path)
    cli = Cli(tmp_path / "data", capsys)
    cli.ok("init")
    result = cli("graph", "query", "--as-of", "no-such-sha", "SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert result.code == 1
    assert first_line(result.err) == (
        "Error [404] NOT_FOUND: unknown --as-of 'no-such-sha': not a revision number, "
        "an ISO timestamp or a known external id"
    )
    result = cli("project", "create", "Local/Bad Name")
    assert result.code == 1
    assert first_line(result.err).startswith("Error [422] VALIDATION_FAILED: invalid project name 'Local/Bad Name'")
    result = cli("project", "create", "openai/mine")
    assert "reserved for built-in provider actors" in first_line(result.err)


def test_a_corrupt_config_names_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    clean_env(monkeypatch, tmp_path)
    cli = Cli(tmp_path / "data", capsys)
    cli.ok("init")
    (tmp_path / "data" / "config.toml").write_text('format = "plain"\nquery = [broken\n')
    result = cli("graph", "stats")
    assert result.code == 1
    line = first_line(result.err)
    assert line.startswith("Error [525] CONFIGURATION_ERROR:") and "config.toml" in line and "line 2" in line


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    clean_env(monkeypatch, tmp_path)
    cli = Cli(tmp_path / "data", capsys)
    assert cli("graph", "query", "--no-such-option").code == 2
    assert cli("no-such-command").code == 2


def test_usage_errors_take_the_spec_form_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Unknown command, unknown option, missing argument: ``Error [400] USAGE`` (exit 2),
    and a JSON envelope on stdout with --format json, wherever --format is written."""
    from cleveragents.cli.main import run

    data = ["--data-dir", str(tmp_path / "data")]
    for args in (["graph", "bogus"], ["graph", "query", "--nope", "x"], ["graph", "history"]):
        capsys.readouterr()
        assert run([*data, *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("Error [400] USAGE: "), err
        assert run([*data, "--format", "json", *args]) == 2
        doc = json.loads(capsys.readouterr().out)
        assert doc["error"]["code"] == "USAGE" and doc["exit_code"] == 2
        assert run([*data, *args, "--format", "json"]) == 2
        assert json.loads(capsys.readouterr().out)["error"]["status"] == 400
