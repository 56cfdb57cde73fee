"""LSP tools as application functions (``agents lsp call``/``lsp tools``; later MCP and
actors): which server serves a file, its workspace root, and the calls themselves."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cleveragents.errors import DependencyMissingError, LSPUnavailable, ValidationError
from cleveragents.graph.workspace import Workspace
from cleveragents.lsp.languages import AMBIGUOUS_HEAD_BYTES, language_of
from cleveragents.lsp.runtime import LSPRuntime, shared_runtime
from cleveragents.lsp.tools import TOOLS, LSPToolAdapter, ServerBinding
from cleveragents.services import lsp_registry, resources
from cleveragents.services.lsp_enrichment import DEFAULT_REQUEST_TIMEOUT, launch_of


def list_tools(
    ws: Workspace,
    file: Path | None = None,
    *,
    runtime: LSPRuntime | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> list[dict[str, Any]]:
    """Every LSP tool (name, capability, method, description, aliases, input schema,
    output); with ``file``, only those the server that serves it offers (it is started)."""
    if file is None:
        return [tool.as_dict() for tool in TOOLS]
    with tool_adapter(ws, runtime=runtime, request_timeout=request_timeout) as adapter:
        return [tool.as_dict() for tool in adapter.tools(adapter.capabilities_for(file))]


def call_tool(
    ws: Workspace,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    runtime: LSPRuntime | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> dict[str, Any]:
    """Run one LSP tool (see ``lsp.tools``): the result as JSON-ready data."""
    with tool_adapter(ws, runtime=runtime, request_timeout=request_timeout) as adapter:
        return adapter.call(tool, arguments)


@contextmanager
def tool_adapter(
    ws: Workspace, *, runtime: LSPRuntime | None = None, request_timeout: float = DEFAULT_REQUEST_TIMEOUT
) -> Iterator[LSPToolAdapter]:
    """An adapter routed by the LSP Registry, on ``runtime`` (default: the shared one);
    its servers are released when the block ends."""
    adapter = LSPToolAdapter(
        runtime or shared_runtime(), lambda path: server_for_file(ws, path, request_timeout=request_timeout)
    )
    with adapter:
        yield adapter


def server_for_file(ws: Workspace, file: Path, *, request_timeout: float = DEFAULT_REQUEST_TIMEOUT) -> ServerBinding:
    """The first registered server for the file's language that can run here, with the
    file's workspace root. DependencyMissingError says why there is none."""
    path = file.expanduser().resolve()
    language = file_language(path)
    if language is None:
        raise ValidationError(
            f"cannot tell the language of {file}: no LSP server is chosen for it",
            suggestions=["give the file a known extension, or a shebang or mode line"],
        )
    entries = lsp_registry.for_language(ws, language)
    if not entries:
        raise DependencyMissingError(
            f"no LSP server is registered for language '{language}' ({file})",
            suggestions=["agents lsp list", "agents lsp add --config FILE.yaml"],
        )
    reasons: list[str] = []
    for entry in entries:
        try:
            launch = launch_of(entry, request_timeout=request_timeout)
        except LSPUnavailable as exc:
            reasons.append(exc.message)
            continue
        return ServerBinding(launch, workspace_root(ws, path), language, entry.effective_capabilities)
    raise DependencyMissingError(
        f"no LSP server for language '{language}' can run here ({file}): {'; '.join(reasons)}",
        suggestions=[entry.install_hint() for entry in entries],
    )


def workspace_root(ws: Workspace, file: Path) -> Path:
    """The workspace root of a file: the nearest registered resource that contains it,
    else its git checkout's root, else its directory."""
    path = file.expanduser().resolve()
    containing = [
        location
        for location in (Path(info.location) for info in _resources(ws))
        if location == path or location in path.parents
    ]
    if containing:
        return max(containing, key=lambda location: len(location.parts))
    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
    return path.parent


def file_language(path: Path) -> str | None:
    """The LSP language id of a file on disk: by its name, and by its first bytes when the
    name does not settle it."""
    try:
        with path.open("rb") as handle:
            head = handle.read(AMBIGUOUS_HEAD_BYTES)
    except OSError:
        head = b""
    return language_of(path, head or None)


def _resources(ws: Workspace) -> list[resources.ResourceInfo]:
    return resources.list_all(ws) if ws.exists() else []
