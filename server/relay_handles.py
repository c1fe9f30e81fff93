"""The relay's two stand-ins (server.relay): a member on another node, a room on another node.

- `RelayPeer` lives at the owner and stands for a member connected to another node:
  the room pushes that member's finished frame bytes into it like into any `Peer`, and
  they are queued, untouched, for that node.
- `RemoteRoom` lives at a member's node and stands for a room owned elsewhere: it has
  the calls of a local `Room` (server.router.RoomHandle) and sends each as a request.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from engines.base import Seat
from protocol.packer import ok_version
from server.errors import RequestError
from server.seats import Peer
from server.wire import encode


class Outbox(Protocol):
    """Where a RelayPeer's frames go (the Relay)."""

    frames_relayed: int

    def queue(self, node_id: str, item: list[Any]) -> None: ...


class Requester(Protocol):
    """What runs a RemoteRoom's calls at the owner (the Relay)."""

    async def request(self, remote: RemoteRoom, conn: Peer, op: str, args: list[Any]) -> None: ...


class RelayPeer:
    """At the owner: a member connected to another node. Forwards finished frames only."""

    def __init__(self, relay: Outbox, node_id: str, conn_id: str, name: str, protocol: int = 1) -> None:
        self.relay = relay
        self.node_id = node_id
        self.conn_id = conn_id
        self.name = name
        self.protocol = protocol  # the member's `hello` version: its frames are built for it
        self.rooms: set[str] = set()

    def push(self, frame: bytes) -> None:
        self.relay.frames_relayed += 1
        self.relay.queue(self.node_id, ["f", self.conn_id, frame])

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.push(encode({"type": "ok", "id": req_id, "data": data}))

    def send_ok_version(self, req_id: Any, version: int) -> None:
        self.push(ok_version(req_id, version))


class RemoteRoom:
    """At a member's node: a room owned elsewhere, with the same calls as a local Room."""

    def __init__(self, relay: Requester, room_id: str, owner: str | None) -> None:
        self.relay = relay
        self.id = room_id
        self.owner = owner
        self.members: dict[str, Seat | None] = {}  # local connection id -> seat

    async def join(
        self, peer: Peer, req_id: Any, seat: Seat | None, password: str | None, key: str | None = None
    ) -> None:
        await self.relay.request(self, peer, "join", [req_id, seat, password, key])

    async def watch(self, peer: Peer, req_id: Any, password: str | None) -> None:
        await self.relay.request(self, peer, "watch", [req_id, password])

    async def resume(self, peer: Peer, req_id: Any, token: str) -> None:
        await self.relay.request(self, peer, "resume", [req_id, token])

    async def start(self, peer: Peer, req_id: Any, key: str | None = None) -> None:
        await self.relay.request(self, peer, "start", [req_id, key])

    async def act(self, peer: Peer, req_id: Any, text: str, version: int | None) -> None:
        await self.relay.request(self, peer, "act", [req_id, text, version])

    async def resync(self, peer: Peer, req_id: Any) -> None:
        await self.relay.request(self, peer, "resync", [req_id])

    async def resign(self, peer: Peer, req_id: Any) -> None:
        await self.relay.request(self, peer, "resign", [req_id])

    async def abort(self, peer: Peer, req_id: Any) -> None:
        await self.relay.request(self, peer, "abort", [req_id])

    async def offer_draw(self, peer: Peer, req_id: Any) -> None:
        await self.relay.request(self, peer, "offer_draw", [req_id])

    async def decline_draw(self, peer: Peer, req_id: Any) -> None:
        await self.relay.request(self, peer, "decline_draw", [req_id])

    async def leave(self, peer: Peer, explicit: bool = True) -> bool:
        was = self.has_member(peer)
        with contextlib.suppress(RequestError):  # owner gone: its successor never attached it
            await self.relay.request(self, peer, "leave", [explicit])
        self.members.pop(getattr(peer, "id", ""), None)
        return was

    def has_member(self, peer: Peer) -> bool:
        return getattr(peer, "id", None) in self.members
