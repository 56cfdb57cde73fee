"""``agents diagnostics`` on a real data dir: healthy, then with a corrupted content blob."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    src = tmp_path / "src"
    src.mkdir()
    (src / "app.py").write_text("def main():\n    return 1\n")
    runner.ok("resource", "add", str(src), "--type", "fs-directory", "--name", "local/app")
    return runner


def _checks(result) -> dict[str, dict]:
    return {c["name"]: c for c in result.json()["data"]["checks"]}


def test_healthy_install_passes_every_store_check(cli: Cli):
    result = cli("diagnostics", fmt="json")
    assert result.code == 0, result.out
    checks = _checks(result)
    assert {"config", "store", "publication", "content store", "disk space", "language servers", "providers"} == set(
        checks
    )
    for name in ("config", "store", "publication", "content store"):
        assert checks[name]["status"] == "ok", checks[name]
    assert "every hash verified" in checks["content store"]["detail"]


def test_a_corrupted_content_blob_fails_naming_it(cli: Cli):
    blob = next(p for p in (cli.data_dir / "content").rglob("*") if p.is_file())
    blob.write_bytes(zlib.compress(b"def main():\n    return 2\n"))  # same name, other bytes
    result = cli("diagnostics", fmt="json")
    assert result.code == 1
    content = _checks(result)["content store"]
    assert content["status"] == "fail" and str(blob) in content["detail"] and "index --full" in content["detail"]
    assert Path(blob).exists()
