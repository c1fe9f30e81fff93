"""The server's request error: a stable wire code plus a message for people.

Handlers raise `RequestError`; the connection turns it into one `error` reply with the
request's id and keeps the connection open.
"""

from __future__ import annotations

from typing import Any


class RequestError(Exception):
    """A request failed; `code` is one of the stable wire codes (protocol.errors)."""

    def __init__(self, code: str, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail


class RoomMoved(RequestError):
    """This node found the room owned by another node (its fence moved on) while
    running the request: nothing of the request was stored. A client connected here
    gets `internal_error` and reconnects; a request relayed from another node is
    answered `moved` instead, and that node re-sends it to the new owner."""

    def __init__(self) -> None:
        super().__init__("internal_error", "this room moved to another server; reconnect")
