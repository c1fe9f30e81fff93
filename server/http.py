"""Plain HTTP on the WebSocket port: /healthz and /metrics.

websockets calls `process_request` before the opening handshake; returning a Response
answers the HTTP request instead of upgrading, returning None continues the handshake.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response


class HealthSource(Protocol):
    """What the HTTP routes read from the server (server.app implements it)."""

    async def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, the /healthz JSON body)."""
        ...

    def render_metrics(self, accept: str) -> tuple[bytes, str]:
        """The /metrics body and its content type."""
        ...


ProcessRequest = Callable[[ServerConnection, Request], Awaitable[Response | None]]


def _response(status: int, reason: str, content_type: str, body: bytes) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status, reason, headers, body)


def make_process_request(server: HealthSource) -> ProcessRequest:
    """Build the `process_request` hook bound to a server."""

    async def process_request(connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            healthy, data = await server.health()
            body = json.dumps(data).encode()
            if healthy:
                return _response(200, "OK", "application/json", body)
            return _response(503, "Service Unavailable", "application/json", body)
        if path == "/metrics":
            body, content_type = server.render_metrics(request.headers.get("Accept", ""))
            return _response(200, "OK", content_type, body)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            body = b"Giants Table server: connect with a WebSocket client; see /healthz and /metrics.\n"
            return _response(404 if path != "/" else 426, "Not Found" if path != "/" else "Upgrade Required", "text/plain", body)
        return None

    return process_request
