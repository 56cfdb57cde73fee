"""The read-only example end to end through the CLI on a pinned corpus (requests 2.32.3 in
a temporary git repository): action create -> index -> plan use -> a report decision
written from the graph, read-only tool calls as evidence, the real tree untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli
from tests.sandbox.conftest import make_repo, tree_bytes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "untested-functions" / "action.yaml"


def test_report_untested_public_functions_of_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    before = tree_bytes(repo)
    cli: Cli = initialized_cli(tmp_path, monkeypatch, capsys)
    cli.ok("resource", "add", str(repo), "--type", "git-checkout", "--name", "local/requests")
    cli.ok("project", "create", "local/req")
    cli.ok("project", "link-resource", "local/req", "local/requests")
    cli.ok("index", "local/requests")
    cli.ok("action", "create", "--config", str(EXAMPLE))
    plan = cli.ok(
        "plan", "use", "local/report-untested-functions", "req", "--arg", "source_prefix=src/", fmt="json"
    ).json()["data"]["plan"]
    assert (plan["phase"], plan["state"], plan["read_only"]) == ("execute", "complete", True), plan["error"]
    assert plan["description"] == "Report the public functions no test calls in the Python code under src/"

    tree = cli.ok("plan", "tree", plan["id"], fmt="json").json()["data"]["tree"]

    def walk(node: dict) -> list[dict]:
        return [node.get("decision") or {}] + [d for child in node["children"] for d in walk(child)]

    report = next(d for d in walk(tree) if d.get("question") == "Which public functions does no test call?")
    listed = report["chosen"]
    count, _, names = listed.partition(" untested public functions: ")
    found = set(names.split(", "))
    # Module-level public functions no test function calls directly (by the index's call graph).
    assert {"src/requests/sessions.py:merge_hooks", "src/requests/utils.py:get_netrc_auth"} <= found
    assert int(count) == len(found)
    # Not listed: a function a test calls, a private one, a nested one, a method, test code.
    for absent in (
        "src/requests/utils.py:get_auth_from_url",  # tests/test_utils.py::test_get_auth_from_url calls it
        "src/requests/models.py:generate",  # nested in Response.iter_content
        "src/requests/utils.py:_parse_content_type_header",
    ):
        assert absent not in found
    assert all(name.startswith("src/requests/") for name in found)

    # The evidence: one read-only search of the test files per candidate, recorded as tool
    # calls of the plan; no change in its ChangeSet.
    calls = cli.ok(
        "graph",
        "query",
        f"SELECT ?tool (COUNT(?c) AS ?n) WHERE {{ ?c a ca:ToolCall ; ca:forPlan <{plan['iri']}> ; ca:toolName ?tool }}"
        " GROUP BY ?tool",
        fmt="json",
    ).json()["data"]["results"]
    assert [(row["tool"], row["n"].split("^^")[0]) for row in calls] == [('"search_files"', f'"{len(found)}"')]
    changes = cli.ok(
        "graph", "query", f"ASK {{ ?set ca:forPlan <{plan['iri']}> . ?c ca:inChangeSet ?set }}", fmt="json"
    ).out
    assert "false" in changes.lower()

    # Nothing changed anywhere: applying the read-only plan merges nothing.
    applied = cli.ok("plan", "apply", plan["id"], "--yes", fmt="json").json()["data"]["plan"]
    assert applied["state"] == "applied", applied["error"]
    assert tree_bytes(repo) == before
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == ""
