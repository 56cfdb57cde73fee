"""No analysis worker outlives ``agents index``: kill -9 the command mid-analysis and its
worker processes are gone within a second (they used to stay blocked indefinitely)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Time limits are asserted here: run alone, not beside another test worker.
pytestmark = pytest.mark.serial

CODE = "import sys; from cleveragents.cli.main import run; sys.exit(run())"


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def test_workers_die_with_a_killed_index(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    body = "".join(f"def f{i}(x):\n    return g{i}(x) + {i}\n\n\n" for i in range(400))
    for n in range(400):
        (src / f"m{n}.py").write_text(body)
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEVERAGENTS_")}
    argv = [sys.executable, "-c", CODE, "--data-dir", str(data)]
    subprocess.run([*argv, "init"], check=True, capture_output=True, env=env)
    subprocess.run(
        [*argv, "resource", "add", str(src), "--type", "fs-directory", "--name", "local/big", "--no-index"],
        check=True,
        capture_output=True,
        env=env,
    )
    proc = subprocess.Popen(
        [*argv, "index", "local/big"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        assert proc.poll() is None, "the index finished before its workers were seen"
        workers = _descendants(proc.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, workers  # a forkserver and its workers
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = time.monotonic()
    while time.monotonic() - killed < 5 and any(_alive(w) for w in workers):
        time.sleep(0.05)
    survivors = {w: Path(f"/proc/{w}/cmdline").read_bytes()[:200] for w in workers if _alive(w)}
    assert not survivors
    assert time.monotonic() - killed < 1.0
