"""``agents resource ...`` and ``agents project ...`` on a real store in tmp_path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli

RESOURCE_KEYS = {"iri", "ulid", "name", "type", "location", "content_hash", "created", "projects"}
PROJECT_KEYS = {"name", "id", "description", "created", "resources", "iri"}


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "docs"
    (path / "sub").mkdir(parents=True)
    (path / "readme.md").write_text("# docs\n")
    (path / "sub" / "a.txt").write_text("a\n")
    return path


def head(cli: Cli) -> int:
    return cli.ok("graph", "stats", fmt="json").json()["data"]["stats"]["head"]


def test_resource_add_list_show_remove(cli: Cli, folder: Path):
    added = cli.ok("resource", "add", str(folder), "--type", "fs-directory", "--name", "local/docs")
    assert added.out.startswith("Resource local/docs\n")
    assert f"Location:     {folder}" in added.out
    assert "[OK] Committed revision 1 (resource add local/docs): +7 -0 triples" in added.out

    listed = cli.ok("resource", "list").out.splitlines()
    assert listed[0] == "Resources (1)"
    assert listed[1].split() == ["Name", "Type", "Location", "Projects", "ID"]
    assert listed[3].startswith("local/docs  fs-directory")

    rows = cli.ok("resource", "list", fmt="json").json()["data"]["resources"]
    assert len(rows) == 1 and set(rows[0]) == RESOURCE_KEYS
    resource = rows[0]
    assert resource["type"] == "fs-directory" and resource["location"] == str(folder)
    assert resource["content_hash"].startswith("sha256:") and resource["projects"] == []

    # By name, bare name (local/ implied), ULID and IRI.
    for ref in ("local/docs", "docs", resource["ulid"], resource["iri"]):
        shown = cli.ok("resource", "show", ref, fmt="json").json()["data"]["resource"]
        assert shown == resource
    assert "Content hash: sha256:" in cli.ok("resource", "show", "docs").out

    csv_out = cli.ok("resource", "list", fmt="csv").out.splitlines()
    assert csv_out[0] == "name,type,location,projects,ulid,iri,content_hash,created"

    duplicate = cli("resource", "add", str(folder), "--type", "fs-directory", "--name", "local/docs")
    assert duplicate.code == 1 and duplicate.err.startswith("Error [409] CONFLICT:")

    removed = cli.ok("resource", "remove", "local/docs", fmt="json").json()
    # Revision 2 indexed the folder (resource add indexes eagerly).
    assert removed["data"]["commit"]["revision"] == 3 and removed["data"]["commit"]["removed"] == 7
    assert removed["data"]["resource"]["name"] == "local/docs"
    assert cli.ok("resource", "list").out == "No resources found.\n"
    gone = cli("resource", "show", "local/docs")
    assert gone.code == 1 and gone.err.startswith("Error [404] NOT_FOUND: resource 'local/docs' not found")
    # History keeps it.
    assert cli.ok("graph", "history", resource["iri"], fmt="json").json()["data"]["history"]


def test_resource_add_errors_write_nothing(cli: Cli, folder: Path, tmp_path: Path):
    invalid = cli("resource", "add", str(folder), "--type", "fs-directory", "--name", "Local/X")
    assert invalid.code == 1
    assert invalid.err.splitlines()[0].startswith("Error [422] VALIDATION_FAILED: invalid resource name 'Local/X'")
    missing = cli("resource", "add", str(tmp_path / "nowhere"), "--type", "fs-directory")
    assert missing.code == 1
    assert missing.err.splitlines()[0] == f"Error [404] NOT_FOUND: {tmp_path / 'nowhere'} is not a directory"
    not_git = cli("resource", "add", str(folder), "--type", "git-checkout")
    assert not_git.code == 1 and "is not a git checkout" in not_git.err
    bad_type = cli("resource", "add", str(folder), "--type", "database")
    assert bad_type.code == 1 and "cannot be added by hand" in bad_type.err
    assert cli("resource", "add", str(folder)).code == 2  # --type is required
    assert head(cli) == 0


def test_git_checkout_resource(cli: Cli, folder: Path):
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@e"]
    try:
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", "init"], check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not usable here")
    doc = cli.ok("resource", "add", str(folder), "--type", "git-checkout", fmt="json").json()
    resource = doc["data"]["resource"]
    assert resource["name"] == "local/docs" and resource["type"] == "git-checkout"
    assert resource["content_hash"].startswith("git-tree:")


def test_project_lifecycle(cli: Cli, folder: Path):
    cli.ok("resource", "add", str(folder), "--type", "fs-directory", "--name", "local/docs", "--no-index")
    created = cli.ok("project", "create", "api-service", "-d", "Backend API")
    assert created.out.startswith("Project local/api-service\n")
    assert "Description: Backend API" in created.out
    assert "[OK] Committed revision 2 (project create local/api-service)" in created.out

    duplicate = cli("project", "create", "local/api-service")
    assert duplicate.code == 1 and duplicate.err.startswith("Error [409] CONFLICT:")
    invalid = cli("project", "create", "Bad Name")
    assert invalid.code == 1 and "invalid project name" in invalid.err

    linked = cli.ok("project", "link-resource", "api-service", "local/docs", fmt="json").json()
    assert linked["data"]["project"]["resources"] == ["local/docs"]
    assert linked["data"]["commit"] == {
        "revision": 3,
        "commit": "https://cleveragents.ai/id/commit/3",
        "added": 1,
        "removed": 0,
        "inferred_added": 0,
        "inferred_removed": 0,
        "changed": True,
    }
    again = cli.ok("project", "link-resource", "local/api-service", "docs")
    assert "[INFO] No change" in again.out

    projects = cli.ok("project", "list", fmt="json").json()["data"]["projects"]
    assert len(projects) == 1
    assert set(projects[0]) == {"iri", "name", "created", "resources", "description", "id", "resource_count"}
    assert projects[0]["resources"] == ["local/docs"] and projects[0]["resource_count"] == 1
    text = cli.ok("project", "list").out.splitlines()
    assert text[0] == "Projects (1)" and "local/api-service" in text[3] and "local/docs" in text[3]

    shown = cli.ok("project", "show", "local/api-service", fmt="json").json()["data"]["project"]
    assert set(shown) == PROJECT_KEYS
    assert shown["description"] == "Backend API" and shown["resources"] == ["local/docs"]
    assert "local/api-service" in cli.ok("resource", "show", "docs", fmt="json").json()["data"]["resource"]["projects"]
    named = cli.ok("query", "run", "project-resources", "-p", "project=local/api-service", fmt="json")
    assert [r["name"] for r in named.json()["data"]["results"]] == ['"local/docs"']

    unlinked = cli.ok("project", "unlink-resource", "api-service", "local/docs", fmt="json").json()
    assert unlinked["data"]["project"]["resources"] == []
    assert unlinked["data"]["commit"]["removed"] == 1

    missing = cli("project", "link-resource", "api-service", "local/nope")
    assert missing.code == 1 and "resource 'local/nope' not found" in missing.err

    deleted = cli.ok("project", "delete", "api-service")
    assert "[OK] Deleted project local/api-service" in deleted.out
    assert cli.ok("project", "list").out == "No projects found.\n"
    assert cli("project", "show", "api-service").code == 1
    # The resource stays registered.
    assert len(cli.ok("resource", "list", fmt="json").json()["data"]["resources"]) == 1


def test_removing_a_resource_unlinks_it(cli: Cli, folder: Path):
    cli.ok("resource", "add", str(folder), "--type", "fs-directory", "--no-index")
    cli.ok("project", "create", "web")
    cli.ok("project", "link-resource", "web", "docs")
    cli.ok("resource", "remove", "docs")
    assert cli.ok("project", "show", "web", fmt="json").json()["data"]["project"]["resources"] == []
