"""The plan tools over MCP on a real store: a read-write server creates a plan from an
action played by the scripted actor, shows its status and decision tree, explains a
decision and executes it, each write audited; a read-only server offers only the
reading tools."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client

from cleveragents.config import Config
from cleveragents.graph.workspace import Workspace
from cleveragents.servers.mcp_server import build_mcp_server
from cleveragents.servers.security import ServerSettings
from cleveragents.services import plans
from cleveragents.services.serving import workspace_operations

from ..plans.conftest import AGENT, write_action
from ..plans.test_lifecycle import SCRIPT

WRITES = {"plan_use", "plan_execute", "plan_apply"}


def test_plan_tools_read_write_and_read_only(ws: Workspace, tmp_path: Path) -> None:
    plans.create_action(ws, write_action(tmp_path, SCRIPT), {}, agent=AGENT)
    ops = workspace_operations(ws.data_dir, Config(ws.data_dir), read_only=False)
    server = build_mcp_server(ops, ServerSettings(read_only=False, user="bob"))

    async def main() -> dict[str, dict]:
        async with Client(server, cache=None) as client:
            assert {t.name for t in (await client.list_tools()).tools} >= WRITES
            progress: list[str] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append(message or "")

            used = await client.call_tool(
                "plan_use",
                {"action": "local/demo-action", "projects": ["demo"], "arguments": {"old": "f", "new": "g"}},
                progress_callback=on_progress,
            )
            assert not used.is_error, used.content
            # The plan's steps as progress notifications, in the order they were committed.
            assert progress[0].startswith("strategize queued: plan use") and "strategize processing" in progress[1]
            assert any("decision strategy_choice" in p for p in progress)
            plan_id = used.structured_content["plan"]["id"]
            status = await client.call_tool("plan_status", {"plan": plan_id})
            tree = await client.call_tool("plan_tree", {"plan": plan_id})
            rename = next(d for d in tree.structured_content["decisions"] if d["question"] == "How to rename?")
            explained = await client.call_tool("explain_decision", {"decision": rename["id"]})
            missing = await client.call_tool("plan_status", {"plan": "01NOSUCHPLAN"})
            assert missing.is_error and "NOT_FOUND" in missing.content[0].text
            return {
                "used": used.structured_content,
                "status": status.structured_content,
                "tree": tree.structured_content,
                "explained": explained.structured_content,
            }

    out = anyio.run(main)
    assert out["used"]["plan"]["phase"] == "strategize" and out["used"]["audit_event"]
    assert out["status"]["plan"]["id"] == out["used"]["plan"]["id"]
    chosen = [d["chosen"] for d in out["tree"]["decisions"]]
    assert "Rename f to g and every caller" in chosen
    assert out["explained"]["decision"]["question"] == "How to rename?"
    with ws.reader() as store:
        rows = list(
            store.query('SELECT ?who WHERE { ?e a ca:AuditEvent ; ca:eventType "plan_use" ; ca:userIdentity ?who }')
        )
    assert [r["who"].value for r in rows] == ["mcp:bob:stdio"]  # the in-process client has no HTTP identity

    read_only = build_mcp_server(workspace_operations(ws.data_dir, Config(ws.data_dir)), ServerSettings())

    async def listed() -> set[str]:
        async with Client(read_only, cache=None) as client:
            return {t.name for t in (await client.list_tools()).tools}

    names = anyio.run(listed)
    assert {"plan_status", "plan_tree", "explain_decision"} <= names and not WRITES & names
