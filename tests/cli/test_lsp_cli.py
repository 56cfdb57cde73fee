"""``agents lsp add | list | show | remove | install`` on a real store in tmp_path."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from cleveragents.lsp.builtins import TOOLS_DIR_ENV
from tests.cli.test_graph_cli import Cli, clean_env, initialized_cli

LIST_KEYS = ["name", "languages", "command", "transport", "source", "available"]
SHOW_KEYS = [
    "name",
    "description",
    "command",
    "args",
    "transport",
    "host",
    "port",
    "languages",
    "capabilities",
    "initialization",
    "workspace_settings",
    "file_extensions",
    "source",
    "iri",
    "requires",
    "npm_packages",
    "available",
    "resolved_command",
]
BASEDPYRIGHT = "cleveragents/basedpyright"
JEDI = "cleveragents/jedi-language-server"
TYPESCRIPT = "cleveragents/typescript-language-server"

RUST = """\
name: local/rust-analyzer
description: Rust
command: rust-analyzer
languages: [rust]
initialization: {checkOnSave: {command: "${RA_CHECK:clippy}"}}
"""
TCP = """\
name: local/jdtls-remote
command: jdtls
args: [--port, "5036"]
transport: tcp
port: 5036
languages: [java]
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    runner = initialized_cli(tmp_path, monkeypatch, capsys)
    monkeypatch.setenv(TOOLS_DIR_ENV, str(tmp_path / "tools"))  # nothing npm-installed yet
    return runner


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_add_list_show_remove(cli: Cli, tmp_path: Path):
    added = cli.ok("lsp", "add", "--config", str(write(tmp_path, "rust.yaml", RUST)))
    assert added.out.startswith("LSP server local/rust-analyzer\n")
    assert 'Initialization:     {"checkOnSave": {"command": "${RA_CHECK:clippy}"}}' in added.out
    assert "Capabilities:       discovered from the server's initialize reply" in added.out
    assert "[OK] Committed revision 1 (lsp add local/rust-analyzer)" in added.out
    tcp = cli.ok("lsp", "add", "-c", str(write(tmp_path, "jdtls.yaml", TCP)), fmt="json").json()["data"]
    assert tcp["lsp_server"]["port"] == 5036 and tcp["lsp_server"]["args"] == ["--port", "5036"]
    assert tcp["commit"]["revision"] == 2

    rows = cli.ok("lsp", "list", fmt="json").json()["data"]["lsp_servers"]
    assert [list(row) for row in rows] == [LIST_KEYS] * 5
    assert [(r["name"], r["source"], r["transport"]) for r in rows] == [
        (BASEDPYRIGHT, "builtin", "stdio"),
        (JEDI, "builtin", "stdio"),
        (TYPESCRIPT, "builtin", "stdio"),
        ("local/jdtls-remote", "user", "tcp"),
        ("local/rust-analyzer", "user", "stdio"),
    ]
    assert rows[0]["available"] == "yes" and rows[0]["languages"] == ["python"]
    assert rows[4]["command"] == "rust-analyzer" and rows[3]["command"] == "jdtls --port 5036"
    text = cli.ok("lsp", "list").out.splitlines()
    assert text[0] == "LSP servers (5)"
    assert text[1].split() == ["Name", "Languages", "Command", "Transport", "Source", "Available"]
    assert text[4].split()[:5] == [JEDI, "python", "jedi-language-server", "stdio", "builtin"]

    shown = cli.ok("lsp", "show", "rust-analyzer", fmt="json").json()["data"]["lsp_server"]
    assert list(shown) == SHOW_KEYS
    assert shown["initialization"] == {"checkOnSave": {"command": "${RA_CHECK:clippy}"}}
    assert shown["capabilities"] is None and shown["host"] is None and shown["source"] == "user"
    assert cli.ok("lsp", "show", shown["iri"], fmt="json").json()["data"]["lsp_server"] == shown
    yaml_out = cli.ok("lsp", "show", "local/jdtls-remote", fmt="yaml").out
    assert "transport: tcp\n" in yaml_out and "port: 5036\n" in yaml_out

    removed = cli.ok("lsp", "remove", "rust-analyzer", fmt="json").json()["data"]
    assert removed["commit"]["revision"] == 3 and removed["lsp_server"]["name"] == "local/rust-analyzer"
    assert "[OK] Removed LSP server local/jdtls-remote" in cli.ok("lsp", "remove", "jdtls-remote").out
    gone = cli("lsp", "show", "rust-analyzer")
    assert gone.code == 1 and gone.err.startswith("Error [404] NOT_FOUND: LSP server 'rust-analyzer' not found")
    assert cli.ok("graph", "history", shown["iri"], fmt="json").json()["data"]["history"]
    listed = cli.ok("lsp", "list", fmt="json").json()["data"]["lsp_servers"]
    assert [r["name"] for r in listed] == [BASEDPYRIGHT, JEDI, TYPESCRIPT]


