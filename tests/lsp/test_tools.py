"""LSP tools (``LSPToolAdapter``) against real language servers: basedpyright on a copy of
the requests sources (plus files written here), and typescript-language-server installed
with npm into a tmp tools dir."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cleveragents.errors import (
    DependencyMissingError,
    LSPRequestError,
    LSPUnavailable,
    NotFoundError,
    UsageError,
    ValidationError,
)
from cleveragents.graph.workspace import Workspace
from cleveragents.lsp import builtins
from cleveragents.lsp.client import ServerLaunch
from cleveragents.lsp.registry import CAPABILITIES
from cleveragents.lsp.runtime import LSPRuntime
from cleveragents.lsp.tools import SCHEMA_DIALECT, TOOLS, LSPToolAdapter, ServerBinding, find_tool
from cleveragents.services import lsp_registry, lsp_tools, resources
from corpora.fetch import corpus_dir

# The spec's table ("LSP Capability Exposure"), in its order.
SPEC_TOOLS = [
    ("lsp/diagnostics", "diagnostics"),
    ("lsp/hover", "hover"),
    ("lsp/completions", "completions"),
    ("lsp/definition", "definitions"),
    ("lsp/references", "references"),
    ("lsp/rename", "rename"),
    ("lsp/code-actions", "code_actions"),
    ("lsp/format", "formatting"),
    ("lsp/signature", "signature_help"),
    ("lsp/symbols", "document_symbols"),
    ("lsp/workspace-symbols", "workspace_symbols"),
]

PLANTED = """\
from requests.sessions import Session


def session_count(session: Session) -> int:
    return "many"
"""
# Line 5: "make" starts at character 27, UTF-16 unit 28 (the emoji takes two units).
UNICODE = """\
def make(text: str) -> str:
    return text


greeting = "😀é"; result = make(greeting)
"""


def make_python_project(dest: Path) -> Path:
    """A git checkout holding requests' sources, a planted type error and a non-ASCII line."""
    shutil.copytree(corpus_dir("requests-2.32.3") / "src" / "requests", dest / "requests")
    (dest / "planted.py").write_text(PLANTED)
    (dest / "unicode_names.py").write_text(UNICODE, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.py"))
        if ".git" not in p.parts
    }


def processes_in(directory: Path) -> list[int]:
    """Processes whose working directory is ``directory`` (a server runs in its root)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == directory:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_python_project(tmp_path_factory.mktemp("project")).resolve()


@pytest.fixture(scope="module")
def no_store(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A workspace before ``agents init``: the registry holds the built-ins only."""
    return Workspace(tmp_path_factory.mktemp("nodata") / "data")


@pytest.fixture(scope="module")
def runtime() -> Iterator[LSPRuntime]:
    runtime = LSPRuntime()
    yield runtime
    runtime.close()


@pytest.fixture(scope="module")
def adapter(runtime: LSPRuntime, no_store: Workspace, project: Path) -> Iterator[LSPToolAdapter]:
    """One adapter (so one warm basedpyright) for the module's read-only calls."""
    with lsp_tools.tool_adapter(no_store, runtime=runtime) as adapter:
        yield adapter


def call(adapter: LSPToolAdapter, tool: str, file: Path, **arguments: object) -> dict:
    return adapter.call(tool, {"file": str(file), **arguments})


# --- the catalogue and its schemas -----------------------------------------------------------


def test_tools_are_the_specs():
    assert [(tool.name, tool.capability) for tool in TOOLS] == SPEC_TOOLS
    assert {tool.capability for tool in TOOLS} == set(CAPABILITIES)
    assert all(tool.method == CAPABILITIES[tool.capability] for tool in TOOLS)
    assert find_tool("lsp/document-symbols") is find_tool("lsp/symbols")
    assert find_tool("definition").name == "lsp/definition"
    with pytest.raises(UsageError, match=r"unknown LSP tool 'lsp/goto'; the tools are: lsp/diagnostics, lsp/hover"):
        find_tool("lsp/goto")


