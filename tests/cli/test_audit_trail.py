"""The audit trail is append-only: updates and imports can neither erase nor forge it.

Real store, real CLI. ``DELETE WHERE { ?s ?p ?o }`` used to delete the commit records
(``graph log`` dropped from 4 commits to 1), and an ``INSERT DATA`` of a made-up commit
showed at the top of ``graph log``. Removing all content is ``graph clear``, which asks
(or takes --yes) and is itself a commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

CA = "https://cleveragents.ai/ontology/ca#"
COMMIT = "https://cleveragents.ai/id/commit/"
XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    for i in range(3):
        runner.update(f"INSERT DATA {{ <urn:ex:n{i}> <urn:ex:p> {i} }}", f"data {i}")
    return runner


def _log(cli: Cli) -> list[dict]:
    return cli.ok("graph", "log", fmt="json").json()["data"]["commits"]


def _counts(cli: Cli) -> tuple[int, int]:
    stats = cli.ok("graph", "stats", fmt="json").json()["data"]["stats"]
    return stats["ontology"], stats["shapes"]


def _refused(cli: Cli, *args: str) -> dict:
    result = cli(*args, fmt="json")
    assert result.code == 1, (args, result.out)
    error = result.json()["error"]
    assert error["code"] == "FORBIDDEN" and "append-only" in error["message"], error
    return error


FORGERIES = [
    "DELETE WHERE { ?s ?p ?o }",
    f"DELETE WHERE {{ <{COMMIT}1> ?p ?o }}",
    f"INSERT DATA {{ <{COMMIT}999> a <{CA}Commit> ; <{CA}revision> 999 }}",
    f"INSERT DATA {{ <urn:ex:fake> a <{CA}Commit> ; <{CA}revision> 999 }}",
    f"DELETE {{ ?c <{CA}message> ?m }} INSERT {{ ?c <{CA}message> 'rewritten' }} WHERE {{ ?c <{CA}message> ?m }}",
    "INSERT DATA { <urn:ex:n1> <https://cleveragents.ai/ontology/uko#isCurrent> false }",
    "INSERT DATA { <urn:ex:n1@r1> <urn:ex:p> 5 }",
]


@pytest.mark.parametrize("text", FORGERIES)
def test_updates_cannot_erase_or_forge_the_log(cli: Cli, text: str):
    before, ontology = _log(cli), _counts(cli)
    _refused(cli, "graph", "update", text)
    assert _log(cli) == before
    assert _counts(cli) == ontology


def test_import_cannot_forge_a_commit(cli: Cli, tmp_path: Path):
    before = _log(cli)
    forged = tmp_path / "forged.nt"
    forged.write_text(
        f"<{COMMIT}999> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{CA}Commit> .\n"
        f'<{COMMIT}999> <{CA}revision> "999"^^{XSD_INT} .\n'
    )
    _refused(cli, "graph", "import", str(forged))
    assert _log(cli) == before


def test_clear_asks_removes_content_and_is_itself_a_commit(cli: Cli):
    before, ontology = _log(cli), _counts(cli)
    unconfirmed = cli("graph", "clear", fmt="json")  # stdin is not a terminal under pytest
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.json()["error"]["message"]
    assert _log(cli) == before

    done = cli.ok("graph", "clear", "--yes", fmt="json").json()["data"]["commit"]
    assert done["removed"] == 3
    after = _log(cli)
    assert len(after) == len(before) + 1 and after[0]["cause"] == "clear"
    assert after[1:] == before
    assert cli.ok("graph", "query", "ASK { ?s <urn:ex:p> ?o }").out == "no\n"
    # History is kept: the content is still there as of the revision before the clear.
    old = cli.ok("graph", "query", "--as-of", str(before[0]["revision"]), "ASK { ?s <urn:ex:p> ?o }")
    assert old.out == "yes\n"
    assert _counts(cli) == ontology
