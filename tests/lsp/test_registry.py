"""The LSP Registry on a real store: entries from YAML, graph storage and history, the
built-in/user merge, interpolation, invalid configurations, the built-ins' availability
and installation (real npm), and capability discovery from a real ``initialize`` reply."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from lsprotocol import converters
from lsprotocol import types as lsp

from cleveragents.errors import (
    ConfigurationError,
    ConflictError,
    DependencyMissingError,
    LSPUnavailable,
    NotFoundError,
    ShapeViolationError,
    ValidationError,
)
from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.lsp import builtins
from cleveragents.lsp.builtins import BASEDPYRIGHT, BUILTINS, JEDI, TYPESCRIPT
from cleveragents.lsp.registry import CAPABILITIES, LSPServerEntry, capabilities_from_initialize, interpolate
from cleveragents.services import graph_service, lsp_registry
from cleveragents.terms import CA, ID

ConfigFile = Callable[[str, str], Path]

RUST_ANALYZER = """\
name: local/rust-analyzer
description: rust-analyzer for Rust
command: rust-analyzer
languages: [rust]
initialization:
  cargo:
    features: "${RA_TEST_FEATURES:all}"
    targetDir: "${RA_TEST_TARGET}"
workspace_settings:
  rust-analyzer:
    checkOnSave: true
"""

TCP_GOPLS = """\
name: local/gopls-remote
command: gopls
args: ["-listen=127.0.0.1:37374", "-logfile", "/tmp/gopls.log"]
transport: tcp
port: 37374
languages: [go]
capabilities: [hover, definitions, references]
file_extensions: [go, .MOD]
"""


def live_objects(ws: Workspace, iri: str) -> dict[str, list[str]]:
    """The node's current triples, predicate local name -> sorted object values."""
    with ws.reader() as store:
        out: dict[str, list[str]] = {}
        for quad in store.live_quads(ox.NamedNode(iri)):
            out.setdefault(quad.predicate.value.rsplit("#", 1)[-1], []).append(quad.object.value)
    return {key: sorted(values) for key, values in out.items()}


# --- adding, reading, removing ----------------------------------------------------------


def test_add_rust_analyzer_from_yaml(ws: Workspace, config_file: ConfigFile):
    entry, result = lsp_registry.add(ws, config_file("rust.yaml", RUST_ANALYZER))
    assert result.revision == 1 and result.added > 0
    assert entry.name == "local/rust-analyzer" and entry.source == "user"
    assert entry.command == "rust-analyzer" and entry.args == () and entry.transport == "stdio"
    assert entry.languages == ("rust",) and entry.capabilities is None
    assert entry.workspace_settings == {"rust-analyzer": {"checkOnSave": True}}
    assert entry.iri is not None and entry.iri.startswith(f"{ID}lsp-server/")

    # Stored as graph data: a ca:LspServer with its fields; settings as JSON, references kept.
    stored = live_objects(ws, entry.iri)
    assert stored["type"] == [CA + "LspServer"]
    assert stored["name"] == ["local/rust-analyzer"] and stored["command"] == ["rust-analyzer"]
    assert stored["language"] == ["rust"] and stored["transport"] == ["stdio"]
    assert json.loads(stored["initializationOptions"][0]) == {
        "cargo": {"features": "${RA_TEST_FEATURES:all}", "targetDir": "${RA_TEST_TARGET}"}
    }
    assert "capability" not in stored and "port" not in stored

    # Found by full name, bare name, ULID and IRI; the same entry each time.
    ulid = entry.iri.rsplit("/", 1)[-1]
    for ref in ("local/rust-analyzer", "rust-analyzer", ulid, entry.iri):
        assert lsp_registry.get(ws, ref) == entry
    assert [e.name for e in lsp_registry.for_language(ws, "Rust")] == ["local/rust-analyzer"]
    assert [e.name for e in lsp_registry.list_entries(ws)] == [
        "cleveragents/basedpyright",
        "cleveragents/jedi-language-server",
        "cleveragents/typescript-language-server",
        "local/rust-analyzer",
    ]
    assert lsp_registry.all(ws) == lsp_registry.list_entries(ws)


