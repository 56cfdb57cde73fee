"""``agents graph import`` of content already imported adds nothing: no new revision, no
second copy of its blank nodes (named from the canonical form of the content); and a
re-import after something of it was removed puts back exactly what is missing."""

from __future__ import annotations

import time

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

PEOPLE = """@prefix ex: <urn:ex:> .
ex:paper ex:author [ ex:name "Ada" ; ex:born [ ex:year 1815 ] ] , [ ex:name "Charles" ] .
ex:paper ex:title "Notes" .
"""
# The same graph written otherwise: other blank-node labels, other order.
PEOPLE_AGAIN = """<urn:ex:paper> <urn:ex:title> "Notes" .
_:z <urn:ex:name> "Charles" .
<urn:ex:paper> <urn:ex:author> _:z .
_:q <urn:ex:year> "1815"^^<http://www.w3.org/2001/XMLSchema#integer> .
_:p <urn:ex:born> _:q .
_:p <urn:ex:name> "Ada" .
<urn:ex:paper> <urn:ex:author> _:p .
"""


def head(cli: Cli) -> int:
    return max(c["revision"] for c in cli.ok("graph", "log", fmt="json").json()["data"]["commits"])


def count(cli: Cli, where: str) -> int:
    rows = cli.ok("graph", "query", f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}", fmt="json").json()
    return int(rows["data"]["results"][0]["n"].split('"')[1])


def test_blank_nodes_imported_twice_are_one_copy(tmp_path, monkeypatch, capsys):
    cli = initialized_cli(tmp_path, monkeypatch, capsys)
    first, second = tmp_path / "people.ttl", tmp_path / "people.nt"
    first.write_text(PEOPLE)
    second.write_text(PEOPLE_AGAIN)
    cli.ok("graph", "import", str(first))
    after_first = head(cli)
    assert count(cli, "<urn:ex:paper> <urn:ex:author> ?a") == 2
    cli.ok("graph", "import", str(first))
    cli.ok("graph", "import", str(second))
    assert head(cli) == after_first  # no new revision
    assert count(cli, "<urn:ex:paper> <urn:ex:author> ?a") == 2
    assert count(cli, "?a <urn:ex:born> ?b . ?b <urn:ex:year> 1815") == 1


@pytest.mark.serial  # compares two wall times: alone, not beside another test worker
def test_an_unchanged_file_is_a_quick_no_op_and_a_removed_triple_comes_back(tmp_path, monkeypatch, capsys):
    cli = initialized_cli(tmp_path, monkeypatch, capsys)
    data = tmp_path / "big.nt"
    data.write_text("".join(f'<urn:ex:s{i}> <urn:ex:p> "v{i}" .\n' for i in range(30_000)))
    started = time.perf_counter()
    cli.ok("graph", "import", str(data))
    first = time.perf_counter() - started
    revision = head(cli)
    started = time.perf_counter()
    again = cli.ok("graph", "import", str(data), fmt="json").json()["data"]["commit"]
    second = time.perf_counter() - started
    assert head(cli) == revision and again["revision"] in (None, revision), again
    assert second < first  # it never loads the triples again (about a fifth of the time here)
    cli.update('DELETE DATA { <urn:ex:s7> <urn:ex:p> "v7" }')
    restored = cli.ok("graph", "import", str(data), fmt="json").json()["data"]["commit"]
    assert restored["added"] == 1 and head(cli) == revision + 2
    assert count(cli, "?s <urn:ex:p> ?o") == 30_000