def test_input_schemas():
    schema = find_tool("lsp/references").input_schema
    assert schema["$schema"] == SCHEMA_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "lsp/references" and schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["file", "line", "column"]
    line, column = schema["properties"]["line"], schema["properties"]["column"]
    assert line["type"] == column["type"] == "integer" and line["minimum"] == column["minimum"] == 1
    assert "1-based" in line["description"] and "1-based" in column["description"]
    assert schema["properties"]["include_declaration"] == {
        "default": True,
        "description": "Whether the declaration itself is one of the references.",
        "title": "Include Declaration",
        "type": "boolean",
    }
    assert find_tool("lsp/rename").input_schema["required"] == ["file", "line", "column", "new_name"]
    assert find_tool("lsp/workspace-symbols").input_schema["required"] == ["file", "query"]
    assert find_tool("lsp/symbols").input_schema["required"] == ["file"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"file": "a.py", "line": "x", "column": 1}, "lsp/hover: argument 'line': input should be a valid integer"),
        ({"file": "a.py", "line": "3", "column": 1}, "argument 'line': input should be a valid integer (got '3')"),
        ({"file": "a.py", "line": 0, "column": 1}, "argument 'line': input should be greater than or equal to 1"),
        ({"file": "a.py", "line": 1}, "argument 'column': is required"),
        ({"file": "a.py", "line": 1, "column": 1, "depth": 2}, "argument 'depth': is not an argument; the arguments"),
        ({"line": 1, "column": 1}, "argument 'file': is required"),
    ],
)
def test_arguments_are_validated_against_the_schema(adapter: LSPToolAdapter, arguments: dict, message: str):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        adapter.call("lsp/hover", arguments)


def test_position_outside_the_file(adapter: LSPToolAdapter, project: Path):
    api = project / "requests" / "api.py"
    with pytest.raises(UsageError, match=r"line 159 is outside .*api.py: its lines are 1 to 158"):
        call(adapter, "lsp/hover", api, line=159, column=1)
    with pytest.raises(
        UsageError, match=r"column 37 is outside line 14 of .*api.py: its columns are 1 to 36 \(35 char"
    ):
        call(adapter, "lsp/hover", api, line=14, column=37)
    assert call(adapter, "lsp/hover", api, line=14, column=36)["text"] is None  # just past the end: valid


def test_missing_file_and_languages_without_a_server(adapter: LSPToolAdapter, project: Path, tmp_path: Path):
    with pytest.raises(NotFoundError, match=r"file .*nothere.py not found"):
        call(adapter, "lsp/symbols", project / "nothere.py")
    (tmp_path / "lib.rs").write_text("fn main() {}\n")
    with pytest.raises(DependencyMissingError, match=r"no LSP server is registered for language 'rust'"):
        call(adapter, "lsp/symbols", tmp_path / "lib.rs")
    (tmp_path / "notes.xyz").write_text("?\n")
    with pytest.raises(ValidationError, match=r"cannot tell the language of .*notes.xyz"):
        call(adapter, "lsp/symbols", tmp_path / "notes.xyz")


# --- navigation -------------------------------------------------------------------------------


def test_definition_of_a_call_goes_to_the_def(adapter: LSPToolAdapter, project: Path):
    api = project / "requests" / "api.py"
    result = call(adapter, "lsp/definition", api, line=73, column=12)  # return request("get", ...)
    assert list(result) == ["tool", "server", "root", "file", "locations"]
    assert result["tool"] == "lsp/definition" and result["server"] == "cleveragents/basedpyright"
    assert result["root"] == str(project) and result["file"] == "requests/api.py"
    assert result["locations"] == [
        {"path": "requests/api.py", "line": 14, "column": 5, "end_line": 14, "end_column": 12}
    ]
    other_file = call(adapter, "lsp/definition", api, line=58, column=19)  # sessions.Session()
    assert [(loc["path"], loc["line"], loc["column"]) for loc in other_file["locations"]] == [
        ("requests/sessions.py", 356, 7)
    ]


def test_references_find_the_call_sites(adapter: LSPToolAdapter, project: Path):
    api = project / "requests" / "api.py"
    result = call(adapter, "lsp/references", api, line=14, column=5)  # def request
    in_api = [loc["line"] for loc in result["locations"] if loc["path"] == "requests/api.py"]
    assert in_api == [14, 73, 85, 100, 115, 130, 145, 157]
    assert ("requests/__init__.py", 164) in [(loc["path"], loc["line"]) for loc in result["locations"]]
    without = call(adapter, "lsp/references", api, line=14, column=5, include_declaration=False)
    assert [loc for loc in without["locations"] if loc["line"] == 14 and loc["path"] == "requests/api.py"] == []
    assert len(without["locations"]) == len(result["locations"]) - 1


def test_columns_count_characters_not_utf16_units(adapter: LSPToolAdapter, project: Path):
    source = project / "unicode_names.py"
    result = call(adapter, "lsp/definition", source, line=5, column=27)
    assert result["locations"] == [{"path": "unicode_names.py", "line": 1, "column": 5, "end_line": 1, "end_column": 9}]
    uses = call(adapter, "lsp/references", source, line=1, column=5)["locations"]
    assert {"path": "unicode_names.py", "line": 5, "column": 27, "end_line": 5, "end_column": 31} in uses