def test_tcp_entry_keeps_argument_order_and_its_fields(ws: Workspace, config_file: ConfigFile):
    entry, _ = lsp_registry.add(ws, config_file("gopls.yaml", TCP_GOPLS))
    assert entry.transport == "tcp" and entry.host == "127.0.0.1" and entry.port == 37374
    assert entry.args == ("-listen=127.0.0.1:37374", "-logfile", "/tmp/gopls.log")
    assert entry.capabilities == ("definitions", "hover", "references")
    assert entry.file_extensions == (".go", ".mod")
    stored = live_objects(ws, entry.iri or "")
    assert stored["port"] == ["37374"] and stored["host"] == ["127.0.0.1"]
    assert stored["capability"] == ["definitions", "hover", "references"]
    assert entry.covers("cmd/main.go") and entry.covers("go.mod") and not entry.covers("main.py")
    # Declared capabilities win over what the server advertises.
    assert entry.effective_capabilities({"renameProvider": True}) == ("definitions", "hover", "references")


def test_tcp_entry_without_command_connects_only(ws: Workspace, config_file: ConfigFile):
    path = config_file("remote.yaml", "name: remote\ntransport: tcp\nhost: 10.0.0.5\nport: 9000\nlanguages: go\n")
    entry, _ = lsp_registry.add(ws, path)
    assert entry.command is None and entry.host == "10.0.0.5"
    assert entry.resolve_command() == [] and entry.availability() is None
    assert lsp_registry.get(ws, "remote") == entry


def test_add_an_entry_object(ws: Workspace):
    given = LSPServerEntry(name="pylsp", command="pylsp", languages=("python",), initialization={"a": [1, 2]})
    entry, _ = lsp_registry.add(ws, given)
    assert entry == given.model_copy(update={"iri": entry.iri})


def test_duplicate_name_is_a_conflict(ws: Workspace, config_file: ConfigFile):
    path = config_file("rust.yaml", RUST_ANALYZER)
    lsp_registry.add(ws, path)
    with pytest.raises(ConflictError, match="'local/rust-analyzer' is registered already"):
        lsp_registry.add(ws, path)


def test_remove_closes_the_intervals_and_keeps_history(ws: Workspace, config_file: ConfigFile):
    entry, added = lsp_registry.add(ws, config_file("rust.yaml", RUST_ANALYZER))
    removed, result = lsp_registry.remove(ws, "rust-analyzer")
    assert removed == entry and result.revision == 2 and result.removed == added.added
    assert live_objects(ws, entry.iri or "") == {}
    with pytest.raises(NotFoundError, match="LSP server 'local/rust-analyzer' not found"):
        lsp_registry.get(ws, "local/rust-analyzer")
    assert lsp_registry.for_language(ws, "rust") == []
    spans, _ = graph_service.node_history(ws, entry.iri or "")
    command = [s for s in spans if s.predicate.value == CA + "command"]
    assert len(command) == 1 and command[0].start == 1 and command[0].end == 2
    with pytest.raises(NotFoundError):
        lsp_registry.remove(ws, "rust-analyzer")


# --- built-ins and overriding them ------------------------------------------------------


def test_builtins_are_listed_and_cannot_be_removed(ws: Workspace):
    entries = lsp_registry.list_entries(ws)
    assert entries == list(BUILTINS) and all(e.source == "builtin" for e in entries)
    assert lsp_registry.get(ws, "jedi-language-server") is JEDI
    assert lsp_registry.get(ws, "cleveragents/typescript-language-server") is TYPESCRIPT
    assert TYPESCRIPT.languages == ("javascript", "javascriptreact", "typescript", "typescriptreact")
    with pytest.raises(ValidationError, match="is a built-in LSP server and cannot be removed"):
        lsp_registry.remove(ws, "cleveragents/jedi-language-server")
    with pytest.raises(NotFoundError, match="LSP server 'nope' not found"):
        lsp_registry.get(ws, "nope")


def test_registry_without_a_store_holds_the_builtins(tmp_path: Path):
    ws = Workspace(tmp_path / "never-initialized")
    assert lsp_registry.list_entries(ws) == list(BUILTINS)
    assert lsp_registry.for_language(ws, "python") == [BASEDPYRIGHT, JEDI]
    assert lsp_registry.get(ws, "typescript-language-server") is TYPESCRIPT


