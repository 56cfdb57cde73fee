"""What every server surface enforces, whatever the protocol: where it binds, who may
call it (a bearer token) and how large a request may be. (SPARQL SERVICE is refused by
the query layer, graph/sparql_guard.py; a read-only server allows no endpoint at all.)

The HTTP guard is plain ASGI middleware, so the MCP and the A2A apps (and the one app
that mounts both) share it. Refusals are JSON-RPC error objects, since both protocols
speak JSON-RPC 2.0, with the HTTP status that says why (401, 413).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from cleveragents.errors import CleverAgentsError, ForbiddenError, RequestTooLargeError, UsageError

LOOPBACK_NAMES = frozenset({"localhost"})
TOKEN_ENV = "CLEVERAGENTS_SERVER_TOKEN"
# JSON-RPC codes of the refusals: -32001 is the spec's example for a CleverAgents error.
UNAUTHORIZED = -32001
TOO_LARGE = -32600  # Invalid Request

# Discovery stays public: a client reads the agent card to learn how to authenticate.
# Where the guard leaves the caller's identity in the ASGI scope's state, for the audit log.
IDENTITY_KEY = "cleveragents_identity"

PUBLIC_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


@dataclass(frozen=True)
class ServerSettings:
    """How a server runs: resolved from flags, then config keys ``server.*``."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str = ""
    read_only: bool = True
    max_request_bytes: int = 1_000_000
    request_timeout: float = 60.0
    user: str = "cleveragents"  # config user.name: who the server acts for

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(settings: ServerSettings) -> None:
    """Refuse to serve HTTP beyond this machine without a token."""
    if not settings.loopback and not settings.token:
        raise UsageError(
            f"binding {settings.host} exposes the server beyond this machine: a bearer token is required",
            suggestions=[
                f"export {TOKEN_ENV}=<a long random secret>",
                "agents config set server.token <secret>",
                "or bind 127.0.0.1 (the default)",
            ],
        )


def token_fingerprint(token: str) -> str:
    """Who called, for the audit log, without writing the secret down."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:12]


# --- errors on the wire ------------------------------------------------------------------


def error_text(exc: BaseException) -> str:
    """The one-line error a client sees: ``Error [code] CATEGORY: message`` plus hints."""
    if isinstance(exc, CleverAgentsError):
        hints = "; ".join(exc.suggestions)
        return exc.headline() + (f" (try: {hints})" if hints else "")
    return f"Error [500] INTERNAL: {type(exc).__name__}"


def jsonrpc_error(code: int, exc: CleverAgentsError, request_id: Any = None) -> bytes:
    error = {"code": code, "message": error_text(exc), "data": exc.to_dict()}
    body = {"jsonrpc": "2.0", "id": request_id, "error": error}
    return json.dumps(body).encode()


# --- the HTTP guard ----------------------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(Exception):
    pass


class HttpGuard:
    """Bearer token (when one is set) and request size, in front of any ASGI app.

    A request that streams past the limit without a Content-Length is cut off when it
    crosses it. The caller's identity (token fingerprint and address) is left in
    ``scope["state"]["cleveragents_identity"]`` for the audit log.
    """

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings
        self._expected = f"Bearer {settings.token}".encode() if settings.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        public = scope.get("path", "") in PUBLIC_PATHS
        if self._expected is not None and not public:
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                reason = "missing" if not given else "wrong"
                await _refuse(
                    send,
                    401,
                    UNAUTHORIZED,
                    ForbiddenError(
                        f"{reason} bearer token",
                        suggestions=["send 'Authorization: Bearer <server.token>'"],
                    ),
                    extra=[(b"www-authenticate", b'Bearer realm="cleveragents"')],
                )
                return
        limit = self.settings.max_request_bytes
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await _refuse(send, 413, TOO_LARGE, _too_large(int(length), limit))
            return
        client = scope.get("client") or ("?", 0)
        who = token_fingerprint(self.settings.token) if self.settings.token else "local"
        scope.setdefault("state", {})[IDENTITY_KEY] = f"{who}@{client[0]}"
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await _refuse(send, 413, TOO_LARGE, _too_large(seen, limit))


def _too_large(size: int, limit: int) -> RequestTooLargeError:
    return RequestTooLargeError(
        f"request body of {size} bytes exceeds the limit of {limit} bytes",
        suggestions=["send a smaller request", "raise server.max_request_bytes"],
    )


async def _refuse(
    send: Send, status: int, code: int, exc: CleverAgentsError, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = jsonrpc_error(code, exc)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
