"""Incremental indexing on a real store: what is written, what is skipped, what is linked."""

from __future__ import annotations

import os
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents import iris
from cleveragents.indexing import emit
from cleveragents.indexing.content import content_store
from cleveragents.indexing.indexer import IndexOptions
from cleveragents.indexing.plugins import load_analyzers
from cleveragents.services import indexing

from .conftest import TREE, calls, rows, write


def test_first_index_writes_entities_with_provenance_and_linked_edges(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    summary = run_index(info)
    assert summary.analyzed == 3 and summary.revision is not None
    assert summary.entities_added == 3 + 4  # three file nodes, four definitions
    assert calls(ws) == {
        ("main", "helper", "0.9", "name-match"),  # qualified through the module
        ("helper", "main", "0.5", "name-match"),  # a unique bare name: plausible, not certain
        ("deep", "helper", "0.5", "name-match"),
    }
    found = rows(
        ws,
        "SELECT ?path ?range ?hash ?res WHERE { ?e uko:name 'deep' ; uko:sourcePath ?path ; "
        "uko:sourceRange ?range ; uko:contentHash ?hash ; uko:sourceResource ?res }",
    )
    assert found == [
        {"path": "pkg/c.outline", "range": "1:0-1:8", "hash": emit.content_hash(b"def deep"), "res": info.iri}
    ]
    # Directories are packages that contain their files; the root contains pkg/.
    members = rows(ws, f"SELECT ?m WHERE {{ <{iris.directory_iri(info.ulid, '')}> uko:contains ?m }}")
    assert {m["m"] for m in members} == {
        iris.file_iri(info.ulid, "a.outline"),
        iris.file_iri(info.ulid, "b.outline"),
        iris.directory_iri(info.ulid, "pkg"),
    }


def test_unchanged_tree_writes_no_commit(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    first = run_index(info)
    again = run_index(info)
    assert again.revision is None and again.analyzed == 0 and again.unchanged == 3
    with ws.reader() as store:
        assert store.head == first.revision


def test_editing_one_file_revises_its_entities_and_relinks_referrers(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    first = run_index(info)
    # helper is renamed: b's entity set changes, so a (which called b.helper) and c are relinked.
    write(tree, {"b.outline": "def assist\ncall main\n"})
    second = run_index(info)
    assert second.revision == first.revision + 1
    assert (second.entities_added, second.entities_removed) == (1, 1)
    assert calls(ws) == {("assist", "main", "0.5", "name-match")}
    assert calls(ws, as_of=first.revision) == {
        ("main", "helper", "0.9", "name-match"),
        ("helper", "main", "0.5", "name-match"),
        ("deep", "helper", "0.5", "name-match"),
    }
    # An edit of an entity's own text (an outline definition's text is its 'def' line) keeps
    # its IRI and gives it a new revision; its call re-resolved after b's rename gave none.
    write(tree, {"a.outline": "def  main\ncall b.assist\ndef unused\n"})
    third = run_index(info)
    assert third.entities_changed >= 1 and third.entities_added == 0
    main = iris.file_iri(info.ulid, "a.outline", "main")
    revisions = rows(
        ws, f"SELECT ?r ?cur ?kind WHERE {{ ?r ca:revisionOf <{main}> ; uko:isCurrent ?cur ; ca:revisionKind ?kind }}"
    )
    assert sorted((r["cur"], r["kind"]) for r in revisions) == [("false", "added"), ("true", "content")]
    assert ("main", "assist", "0.9", "name-match") in calls(ws)


def test_deleted_files_are_closed_not_erased(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    first = run_index(info)
    (tree / "pkg" / "c.outline").unlink()
    second = run_index(info)
    assert second.deleted == 1 and second.entities_removed == 3  # the file, its function, its directory
    deep = "SELECT ?e WHERE { ?e uko:name 'deep' }"
    assert rows(ws, deep) == []
    assert len(rows(ws, deep, as_of=first.revision)) == 1
    pkg = iris.directory_iri(info.ulid, "pkg")
    assert rows(ws, f"SELECT ?t WHERE {{ <{pkg}> a ?t }}") == []


def test_bad_files_are_skipped_with_reasons_and_never_abort(ws, tmp_path, add_resource, run_index):
    root = tmp_path / "tree"
    write(
        root,
        {
            "ok.outline": "def fine\n",
            "binary.outline": b"\x00\x01\x02def x",
            "latin1.outline": "def caf\xe9\n".encode("latin-1"),
            "crash.outline": "def CRASH\n",
            "broken.outline": "def half\nnonsense here\n",
            "notes.unknown": "no analyzer takes this",
        },
    )
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "link.outline").symlink_to(root / "ok.outline")
    info = add_resource(root)
    summary = run_index(info)
    reasons = {s.path: s.reason for s in summary.skipped}
    assert reasons["binary.outline"] == "binary file"
    assert reasons["latin1.outline"].startswith("not valid UTF-8 (byte 7")
    assert reasons["loop"] == "symlinked directory (not followed)"
    assert reasons["link.outline"] == "symlink (not followed)"
    assert reasons["notes.unknown"] == "no analyzer for this file type"
    assert [(e.path, "CRASH" in e.message) for e in summary.errors] == [("crash.outline", True)]
    assert summary.parse_problems == {"broken.outline": 1}
    assert {r["n"] for r in rows(ws, "SELECT ?n WHERE { ?e a uko-code:Function ; uko:name ?n }")} == {"fine", "half"}
    broken = iris.file_iri(info.ulid, "broken.outline")
    problems = rows(ws, f"SELECT ?c ?m WHERE {{ <{broken}> ca:parseErrorCount ?c ; ca:parseError ?m }}")
    assert problems == [{"c": "1", "m": "2:0-2:13 unknown statement 'nonsense'"}]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file_is_a_warning(ws, tmp_path, add_resource, run_index):
    root = tmp_path / "tree"
    write(root, {"ok.outline": "def fine\n", "secret.outline": "def hidden\n"})
    (root / "secret.outline").chmod(0)
    info = add_resource(root)
    summary = run_index(info)
    assert {s.path: s.reason for s in summary.skipped}["secret.outline"] == "unreadable: permission denied"
    assert summary.analyzed == 1


def test_large_files_get_a_file_node_only(ws, tmp_path, add_resource, run_index):
    root = tmp_path / "tree"
    write(root, {"big.outline": "def x\n" * 100, "small.outline": "def y\n"})
    info = add_resource(root)
    run_index(info, options=IndexOptions(max_file_bytes=100))
    big = iris.file_iri(info.ulid, "big.outline")
    assert rows(ws, f"SELECT ?why WHERE {{ <{big}> ca:skippedReason ?why }}") == [
        {"why": "larger than the analysis limit (600 bytes)"}
    ]
    assert rows(ws, "SELECT ?n WHERE { ?e a uko-code:Function ; uko:name ?n }") == [{"n": "y"}]


def test_lost_link_cache_is_rebuilt_from_the_files(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    run_index(info)
    for cached in (ws.data_dir / "index-cache").iterdir():
        cached.unlink()
    write(tree, {"b.outline": "def assist\ncall main\n"})
    summary = run_index(info)
    assert summary.analyzed == 3  # the changed file plus the two whose link data was lost
    assert calls(ws) == {("assist", "main", "0.5", "name-match")}


def test_interrupted_run_leaves_the_store_as_it_was_and_the_next_run_completes(
    ws, tree, add_resource, outline_analyzers
):
    info = add_resource(tree)
    with ws.reader() as store:
        head = store.head

    def interrupt(phase: str, done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        indexing.index(ws, [info], analyzers=outline_analyzers, progress=interrupt)
    with ws.reader() as store:
        assert store.head == head
    summary = indexing.index(ws, [info], analyzers=outline_analyzers)[0]
    assert summary.analyzed == 3 and len(calls(ws)) == 3


def test_user_analyzers_come_before_builtins_and_bad_plugins_are_reported(tmp_path):
    analyzers = load_analyzers([Path(__file__).parent / "plugins"])
    assert analyzers.analyzers[0].name == "outline"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.py").write_text("raise ImportError('no such grammar')\n")
    with pytest.raises(Exception, match=r"cannot load analyzer .*broken.py: ImportError: no such grammar"):
        load_analyzers([bad])
    with pytest.raises(Exception, match="does not exist"):
        load_analyzers([tmp_path / "missing"])


def test_content_is_stored_once_per_hash(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    run_index(info)
    store = content_store(ws)
    data = (tree / "a.outline").read_bytes()
    assert store.get(emit.content_hash(data)) == data
    blobs = [p for p in (ws.data_dir / "content").rglob("*") if p.is_file()]
    assert len(blobs) == 3
    write(tree, {"copy.outline": data.decode()})
    run_index(info)
    assert len([p for p in (ws.data_dir / "content").rglob("*") if p.is_file()]) == 3


def test_reindex_does_not_touch_other_resources(ws, tmp_path, add_resource, run_index):
    one = tmp_path / "one"
    two = tmp_path / "two"
    write(one, {"x.outline": "def shared\n"})
    write(two, {"y.outline": "def shared\n"})
    first, second = add_resource(one), add_resource(two)
    run_index(first)
    run_index(second)
    (one / "x.outline").unlink()
    run_index(first)
    names = rows(ws, "SELECT ?p WHERE { ?e uko:name 'shared' ; uko:sourcePath ?p }")
    assert names == [{"p": "y.outline"}]
    assert isinstance(ox.NamedNode(second.iri), ox.NamedNode)


def test_emptied_and_refilled_resource_has_no_duplicate_live_triples(ws, tree, add_resource, run_index):
    info = add_resource(tree)
    run_index(info)
    for path in list(tree.rglob("*.outline")):
        path.unlink()
    run_index(info)
    write(tree, TREE)
    run_index(info)
    with ws.reader() as store:
        live = [q for q in store.raw.quads_for_pattern(None, None, None) if "/graph/iv/" in str(q.graph_name)]
        open_copies = [q.triple for q in live if str(q.graph_name).endswith("/open>")]
        assert len(open_copies) == len(set(open_copies))
    assert len(calls(ws)) == 3


def test_file_vanishing_during_a_run_is_a_warning(ws, tree, add_resource, run_index, monkeypatch):
    from cleveragents.indexing.sources import DirectorySnapshot

    original = DirectorySnapshot.read

    def read_after_deleting(self, path):
        if path == "b.outline":
            (self.root / path).unlink()  # listed, then gone before it is read
        return original(self, path)

    monkeypatch.setattr(DirectorySnapshot, "read", read_after_deleting)
    info = add_resource(tree)
    summary = run_index(info)
    assert {s.path: s.reason for s in summary.skipped}["b.outline"] == "vanished while indexing"
    assert summary.analyzed == 2 and not summary.errors
