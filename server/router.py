"""Finds the room a request is for: the local `Room`, or its owner node through the relay.

A connection asks the router, never the lobby: `await router.room(id)` returns a
`RoomHandle` — the live `Room` itself when this node owns it (nothing in between, so
the single-node hot path costs nothing extra), or a `RemoteRoom` that forwards the
same calls to the owner node over Redis (server.relay). The caller then calls the
handle's methods exactly as it would a local room's; errors arrive as RequestError
either way.
"""

from __future__ import annotations

from typing import Any, Protocol

from engines.base import Seat
from protocol.messages import CreateRoom, is_room_id
from server.errors import RequestError
from server.seats import Peer


class RoomHandle(Protocol):
    """What a connection may call on a room, wherever it lives.

    Each method answers the request itself (through `peer`) or raises RequestError.
    """

    id: str

    async def join(
        self, peer: Peer, req_id: Any, seat: Seat | None, password: str | None, key: str | None = None
    ) -> None: ...

    async def watch(self, peer: Peer, req_id: Any, password: str | None) -> None: ...

    async def resume(self, peer: Peer, req_id: Any, token: str) -> None: ...

    async def leave(self, peer: Peer, explicit: bool = True) -> bool: ...

    async def start(self, peer: Peer, req_id: Any, key: str | None = None) -> None: ...

    async def act(self, peer: Peer, req_id: Any, text: str, version: int | None) -> None: ...

    async def resync(self, peer: Peer, req_id: Any) -> None: ...

    # Ending a game early (server.endings).
    async def resign(self, peer: Peer, req_id: Any) -> None: ...

    async def abort(self, peer: Peer, req_id: Any) -> None: ...

    async def offer_draw(self, peer: Peer, req_id: Any) -> None: ...

    async def decline_draw(self, peer: Peer, req_id: Any) -> None: ...

    def has_member(self, peer: Peer) -> bool: ...


class LocalRooms(Protocol):
    """The lobby as the router sees it: this node's rooms and the room-wide requests."""

    async def open(self, room_id: str) -> RoomHandle | None: ...

    async def create(self, msg: CreateRoom) -> Any: ...

    async def list(
        self, game: str | None, include_finished: bool, limit: int, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]: ...

    async def replay(self, room_id: str, password: str | None = None) -> dict[str, Any]: ...


class Remote(Protocol):
    """The relay as the router sees it: a handle on a room another node owns, if any."""

    async def locate(self, room_id: str) -> RoomHandle | None: ...


class Router:
    """Routes each request to the room it names; see the module docstring."""

    def __init__(self, lobby: LocalRooms, remote: Remote | None = None) -> None:
        self.lobby = lobby
        self.remote = remote

    async def room(self, room_id: str) -> RoomHandle:
        """The room `room_id`, local or remote; RequestError(no_such_room) if none is live."""
        if not is_room_id(room_id):  # before the relay builds any key from it
            raise RequestError("no_such_room", f"there is no live room {room_id!r}")
        room = await self.lobby.open(room_id)
        if room is not None:
            return room
        if self.remote is not None:
            handle = await self.remote.locate(room_id)
            if handle is not None:
                return handle
        raise RequestError("no_such_room", f"there is no live room {room_id!r}")

    async def create(self, msg: CreateRoom) -> Any:
        """A new room, owned by this node (the node that received create_room)."""
        return await self.lobby.create(msg)

    async def list(
        self, game: str | None, include_finished: bool, limit: int, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the listing and the cursor of the next (server.listing)."""
        return await self.lobby.list(game, include_finished, limit, cursor)

    async def replay(self, room_id: str, password: str | None = None) -> dict[str, Any]:
        return await self.lobby.replay(room_id, password)
