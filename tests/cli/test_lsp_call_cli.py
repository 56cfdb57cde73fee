"""``agents lsp call`` and ``agents lsp tools`` with a real basedpyright on a copy of the
requests sources, on a real store in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_graph_cli import Cli, initialized_cli, subprocess_cli
from tests.lsp.test_tools import SPEC_TOOLS, digests, make_python_project, processes_in

BROKEN = """\
name: local/broken-python
command: /bin/sh
args: [-c, "echo 'licence expired' >&2; exit 3"]
languages: [python]
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    return initialized_cli(tmp_path, monkeypatch, capsys)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_python_project(tmp_path / "project").resolve()


def test_call_definition(cli: Cli, project: Path):
    api = str(project / "requests" / "api.py")
    result = cli.ok("lsp", "call", "lsp/definition", "--file", api, "--line", "73", "--col", "12", fmt="json").json()
    assert result["command"] == "lsp call" and result["exit_code"] == 0
    assert result["data"]["result"] == {
        "tool": "lsp/definition",
        "server": "cleveragents/basedpyright",
        "root": str(project),
        "file": "requests/api.py",
        "locations": [{"path": "requests/api.py", "line": 14, "column": 5, "end_line": 14, "end_column": 12}],
    }
    assert processes_in(project) == []  # the server stopped with the command

    plain = cli.ok("lsp", "call", "definition", "--file", api, "--line", "73", "--column", "12", "--format", "plain")
    assert plain.out.splitlines()[:4] == [
        "Definitions (1)",
        "Path             Line  Column  End line  End column",
        "---------------  ----  ------  --------  ----------",
        "requests/api.py    14       5        14          12",
    ]
    assert f"[INFO] lsp/definition by cleveragents/basedpyright (workspace {project})" in plain.out


def test_call_rename_is_a_preview(cli: Cli, project: Path):
    before = digests(project)
    sessions = str(project / "requests" / "sessions.py")
    args = json.dumps({"line": 356, "column": 7, "new_name": "Sess"})
    result = cli.ok("lsp", "call", "lsp/rename", "--file", sessions, "--args", args, fmt="json").json()["data"][
        "result"
    ]
    assert result["applied"] is False
    assert {change["path"] for change in result["changes"]} >= {
        "requests/__init__.py",
        "requests/api.py",
        "requests/sessions.py",
        "planted.py",
    }
    assert digests(project) == before


def test_call_workspace_symbols_with_the_options(cli: Cli, project: Path):
    out = cli.ok(
        "lsp", "call", "lsp/workspace-symbols", "--file", str(project / "planted.py"), "--query", "Session", fmt="json"
    ).json()["data"]["result"]
    assert ("Session", "class", "requests/sessions.py", 356) in [
        (s["name"], s["kind"], s["path"], s["line"]) for s in out["symbols"]
    ]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["lsp/goto", "--file", "{api}"], 2, "unknown LSP tool 'lsp/goto'; the tools are: lsp/diagnostics, lsp/hover"),
        (
            ["lsp/hover", "--file", "{dir}/nothere.py", "--line", "1", "--col", "1"],
            1,
            "file {dir}/nothere.py not found",
        ),
        (["lsp/symbols", "--file", "{dir}/main.rs"], 1, "no LSP server is registered for language 'rust'"),
        (["lsp/hover", "--file", "{api}", "--line", "400", "--col", "1"], 2, "line 400 is outside {api}"),
        (["lsp/hover", "--file", "{api}", "--line", "14", "--col", "99"], 2, "column 99 is outside line 14 of {api}"),
        (["lsp/hover", "--file", "{api}", "--args", '{"line": "x", "column": 1}'], 2, "argument 'line': input should"),
        (["lsp/hover", "--file", "{api}", "--args", "[1]"], 2, "--args must be a JSON object"),
        (["lsp/hover", "--file", "{api}", "--args", "{line"], 2, "--args is not valid JSON"),
        (["lsp/rename", "--file", "{api}", "--line", "14", "--col", "5"], 2, "argument 'new_name': is required"),
    ],
)
def test_call_errors(cli: Cli, project: Path, argv: list[str], code: int, message: str):
    (project / "main.rs").write_text("fn main() {}\n")

    def fill(text: str) -> str:
        return text.replace("{api}", str(project / "requests" / "api.py")).replace("{dir}", str(project))

    result = cli("lsp", "call", *map(fill, argv), fmt="json")
    assert result.code == code, result.out
    assert fill(message) in result.json()["error"]["message"]


def test_call_reports_a_server_that_fails(cli: Cli, project: Path, tmp_path: Path):
    config = tmp_path / "broken.yaml"
    config.write_text(BROKEN)
    cli.ok("lsp", "add", "--config", str(config))
    result = cli("lsp", "call", "lsp/symbols", "--file", str(project / "planted.py"))
    assert result.code == 1
    assert "Error [503] DEPENDENCY_MISSING: LSP server 'local/broken-python' is unavailable: could not start" in (
        result.out + result.err
    )
    assert "licence expired" in result.out + result.err


def test_tools(cli: Cli, project: Path):
    listed = cli.ok("lsp", "tools", fmt="json").json()["data"]["lsp_tools"]
    assert [(tool["name"], tool["capability"]) for tool in listed] == SPEC_TOOLS
    assert listed[3]["input_schema"]["properties"]["line"]["minimum"] == 1
    table = cli.ok("lsp", "tools", "--format", "plain").out
    assert "lsp/symbols / lsp/document-symbols  document_symbols" in table
    offered = cli.ok("lsp", "tools", "--file", str(project / "planted.py"), fmt="json").json()["data"]["lsp_tools"]
    names = [tool["name"] for tool in offered]
    assert "lsp/definition" in names and "lsp/format" not in names  # basedpyright does not format
    assert processes_in(project) == []


def test_no_server_outlives_the_command_process(cli: Cli, project: Path):
    done = subprocess_cli(
        cli.data_dir, "--format", "json", "lsp", "call", "lsp/symbols", "--file", str(project / "planted.py")
    )
    assert done.returncode == 0, done.stderr
    symbols = json.loads(done.stdout)["data"]["result"]["symbols"]
    assert [(s["name"], s["kind"]) for s in symbols] == [("session_count", "function")]
    assert processes_in(project) == []
