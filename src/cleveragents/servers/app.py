"""One HTTP app for ``agents serve``: the A2A endpoint and agent card, and the MCP
streamable-HTTP endpoint at ``/mcp``, behind the shared guard (token, size)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import Mount

from cleveragents.servers.a2a_server import a2a_routes
from cleveragents.servers.mcp_server import build_mcp_server
from cleveragents.servers.operations import Operations
from cleveragents.servers.security import HttpGuard, ServerSettings


def build_app(ops: Operations, settings: ServerSettings, base_url: str | None = None) -> HttpGuard:
    base = base_url or f"http://{settings.host}:{settings.port}"
    tools = build_mcp_server(ops, settings)
    mcp_app = tools.streamable_http_app(max_request_body_size=settings.max_request_bytes, host=settings.host)

    a2a, close_a2a = a2a_routes(ops, tools, settings, base)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with tools.session_manager.run():  # the MCP app's own lifespan, which a Mount skips
            try:
                yield
            finally:
                await close_a2a()

    app = Starlette(routes=[*a2a, Mount("/", app=mcp_app)], lifespan=lifespan)
    return HttpGuard(app, settings)