def test_builtins_show_and_override(cli: Cli, tmp_path: Path):
    jedi = cli.ok("lsp", "show", "jedi-language-server", fmt="json").json()["data"]["lsp_server"]
    assert jedi["source"] == "builtin" and jedi["available"] == "yes" and jedi["iri"] is None
    assert jedi["resolved_command"][0].endswith("/jedi-language-server")

    cant = cli("lsp", "remove", JEDI)
    assert cant.code == 1 and "is a built-in LSP server and cannot be removed" in cant.err

    override = write(tmp_path, "jedi.yaml", f"name: {JEDI}\ncommand: /nowhere/jls\nlanguages: [python]\n")
    cli.ok("lsp", "add", "--config", str(override))
    rows = {r["name"]: r for r in cli.ok("lsp", "list", fmt="json").json()["data"]["lsp_servers"]}
    assert rows[JEDI]["source"] == "user" and rows[JEDI]["command"] == "/nowhere/jls"
    assert rows[JEDI]["available"] == "'/nowhere/jls' does not exist or is not executable"
    cli.ok("lsp", "remove", "jedi-language-server")
    assert cli.ok("lsp", "show", JEDI, fmt="json").json()["data"]["lsp_server"]["source"] == "builtin"


def test_typescript_unavailable_without_install(cli: Cli, tmp_path: Path):
    shown = cli.ok("lsp", "show", "typescript-language-server", fmt="json").json()["data"]["lsp_server"]
    if shutil.which("node") is None:
        assert shown["available"] == "Node.js is required but 'node' is not on PATH"
    else:
        assert shown["available"].startswith(f"'typescript-language-server' is not in {tmp_path / 'tools'}")
        assert shown["available"].endswith("run `agents lsp install cleveragents/typescript-language-server`")
    assert shown["resolved_command"] is None
    assert shown["npm_packages"] == ["typescript-language-server@5.0.1", "typescript@5.9.3"]


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_install_typescript(cli: Cli, tmp_path: Path):
    done = cli.ok("lsp", "install", "typescript-language-server", fmt="json").json()["data"]["install"]
    assert done == {
        "name": TYPESCRIPT,
        "method": "npm",
        "command": str(tmp_path / "tools" / "node_modules" / ".bin" / "typescript-language-server"),
        "version": "5.0.1",
        "tools_dir": str(tmp_path / "tools"),
        "packages": ["typescript-language-server@5.0.1", "typescript@5.9.3"],
    }
    row = next(r for r in cli.ok("lsp", "list", fmt="json").json()["data"]["lsp_servers"] if r["name"] == TYPESCRIPT)
    assert row["available"] == "yes"


