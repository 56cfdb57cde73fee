"""Output of ``agents lsp call`` and ``agents lsp tools``: the tools' JSON-ready results as
they are in json/yaml, as tables, trees and text on screen."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from cleveragents.errors import UsageError
from cleveragents.output import ColumnDef, OutputSession

from .invocation import AppContext
from .rendering import is_structured

TOOL_COLUMNS = [
    ColumnDef("name", "Tool"),
    ColumnDef("capability", "Capability"),
    ColumnDef("method", "LSP method"),
    ColumnDef("description", "Description"),
]
SPAN_COLUMNS = [
    ColumnDef("line", "Line", "integer", "right"),
    ColumnDef("column", "Column", "integer", "right"),
    ColumnDef("end_line", "End line", "integer", "right"),
    ColumnDef("end_column", "End column", "integer", "right"),
]


def call_arguments(
    args_json: str | None,
    *,
    file: str | None = None,
    line: int | None = None,
    column: int | None = None,
    query: str | None = None,
    new_name: str | None = None,
) -> dict[str, Any]:
    """The tool's arguments: ``--args`` (a JSON object), then the options given, which win."""
    arguments: dict[str, Any] = {}
    if args_json is not None:
        try:
            parsed = json.loads(args_json)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(parsed, dict):
            raise UsageError(f"--args must be a JSON object of argument names and values, not {args_json!r}")
        arguments.update(parsed)
    options = {"file": file, "line": line, "column": column, "query": query, "new_name": new_name}
    arguments.update({name: value for name, value in options.items() if value is not None})
    return arguments


def render_tools(out: OutputSession, app_ctx: AppContext, tools: list[dict[str, Any]]) -> None:
    """The tools: every field (input schemas included) in json/yaml, a table on screen."""
    if is_structured(app_ctx):
        out.data("lsp_tools", tools)
        return
    rows = [
        {**tool, "name": " / ".join([tool["name"], *tool["aliases"]])} if tool["aliases"] else tool for tool in tools
    ]
    out.table(f"LSP tools ({len(rows)})", TOOL_COLUMNS, rows=rows, key="lsp_tools")


def render_call(out: OutputSession, app_ctx: AppContext, result: dict[str, Any]) -> None:
    """A tool's result: as it is in json/yaml (``data.result``); on screen by tool."""
    if is_structured(app_ctx):
        out.data("result", result)
        return
    _HUMAN[result["tool"]](out, result)
    out.status(f"{result['tool']} by {result['server']} (workspace {result['root']})")


def _where(result: dict[str, Any]) -> str:
    return result["file"]


def _locations(out: OutputSession, result: dict[str, Any]) -> None:
    title = "Definitions" if result["tool"] == "lsp/definition" else "References"
    rows = result["locations"]
    out.table(f"{title} ({len(rows)})", [ColumnDef("path", "Path"), *SPAN_COLUMNS], rows=rows, key="locations")


def _hover(out: OutputSession, result: dict[str, Any]) -> None:
    if result["text"] is None:
        out.status(f"No hover information there in {_where(result)}")
    else:
        out.text(result["text"], key="hover")


def _completions(out: OutputSession, result: dict[str, Any]) -> None:
    rows = result["completions"]
    columns = [ColumnDef("label", "Label"), ColumnDef("kind", "Kind"), ColumnDef("detail", "Detail")]
    out.table(f"Completions ({len(rows)})", columns, rows=rows, key="completions")
    if result["incomplete"]:
        out.status("The server has more completions (raise --args '{\"limit\": N}' or type more)")


def _edits(out: OutputSession, result: dict[str, Any]) -> None:
    rows = [
        {"path": change["path"], **edit["range"], "new_text": edit["new_text"]}
        for change in result["changes"]
        for edit in change["edits"]
    ]
    columns = [ColumnDef("path", "Path"), *SPAN_COLUMNS, ColumnDef("new_text", "New text")]
    out.table(f"Edits ({len(rows)})", columns, rows=rows, key="edits")
    operations = result.get("file_operations") or []
    if operations:
        columns = [ColumnDef("operation", "Operation"), ColumnDef("path", "Path"), ColumnDef("new_path", "New path")]
        out.table(f"File operations ({len(operations)})", columns, rows=operations, key="file_operations")
    out.status(
        f"Preview only, nothing was changed: {len(rows)} edit{'s' if len(rows) != 1 else ''} "
        f"in {len(result['changes'])} file{'s' if len(result['changes']) != 1 else ''}"
    )


