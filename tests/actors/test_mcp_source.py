"""MCP servers as tool sources, against a real MCP server process over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

from cleveragents.actors.mcp_source import McpToolSource
from cleveragents.tools import ToolContext, ToolRouter

SERVER = Path(__file__).parent / "fixtures" / "mcp_server.py"


def test_every_listed_tool_is_registered_and_called_through_the_router():
    source = McpToolSource(f"{sys.executable} {SERVER}", prefix="mcp_")
    router = ToolRouter()
    names = source.register(router)
    assert sorted(names) == ["mcp_add", "mcp_fail", "mcp_shout"]
    add = router.spec("mcp_add")
    assert add.source == "mcp" and add.capability.read_only
    assert add.input_schema["required"] == ["a", "b"]
    assert router.spec("mcp_shout").capability.writes
    ctx = ToolContext(plan="01TESTPLAN")
    # A typed return comes back as the server's structured content.
    assert router.call("mcp_add", {"a": 2, "b": 40}, ctx).content == {"result": 42}
    failed = router.call("mcp_fail", {"reason": "no"}, ctx)
    assert not failed.ok and failed.error_code == "MCP_TOOL_ERROR"
    assert failed.error == "fail: Error executing tool fail: refused: no"
    bad = router.call("mcp_add", {"a": "two"}, ctx)
    assert not bad.ok and bad.error_code == "VALIDATION_FAILED"
    # A read-only plan may not call the tool the server does not declare read-only.
    refused = router.call("mcp_shout", {"text": "hi"}, ToolContext(plan="01TESTPLAN", read_only=True))
    assert not refused.ok and refused.error_code == "ACCESS_DENIED"
    assert router.call("mcp_shout", {"text": "hi"}, ctx).content == {"result": "HI"}