def test_hover_has_the_signature(adapter: LSPToolAdapter, project: Path):
    result = call(adapter, "lsp/hover", project / "requests" / "api.py", line=73, column=12)
    assert result["text"].startswith("(function) def request(")
    assert "method" in result["text"] and "Constructs and sends a :class:`Request <Request>`." in result["text"]
    assert result["range"] == {"line": 73, "column": 12, "end_line": 73, "end_column": 19}
    blank = call(adapter, "lsp/hover", project / "requests" / "api.py", line=15, column=1)
    assert blank["text"] is None


def test_signature_at_a_call_site(adapter: LSPToolAdapter, project: Path):
    result = call(adapter, "lsp/signature", project / "requests" / "api.py", line=73, column=20)
    assert result["active_signature"] == 0 and result["active_parameter"] == 0
    [signature] = result["signatures"]
    assert [p["label"] for p in signature["parameters"]] == ["method: Unknown", "url: Unknown", "**kwargs: Unknown"]
    assert signature["label"].startswith("(method")


def test_completions(adapter: LSPToolAdapter, project: Path):
    result = call(adapter, "lsp/completions", project / "requests" / "api.py", line=58, column=19, limit=500)
    by_label = {item["label"]: item for item in result["completions"]}
    assert by_label["Session"]["kind"] == "class"
    assert by_label["merge_setting"]["kind"] == "function"
    limited = call(adapter, "lsp/completions", project / "requests" / "api.py", line=58, column=19, limit=3)
    assert len(limited["completions"]) == 3 and limited["incomplete"] is True


# --- symbols ----------------------------------------------------------------------------------


def test_document_symbols_are_a_tree_with_kind_names(adapter: LSPToolAdapter, project: Path):
    result = call(adapter, "lsp/document-symbols", project / "requests" / "sessions.py")
    assert result["tool"] == "lsp/symbols"
    top = {symbol["name"]: symbol for symbol in result["symbols"]}
    session = top["Session"]
    assert (session["kind"], session["line"], session["column"]) == ("class", 356, 7)
    assert session["range"]["line"] == 356 and session["range"]["end_line"] > 800
    methods = {child["name"]: child for child in session["children"]}
    assert methods["request"]["kind"] == "method" and methods["request"]["container"] == "Session"
    assert top["merge_setting"]["kind"] == "function" and top["merge_setting"]["line"] == 61


def test_workspace_symbols_find_a_class_by_name(adapter: LSPToolAdapter, project: Path):
    result = call(adapter, "lsp/workspace-symbols", project / "requests" / "api.py", query="Session")
    assert result["query"] == "Session"
    assert {
        "name": "Session",
        "kind": "class",
        "container": None,
        "path": "requests/sessions.py",
        "line": 356,
        "column": 7,
        "range": {"line": 356, "column": 7, "end_line": 356, "end_column": 14},
    } in result["symbols"]


# --- edits are previews -----------------------------------------------------------------------


def test_rename_returns_edits_across_files_and_changes_nothing(adapter: LSPToolAdapter, project: Path):
    before = digests(project)
    result = call(adapter, "lsp/rename", project / "requests" / "sessions.py", line=356, column=7, new_name="Sess")
    assert result["applied"] is False and result["file_operations"] == []
    edits = {
        (change["path"], edit["range"]["line"], edit["range"]["column"], edit["new_text"])
        for change in result["changes"]
        for edit in change["edits"]
    }
    assert {
        ("requests/sessions.py", 356, 7, "Sess"),
        ("requests/sessions.py", 831, 12, "Sess"),
        ("requests/api.py", 58, 19, "Sess"),
        ("requests/__init__.py", 178, 23, "Sess"),
        ("planted.py", 1, 31, "Sess"),
    } <= edits
    assert [change["path"] for change in result["changes"]] == sorted(change["path"] for change in result["changes"])
    assert digests(project) == before


def test_code_actions_are_previews(adapter: LSPToolAdapter, project: Path):
    before = digests(project)
    result = call(adapter, "lsp/code-actions", project / "planted.py", line=5, column=12, end_line=5, end_column=18)
    [ignore] = [a for a in result["actions"] if "reportReturnType" in a["title"]]
    assert ignore["kind"] == "quickfix"
    [change] = ignore["changes"]
    assert change["path"] == "planted.py" and change["edits"][0]["range"]["line"] == 5
    assert digests(project) == before
    with pytest.raises(UsageError, match=r"the range ends \(end_line, end_column\) before it starts"):
        call(adapter, "lsp/code-actions", project / "planted.py", line=5, column=12, end_line=4)


