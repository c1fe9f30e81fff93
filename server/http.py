"""Plain HTTP on the WebSocket port: /healthz and /metrics.

websockets calls `process_request` before the opening handshake; returning a Response
answers the HTTP request instead of upgrading, returning None continues the handshake.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

if TYPE_CHECKING:
    from server.app import GiantsServer


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


def make_process_request(server: GiantsServer):  # type: ignore[no-untyped-def]
    """Build the `process_request` hook bound to a server."""

    async def process_request(connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            redis_ok = await server.store.ping()
            loaded = server.lobby.loaded
            healthy = redis_ok and loaded and not server.shutting_down
            body = json.dumps(
                {
                    "status": "ok" if healthy else "unavailable",
                    "redis": redis_ok,
                    "rooms_loaded": loaded,
                    "rooms": len(server.lobby.rooms),
                    "connections": len(server.connections),
                    "shutting_down": server.shutting_down,
                }
            ).encode()
            if healthy:
                return _response(200, "OK", "application/json", body)
            return _response(503, "Service Unavailable", "application/json", body)
        if path == "/metrics":
            body, content_type = server.metrics.render(request.headers.get("Accept", ""))
            return _response(200, "OK", content_type, body)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            body = b"Giants Table server: connect with a WebSocket client; see /healthz and /metrics.\n"
            return _response(404 if path != "/" else 426, "Not Found" if path != "/" else "Upgrade Required", "text/plain", body)
        return None

    return process_request
