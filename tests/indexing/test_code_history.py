"""Code history on real sources: five consecutive requests releases replayed as git commits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cleveragents import iris
from cleveragents.graph import named_queries
from cleveragents.graph.history import resolve_revision
from cleveragents.indexing import emit, renderings
from cleveragents.services import indexing
from corpora.fetch import corpus_dir

from .test_git_history import git

RELEASES = ["2.31.0", "2.32.0", "2.32.1", "2.32.2", "2.32.3"]


@pytest.fixture(scope="module")
def requests_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A git repository whose commits are the releases' Python sources, oldest first."""
    root = tmp_path_factory.mktemp("requests-history") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    shas: dict[str, str] = {}
    for number, version in enumerate(RELEASES):
        for child in root.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        release = corpus_dir(f"requests-{version}")
        package = release / "src" / "requests" if (release / "src").is_dir() else release / "requests"
        shutil.copytree(package, root / "requests")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"requests {version}", "--date", f"2024-0{number + 1}-01T12:00:00+00:00")
        shas[version] = git(root, "rev-parse", "HEAD").strip()
    return root, shas


@pytest.fixture
def replayed(ws, requests_repo, add_resource):
    root, shas = requests_repo
    info = add_resource(root, "git-checkout")
    summaries = indexing.import_history(ws, info)
    assert len(summaries) == len(RELEASES)
    return info, shas


def select(ws, name: str, params: dict[str, str] | None = None, as_of: int | None = None) -> list[dict[str, str]]:
    query = named_queries.get(name)
    with ws.reader() as store:
        result = store.query(query.text, bindings=named_queries.bind(query, params or {}), view=store.view(as_of))
        names = [v.value for v in result.variables]
        return [{n: row[n].value for n in names if row[n] is not None} for row in result]


def revision_of(ws, sha: str) -> int:
    with ws.reader() as store:
        return resolve_revision(store, sha)


def test_as_of_a_sha_shows_that_release(ws, replayed):
    info, shas = replayed
    node = iris.file_iri(info.ulid, "requests/__version__.py")
    seen = set()
    for version, sha in shas.items():
        release = corpus_dir(f"requests-{version}")
        package = release / "src" / "requests" if (release / "src").is_dir() else release / "requests"
        expected = emit.content_hash((package / "__version__.py").read_bytes())
        with ws.reader() as store:
            found = store.query(
                f"SELECT ?h WHERE {{ <{node}> uko:contentHash ?h }}", view=store.view(revision_of(ws, sha))
            )
            assert [row["h"].value for row in found] == [expected], version
        seen.add(expected)
    assert len(seen) == len(RELEASES)


def test_entities_changed_between_releases(ws, replayed):
    _, shas = replayed
    low, high = revision_of(ws, shas["2.32.2"]), revision_of(ws, shas["2.32.3"])
    rows = select(ws, "entities-changed", {"from": str(low), "to": str(high)})
    paths = {r.get("path") for r in rows}
    assert "requests/adapters.py" in paths  # 2.32.3 changed the adapters
    assert {r["change"] for r in rows} <= {"added", "removed", "changed", "formatting", "moved"}
    assert any(r["change"] == "changed" and r["name"] == "get_connection_with_tls_context" for r in rows)
    # Nothing outside the release range is reported.
    assert select(ws, "entities-changed", {"from": str(high), "to": str(high)}) == []


def test_signature_history_and_change_statistics(ws, replayed):
    info, shas = replayed
    send = iris.file_iri(info.ulid, "requests/adapters.py", "HTTPAdapter.send")
    history = select(ws, "signature-history", {"callable": send})
    assert history and all(r["signature"].startswith("def send(") for r in history)
    assert history[0]["fromSha"] == shas["2.31.0"]
    classes = select(ws, "most-changed-classes")
    assert classes and int(classes[0]["revisions"]) >= 2
    coupled = select(ws, "files-changed-together")
    assert coupled and all(int(r["together"]) >= 2 for r in coupled)
    assert any("__version__.py" in (r["fileA"] + r["fileB"]) for r in coupled)


def test_rendering_any_revision_from_stored_content(ws, replayed):
    info, shas = replayed
    analyzers = indexing.analyzer_set()
    iri = iris.file_iri(info.ulid, "requests/__version__.py")
    old = renderings.render(ws, iri, "FULL_SOURCE", analyzers, as_of=shas["2.31.0"][:12])
    new = renderings.render(ws, iri, "FULL_SOURCE", analyzers)
    assert '__version__ = "2.31.0"' in old.text
    assert '__version__ = "2.32.3"' in new.text
    send = iris.file_iri(info.ulid, "requests/adapters.py", "HTTPAdapter.send")
    signatures = renderings.render(ws, send, "SIGNATURES", analyzers)
    assert signatures.text.lstrip().startswith("def send(") and "return" not in signatures.text
    full = renderings.render(ws, send, "FULL_SOURCE", analyzers)
    assert "return" in full.text and full.text.lstrip().startswith("def send(")