def test_diagnostics_report_a_planted_type_error(adapter: LSPToolAdapter, project: Path):
    result = call(adapter, "lsp/diagnostics", project / "planted.py", wait_seconds=60)
    assert result["reported"] is True
    errors = [d for d in result["diagnostics"] if d["severity"] == "error"]
    assert len(errors) == 1
    [error] = errors
    assert error["code"] == "reportReturnType" and error["source"] == "basedpyright"
    assert error["message"].startswith('Type "Literal[\'many\']" is not assignable to return type "int"')
    assert error["range"] == {"line": 5, "column": 12, "end_line": 5, "end_column": 18}
    assert list(error) == ["severity", "code", "message", "range", "source"]


# --- capabilities -----------------------------------------------------------------------------


def test_tools_follow_the_servers_capabilities(adapter: LSPToolAdapter, no_store: Workspace, project: Path):
    offered = adapter.capabilities_for(project / "planted.py")
    assert "definitions" in offered and "formatting" not in offered  # basedpyright does not format
    names = [tool.name for tool in adapter.tools(offered)]
    assert "lsp/definition" in names and "lsp/format" not in names
    assert [tool.name for tool in adapter.tools()] == [name for name, _ in SPEC_TOOLS]
    with pytest.raises(LSPUnavailable, match=r"does not offer the 'formatting' capability \(textDocument/formatting\)"):
        call(adapter, "lsp/format", project / "planted.py")


def test_declared_capabilities_restrict_the_tools(ws: Workspace, config_file, project: Path):
    path = config_file(
        "pyright.yaml",
        f"name: local/pyright-nav\ncommand: {builtins.BASEDPYRIGHT.resolve_command()[0]}\nargs: [--stdio]\n"
        "languages: [python]\ncapabilities: [hover, definitions]\n",
    )
    lsp_registry.add(ws, path)
    runtime = LSPRuntime()
    try:
        listed = lsp_tools.list_tools(ws, project / "planted.py", runtime=runtime)
        assert [tool["name"] for tool in listed] == ["lsp/hover", "lsp/definition"]
        assert list(listed[0]) == ["name", "capability", "method", "description", "aliases", "input_schema", "output"]
        found = lsp_tools.call_tool(
            ws, "lsp/definition", {"file": str(project / "planted.py"), "line": 4, "column": 28}, runtime=runtime
        )
        assert found["server"] == "local/pyright-nav"
        assert found["locations"][0]["path"] == "requests/sessions.py"
        with pytest.raises(LSPUnavailable, match=r"'local/pyright-nav' is unavailable: it does not offer"):
            lsp_tools.call_tool(
                ws, "lsp/references", {"file": str(project / "planted.py"), "line": 4, "column": 28}, runtime=runtime
            )
    finally:
        runtime.close()


def test_list_tools_without_a_file_lists_them_all(no_store: Workspace):
    listed = lsp_tools.list_tools(no_store)
    assert [tool["name"] for tool in listed] == [name for name, _ in SPEC_TOOLS]
    assert listed[9]["aliases"] == ["lsp/document-symbols"]


# --- routing, roots and lifecycle -------------------------------------------------------------


