"""Plain HTTP on the WebSocket port: /healthz, /metrics and the web client's files.

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

from server import web
from server.limits import origin_allowed


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


def _static(path: str, request: Request) -> Response | None:
    """The web client's file at `path`, a 304 when the browser's copy is current, or
    None when no such file is shipped."""
    found = web.lookup(path)
    if found is None:
        return None
    # no-cache = revalidate every time: file names carry no version (no build step),
    # so an upgraded server must never be hidden behind a stale cached module.
    headers = Headers(
        [
            ("Content-Type", found.content_type),
            ("Cache-Control", "no-cache"),
            ("ETag", found.etag),
            ("X-Content-Type-Options", "nosniff"),
            ("Connection", "close"),
        ]
    )
    if found.content_type.startswith("text/html"):
        hosts = request.headers.get_all("Host")  # get() raises on a repeated header
        headers["Content-Security-Policy"] = web.csp_for(hosts[0] if len(hosts) == 1 else None)
        headers["Referrer-Policy"] = "no-referrer"
    if found.etag in request.headers.get_all("If-None-Match"):
        headers["Content-Length"] = "0"
        return Response(304, "Not Modified", headers, b"")
    headers["Content-Length"] = str(len(found.body))
    return Response(200, "OK", headers, found.body)


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
            body, content_type = server.render_metrics(", ".join(request.headers.get_all("Accept")))
            return _response(200, "OK", content_type, body)
        # get_all: headers.get() raises when a header is repeated (a 500 and a traceback).
        if [v.lower() for v in request.headers.get_all("Upgrade")] != ["websocket"]:
            static = _static(path, request)
            if static is not None:
                return static
            body = b"Not found. The web client is at /; see also /healthz and /metrics.\n"
            return _response(404, "Not Found", "text/plain; charset=utf-8", body)
        return None

    return process_request


def check_origin(then: ProcessRequest, allowed: frozenset[str], refused: Callable[[str], None]) -> ProcessRequest:
    """Wrap the HTTP hook: a WebSocket handshake from a browser page of another
    origin than ours (and not in `allowed`: --allowed-origin) gets 403 and
    `refused("origin")` is called (the server counts it)."""

    async def process_request(connection: ServerConnection, request: Request) -> Response | None:
        headers = request.headers
        # get_all: headers.get() raises on a repeated header (a 500 and a traceback).
        # A repeated Origin or Host is never same-origin.
        origins, hosts = headers.get_all("Origin"), headers.get_all("Host")
        origin = None if not origins else origins[0] if len(origins) == 1 else "invalid:"
        host = hosts[0] if len(hosts) == 1 else None
        upgrade = [v.lower() for v in headers.get_all("Upgrade")]
        if "websocket" in upgrade and not origin_allowed(origin, host, allowed):
            refused("origin")
            return connection.respond(403, "this origin may not connect; see --allowed-origin\n")
        return await then(connection, request)

    return process_request
