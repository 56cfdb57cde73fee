"""No secret at rest or in context: a planted-secrets sweep finds zero values anywhere.

``planted_secrets/`` holds one file of each analyzer's types (Python, JavaScript,
TypeScript, Go, Java, Rust, Markdown, reStructuredText, SQL, .env, Compose, a Kubernetes
Secret, TOML, INI, YAML), each with secrets written the way that language writes them
(keys, tokens, passwords, default argument values, unquoted config values, base64 Secret
data). After indexing, every file under the data dir (zlib content blobs decompressed),
the full N-Quads export and an assembled context must contain none of the values, and the
graph must record each finding as a ``ca:SecretFinding`` (kind and line).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import zlib
from pathlib import Path

import pytest

from cleveragents.indexing.secrets import mask_secrets
from tests.cli.test_graph_cli import Cli, initialized_cli

PLANTED = Path(__file__).parent / "planted_secrets"
VALUES = [
    "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "Pyth0nHunter2-Secret",
    "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A",
    "AKIAZZTOPSECRETPY1234",
    "js9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "JsHunter2-Secret-Value",
    "TsZx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8C",
    "ts9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "GoHunter2-Secret-Value",
    "JavaHunter2-Secret-Value",
    "RustHunter2-Secret-Value",
    "MdHunter2SecretValueXyz",
    "RstHunter2-Secret-Value",
    "SqlHunter2-Secret-Value",
    "EnvHunter2-Secret-Value",
    "51HenvABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "ComposeHunter2-Secret-Value",
    "K8sHunter2-Secret-Value",
    "SzhzVG9rZW5IdW50ZXIyLVNlY3JldA",
    "TomlHunter2-Secret-Value",
    "IniHunter2-Secret-Value",
    "YamlHunter2-Secret-Value",
]


def _hits(blob: bytes) -> set[str]:
    return {v for v in VALUES if v.encode() in blob}


def _sweep(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for file in root.rglob("*"):
        if not file.is_file():
            continue
        data = file.read_bytes()
        bodies = [data]
        with contextlib.suppress(zlib.error):
            bodies.append(zlib.decompress(data))
        if hits := set().union(*(_hits(b) for b in bodies)):
            found[str(file.relative_to(root))] = hits
    return found


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


def test_planted_secrets_are_nowhere(cli: Cli, tmp_path: Path):
    source = tmp_path / "src"
    shutil.copytree(PLANTED, source)
    assert all(_hits(source.joinpath(p).read_bytes()) for p in ("app.py", ".env", "k8s/secret.yaml"))  # planted
    cli.ok("resource", "add", str(source), "--type", "fs-directory", "--name", "local/planted")
    export = cli.ok("graph", "export", "--format", "nq").out
    context = cli.ok("context", "assemble", "--query", "password api key token secret", "--budget", "6000").out
    found = cli.ok(
        "graph", "query", 'SELECT ?f WHERE { ?f uko:sourcePath "app.py" FILTER(!CONTAINS(STR(?f), "#")) }', fmt="json"
    )
    app_py = json.loads(found.out)["data"]["results"][0]["f"].strip("<>")
    shown = cli.ok("show", app_py, "--depth", "FULL_SOURCE").out

    assert _sweep(cli.data_dir) == {}
    assert _hits(export.encode()) == set()
    assert _hits(context.encode()) == set() and "****" in context
    assert _hits(shown.encode()) == set() and 'API_KEY = "****' in shown

    rows = json.loads(
        cli.ok(
            "graph",
            "query",
            "SELECT ?path ?kind ?line WHERE { ?file ca:hasSecretFinding ?f ; uko:sourcePath ?path . "
            "?f ca:secretKind ?kind ; ca:secretLine ?line }",
            fmt="json",
        ).out
    )["data"]["results"]
    paths = {r["path"].strip('"') for r in rows}
    assert {"app.py", "app.ts", "main.go", "Main.java", "lib.rs", ".env", "k8s/secret.yaml", "schema.sql"} <= paths
    assert any(r["kind"] == '"AWS Access Key"' for r in rows)


def test_masking_keeps_lengths_and_code_intact():
    data = b'def connect(host, token="ghp_Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A"):\n    return compute(host)\n'
    masked, findings = mask_secrets("app.py", data)
    assert len(masked) == len(data) and b"ghp_" not in masked
    assert masked.startswith(b'def connect(host, token="****') and masked.endswith(b"return compute(host)\n")
    assert findings and all(f.line == 1 for f in findings)
    plain = b"def add(a, b):\n    return a + b\n"
    assert mask_secrets("m.py", plain) == (plain, [])