def test_user_entry_overrides_a_builtin(ws: Workspace, config_file: ConfigFile):
    override = config_file(
        "jedi.yaml",
        "name: cleveragents/jedi-language-server\ncommand: /opt/jedi/bin/jedi-language-server\n"
        "languages: [python]\ninitialization: {diagnostics: {enable: false}}\n",
    )
    pyright = config_file(
        "pyright.yaml", "name: local/pyright\ncommand: pyright-langserver\nargs: [--stdio]\nlanguages: python\n"
    )
    mine, _ = lsp_registry.add(ws, override)
    lsp_registry.add(ws, pyright)

    entries = {e.name: e for e in lsp_registry.list_entries(ws)}
    assert len(entries) == len(BUILTINS) + 1 and entries["cleveragents/jedi-language-server"] == mine
    assert mine.source == "user" and mine.initialization == {"diagnostics": {"enable": False}}
    assert lsp_registry.get(ws, "jedi-language-server") == mine
    # User entries first: the override and local/pyright, then the other Python built-in.
    assert [(e.name, e.source) for e in lsp_registry.for_language(ws, "python")] == [
        ("cleveragents/jedi-language-server", "user"),
        ("local/pyright", "user"),
        ("cleveragents/basedpyright", "builtin"),
    ]
    assert mine.availability() == "'/opt/jedi/bin/jedi-language-server' does not exist or is not executable"

    # Removing the override brings the built-in back.
    lsp_registry.remove(ws, "jedi-language-server")
    assert lsp_registry.get(ws, "jedi-language-server") is JEDI
    assert [e.name for e in lsp_registry.for_language(ws, "python")] == [
        "local/pyright",
        "cleveragents/basedpyright",
        "cleveragents/jedi-language-server",
    ]


def test_builtin_namespace_is_reserved(ws: Workspace, config_file: ConfigFile):
    path = config_file("x.yaml", "name: cleveragents/my-server\ncommand: x\nlanguages: [c]\n")
    with pytest.raises(ValidationError, match="namespace 'cleveragents/' holds the built-in servers"):
        lsp_registry.add(ws, path)


# --- interpolation ----------------------------------------------------------------------


def test_initialization_is_interpolated_when_resolved(
    ws: Workspace, config_file: ConfigFile, monkeypatch: pytest.MonkeyPatch
):
    entry, _ = lsp_registry.add(ws, config_file("rust.yaml", RUST_ANALYZER))
    monkeypatch.delenv("RA_TEST_FEATURES", raising=False)
    monkeypatch.setenv("RA_TEST_TARGET", "/tmp/ra-target")
    assert entry.interpolated_initialization() == {"cargo": {"features": "all", "targetDir": "/tmp/ra-target"}}
    monkeypatch.setenv("RA_TEST_FEATURES", "serde")
    assert entry.interpolated_initialization()["cargo"]["features"] == "serde"
    # The stored entry keeps the references.
    assert lsp_registry.get(ws, "rust-analyzer").initialization["cargo"]["targetDir"] == "${RA_TEST_TARGET}"
    monkeypatch.delenv("RA_TEST_TARGET")
    with pytest.raises(ConfigurationError, match=r"uses \$\{RA_TEST_TARGET\}, which is not set and has no default"):
        entry.interpolated_initialization()


def test_interpolation_forms():
    env = {"HOME": "/home/u", "EMPTY": ""}
    value = {
        "a": "${HOME}/x",
        "b": ["${MISSING:fallback}", "${MISSING:-shell}", "${EMPTY:unused}", "${MISSING:}"],
        "c": 3,
        "d": {"e": "no $HOME {refs} here"},
    }
    assert interpolate(value, env) == {
        "a": "/home/u/x",
        "b": ["fallback", "shell", "", ""],
        "c": 3,
        "d": {"e": "no $HOME {refs} here"},
    }


# --- invalid configurations -------------------------------------------------------------

