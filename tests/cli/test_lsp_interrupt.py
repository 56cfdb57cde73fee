"""Ctrl+C during `agents index --lsp`: exit code 130, the store as it was, no server left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.lsp.test_runtime import _group_alive, gone
from tests.signals import interruptible

AGENTS = [str(Path(sys.executable).parent / "agents")]


def _children_named(parent: int, needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if int(stat[1]) == parent and needle in cmdline:
            found.append(int(entry.name))
    return found


def test_ctrl_c_leaves_no_server_behind(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for number in range(40):  # enough work that the interrupt lands mid-enrichment
        (project / f"mod{number}.py").write_text(
            "".join(f"def f{i}(x):\n    return f{max(i - 1, 0)}(x) + len(str(x))\n\n\n" for i in range(60))
        )
    env = {**os.environ, "CLEVERAGENTS_DATA_DIR": str(tmp_path / "data")}
    subprocess.run([*AGENTS, "init"], env=env, check=True, capture_output=True)
    added = subprocess.run(
        [*AGENTS, "resource", "add", str(project), "--type", "fs-directory", "--name", "local/p", "--no-index"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stderr
    run = subprocess.Popen(
        [*AGENTS, "index", "--lsp"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=interruptible,
    )
    servers: list[int] = []
    deadline = time.monotonic() + 120
    while not servers and time.monotonic() < deadline and run.poll() is None:
        servers = _children_named(run.pid, "basedpyright")
        time.sleep(0.05)
    assert servers, "the language server never started"
    time.sleep(1.0)  # let it get to work
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err.decode()
    for pid in servers:
        assert gone(pid) and not _group_alive(pid), "a language server outlived the interrupted command"
    # Nothing half-written: the index was interrupted before its commit.
    log = subprocess.run([*AGENTS, "--format", "json", "graph", "log"], env=env, capture_output=True, text=True)
    assert log.returncode == 0 and "index local/p" not in log.stdout