def test_install_errors(cli: Cli, tmp_path: Path):
    cli.ok("lsp", "add", "--config", str(write(tmp_path, "rust.yaml", RUST)))
    not_builtin = cli("lsp", "install", "rust-analyzer")
    assert not_builtin.code == 1 and "'local/rust-analyzer' is not a built-in LSP server" in not_builtin.err
    unknown = cli("lsp", "install", "nope")
    assert unknown.code == 1 and unknown.err.startswith("Error [404] NOT_FOUND: LSP server 'nope' not found")
    python = cli.ok("lsp", "install", JEDI)
    assert python.out.splitlines()[2:5] == [
        "  Method:  python-dependency",
        f"  Command: {Path(sys.executable).parent / 'jedi-language-server'}",
        "  Version: 0.47.0",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: [x\n", "not valid YAML"),
        ("name: x\ncommand: x\n", "field 'languages': is required"),
        (
            "name: x\ncommand: x\nlanguages: [c]\ntransport: udp\n",
            "field 'transport': input should be 'stdio' or 'tcp'",
        ),
        ("name: x\nlanguages: [c]\ntransport: tcp\n", "field 'port': is required for transport 'tcp'"),
    ],
)
def test_invalid_configurations(cli: Cli, tmp_path: Path, text: str, expected: str):
    path = write(tmp_path, "bad.yaml", text)
    result = cli("lsp", "add", "--config", str(path))
    assert result.code == 1
    assert result.err.startswith(f"Error [422] VALIDATION_FAILED: {path}: ")
    assert expected in result.err.splitlines()[0]
    assert cli.ok("graph", "stats", fmt="json").json()["data"]["stats"]["head"] == 0


def test_usage_and_missing_file(cli: Cli, tmp_path: Path):
    assert cli("lsp", "add").code == 2  # --config is required
    assert cli("lsp", "show").code == 2
    missing = cli("lsp", "add", "--config", str(tmp_path / "none.yaml"))
    assert missing.code == 1
    assert missing.err.startswith(f"Error [404] NOT_FOUND: LSP configuration file {tmp_path / 'none.yaml'} not found")


def test_list_before_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    clean_env(monkeypatch, tmp_path)
    runner = Cli(tmp_path / "fresh", capsys)
    rows = runner.ok("lsp", "list", fmt="json").json()["data"]["lsp_servers"]
    assert [r["name"] for r in rows] == [BASEDPYRIGHT, JEDI, TYPESCRIPT]
    add = runner("lsp", "add", "--config", str(write(tmp_path, "rust.yaml", RUST)))
    assert add.code == 1 and "no store in" in add.err


APP = "def helper(x):\n    return x\n\n\ndef main():\n    return helper(1)\n"


def test_index_with_lsp_the_switch_and_a_broken_server(cli: Cli, tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text(APP)
    cli.ok("resource", "add", str(project), "--type", "fs-directory", "--name", "local/proj")
    # Without --lsp (and lsp.enrich false by default) nothing is enriched.
    plain = cli.ok("index", "local/proj", "--full", fmt="json").json()["data"]["index"][0]
    assert plain["enrichment"] == []
    enriched = cli.ok("index", "local/proj", "--lsp", fmt="json").json()["data"]["index"][0]
    [report] = enriched["enrichment"]
    assert report["server"] == BASEDPYRIGHT and report["files"] == 1 and report["unavailable"] is None
    # The config switch makes it the default; --no-lsp overrides it.
    cli.ok("config", "set", "lsp.enrich", "true")
    (project / "app.py").write_text(APP + "\n\ndef other():\n    return main()\n")
    switched = cli.ok("index", "local/proj", fmt="json").json()["data"]["index"][0]
    assert [r["server"] for r in switched["enrichment"]] == [BASEDPYRIGHT]
    (project / "app.py").write_text(APP)
    assert cli.ok("index", "local/proj", "--no-lsp", fmt="json").json()["data"]["index"][0]["enrichment"] == []
    # A registered server that can't start: said once, with the reason; the index goes on.
    broken = write(
        tmp_path, "broken.yaml", f"name: local/broken\ncommand: {shutil.which('false')}\nlanguages: [python]\n"
    )
    cli.ok("lsp", "add", "--config", str(broken))
    (project / "app.py").write_text(APP + "\n# edited\n")
    result = cli.ok("index", "local/proj", fmt="plain")
    assert result.out.count("LSP local/broken") == 1
    assert "could not start" in result.out
    assert "LSP cleveragents/basedpyright" not in result.out  # local/broken comes first for python
