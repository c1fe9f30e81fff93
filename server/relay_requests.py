"""The relay's requesting side (server.relay): a member's node sends its clients'
requests to the room's owner, waits for the answer, and follows the room when it moves.

`Relay` inherits `RelayRequests`; the owner's side (serving those requests, announcing
ownership, relaying frames back) is `server.relay`'s. A request is one message on the
owner's inbox, answered by `d` (done, with the member's seat) or `m` (moved: not run
there, re-sent to the new owner) among the frames the owner sends back:

    handle = await relay.locate(room_id)          # RemoteRoom, or the local Room
    await relay.request(remote, conn, "act", [req_id, text, version])

A request nobody took (no subscriber on the owner's inbox) is sent again for up to a
second while its owner still holds the room's lease (the owner may be subscribing
again), then goes to the next owner. One whose owner stops answering is retried at the
next owner when that is safe (`RETRY_SAFE`), and answered `internal_error` once
otherwise (its member is re-attached when the room is taken over).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from engines.base import Seat
from server.cancellation import checkpoint
from server.errors import RequestError
from server.relay_channels import Channels
from server.relay_handles import RemoteRoom
from server.router import RoomHandle
from server.seats import Peer
from server.store_base import is_transient

RETRY_SAFE = {"join", "watch", "resume", "resync", "leave"}  # refused or idempotent if repeated
# A request nobody took while its owner holds the lease is sent again this many times,
# this many seconds apart (a subscription is renewed 0.2 s after it broke).
RESENDS, RESEND_AFTER = 10, 0.1


class OwnerGone(Exception):
    """The owner did not take or did not answer a relayed request."""

    def __init__(self, delivered: bool) -> None:
        super().__init__("the room's owner did not answer")
        self.delivered = delivered


class LocalConnection(Peer, Protocol):
    """A client connection of this node (server.connection.Connection)."""

    id: str
    rooms: dict[str, RoomHandle]


class LiveRoom(RoomHandle, Protocol):
    """A room this node owns (server.room.Room), as the relay drives it."""

    closing: bool

    def member_seat(self, peer: Peer) -> tuple[bool, Seat | None]: ...

    async def reattach(self, entries: list[tuple[Peer, Seat | None]]) -> None: ...


class Rooms(Protocol):
    """The lobby as the relay sees it."""

    def find(self, room_id: str) -> LiveRoom | None: ...

    async def take_over(self, room_id: str) -> LiveRoom | None: ...

    async def owner(self, room_id: str) -> str | None:
        """The id of the node holding the room's lease, if any."""
        ...