def test_a_language_whose_server_is_not_installed(no_store: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(builtins.TOOLS_DIR_ENV, str(tmp_path / "tools"))  # nothing installed there
    (tmp_path / "app.ts").write_text("export const one = 1;\n")
    with pytest.raises(DependencyMissingError) as caught:
        lsp_tools.server_for_file(no_store, tmp_path / "app.ts")
    assert caught.value.message.startswith("no LSP server for language 'typescript' can run here")
    assert caught.value.suggestions == ["run `agents lsp install cleveragents/typescript-language-server`"]


def test_workspace_root(ws: Workspace, project: Path, tmp_path: Path):
    planted = project / "planted.py"
    assert lsp_tools.workspace_root(ws, planted) == project  # the git root
    resources.add(ws, project, type_name="fs-directory", name="local/whole")
    resources.add(ws, project / "requests", type_name="fs-directory", name="local/requests")
    assert lsp_tools.workspace_root(ws, project / "requests" / "api.py") == project / "requests"  # nearest
    assert lsp_tools.workspace_root(ws, planted) == project
    loose = tmp_path / "loose" / "one.py"
    loose.parent.mkdir()
    loose.write_text("x = 1\n")
    assert lsp_tools.workspace_root(ws, loose) == loose.parent


def test_a_server_that_cannot_start_is_reported(project: Path):
    launch = ServerLaunch("local/broken", ("sh", "-c", "echo 'no license' >&2; exit 3"))
    runtime = LSPRuntime()
    try:
        adapter = LSPToolAdapter(runtime, lambda path: ServerBinding(launch, project, "python"))
        with (
            adapter,
            pytest.raises(
                LSPUnavailable,
                match=r"LSP server 'local/broken' is unavailable: could not start: .*\(stderr: no license\)",
            ),
        ):
            call(adapter, "lsp/hover", project / "planted.py", line=1, column=1)
    finally:
        runtime.close()


FAILING_SERVER = """\
import time

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

server = LanguageServer("failing-server", "v1")


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: lsp.HoverParams) -> lsp.Hover:
    raise ValueError("no hover for you")


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
    time.sleep(3)
    return []


server.start_io()
"""


def test_request_errors_and_timeouts_are_reported(project: Path, tmp_path: Path):
    """A real (pygls) server that fails one request and is too slow for another."""
    script = tmp_path / "failing_server.py"
    script.write_text(FAILING_SERVER)
    launch = ServerLaunch("local/failing", (sys.executable, str(script)), request_timeout=0.5)
    runtime = LSPRuntime()
    try:
        with LSPToolAdapter(runtime, lambda path: ServerBinding(launch, project, "python")) as adapter:
            assert adapter.capabilities_for(project / "planted.py") == ("definitions", "diagnostics", "hover")
            with pytest.raises(LSPRequestError, match=r"'local/failing' failed lsp/hover on .*: no hover for you"):
                call(adapter, "lsp/hover", project / "planted.py", line=1, column=1)
            timed_out = r"textDocument/definition timed out: no answer from the server for 0.5 s"
            with pytest.raises(LSPRequestError, match=timed_out):
                call(adapter, "lsp/definition", project / "planted.py", line=1, column=1)
            with pytest.raises(LSPUnavailable, match=r"does not offer the 'references' capability"):
                call(adapter, "lsp/references", project / "planted.py", line=1, column=1)
    finally:
        runtime.close()


def test_close_stops_the_servers(no_store: Workspace, project: Path):
    runtime = LSPRuntime()
    try:
        with lsp_tools.tool_adapter(no_store, runtime=runtime) as adapter:
            call(adapter, "lsp/symbols", project / "planted.py")
            [handle] = runtime.running()
            pid = handle.pid
            assert pid is not None and pid in processes_in(project)
        assert runtime.running() == []
        assert pid not in processes_in(project)
    finally:
        runtime.close()


# --- TypeScript -------------------------------------------------------------------------------

GREET_TS = """\
export function greet(name: string): string {
  return `hello ${name}`;
}
"""
MAIN_TS = """\
import { greet } from "./greet";

const message: string =   greet("world");
console.log(message);
"""


@pytest.fixture(scope="module")
def typescript_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """typescript-language-server installed by ``agents lsp install``'s code into a tmp tools dir."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    tools = tmp_path_factory.mktemp("tools")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(builtins.TOOLS_DIR_ENV, str(tools))
        builtins.install(builtins.TYPESCRIPT)
    return tools


def test_typescript_definition_and_format(
    typescript_tools: Path, ws: Workspace, config_file, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(builtins.TOOLS_DIR_ENV, str(typescript_tools))
    # The built-in's command, but semantic answers only: while tsserver loads the project,
    # typescript-language-server's syntax server answers a definition with the import.
    override = config_file(
        "typescript.yaml",
        f"name: {builtins.TYPESCRIPT.name}\ncommand: {builtins.TYPESCRIPT.resolve_command()[0]}\nargs: [--stdio]\n"
        "languages: [typescript]\ninitialization: {tsserver: {useSyntaxServer: never}}\n",
    )
    lsp_registry.add(ws, override)
    project = tmp_path / "web"
    project.mkdir()
    (project / "greet.ts").write_text(GREET_TS)
    (project / "main.ts").write_text(MAIN_TS)
    runtime = LSPRuntime()
    try:
        with lsp_tools.tool_adapter(ws, runtime=runtime) as adapter:
            found = call(adapter, "lsp/definition", project / "main.ts", line=3, column=27)
            assert found["server"] == "cleveragents/typescript-language-server"
            assert found["locations"] == [
                {"path": "greet.ts", "line": 1, "column": 17, "end_line": 1, "end_column": 22}
            ]
            formatted = call(adapter, "lsp/format", project / "main.ts")
            assert formatted["applied"] is False
            [change] = formatted["changes"]
            assert change["path"] == "main.ts"
            assert change["edits"] == [
                {"range": {"line": 3, "column": 24, "end_line": 3, "end_column": 27}, "new_text": " "}
            ]
        assert (project / "main.ts").read_text() == MAIN_TS
    finally:
        runtime.close()
