"""LSP capabilities as tools.

The ``LSPToolAdapter`` turns what a language server can do into tools: each has a name
(``lsp/definition``, ...), the capability it needs, a JSON-Schema input and a JSON-ready
result with a fixed shape. A call is routed by the file's language to the server bound
for it; the file is read from disk and opened before the request.

For the caller, lines and columns are 1-based and columns count characters (code points);
the adapter converts them to and from LSP's 0-based UTF-16 positions. Paths in results
are relative to the workspace root when inside it. Edits (rename, format, code actions)
are previews: nothing is ever written.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from cleveragents.errors import LSPRequestError, LSPUnavailable, NotFoundError, UsageError

from .client import LSPError, ServerGone, ServerLaunch
from .registry import CAPABILITIES, capabilities_from_initialize
from .runtime import LSPRuntime, ServerHandle

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Servers publish diagnostics when their analysis is done: the first file of a workspace
# may take seconds.
DIAGNOSTICS_WAIT = 30.0
CODE_ACTION_DIAGNOSTICS_WAIT = 5.0  # quick fixes need the diagnostics of their range
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # LSP's line ends (str.splitlines knows more)


# --- arguments -------------------------------------------------------------------------------
# Strict: the schema says "integer", so "3" and 3.0 are refused rather than converted.


class FileArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    file: str = Field(
        min_length=1,
        description="Path of the file: absolute, or relative to the current directory. "
        "Its language picks the language server.",
    )


class PositionArguments(FileArguments):
    line: int = Field(ge=1, description="Line number, 1-based: the first line of the file is 1.")
    column: int = Field(
        ge=1,
        description="Column, 1-based, counted in characters of the line: the first character is 1.",
    )


class DiagnosticsArguments(FileArguments):
    wait_seconds: float = Field(
        DIAGNOSTICS_WAIT,
        gt=0,
        le=300,
        description="How long to wait for the server to publish the file's diagnostics "
        "(servers that answer pull requests are asked instead).",
    )


class CompletionsArguments(PositionArguments):
    limit: int = Field(50, ge=1, le=1000, description="At most this many completions, best first.")


class ReferencesArguments(PositionArguments):
    include_declaration: bool = Field(True, description="Whether the declaration itself is one of the references.")


class RenameArguments(PositionArguments):
    new_name: str = Field(min_length=1, description="The symbol's new name.")


class CodeActionsArguments(PositionArguments):
    end_line: int | None = Field(
        None, ge=1, description="Line where the range ends, 1-based (default: the range is the position)."
    )
    end_column: int | None = Field(None, ge=1, description="Column where the range ends, 1-based, in characters.")


class FormatArguments(FileArguments):
    tab_size: int = Field(4, ge=1, le=16, description="Size of a tab in spaces.")
    insert_spaces: bool = Field(True, description="Indent with spaces rather than tabs.")


class WorkspaceSymbolsArguments(FileArguments):
    query: str = Field(description="Text the symbols' names are matched against (servers match fuzzily).")


# --- the tools -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LSPTool:
    """One capability as a tool: what it is called, what it needs and what it returns."""

    name: str
    capability: str  # the registry's capability name (registry.CAPABILITIES)
    description: str
    arguments: type[FileArguments]
    output: str
    aliases: tuple[str, ...] = ()

    @property
    def method(self) -> str:
        return CAPABILITIES[self.capability]

    @property
    def input_schema(self) -> dict[str, Any]:
        """The arguments as a JSON Schema (draft 2020-12)."""
        schema = self.arguments.model_json_schema()
        schema.pop("description", None)
        return {"$schema": SCHEMA_DIALECT, **schema, "title": self.name, "description": self.description}

    def parse(self, arguments: Mapping[str, Any]) -> FileArguments:
        """The arguments checked against the schema; UsageError names the bad one."""
        if not isinstance(arguments, Mapping):
            raise UsageError(f"{self.name}: the arguments are an object of names and values, not {arguments!r}")
        try:
            return self.arguments.model_validate(dict(arguments))
        except PydanticValidationError as exc:
            raise UsageError(f"{self.name}: {_describe_errors(exc, self.arguments)}") from None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "capability": self.capability,
            "method": self.method,
            "description": self.description,
            "aliases": list(self.aliases),
            "input_schema": self.input_schema,
            "output": self.output,
        }


_LOCATIONS = "locations: [{path, line, column, end_line, end_column}], 1-based"
_EDITS = "changes: [{path, edits: [{range: {line, column, end_line, end_column}, new_text}]}]"

# In the spec's order ("LSP Capability Exposure").
TOOLS: tuple[LSPTool, ...] = (
    LSPTool(
        "lsp/diagnostics",
        "diagnostics",
        "Retrieve compilation errors, warnings, and hints for a file.",
        DiagnosticsArguments,
        "diagnostics: [{severity, code, message, range, source}]; reported: whether the server gave "
        "them (answered a pull, or published them within wait_seconds)",
    ),
    LSPTool(
        "lsp/hover",
        "hover",
        "Get type information and documentation at a position.",
        PositionArguments,
        "text: the hover as text (null when there is none); range: the span it describes",
    ),
    LSPTool(
        "lsp/completions",
        "completions",
        "Get code completion suggestions at a position.",
        CompletionsArguments,
        "completions: [{label, kind, detail, insert_text}], best first; incomplete: whether the server has more",
    ),
    LSPTool(
        "lsp/definition",
        "definitions",
        "Go to the definition of a symbol.",
        PositionArguments,
        _LOCATIONS,
    ),
    LSPTool(
        "lsp/references",
        "references",
        "Find all references to a symbol.",
        ReferencesArguments,
        _LOCATIONS,
    ),
    LSPTool(
        "lsp/rename",
        "rename",
        "Compute a rename refactoring across files (a preview: the edits are returned, never applied).",
        RenameArguments,
        f"applied: false; {_EDITS}; file_operations: [{{operation, path, new_path}}]",
    ),
    LSPTool(
        "lsp/code-actions",
        "code_actions",
        "Get available code actions (quick fixes, refactors) for a position or range (previews, never applied).",
        CodeActionsArguments,
        f"actions: [{{title, kind, preferred, disabled, command, {_EDITS}}}]",
    ),
    LSPTool(
        "lsp/format",
        "formatting",
        "Format a document according to language conventions (a preview: the edits are returned, never applied).",
        FormatArguments,
        f"applied: false; {_EDITS}",
    ),
    LSPTool(
        "lsp/signature",
        "signature_help",
        "Get function signature information at a call site.",
        PositionArguments,
        "signatures: [{label, documentation, parameters: [{label, documentation}]}]; "
        "active_signature, active_parameter: 0-based indexes or null",
    ),
    LSPTool(
        "lsp/symbols",
        "document_symbols",
        "List all symbols (classes, functions, variables) in a file.",
        FileArguments,
        "symbols: a tree of {name, kind, detail, container, line, column (of the name), range, children}",
        aliases=("lsp/document-symbols",),
    ),
    LSPTool(
        "lsp/workspace-symbols",
        "workspace_symbols",
        "Search for symbols across the entire workspace (the file picks the server and workspace).",
        WorkspaceSymbolsArguments,
        "query; symbols: [{name, kind, container, path, line, column, range}]",
    ),
)


def find_tool(name: str) -> LSPTool:
    """The tool called ``name`` (or an alias; the ``lsp/`` prefix may be left out).
    UsageError listing the tools when there is none."""
    wanted = name.strip().lower()
    for tool in TOOLS:
        if wanted in (tool.name, *tool.aliases) or f"lsp/{wanted}" in (tool.name, *tool.aliases):
            return tool
    raise UsageError(
        f"unknown LSP tool '{name}'; the tools are: {', '.join(t.name for t in TOOLS)}",
        suggestions=["agents lsp tools"],
    )


# --- routing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerBinding:
    """The server that serves a file: how to start it, its workspace root, the file's
    language id, and how to tell its capabilities from its ``initialize`` reply (a
    registry entry's ``effective_capabilities`` honours the capabilities it declares)."""

    launch: ServerLaunch
    root: Path
    language: str
    capabilities: Callable[[lsp.ServerCapabilities | None], tuple[str, ...]] = capabilities_from_initialize


class LSPToolAdapter:
    """LSP tools backed by the runtime's shared servers, routed by ``servers_for_file``.

    The servers it acquires and the documents it opens stay until ``close()`` (or the end
    of a ``with`` block), so a series of calls reuses one warm server per workspace."""

    def __init__(self, runtime: LSPRuntime, servers_for_file: Callable[[Path], ServerBinding]) -> None:
        self.runtime = runtime
        self.servers_for_file = servers_for_file
        self._handles: dict[tuple[str, Path], ServerHandle] = {}
        self._opened: dict[tuple[str, Path], set[Path]] = {}
        self._guard = threading.Lock()

    def tools(self, capabilities: Iterable[str] | None = None) -> list[LSPTool]:
        """The tools of ``capabilities`` (the registry's names; None: every tool)."""
        if capabilities is None:
            return list(TOOLS)
        wanted = set(capabilities)
        return [tool for tool in TOOLS if tool.capability in wanted]

    def capabilities_for(self, file: Path) -> tuple[str, ...]:
        """The capabilities of the server that serves ``file`` (started if needed)."""
        path = _existing_file(file)
        binding = self.servers_for_file(path)
        return binding.capabilities(self._acquire(binding).capabilities)

    def call(self, tool_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run a tool: ``{tool, server, root, file, ...}`` plus the tool's own fields."""
        tool = find_tool(tool_name)
        args = tool.parse(arguments)
        path = _existing_file(Path(args.file))
        data = _read(path)
        text = data.decode("utf-8", errors="replace")
        lines = _LINE_BREAK.split(text)
        if isinstance(args, PositionArguments):
            _check_position(path, lines, args.line, args.column, "line", "column")
        if isinstance(args, CodeActionsArguments) and (args.end_line is not None or args.end_column is not None):
            end_line, end_column = args.end_line or args.line, args.end_column or 1
            _check_position(path, lines, end_line, end_column, "end_line", "end_column")
            if (end_line, end_column) < (args.line, args.column):
                raise UsageError(f"{tool.name}: the range ends (end_line, end_column) before it starts")
        binding = self.servers_for_file(path)
        name = binding.launch.name
        handle = self._acquire(binding)
        offered = binding.capabilities(handle.capabilities)
        if tool.capability not in offered:
            raise LSPUnavailable(
                name,
                f"it does not offer the '{tool.capability}' capability ({tool.method}) that {tool.name} needs; "
                f"it offers {', '.join(offered)}",
            )
        try:
            uri = handle.open(path, binding.language, text)
            self._track(binding, path)
            call = _Call(handle, path, handle.root, uri, {path: lines})
            result = _HANDLERS[tool.name](call, args)
        except ServerGone as exc:
            self._forget(binding)
            raise LSPUnavailable(name, str(exc)) from None
        except LSPError as exc:
            raise LSPRequestError(f"LSP server '{name}' failed {tool.name} on {path}: {exc}") from None
        return {"tool": tool.name, "server": name, "root": str(handle.root), "file": call.shown(path), **result}

    def close(self) -> None:
        """Close the documents it opened and release its servers (the last user stops one)."""
        with self._guard:
            handles, self._handles = self._handles, {}
            opened, self._opened = self._opened, {}
        for key, handle in handles.items():
            for path in sorted(opened.get(key, ())):
                try:
                    handle.close_document(path)
                except LSPError:
                    break  # the server is gone: nothing left to close
            handle.release()

    def __enter__(self) -> LSPToolAdapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _acquire(self, binding: ServerBinding) -> ServerHandle:
        key = (binding.launch.name, binding.root.resolve())
        with self._guard:
            handle = self._handles.get(key)
            if handle is not None and handle.failure is None:
                return handle
            try:
                fresh = self.runtime.acquire(binding.launch, binding.root)
            except ServerGone as exc:
                raise LSPUnavailable(binding.launch.name, str(exc)) from None
            if handle is not None:
                handle.release()
            self._handles[key] = fresh
            self._opened.pop(key, None)
            return fresh

    def _track(self, binding: ServerBinding, path: Path) -> None:
        with self._guard:
            self._opened.setdefault((binding.launch.name, binding.root.resolve()), set()).add(path)

    def _forget(self, binding: ServerBinding) -> None:
        key = (binding.launch.name, binding.root.resolve())
        with self._guard:
            handle = self._handles.pop(key, None)
            self._opened.pop(key, None)
        if handle is not None:
            handle.release()


# --- one call --------------------------------------------------------------------------------


@dataclass
class _Call:
    """A request in progress: the server, the file, and the conversions of its answer."""

    handle: ServerHandle
    path: Path
    root: Path
    uri: str
    texts: dict[Path, list[str] | None]
    _shown: dict[Path, str] = field(default_factory=dict)

    @property
    def document(self) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(uri=self.uri)

    def position(self, line: int, column: int) -> lsp.Position:
        text = self._lines(self.path) or [""]
        return lsp.Position(line=line - 1, character=_utf16_units(text[line - 1][: column - 1]))

    def request(self, method: str, params: Any) -> Any:
        return self.handle.request(method, params)

    def await_analysis(self) -> None:
        """Before a workspace-wide request: servers answer from what they have loaded, and a
        fresh one may not have loaded the workspace yet (basedpyright renames and finds
        references in the open file only, and finds no workspace symbols, until then). Its
        diagnostics of the file say it has analyzed it, and so loaded the workspace."""
        self.diagnostics(DIAGNOSTICS_WAIT)

    def diagnostics(self, wait: float) -> list[lsp.Diagnostic] | None:
        """The file's diagnostics (pulled when the server can, else as published within
        ``wait`` seconds); None when the server gave none."""
        return self.handle.diagnostics_many([self.path], timeout=wait).get(self.path)

    # -- answers to JSON ------------------------------------------------------------------------

    def shown(self, path: Path) -> str:
        """``path`` relative to the workspace root when inside it, else absolute."""
        if path not in self._shown:
            try:
                self._shown[path] = path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                self._shown[path] = str(path)
        return self._shown[path]

    def path_of(self, uri: str) -> str:
        file = _file_of(uri)
        return self.shown(file) if file is not None else uri

    def range(self, uri: str, span: lsp.Range) -> dict[str, int]:
        lines = self._lines(_file_of(uri))
        line, column = _human_position(lines, span.start)
        end_line, end_column = _human_position(lines, span.end)
        return {"line": line, "column": column, "end_line": end_line, "end_column": end_column}

    def location(self, uri: str, span: lsp.Range) -> dict[str, Any]:
        return {"path": self.path_of(uri), **self.range(uri, span)}

    def locations(self, answer: Any) -> list[dict[str, Any]]:
        items = answer if isinstance(answer, list | tuple) else [answer] if answer is not None else []
        found: list[dict[str, Any]] = []
        for item in items:
            if isinstance(item, lsp.Location):
                found.append(self.location(item.uri, item.range))
            elif isinstance(item, lsp.LocationLink):
                found.append(self.location(item.target_uri, item.target_selection_range))
        return _sorted_locations(found)

    def edits(self, uri: str, edits: Sequence[Any]) -> dict[str, Any]:
        rows = [{"range": self.range(uri, e.range), "new_text": e.new_text} for e in edits if hasattr(e, "range")]
        rows.sort(key=lambda row: (row["range"]["line"], row["range"]["column"]))
        return {"path": self.path_of(uri), "edits": rows}

    def workspace_edit(self, edit: lsp.WorkspaceEdit | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A workspace edit as (changes per file, file operations), never applied."""
        changes: list[dict[str, Any]] = []
        operations: list[dict[str, Any]] = []
        if edit is None:
            return changes, operations
        for uri, edits in (edit.changes or {}).items():
            changes.append(self.edits(uri, edits))
        for change in edit.document_changes or ():
            if isinstance(change, lsp.TextDocumentEdit):
                changes.append(self.edits(change.text_document.uri, change.edits))
            elif isinstance(change, lsp.CreateFile):
                operations.append({"operation": "create", "path": self.path_of(change.uri), "new_path": None})
            elif isinstance(change, lsp.RenameFile):
                operations.append(
                    {
                        "operation": "rename",
                        "path": self.path_of(change.old_uri),
                        "new_path": self.path_of(change.new_uri),
                    }
                )
            elif isinstance(change, lsp.DeleteFile):
                operations.append({"operation": "delete", "path": self.path_of(change.uri), "new_path": None})
        return sorted(changes, key=lambda c: c["path"]), operations

    def diagnostic(self, item: lsp.Diagnostic) -> dict[str, Any]:
        return {
            "severity": _kind_name(lsp.DiagnosticSeverity, item.severity),
            "code": item.code,
            "message": item.message,
            "range": self.range(self.uri, item.range),
            "source": item.source,
        }

    def symbol(self, item: lsp.DocumentSymbol | lsp.SymbolInformation, container: str | None) -> dict[str, Any]:
        if isinstance(item, lsp.DocumentSymbol):
            name_at = self.range(self.uri, item.selection_range)
            return {
                "name": item.name,
                "kind": _kind_name(lsp.SymbolKind, item.kind),
                "detail": item.detail,
                "container": container,
                "line": name_at["line"],
                "column": name_at["column"],
                "range": self.range(self.uri, item.range),
                "children": [self.symbol(child, item.name) for child in item.children or ()],
            }
        span = self.range(item.location.uri, item.location.range)
        return {
            "name": item.name,
            "kind": _kind_name(lsp.SymbolKind, item.kind),
            "detail": None,
            "container": item.container_name,
            "line": span["line"],
            "column": span["column"],
            "range": span,
            "children": [],
        }

    def _lines(self, path: Path | None) -> list[str] | None:
        if path is None:
            return None
        if path not in self.texts:
            try:
                self.texts[path] = _LINE_BREAK.split(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                self.texts[path] = None
        return self.texts[path]


def _diagnostics(call: _Call, args: DiagnosticsArguments) -> dict[str, Any]:
    reported = call.diagnostics(args.wait_seconds)
    items = sorted(
        (call.diagnostic(d) for d in reported or ()),
        key=lambda d: (d["range"]["line"], d["range"]["column"], d["message"]),
    )
    return {"diagnostics": items, "reported": reported is not None}


def _hover(call: _Call, args: PositionArguments) -> dict[str, Any]:
    answer = call.request(
        lsp.TEXT_DOCUMENT_HOVER,
        lsp.HoverParams(text_document=call.document, position=call.position(args.line, args.column)),
    )
    if answer is None:
        return {"text": None, "range": None}
    text = _markup_text(answer.contents).strip()
    span = call.range(call.uri, answer.range) if answer.range is not None else None
    return {"text": text or None, "range": span}


def _completions(call: _Call, args: CompletionsArguments) -> dict[str, Any]:
    answer = call.request(
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionParams(text_document=call.document, position=call.position(args.line, args.column)),
    )
    incomplete = isinstance(answer, lsp.CompletionList) and answer.is_incomplete
    items = answer.items if isinstance(answer, lsp.CompletionList) else answer or []
    ranked = sorted(items, key=lambda item: (item.sort_text or item.label, item.label))
    completions = [
        {
            "label": item.label,
            "kind": _kind_name(lsp.CompletionItemKind, item.kind),
            "detail": item.detail,
            "insert_text": item.text_edit.new_text if item.text_edit is not None else item.insert_text or item.label,
        }
        for item in ranked[: args.limit]
    ]
    return {"completions": completions, "incomplete": bool(incomplete or len(items) > args.limit)}


def _definition(call: _Call, args: PositionArguments) -> dict[str, Any]:
    answer = call.request(
        lsp.TEXT_DOCUMENT_DEFINITION,
        lsp.DefinitionParams(text_document=call.document, position=call.position(args.line, args.column)),
    )
    return {"locations": call.locations(answer)}


def _references(call: _Call, args: ReferencesArguments) -> dict[str, Any]:
    call.await_analysis()
    answer = call.request(
        lsp.TEXT_DOCUMENT_REFERENCES,
        lsp.ReferenceParams(
            text_document=call.document,
            position=call.position(args.line, args.column),
            context=lsp.ReferenceContext(include_declaration=args.include_declaration),
        ),
    )
    return {"locations": call.locations(answer)}


def _rename(call: _Call, args: RenameArguments) -> dict[str, Any]:
    call.await_analysis()
    answer = call.request(
        lsp.TEXT_DOCUMENT_RENAME,
        lsp.RenameParams(
            text_document=call.document, position=call.position(args.line, args.column), new_name=args.new_name
        ),
    )
    changes, operations = call.workspace_edit(answer)
    return {"applied": False, "changes": changes, "file_operations": operations}


def _code_actions(call: _Call, args: CodeActionsArguments) -> dict[str, Any]:
    start = call.position(args.line, args.column)
    end = start
    if args.end_line is not None or args.end_column is not None:
        end = call.position(args.end_line or args.line, args.end_column or 1)
    known = call.diagnostics(CODE_ACTION_DIAGNOSTICS_WAIT) or []
    relevant = [d for d in known if _overlaps(d.range, start, end)]
    answer = call.request(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionParams(
            text_document=call.document,
            range=lsp.Range(start=start, end=end),
            context=lsp.CodeActionContext(diagnostics=relevant),
        ),
    )
    provider = call.handle.capabilities.code_action_provider if call.handle.capabilities else None
    resolvable = isinstance(provider, lsp.CodeActionOptions) and bool(provider.resolve_provider)
    actions: list[dict[str, Any]] = []
    for item in answer or ():
        if isinstance(item, lsp.Command):
            actions.append(
                {
                    "title": item.title,
                    "kind": None,
                    "preferred": False,
                    "disabled": None,
                    "command": item.command,
                    "changes": [],
                }
            )
            continue
        if item.edit is None and item.data is not None and resolvable:
            item = call.request(lsp.CODE_ACTION_RESOLVE, item)
        changes, _ = call.workspace_edit(item.edit)
        actions.append(
            {
                "title": item.title,
                "kind": item.kind,
                "preferred": bool(item.is_preferred),
                "disabled": item.disabled.reason if item.disabled is not None else None,
                "command": item.command.command if item.command is not None else None,
                "changes": changes,
            }
        )
    return {"actions": actions}


def _format(call: _Call, args: FormatArguments) -> dict[str, Any]:
    answer = call.request(
        lsp.TEXT_DOCUMENT_FORMATTING,
        lsp.DocumentFormattingParams(
            text_document=call.document,
            options=lsp.FormattingOptions(tab_size=args.tab_size, insert_spaces=args.insert_spaces),
        ),
    )
    changes = [call.edits(call.uri, answer)] if answer else []
    return {"applied": False, "changes": changes}


def _signature(call: _Call, args: PositionArguments) -> dict[str, Any]:
    answer = call.request(
        lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
        lsp.SignatureHelpParams(text_document=call.document, position=call.position(args.line, args.column)),
    )
    if answer is None:
        return {"signatures": [], "active_signature": None, "active_parameter": None}
    signatures = []
    for signature in answer.signatures:
        parameters = []
        for parameter in signature.parameters or ():
            label = parameter.label
            if not isinstance(label, str):  # [start, end) offsets into the signature's label
                label = signature.label[label[0] : label[1]]
            parameters.append({"label": label, "documentation": _markup_text(parameter.documentation) or None})
        signatures.append(
            {
                "label": signature.label,
                "documentation": _markup_text(signature.documentation) or None,
                "parameters": parameters,
            }
        )
    return {
        "signatures": signatures,
        "active_signature": answer.active_signature,
        "active_parameter": answer.active_parameter,
    }


def _symbols(call: _Call, args: FileArguments) -> dict[str, Any]:
    answer = call.request(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, lsp.DocumentSymbolParams(text_document=call.document))
    return {"symbols": [call.symbol(item, None) for item in answer or ()]}


def _workspace_symbols(call: _Call, args: WorkspaceSymbolsArguments) -> dict[str, Any]:
    call.await_analysis()
    answer = call.request(lsp.WORKSPACE_SYMBOL, lsp.WorkspaceSymbolParams(query=args.query))
    symbols = []
    for item in answer or ():
        where = item.location
        span = call.range(where.uri, where.range) if isinstance(where, lsp.Location) else None
        symbols.append(
            {
                "name": item.name,
                "kind": _kind_name(lsp.SymbolKind, item.kind),
                "container": item.container_name,
                "path": call.path_of(where.uri),
                "line": span["line"] if span else None,
                "column": span["column"] if span else None,
                "range": span,
            }
        )
    return {"query": args.query, "symbols": symbols}


_HANDLERS: dict[str, Callable[[_Call, Any], dict[str, Any]]] = {
    "lsp/diagnostics": _diagnostics,
    "lsp/hover": _hover,
    "lsp/completions": _completions,
    "lsp/definition": _definition,
    "lsp/references": _references,
    "lsp/rename": _rename,
    "lsp/code-actions": _code_actions,
    "lsp/format": _format,
    "lsp/signature": _signature,
    "lsp/symbols": _symbols,
    "lsp/workspace-symbols": _workspace_symbols,
}


# --- helpers ---------------------------------------------------------------------------------


def _existing_file(file: Path) -> Path:
    path = file.expanduser().resolve()
    if not path.exists():
        raise NotFoundError(f"file {file} not found")
    if not path.is_file():
        raise NotFoundError(f"{file} is not a file")
    return path


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise NotFoundError(f"cannot read {path}: {exc.strerror}") from None


def _check_position(path: Path, lines: list[str], line: int, column: int, line_name: str, column_name: str) -> None:
    # The position just past the last character (of a line, of the file) is a valid one.
    if line > len(lines):
        raise UsageError(f"{line_name} {line} is outside {path}: its lines are 1 to {len(lines)}")
    width = len(lines[line - 1])
    if column > width + 1:
        raise UsageError(
            f"{column_name} {column} is outside line {line} of {path}: its columns are 1 to {width + 1} "
            f"({width} character{'s' if width != 1 else ''})"
        )


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _human_position(lines: list[str] | None, position: lsp.Position) -> tuple[int, int]:
    """An LSP position as a 1-based (line, column in characters)."""
    if lines is None or position.line >= len(lines):
        return position.line + 1, position.character + 1
    head = lines[position.line].encode("utf-16-le")[: position.character * 2]
    return position.line + 1, len(head.decode("utf-16-le", errors="replace")) + 1


def _overlaps(span: lsp.Range, start: lsp.Position, end: lsp.Position) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return p.line, p.character

    return key(span.start) <= key(end) and key(start) <= key(span.end)


def _sorted_locations(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    unique = {tuple(item.values()): item for item in found}
    return sorted(unique.values(), key=lambda item: (item["path"], item["line"], item["column"]))


def _file_of(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _kind_name(kinds: type[Enum], value: Any) -> str | None:
    """An LSP enum value by name: ``SymbolKind.EnumMember`` is ``enum_member``."""
    if value is None:
        return None
    try:
        name = kinds(value).name
    except ValueError:
        return str(value)
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _markup_text(contents: Any) -> str:
    """Hover or documentation contents (markup, a marked string, or a list of them) as text."""
    if contents is None:
        return ""
    if isinstance(contents, str):
        return contents
    if isinstance(contents, list | tuple):
        return "\n\n".join(text for text in (_markup_text(item) for item in contents) if text)
    value = getattr(contents, "value", "")
    language = getattr(contents, "language", None)
    return f"```{language}\n{value}\n```" if language else str(value)


def _describe_errors(exc: PydanticValidationError, model: type[BaseModel]) -> str:
    """pydantic's errors as ``argument 'x': problem`` phrases."""
    parts = []
    for error in exc.errors(include_url=False):
        name = ".".join(str(part) for part in error["loc"])
        if error["type"] == "missing":
            problem = "is required"
        elif error["type"] == "extra_forbidden":
            problem = f"is not an argument; the arguments are: {', '.join(model.model_fields)}"
        else:
            problem = error["msg"][:1].lower() + error["msg"][1:]
            if "input" in error and not isinstance(error["input"], dict | list):
                problem += f" (got {error['input']!r})"
        parts.append(f"argument '{name}': {problem}" if name else problem)
    return "; ".join(parts)