class RelayRequests:
    """The member's side of `server.relay.Relay`; the attributes are the Relay's, and
    `announce`, `_publish` and `_spawn` are its owner's side and plumbing."""

    node_id: str
    rooms: Rooms
    timeout: float
    channels: Channels
    connections: dict[str, LocalConnection]
    remotes: dict[str, RemoteRoom]  # rooms owned elsewhere that local connections are in
    requests_relayed: int
    # Called for each local member re-attached at a room's new owner (server.moved).
    on_reattached: Callable[[LocalConnection], None] | None = None

    def _init_requests(self) -> None:
        self._pending: dict[int, asyncio.Future[list[Any]]] = {}
        self._rids = itertools.count(1)

    async def announce(self, room_id: str) -> None:
        raise NotImplementedError

    async def _publish(self, channel: str, data: dict[str, Any]) -> int:
        raise NotImplementedError

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        raise NotImplementedError

    def _answered(self, item: list[Any]) -> None:
        """An owner's `d` or `m` item for one of this node's requests."""
        fut = self._pending.pop(item[1], None)
        if fut is not None and not fut.done():
            fut.set_result(item)

    async def locate(self, room_id: str) -> RoomHandle | None:
        """A handle on a live room owned elsewhere (or taken over here); None if none."""
        remote = self.remotes.get(room_id)
        if remote is not None and remote.owner is not None:
            return remote
        handle = await self.owner_of(room_id)
        if isinstance(handle, str):
            remote = self.remotes.get(room_id) or RemoteRoom(self, room_id, handle)
            remote.owner = handle
            self.remotes[room_id] = remote
            return remote
        return handle

    async def owner_of(self, room_id: str, avoid: str | None = None) -> RoomHandle | str | None:
        """The owner's node id, or the local room (taken over if its lease is free).

        Waits (up to the relay timeout) while the only lease is `avoid`'s: a node that
        stopped answering, whose lease is about to expire. None: no such live room.
        """
        end = time.monotonic() + self.timeout
        while True:
            checkpoint()
            room = self.rooms.find(room_id)
            if room is not None:
                return room
            holder = await self.rooms_store_holder(room_id)
            if holder is None:
                taken = await self.rooms.take_over(room_id)
                if taken is not None:
                    return taken
                if await self.rooms_store_holder(room_id) is None:
                    return None  # no lease and nothing to take: not a live room
            elif holder != avoid and holder != self.node_id:
                return holder
            if time.monotonic() > end:
                raise RequestError("internal_error", "the room's server is not answering; try again shortly")
            await asyncio.sleep(0.05)

    async def _try_publish(self, channel: str, msg: dict[str, Any]) -> int | None:
        """`_publish`; None if Redis could not take it (no master for the channel's slot
        for now): not delivered, like a receiver count of 0."""
        try:
            return await self._publish(channel, msg)
        except Exception as exc:
            if not is_transient(exc):
                raise
            return None

    async def rooms_store_holder(self, room_id: str) -> str | None:
        try:
            return await self.rooms.owner(room_id)
        except Exception as exc:
            if not is_transient(exc):
                raise
            raise RequestError("storage_unavailable", "the room's storage does not answer; try again shortly") from exc

    async def _still_owner(self, room_id: str, owner: str) -> bool:
        """Whether `owner` still holds the room's lease; True while Redis cannot say
        (on a cluster, the slot's master is being replaced): the owner keeps it."""
        try:
            return await self.rooms.owner(room_id) == owner
        except Exception as exc:
            if not is_transient(exc):
                raise
            return True

    async def reattach_at(self, room_id: str, owner: str | None) -> None:
        """Re-attach this node's members of `room_id` at its (new) owner."""
        remote = self.remotes.get(room_id)
        if remote is None or not remote.members:
            return
        try:
            target = owner or await self.owner_of(room_id, avoid=remote.owner)
        except RequestError:
            return
        if target is None:
            return
        if not isinstance(target, str):
            await self.announce(room_id)  # taken over here: attach the local connections
            return
        remote.owner = target
        members, conns = [], []
        for conn_id, seat in remote.members.items():
            conn = self.connections.get(conn_id)
            if conn is not None:
                members.append([conn_id, conn.name, seat, conn.protocol])
                conns.append(conn)
        if members:
            await self._publish(self.channels.inbox(target), {"t": "att", "room": room_id, "from": self.node_id, "m": members})
            if self.on_reattached is not None:
                for conn in conns:
                    self.on_reattached(conn)

    async def request(self, remote: RemoteRoom, conn: Peer, op: str, args: list[Any]) -> None:
        """Run `op` on the remote room for `conn`; retried at the new owner if the room moved."""
        if op == "join" and args[3] is None:
            # A join retried at a new owner must not take a second seat when the old
            # owner stored the first one but its reply was lost: with a request key the
            # retry is answered with the seat and token already stored (Room.join).
            args = [*args[:3], secrets.token_urlsafe(18)]
        for _ in range(5):
            owner = remote.owner
            if owner is None:
                target = await self.owner_of(remote.id)
                if target is None:
                    raise RequestError("no_such_room", f"there is no live room {remote.id!r}")
                if not isinstance(target, str):
                    await self.announce(remote.id)
                    await self._call_local(target, conn, op, args)
                    return
                remote.owner = owner = target
            try:
                result = await self._call(remote, owner, conn, op, args)
            except OwnerGone as exc:
                if exc.delivered and op not in RETRY_SAFE:
                    self._spawn(self.reattach_at(remote.id, None))
                    raise RequestError(
                        "internal_error",
                        "the room's server stopped answering; it moves to another server and you get a fresh snapshot",
                    ) from None
                remote.owner = None
                target = await self.owner_of(remote.id, avoid=owner)
                if target is None:
                    raise RequestError("no_such_room", f"there is no live room {remote.id!r}") from None
                if not isinstance(target, str):
                    await self.announce(remote.id)
                    await self._call_local(target, conn, op, args)
                    return
                remote.owner = target
                continue
            if result[0] == "m":  # moved: not run there; find the new owner and re-send
                remote.owner = None
                await asyncio.sleep(0.02)
                continue
            _, _, member, seat = result
            # Taken over here or elsewhere while the request ran at `owner`?
            moved = self.remotes.get(remote.id) is not remote or remote.owner != owner
            conn_id = getattr(conn, "id", "")
            if member:
                remote.members[conn_id] = seat  # (a join asks this handle whether it joined)
            else:
                remote.members.pop(conn_id, None)
            if moved:
                await self._moved_meanwhile(remote, conn, member, seat)
            elif not remote.members:
                del self.remotes[remote.id]
            return
        raise RequestError("internal_error", "the room kept moving; try again")

    async def _moved_meanwhile(self, remote: RemoteRoom, conn: Peer, member: bool, seat: Seat | None) -> None:
        """The room changed owner while `conn`'s request ran at the old one.

        The members moved to the new owner (`announce`, `reattach_at`) were the ones
        known when it took over: a member this request made (a join, watch or resume in
        flight) was not among them and would never get a frame again, and one it ended
        (a leave) may have been moved along. Settle it at the room's owner now."""
        room_id = remote.id
        room = self.rooms.find(room_id)
        current = self.remotes.get(room_id)
        if current is not remote:
            remote.owner = None  # a stale handle: its next call looks the owner up
        if room is not None:  # taken over by this node
            if member:
                conns = getattr(conn, "rooms", None)
                if isinstance(conns, dict):
                    conns[room_id] = room
                await room.reattach([(conn, seat)])
            elif room.has_member(conn):
                await room.leave(conn, False)
        elif member:
            if current is None:
                current = self.remotes[room_id] = remote
            current.members[getattr(conn, "id", "")] = seat
            self._spawn(self.reattach_at(room_id, current.owner))
        elif current is not None:
            # Detach it at the new owner too (nothing happens there if it was never attached).
            self._spawn(self._detach(current, conn))

    async def _detach(self, remote: RemoteRoom, conn: Peer) -> None:
        with contextlib.suppress(RequestError):
            await self.request(remote, conn, "leave", [False])

    async def _call_local(self, room: RoomHandle, conn: Peer, op: str, args: list[Any]) -> None:
        conns = getattr(conn, "rooms", None)
        if isinstance(conns, dict):
            conns[room.id] = room
        if op == "leave":
            await room.leave(conn, *args)
        else:
            await getattr(room, op)(conn, *args)

    async def _call(self, remote: RemoteRoom, owner: str, conn: Peer, op: str, args: list[Any]) -> list[Any]:
        rid = next(self._rids)
        fut: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        conn_id = getattr(conn, "id", "")
        msg = {"t": "req", "rid": rid, "from": self.node_id, "conn": conn_id,
               "name": conn.name, "p": conn.protocol, "room": remote.id, "op": op, "a": args}
        if conn_id in remote.members:
            # A member here: this node vouches for it, as its re-attachment does ("att"),
            # which may reach a new owner after this request (server.relay._serve).
            msg["mem"] = [remote.members[conn_id]]
        self.requests_relayed += 1
        try:
            channel = self.channels.inbox(owner)
            receivers = await self._try_publish(channel, msg)
            resend_until = time.monotonic() + max(RESENDS * RESEND_AFTER, self.timeout)
            while not receivers:
                # Nobody took it. An owner that still holds the room's lease may be
                # subscribing again (its connection broke; on a cluster its inbox's
                # slot moved, or its master is being replaced): send it again shortly,
                # safely (it was not delivered). A dead owner loses the lease within
                # the lease TTL, and a lease that moved ends this at once.
                if time.monotonic() > resend_until or not await self._still_owner(remote.id, owner):
                    break
                await asyncio.sleep(RESEND_AFTER)
                receivers = await self._try_publish(channel, msg)
            if not receivers:
                if receivers is None and time.monotonic() > resend_until:  # Redis never took it
                    raise RequestError("storage_unavailable", "the room's server cannot be reached through Redis; "
                                       "the request was not run, try again shortly", {"outcome": "not_applied"})
                raise OwnerGone(delivered=False)
            # A busy owner is still an owner: keep waiting while it holds the room's
            # lease (checked twice a second), up to 4 relay timeouts; a dead one loses
            # the lease within the lease TTL.
            end = time.monotonic() + 4 * self.timeout
            while True:
                done, _pending = await asyncio.wait([fut], timeout=min(self.timeout, 0.5))
                if done:
                    return fut.result()
                if time.monotonic() > end or not await self._still_owner(remote.id, owner):
                    raise OwnerGone(delivered=True)
        finally:
            self._pending.pop(rid, None)
