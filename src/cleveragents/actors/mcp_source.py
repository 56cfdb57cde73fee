"""MCP servers as tool sources: every tool a server lists becomes a tool of the router.

A server is a command (``'npx @org/mcp-server --flag'``, started over stdio) or an
``http(s)://`` URL (Streamable HTTP). Its tools keep their names (with an optional prefix),
descriptions and input schemas; the capability comes from the tool's annotations (a
``readOnlyHint`` tool is read-only; any other may write, with the server named as its side
effect). A call the server answers with ``is_error`` is a failed ``ToolResult`` with the
server's text, as any other tool's failure.

Each call connects, calls and disconnects (one process per call for a stdio server): simple
and isolated, at the price of the server's start-up per call.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cleveragents.errors import CleverAgentsError, DependencyMissingError, ValidationError
from cleveragents.tools import READ_ONLY, Capability, ToolContext, ToolRouter, ToolSpec


class McpToolError(CleverAgentsError):
    code = 502
    category = "MCP_TOOL_ERROR"


@dataclass
class McpToolSource:
    server: str
    env: Mapping[str, str] | None = None
    prefix: str = ""
    timeout: float = 60.0
    _specs: list[ToolSpec] = field(default_factory=list)

    def _target(self) -> Any:
        if self.server.startswith(("http://", "https://")):
            return self.server
        from mcp import StdioServerParameters

        parts = shlex.split(self.server)
        if not parts:
            raise ValidationError("an MCP server needs a command or an http(s) URL")
        return StdioServerParameters(command=parts[0], args=parts[1:], env=dict(self.env) if self.env else None)

    async def _with_client(self, work: Any) -> Any:
        import tempfile

        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        # A stdio server's stderr (its logging) goes to a file, not over the command's output.
        with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
            target = self._target()
            if isinstance(target, StdioServerParameters):
                target = stdio_client(target, errlog=errlog)
            try:
                async with Client(target, read_timeout_seconds=self.timeout) as client:
                    return await work(client)
            except OSError as exc:
                errlog.seek(0)
                tail = errlog.read()[-500:].strip()
                raise DependencyMissingError(f"MCP server '{self.server}' cannot be started: {exc}",
                                             detail=tail or None) from None

    def list_tools(self) -> list[ToolSpec]:
        async def fetch(client: Any) -> list[Any]:
            return list((await client.list_tools()).tools)

        tools = asyncio.run(self._with_client(fetch))
        self._specs = [self._spec(tool) for tool in tools]
        return list(self._specs)

    def _spec(self, tool: Any) -> ToolSpec:
        annotations = getattr(tool, "annotations", None)
        read_only = bool(getattr(annotations, "read_only_hint", False)) if annotations else False
        capability = (
            READ_ONLY if read_only else Capability(read_only=False, writes=True, side_effects=(f"mcp:{self.server}",))
        )
        return ToolSpec(
            name=f"{self.prefix}{tool.name}",
            description=tool.description or f"MCP tool {tool.name} of {self.server}",
            input_schema=dict(tool.input_schema or {"type": "object"}),
            capability=capability,
            source="mcp",
        )

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        async def invoke(client: Any) -> Any:
            return await client.call_tool(name, arguments)

        result = asyncio.run(self._with_client(invoke))
        texts = [getattr(part, "text", "") for part in result.content if getattr(part, "text", None)]
        if result.is_error:
            raise McpToolError(f"{name}: {' '.join(texts) or 'the MCP tool failed'}")
        if result.structured_content is not None:
            return result.structured_content
        return "\n".join(texts)

    def register(self, router: ToolRouter, *, replace: bool = False) -> list[str]:
        """Register every tool the server lists; the names registered."""
        names = []
        for spec in self._specs or self.list_tools():
            remote = spec.name.removeprefix(self.prefix)

            def handler(arguments: dict[str, Any], ctx: ToolContext, _remote: str = remote) -> Any:
                return self.call(_remote, arguments)

            router.register(spec, handler, replace=replace)
            names.append(spec.name)
        return names