INVALID = [
    ("not-yaml", "name: [unclosed\n", "not valid YAML (line 2, column 1)"),
    ("a-list", "- name: x\n", "an LSP configuration is a mapping of fields, not a list"),
    ("empty", "", "not an empty document"),
    ("no-name", "command: x\nlanguages: [c]\n", "field 'name': is required"),
    ("no-languages", "name: x\ncommand: x\n", "field 'languages': is required"),
    ("empty-languages", "name: x\ncommand: x\nlanguages: []\n", "field 'languages': must list at least one language"),
    ("no-command", "name: x\nlanguages: [c]\n", "field 'command': is required"),
    (
        "bad-transport",
        "name: x\ncommand: x\nlanguages: [c]\ntransport: pipe\n",
        "field 'transport': input should be 'stdio' or 'tcp'",
    ),
    (
        "tcp-without-port",
        "name: x\ncommand: x\nlanguages: [c]\ntransport: tcp\n",
        "field 'port': is required for transport 'tcp'",
    ),
    (
        "port-out-of-range",
        "name: x\nlanguages: [c]\ntransport: tcp\nport: 70000\n",
        "field 'port': input should be less than or equal to 65535",
    ),
    (
        "stdio-with-port",
        "name: x\ncommand: x\nlanguages: [c]\nport: 9000\n",
        "field 'port': applies only to transport 'tcp'",
    ),
    (
        "unknown-field",
        "name: x\ncommand: x\nlanguages: [c]\nlanguage: c\nenv: {}\n",
        "unknown fields 'env', 'language'",
    ),
    (
        "bad-capability",
        "name: x\ncommand: x\nlanguages: [c]\ncapabilities: [hover, telepathy]\n",
        "field 'capabilities': unknown capabilities telepathy",
    ),
    ("bad-name", "name: Local/X\ncommand: x\nlanguages: [c]\n", "field 'name': invalid LSP server name 'Local/X'"),
    ("server-namespace", "name: acme/x\ncommand: x\nlanguages: [c]\n", "namespace 'acme/' lives on a server"),
    (
        "args-not-a-list",
        "name: x\ncommand: x\nargs: --stdio\nlanguages: [c]\n",
        "field 'args': input should be a list (got '--stdio')",
    ),
    (
        "args-not-strings",
        "name: x\ncommand: x\nargs: [1]\nlanguages: [c]\n",
        "field 'args[0]': input should be a valid string",
    ),
    (
        "settings-not-json",
        "name: x\ncommand: x\nlanguages: [c]\ninitialization: {since: 2024-01-01}\n",
        "field 'initialization': must be JSON data",
    ),
    (
        "bad-extension",
        "name: x\ncommand: x\nlanguages: [c]\nfile_extensions: [tar.gz]\n",
        "field 'file_extensions': '.tar.gz': not a file extension like '.rs'",
    ),
]


@pytest.mark.parametrize(("label", "text", "message"), INVALID, ids=[case[0] for case in INVALID])
def test_invalid_configuration_names_file_and_field(
    ws: Workspace, config_file: ConfigFile, label: str, text: str, message: str
):
    path = config_file(f"{label}.yaml", text)
    with pytest.raises(ValidationError) as caught:
        lsp_registry.add(ws, path)
    assert caught.value.message.startswith(f"{path}: ")
    assert message in caught.value.message
    assert lsp_registry.list_entries(ws) == list(BUILTINS)  # nothing was written


def test_missing_configuration_file(ws: Workspace, tmp_path: Path):
    with pytest.raises(NotFoundError, match=f"LSP configuration file {tmp_path / 'nope.yaml'} not found"):
        lsp_registry.add(ws, tmp_path / "nope.yaml")


# --- SHACL shapes on the stored entries -------------------------------------------------


def _commit_server(ws: Workspace, **fields: Any) -> None:
    node = ox.NamedNode(f"{ID}lsp-server/raw")
    triples = [
        (node, ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), ox.NamedNode(CA + "LspServer")),
        (node, ox.NamedNode(CA + "name"), ox.Literal("local/raw")),
        (node, ox.NamedNode(CA + "language"), ox.Literal("go")),
    ]
    triples += [(node, ox.NamedNode(CA + key), ox.Literal(value)) for key, value in fields.items()]
    with ws.writer() as session:
        session.commit(CommitRequest(add=triples, message="raw lsp server"))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"transport": "stdio"}, "needs a ca:command unless its transport is 'tcp'"),
        ({"transport": "tcp", "command": "gopls"}, "with transport 'tcp' needs a ca:port"),
        ({"command": "gopls", "transport": "pipe"}, "ca:transport is 'stdio' or 'tcp'"),
        ({"command": "gopls", "capability": "telepathy"}, "ca:capability is one of the spec's LSP capabilities"),
        ({"command": "gopls", "fileExtension": "go"}, "ca:fileExtension values are extensions"),
    ],
)
def test_shapes_reject_invalid_servers(ws: Workspace, fields: dict[str, Any], message: str):
    with pytest.raises(ShapeViolationError) as caught:
        _commit_server(ws, **fields)
    assert any(message in str(getattr(v, "message", v)) for v in caught.value.violations), caught.value.violations


def test_shapes_accept_a_tcp_server_without_command(ws: Workspace):
    _commit_server(ws, transport="tcp", port=9000)
    assert lsp_registry.get(ws, "raw").port == 9000


# --- built-ins' availability and installation -------------------------------------------


