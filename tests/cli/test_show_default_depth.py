"""``agents show IRI`` without ``--depth`` works for every node type: the default is the
level that shows the whole content (FULL_SOURCE for code, FULL_CONFIG, FULL_CONTENT...).
It used to be FULL_SOURCE for every type, which configuration files, documents and SQL
scripts do not have."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

PLANTED = Path(__file__).parents[1] / "indexing" / "planted_secrets"  # one file per analyzer type


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


def test_show_without_depth_renders_every_node_type(cli: Cli, tmp_path: Path):
    shutil.copytree(PLANTED, tmp_path / "src")
    cli.ok("resource", "add", str(tmp_path / "src"), "--type", "fs-directory", "--name", "local/types")
    rows = cli.ok(
        "graph",
        "query",
        "SELECT ?t (SAMPLE(?n) AS ?node) WHERE { ?n uko:sourcePath ?p ; uko:contentHash ?h ; a ?t . "
        "FILTER(STRSTARTS(STR(?t), 'https://cleveragents.ai/ontology/uko')) } GROUP BY ?t",
        fmt="json",
    ).json()["data"]["results"]
    assert len(rows) >= 10
    levels = set()
    for row in rows:
        shown = cli("show", row["node"].strip("<>"), fmt="json")
        assert shown.code == 0, (row, shown.err)
        levels.add(shown.json()["data"]["rendering"]["level"])
    assert {"FULL_SOURCE", "FULL_CONFIG", "FULL_CONTENT"} <= levels
