"""Files that used to hang or abort a run are skipped with a reason.

A named pipe called ``pipe.py`` hung the index forever (holding the writer lock); a file
name that is not valid UTF-8 (``caf\\xe9.py``) aborted the whole run with INTERNAL. Real
files on disk, the real ``agents`` command in a subprocess (so a hang is a timeout).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CODE = "import sys; from cleveragents.cli.main import run; sys.exit(run())"


def _agents(data_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEVERAGENTS_")}
    return subprocess.run(
        [sys.executable, "-c", CODE, "--data-dir", str(data_dir), "--format", "json", *args],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_named_pipe_and_undecodable_name_are_skipped(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    os.mkfifo(src / "pipe.py")
    (src / "good.py").write_text("def ok():\n    return 1\n")
    with open(os.path.join(os.fsencode(src), b"caf\xe9.py"), "w") as handle:
        handle.write("x = 1\n")
    data = tmp_path / "data"
    assert _agents(data, "init").returncode == 0
    done = _agents(data, "resource", "add", str(src), "--type", "fs-directory", "--name", "local/hostile")
    assert done.returncode == 0, done.stderr
    index = json.loads(done.stdout)["data"]["index"]
    reasons = {s["path"]: s["reason"] for s in index["skipped"]}
    assert reasons["pipe.py"] == "not a regular file (named pipe)"
    assert reasons["caf\\xe9.py"] == "file name is not valid UTF-8"
    found = _agents(data, "graph", "query", 'ASK { ?f uko:sourcePath "good.py" }')
    assert json.loads(found.stdout)["data"]["boolean"] is True
