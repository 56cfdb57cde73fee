"""A first index stopped between its batch commits, then files edited or deleted before the
resume: the resumed graph equals a clean index of the edited tree (in-process, real store;
the stop is an exception from the commit after the first, which leaves the store exactly
as a kill there would: whole commits only)."""

from __future__ import annotations

import shutil

import pyoxigraph as ox
import pytest

from cleveragents.graph import history
from cleveragents.graph.workspace import Workspace, WriteSession
from cleveragents.indexing.indexer import IndexOptions
from cleveragents.services import indexing, resources
from cleveragents.terms import RDF_TYPE, UKO_CODE

from .conftest import calls, write

ONE_FILE_PER_COMMIT = IndexOptions(batch_files=1)
TREE = {
    "a.outline": "def main\ncall helper\ncall deep\n",
    "b.outline": "def helper\n",
    "pkg/c.outline": "def deep\n",
}


class Stopped(BaseException):
    """What a kill would do to the run at that commit (the store keeps whole commits)."""


def stop_after_one_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    original = WriteSession.commit
    done: list[int] = []

    def commit(self, request):  # type: ignore[no-untyped-def]
        if done:
            raise Stopped()
        done.append(1)
        return original(self, request)

    monkeypatch.setattr(WriteSession, "commit", commit)


def dump(ws: Workspace) -> list[str]:
    """The state at head without commit records and revision metadata, sorted lines."""
    with ws.reader() as store:
        state = history.state(store, store.head, inferred=True)
        content = [ox.Triple(*t) for t in state if not history.is_bookkeeping(t)]
    return sorted(ox.serialize(content, format=ox.RdfFormat.N_TRIPLES).decode().splitlines())


@pytest.mark.parametrize(
    "edit",
    [
        {"b.outline": "def other\n"},  # an uncommitted file changes what it defines
        {"b.outline": None},  # an uncommitted file vanishes
        {"pkg/c.outline": None, "pkg/d.outline": "def deep\n"},  # a definition moves
    ],
)
def test_edits_between_stop_and_resume_end_in_the_clean_graph(
    ws, tmp_path, outline_analyzers, monkeypatch, edit: dict[str, str | None]
):
    root = tmp_path / "tree"
    write(root, TREE)
    info, _ = resources.add(ws, root, type_name="fs-directory", name="local/tree")
    # The reference: the same data dir (same resource IRI), indexed once after the edits.
    clean_ws = Workspace(tmp_path / "clean")
    shutil.copytree(ws.data_dir, clean_ws.data_dir)
    with monkeypatch.context() as patch:
        stop_after_one_commit(patch)
        with pytest.raises(Stopped):
            indexing.index(ws, [info], analyzers=outline_analyzers, options=ONE_FILE_PER_COMMIT)
    assert ("main", "helper", "0.5", "name-match") in calls(ws)  # a.outline is committed, its edges too

    for path, text in edit.items():
        if text is None:
            (root / path).unlink()
        else:
            write(root, {path: text})
    summary = indexing.index(ws, [info], analyzers=outline_analyzers, options=ONE_FILE_PER_COMMIT)[0]
    assert not summary.errors

    indexing.index(clean_ws, [info], analyzers=outline_analyzers)
    assert dump(ws) == dump(clean_ws)


def test_a_resume_analyzes_only_what_was_not_committed(ws, tmp_path, outline_analyzers, monkeypatch):
    root = tmp_path / "tree"
    write(root, TREE)
    info, _ = resources.add(ws, root, type_name="fs-directory", name="local/tree")
    with monkeypatch.context() as patch:
        stop_after_one_commit(patch)
        with pytest.raises(Stopped):
            indexing.index(ws, [info], analyzers=outline_analyzers, options=ONE_FILE_PER_COMMIT)
    summary = indexing.index(ws, [info], analyzers=outline_analyzers, options=ONE_FILE_PER_COMMIT)[0]
    assert summary.unchanged == 1 and summary.analyzed == 2
    package = f"<{RDF_TYPE}> <{UKO_CODE}Package>"
    directories = {line.split(" ")[0] for line in dump(ws) if package in line}
    assert len(directories) == 2  # the root and pkg/, written by the resumed run