def _code_actions(out: OutputSession, result: dict[str, Any]) -> None:
    rows = [
        {
            "title": action["title"],
            "kind": action["kind"],
            "preferred": "yes" if action["preferred"] else "",
            "edits": sum(len(change["edits"]) for change in action["changes"]),
            "command": action["command"],
            "disabled": action["disabled"],
        }
        for action in result["actions"]
    ]
    columns = [
        ColumnDef("title", "Title"),
        ColumnDef("kind", "Kind"),
        ColumnDef("preferred", "Preferred"),
        ColumnDef("edits", "Edits", "integer", "right"),
        ColumnDef("command", "Command"),
        ColumnDef("disabled", "Disabled"),
    ]
    out.table(f"Code actions ({len(rows)})", columns, rows=rows, key="actions")
    if rows:
        out.status("Preview only, nothing was changed (json output has each action's edits)")


def _signature(out: OutputSession, result: dict[str, Any]) -> None:
    rows = [
        {
            "active": "*" if number == result["active_signature"] else "",
            "label": signature["label"],
            "parameters": ", ".join(p["label"] for p in signature["parameters"]),
            "documentation": (signature["documentation"] or "").split("\n", 1)[0],
        }
        for number, signature in enumerate(result["signatures"])
    ]
    columns = [
        ColumnDef("active", "Active"),
        ColumnDef("label", "Signature"),
        ColumnDef("parameters", "Parameters"),
        ColumnDef("documentation", "Documentation"),
    ]
    out.table(f"Signatures ({len(rows)})", columns, rows=rows, key="signatures")


def _symbols(out: OutputSession, result: dict[str, Any]) -> None:
    tree = out.tree(f"Symbols of {_where(result)}", key="symbols", keep_open=True)

    def add(parent: str | None, symbols: list[dict[str, Any]]) -> None:
        for symbol in symbols:
            detail = f" {symbol['detail']}" if symbol["detail"] else ""
            path = tree.add_child(parent, f"{symbol['kind']} {symbol['name']}{detail} (line {symbol['line']})")
            add(path, symbol["children"])

    add(None, result["symbols"])
    tree.close()


def _workspace_symbols(out: OutputSession, result: dict[str, Any]) -> None:
    rows = result["symbols"]
    columns = [
        ColumnDef("name", "Name"),
        ColumnDef("kind", "Kind"),
        ColumnDef("container", "Container"),
        ColumnDef("path", "Path"),
        ColumnDef("line", "Line", "integer", "right"),
        ColumnDef("column", "Column", "integer", "right"),
    ]
    out.table(f"Symbols matching '{result['query']}' ({len(rows)})", columns, rows=rows, key="symbols")


def _diagnostics(out: OutputSession, result: dict[str, Any]) -> None:
    rows = [{**item, **item["range"]} for item in result["diagnostics"]]
    columns = [
        ColumnDef("severity", "Severity"),
        ColumnDef("line", "Line", "integer", "right"),
        ColumnDef("column", "Column", "integer", "right"),
        ColumnDef("code", "Code"),
        ColumnDef("source", "Source"),
        ColumnDef("message", "Message"),
    ]
    out.table(f"Diagnostics of {_where(result)} ({len(rows)})", columns, rows=rows, key="diagnostics")
    if not result["reported"]:
        out.status("The server reported no diagnostics in time (raise wait_seconds with --args)", "warn")


_HUMAN: dict[str, Callable[[OutputSession, dict[str, Any]], None]] = {
    "lsp/diagnostics": _diagnostics,
    "lsp/hover": _hover,
    "lsp/completions": _completions,
    "lsp/definition": _locations,
    "lsp/references": _locations,
    "lsp/rename": _edits,
    "lsp/code-actions": _code_actions,
    "lsp/format": _edits,
    "lsp/signature": _signature,
    "lsp/symbols": _symbols,
    "lsp/workspace-symbols": _workspace_symbols,
}
