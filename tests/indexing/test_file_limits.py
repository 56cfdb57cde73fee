"""Per-file analysis limits: a pathological file (a real Python module of 20,000 functions,
a few seconds of analysis and about 100 MB) is cut off at its time or memory limit and
keeps its file node with a coded reason; the other files of the run are analyzed as usual."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cleveragents.indexing.indexer import IndexOptions
from cleveragents.indexing.limits import CRASHED, MEMORY_LIMIT, TIME_LIMIT, FileLimits
from cleveragents.services import indexing

from .conftest import rows, write

FUNCTIONS = 20_000


def pathological() -> str:
    return "".join(f"def f{i}(a, b=1):\n    return f{max(i - 1, 0)}(a) + b\n" for i in range(FUNCTIONS))


@pytest.fixture
def resource(tmp_path: Path, add_resource):
    root = tmp_path / "tree"
    write(root, {"big.py": pathological(), "pkg/small.py": "def helper(x):\n    return x + 1\n"})
    return add_resource(root)


def reasons(ws) -> dict[str, str]:
    found = rows(ws, "SELECT ?path ?why WHERE { ?f ca:skippedReason ?why ; uko:sourcePath ?path }")
    return {r["path"]: r["why"] for r in found}


def names(ws) -> set[str]:
    return {r["n"] for r in rows(ws, "SELECT ?n WHERE { ?e a uko-code:Function ; uko:name ?n }")}


def test_a_file_past_its_time_limit_is_cut_off_and_the_run_goes_on(ws, resource):
    options = IndexOptions(limits=FileLimits(seconds=1.0, memory_mb=0))
    started = time.monotonic()
    summary = indexing.index(ws, [resource], options=options)[0]
    assert time.monotonic() - started < 60  # unbounded, the big file alone takes longer than the limit
    assert set(summary.cut_off) == {"big.py"} and summary.cut_off["big.py"].startswith(f"[{TIME_LIMIT}]")
    assert summary.as_dict()["cut_off"] == [{"path": "big.py", "code": TIME_LIMIT, "reason": summary.cut_off["big.py"]}]
    assert not summary.errors and summary.revision is not None
    assert reasons(ws) == {"big.py": summary.cut_off["big.py"]}  # the file node, with the reason
    assert names(ws) == {"helper"}  # the small file is analyzed; none of big.py's functions


def test_a_file_past_its_memory_limit_is_cut_off_and_the_run_goes_on(ws, resource):
    options = IndexOptions(limits=FileLimits(seconds=0, memory_mb=40))
    summary = indexing.index(ws, [resource], options=options)[0]
    reason = summary.cut_off.get("big.py", "")
    # A MemoryError in Python code, or the worker's death when native code cannot allocate.
    assert reason.startswith((f"[{MEMORY_LIMIT}]", f"[{CRASHED}]")), summary.as_dict()
    assert set(summary.cut_off) == {"big.py"} and not summary.errors
    assert reasons(ws) == {"big.py": reason}
    assert names(ws) == {"helper"}