def path_with(tmp_path: Path, *programs: str) -> str:
    """A PATH of one directory holding only links to these programs (as found now)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for program in programs:
        found = shutil.which(program)
        if found is None:
            pytest.skip(f"{program} is not installed here")
        (bin_dir / program).symlink_to(found)
    return str(bin_dir)


def test_jedi_builtin_is_available_beside_the_interpreter():
    argv = JEDI.resolve_command()
    assert argv == [str(Path(sys.executable).parent / "jedi-language-server")]
    assert JEDI.availability() is None
    done = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "0.47.0"


def test_typescript_needs_node(tmp_path: Path, tools_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(LSPUnavailable) as caught:
        TYPESCRIPT.resolve_command()
    assert caught.value.reason == "Node.js is required but 'node' is not on PATH"
    assert caught.value.message.startswith("LSP server 'cleveragents/typescript-language-server' is unavailable")


def test_typescript_with_node_but_not_installed(tmp_path: Path, tools_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", path_with(tmp_path, "node"))
    assert TYPESCRIPT.availability() == (
        f"'typescript-language-server' is not in {tools_dir}/node_modules/.bin or PATH; "
        "run `agents lsp install cleveragents/typescript-language-server`"
    )


needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


@pytest.fixture(scope="module")
def installed_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real ``npm install`` of the pinned TypeScript server for this module."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    tools = tmp_path_factory.mktemp("tools")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(builtins.TOOLS_DIR_ENV, str(tools))
        result = builtins.install(TYPESCRIPT)
    assert result.method == "npm" and result.version == "5.0.1"
    assert result.command == str(tools / "node_modules" / ".bin" / "typescript-language-server")
    assert result.packages == ("typescript-language-server@5.0.1", "typescript@5.9.3")
    return tools


@needs_npm
def test_typescript_after_install(installed_tools: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(builtins.TOOLS_DIR_ENV, str(installed_tools))
    argv = TYPESCRIPT.resolve_command()
    assert argv == [str(installed_tools / "node_modules" / ".bin" / "typescript-language-server"), "--stdio"]
    assert TYPESCRIPT.availability() is None
    version = subprocess.run([argv[0], "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert version.stdout.strip() == "5.0.1"
    package = json.loads((installed_tools / "node_modules" / "typescript" / "package.json").read_text())
    assert package["version"] == "5.9.3"


@needs_npm
def test_install_reports_an_unreachable_registry(tools_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tools_dir.parent / "npm-cache"))  # nothing cached
    with pytest.raises(DependencyMissingError, match=r"the npm registry http://127.0.0.1:9/ is unreachable"):
        builtins.install(TYPESCRIPT)


def test_install_without_npm(tools_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(DependencyMissingError, match="npm is not on PATH"):
        builtins.install(TYPESCRIPT)
    assert not tools_dir.exists()


def test_install_python_builtin_and_user_entries(ws: Workspace, config_file: ConfigFile):
    result = lsp_registry.install(ws, "jedi-language-server")
    assert result.method == "python-dependency" and result.version == "0.47.0"
    lsp_registry.add(ws, config_file("rust.yaml", RUST_ANALYZER))
    with pytest.raises(ValidationError, match="'local/rust-analyzer' is not a built-in LSP server"):
        lsp_registry.install(ws, "rust-analyzer")
    with pytest.raises(NotFoundError):
        lsp_registry.install(ws, "nope")


# --- capabilities from a real initialize reply ------------------------------------------


def initialize_capabilities(argv: list[str], root: Path) -> dict[str, Any]:
    """Start the server, send ``initialize`` over stdio and return the reply's capabilities."""
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    def exchange() -> dict[str, Any]:
        params = {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        stdin.flush()
        while True:
            length = 0
            while (line := stdout.readline().strip()) != b"":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stdout.read(length))
            if message.get("id") == 1:
                return message["result"]["capabilities"]

    try:
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(exchange).result(timeout=60)
    finally:
        process.kill()
        process.wait()


def test_capabilities_discovered_from_jedi(tmp_path: Path):
    advertised = initialize_capabilities(JEDI.resolve_command(), tmp_path)
    discovered = JEDI.effective_capabilities(advertised)
    assert set(discovered) <= set(CAPABILITIES)
    assert {"diagnostics", "hover", "completions", "definitions", "references", "rename"} <= set(discovered)
    # Every capability reported is advertised by the server, and vice versa.
    assert "signature_help" in discovered and bool(advertised.get("signatureHelpProvider"))
    assert ("workspace_symbols" in discovered) == bool(advertised.get("workspaceSymbolProvider"))
    # The same answer from lsprotocol's typed ServerCapabilities (what pygls hands over).
    typed = converters.get_converter().structure(advertised, lsp.ServerCapabilities)
    assert capabilities_from_initialize(typed) == discovered


def test_capabilities_from_a_minimal_reply():
    assert capabilities_from_initialize({"hoverProvider": False, "definitionProvider": {}}) == (
        "definitions",
        "diagnostics",
    )
