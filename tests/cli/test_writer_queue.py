"""Writers queue: one writer at a time, the others wait their turn; readers never wait.

Real ``agents`` processes on one data dir: two index runs and two updates started at
once all succeed, and the graph they leave equals the one the same four commands leave
when run one after another. A writer that runs out of ``--wait`` gets STORE_LOCKED naming
the holder, and on a terminal it says whom it waits for.

Only what must race or wait runs as a separate process; the setup, the serial reference
run and the reading of results call the same CLI in this process (no start-up per
command), which keeps the module to a few seconds of CPU beyond the racing writers.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cleveragents.cli.main import run
from cleveragents.graph.store import GraphStore

CODE = "import sys; from cleveragents.cli.main import run; sys.exit(run())"


def _argv(data_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", CODE, "--data-dir", str(data_dir), *args]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEVERAGENTS_")}
    return {**env, "CLEVERAGENTS_FORMAT": "json"}


def _run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(_argv(data_dir, *args), capture_output=True, env=_env(), timeout=300, check=False)


def _here(data_dir: Path, *args: str) -> tuple[int, str]:
    """The same command through the CLI's entry point in this process: (exit code, stdout)."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as env, contextlib.redirect_stdout(out):
        for key in [k for k in os.environ if k.startswith("CLEVERAGENTS_")]:
            env.delenv(key)
        env.setenv("CLEVERAGENTS_FORMAT", "json")
        code = run(["--data-dir", str(data_dir), *args])
    return code, out.getvalue()


def _source(root: Path, name: str, body: str) -> Path:
    src = root / name
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "core.py").write_text(body)
    return src


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with two registered, not yet indexed, resources."""
    root = tmp_path_factory.mktemp("queue")
    data = root / "base"
    assert _here(data, "init")[0] == 0
    for name, body in (
        (
            "alpha",
            "def parse(text):\n    return text.split()\n\n\n"
            "class Reader:\n    def read(self):\n        return parse('')\n",
        ),
        ("beta", "import os\n\n\ndef home():\n    return os.environ['HOME']\n"),
    ):
        src = _source(root, name, body)
        code, out = _here(
            data, "resource", "add", str(src), "--type", "fs-directory", "--name", f"local/{name}", "--no-index"
        )
        assert code == 0, out
    return data


WRITERS = [
    ("index", "local/alpha"),
    ("graph", "update", "INSERT DATA { <urn:ex:a> <urn:ex:says> 'first' }"),
    ("index", "local/beta"),
    ("graph", "update", "INSERT DATA { <urn:ex:b> <urn:ex:says> 'second' }"),
]


def _state(data_dir: Path) -> list[str]:
    code, export = _here(data_dir, "graph", "export", "--format", "nt", "--as-of", "head")
    assert code == 0, export
    return sorted(line for line in export.splitlines() if line)


def test_four_concurrent_writers_all_succeed_in_turn(base: Path, tmp_path: Path):
    concurrent, serial = tmp_path / "concurrent", tmp_path / "serial"
    shutil.copytree(base, concurrent)
    shutil.copytree(base, serial)

    procs = [
        subprocess.Popen(
            _argv(concurrent, "--wait", "240", *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
        )
        for args in WRITERS
    ]
    results = [(p.communicate(timeout=300), p.returncode) for p in procs]
    for (out, err), code in results:
        assert code == 0, (out, err)
    for args in WRITERS:
        code, out = _here(serial, *args)
        assert code == 0, out

    state = _state(concurrent)
    assert any("urn:ex:says" in line for line in state) and any("Reader" in line for line in state)
    assert state == _state(serial)
    code, log = _here(concurrent, "graph", "log")
    causes = [c["cause"] for c in json.loads(log)["data"]["commits"]]
    assert causes.count("sparql-update") == 2 and len(causes) >= 4


def test_writer_waits_its_turn_and_says_for_whom(base: Path, tmp_path: Path):
    data = tmp_path / "held"
    shutil.copytree(base, data)
    held = GraphStore.open(data / "store")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        _argv(data, "graph", "update", "--wait", "60", "INSERT DATA { <urn:ex:c> <urn:ex:p> 1 }"),
        stdout=subprocess.PIPE,
        stderr=slave,
        env=_env(),
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    while b"waiting for pid" not in seen and time.monotonic() < deadline:
        seen += os.read(master, 4096)
    assert f"waiting for pid {os.getpid()}".encode() in seen, seen
    # Readers are not blocked meanwhile.
    reader = _run(data, "graph", "query", "ASK { ?s ?p ?o }")
    assert reader.returncode == 0, reader.stderr
    assert proc.poll() is None  # still waiting
    held.close()
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0, out


def test_writer_gives_up_after_its_wait_naming_the_holder(base: Path, tmp_path: Path):
    data = tmp_path / "locked"
    shutil.copytree(base, data)
    held = GraphStore.open(data / "store")
    try:
        started = time.monotonic()
        done = _run(data, "graph", "update", "INSERT DATA { <urn:ex:d> <urn:ex:p> 1 }", "--wait", "1.5")
        elapsed = time.monotonic() - started
    finally:
        held.close()
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "STORE_LOCKED"
    assert f"pid {os.getpid()}" in error["message"] and "waited 1.5 s" in error["message"]
    assert elapsed >= 1.5
