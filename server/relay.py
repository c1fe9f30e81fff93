"""Requests to, and member frames from, rooms owned by other nodes — over Redis pub/sub.

Every node subscribes to its inbox channel `P relay:<node id>` and to `P relay:all`.
A client connected to node B asks for room X owned by node A:

    B: router.room(X) -> RemoteRoom(X, owner=A)          (relay.locate reads X's lease)
    B: RemoteRoom.act(conn, ...) -> PUBLISH P relay:A {t: req, rid, op: act, conn, ...}
    A: the live Room handles it with a RelayPeer(B, conn) as the member's Peer
    A: RelayPeer.push(frame) -> PUBLISH P relay:B {t: out, items: [[f, conn, frame], ..., [d, rid, ...]]}
    B: each frame goes to conn.push() untouched; `d` (done) ends the request

Views stay filtered at the owner: a RelayPeer carries the finished frame bytes built
for that one member, and B never decodes them. Frames to one node leave in one PUBLISH
per event-loop pass, in order, from one sender task. When the owner is the local node
none of this runs: the router hands the connection the local Room itself.

Ownership changes are announced on `P relay:all` ({t: own, room, node}); every node
with members in that room re-attaches them at the new owner ({t: att}), which sends
each a snapshot (Room.reattach). A request the old owner can no longer serve — the
room is being handed over, or the fence refused the request's write because another
node took the room over — is answered `moved` and re-sent to the new owner, so a move
costs clients nothing. A request that was still running at the old owner when the room
moved is settled at the new owner once its answer is in: the member it made is
attached there (the members moved at the take-over did not include it). A request
whose owner stops answering (killed) cannot be known to have been applied: it gets
`internal_error` once, and the member is re-attached when the room is taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections.abc import Coroutine
from typing import Any, Protocol

import msgpack
import redis.asyncio as aioredis

from engines.base import Seat
from server.cancellation import cancel_and_wait, checkpoint
from server.commit_pipe import GroupSender
from server.errors import RequestError, RoomMoved
from server.relay_handles import RelayPeer, RemoteRoom
from server.router import RoomHandle
from server.seats import Peer
from server.subscription import Subscription
from server.wire import encode

log = logging.getLogger("giants.relay")

# Room calls a relayed request may make, with their argument counts after (peer, req_id).
OPS = {"join": 3, "watch": 1, "resume": 1, "start": 1, "act": 2, "resync": 0, "leave": 1,
       "resign": 0, "abort": 0, "offer_draw": 0, "decline_draw": 0}
RETRY_SAFE = {"join", "watch", "resume", "resync", "leave"}  # refused or idempotent if repeated


def _pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True)


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


class Relay:
    """One node's end of the relay; see the module docstring."""

    def __init__(self, url: str, prefix: str, node_id: str, rooms: Rooms, timeout: float = 5.0) -> None:
        # One plain connection to one Redis server even on a cluster: classic pub/sub is
        # broadcast cluster-wide anyway, and with every node on the same server PUBLISH's
        # receiver count tells at once whether the owner is still subscribed.
        self.redis = aioredis.Redis.from_url(url)
        # A relayed request's PUBLISH waits for its receiver count: many are in flight
        # under load, so they share one connection (batched) instead of one each.
        self._requests = GroupSender(self.redis, timeout)
        self.prefix = prefix
        self.node_id = node_id
        self.rooms = rooms
        self.timeout = timeout
        self.connections: dict[str, LocalConnection] = {}
        self.remotes: dict[str, RemoteRoom] = {}  # rooms owned elsewhere that local connections are in
        self.peers: dict[tuple[str, str], RelayPeer] = {}  # at the owner: (node, conn) -> peer
        self._pending: dict[int, asyncio.Future[list[Any]]] = {}
        self._rids = itertools.count(1)
        self._out: dict[str, list[list[Any]]] = {}
        self._out_scheduled = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sub: Subscription | None = None
        self.frames_relayed = 0
        self.requests_relayed = 0

    def channel(self, node_id: str) -> str:
        return f"{self.prefix}relay:{node_id}"

    @property
    def broadcast(self) -> str:
        return f"{self.prefix}relay:all"

    # -- life cycle -------------------------------------------------------------------

    async def start(self) -> None:
        self._sub = await self._subscribe()
        self._spawn(self._keep_subscribed())

    async def stop(self) -> None:
        await self._drain()
        await cancel_and_wait(list(self._tasks))
        if self._sub is not None:
            self._sub.close()
        self._requests.close()
        await self.redis.aclose()

    async def _drain(self, timeout: float = 2.0) -> None:
        """Wait until queued frames left and Redis took them (shutdown: members elsewhere
        get their last frames)."""
        end = time.monotonic() + timeout
        while (self._out or self._requests.in_flight) and time.monotonic() < end:
            await asyncio.sleep(0.01)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def register(self, conn: LocalConnection) -> None:
        self.connections[conn.id] = conn

    def unregister(self, conn: LocalConnection) -> None:
        self.connections.pop(conn.id, None)

    # -- sending ----------------------------------------------------------------------

    def queue(self, node_id: str, item: list[Any]) -> None:
        """Queue one item for a node; everything queued in this pass leaves in one PUBLISH."""
        self._out.setdefault(node_id, []).append(item)
        if not self._out_scheduled:
            self._out_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_out)

    def _flush_out(self) -> None:
        """Each node's items of this pass in one PUBLISH; all of them in one write to
        Redis, with the relayed requests of the same pass (`GroupSender`)."""
        self._out_scheduled = False
        out, self._out = self._out, {}
        for node_id, items in out.items():
            self._requests.post("PUBLISH", self.channel(node_id), _pack({"t": "out", "i": items}))

    async def _publish(self, channel: str, data: dict[str, Any]) -> int:
        return int(await self._requests.call("PUBLISH", channel, _pack(data)))

    # -- receiving --------------------------------------------------------------------

    async def _subscribe(self) -> Subscription:
        return await Subscription.open(self.redis, [self.channel(self.node_id), self.broadcast], self._received,
                                       self.timeout)

    def _received(self, data: bytes) -> None:
        try:
            self._dispatch(msgpack.unpackb(data, raw=False))
        except Exception:
            log.exception("relay: bad message")

    async def _keep_subscribed(self) -> None:
        """Subscribe again whenever the subscription's connection breaks."""
        while True:
            checkpoint()
            assert self._sub is not None
            exc = await self._sub.lost
            log.warning("relay: subscription lost (%s); resubscribing", exc)
            while True:
                await asyncio.sleep(0.2)
                try:
                    self._sub = await self._subscribe()
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as retry:
                    log.warning("relay: resubscribing failed (%s); retrying", retry)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg["t"]
        if kind == "out":
            for item in msg["i"]:
                if item[0] == "f":
                    conn = self.connections.get(item[1])
                    if conn is not None:
                        conn.push(item[2])
                else:
                    fut = self._pending.pop(item[1], None)
                    if fut is not None and not fut.done():
                        fut.set_result(item)
        elif kind == "req":
            self._spawn(self._serve(msg))
        elif kind == "own":
            if msg["node"] != self.node_id and msg["room"] in self.remotes:
                self._spawn(self.reattach_at(msg["room"], msg["node"]))
        elif kind == "att":
            self._spawn(self._attach(msg))
        elif kind == "adopt":
            self._spawn(self._adopt(msg["room"]))

    # -- the owner's side -------------------------------------------------------------

    def peer(self, node_id: str, conn_id: str, name: str, protocol: int) -> RelayPeer:
        key = (node_id, conn_id)
        peer = self.peers.get(key)
        if peer is None:
            peer = self.peers[key] = RelayPeer(self, node_id, conn_id, name, protocol)
        return peer

    async def _serve(self, msg: dict[str, Any]) -> None:
        """Run one relayed request on the local room; answer frames, then `done` or `moved`."""
        node_id, rid, op = msg["from"], msg["rid"], msg["op"]
        room = self.rooms.find(msg["room"])
        if room is None or room.closing or op not in OPS:
            self.queue(node_id, ["m", rid])
            return
        peer = self.peer(node_id, msg["conn"], msg.get("name", "anonymous"), msg.get("p", 1))
        args = msg["a"]
        try:
            if op == "leave":
                await room.leave(peer, *args)
            else:
                await getattr(room, op)(peer, *args)
        except RequestError as exc:
            if isinstance(exc, RoomMoved) or (exc.code == "shutting_down" and room.closing):
                # The room is being handed over, or another node took it over (the fence
                # refused the request's write): nothing was run or stored, so the
                # member's node sends it on to the new owner.
                self.queue(node_id, ["m", rid])
                return
            error: dict[str, Any] = {"type": "error", "id": args[0] if args else None, "code": exc.code, "message": exc.message}
            if exc.detail:
                error["detail"] = exc.detail
            peer.push(encode(error))
        except Exception:
            log.exception("relayed %s on room %s failed", op, msg["room"])
            peer.push(encode({"type": "error", "id": args[0] if args else None, "code": "internal_error",
                              "message": "the server failed on this request; it was logged"}))
        member, seat = room.member_seat(peer)
        if member:
            peer.rooms.add(room.id)
        else:
            peer.rooms.discard(room.id)
            if not peer.rooms:
                self.peers.pop((node_id, peer.conn_id), None)
        self.queue(node_id, ["d", rid, member, seat])

    async def _attach(self, msg: dict[str, Any]) -> None:
        room = self.rooms.find(msg["room"])
        if room is None:
            return
        entries: list[tuple[Peer, Seat | None]] = []
        for conn_id, name, seat, *protocol in msg["m"]:
            peer = self.peer(msg["from"], conn_id, name, protocol[0] if protocol else 1)
            peer.rooms.add(room.id)
            entries.append((peer, seat))
        await room.reattach(entries)

    async def forget_nodes(self, node_ids: list[str]) -> None:
        """Nodes that died: their members leave this node's rooms (their clients will
        reconnect somewhere and resume), so seats stop showing them connected."""
        for key in [k for k in self.peers if k[0] in node_ids]:
            peer = self.peers.pop(key, None)
            if peer is None:  # left meanwhile (this loop awaits each room's leave)
                continue
            for room_id in list(peer.rooms):
                room = self.rooms.find(room_id)
                if room is not None:
                    with contextlib.suppress(Exception):
                        await room.leave(peer, False)
            peer.rooms.clear()

    async def _adopt(self, room_id: str) -> None:
        """Another node hands this room over (graceful shutdown): take it now."""
        await self.rooms.take_over(room_id)

    async def announce(self, room_id: str) -> None:
        """This node now owns the room: members elsewhere re-attach here."""
        await self._publish(self.broadcast, {"t": "own", "room": room_id, "node": self.node_id})
        remote = self.remotes.pop(room_id, None)
        room = self.rooms.find(room_id)
        if remote is not None and room is not None:
            # Local connections were members through the relay: they now use the room itself.
            entries: list[tuple[Peer, Seat | None]] = []
            for conn_id, seat in remote.members.items():
                conn = self.connections.get(conn_id)
                if conn is not None:
                    conn.rooms[room_id] = room
                    entries.append((conn, seat))
            await room.reattach(entries)

    async def hand_over(self, room_id: str, to: str) -> None:
        await self._publish(self.channel(to), {"t": "adopt", "room": room_id})

    def room_lost(self, room_id: str, members: list[tuple[Peer, Seat | None]]) -> None:
        """A room this node owned moved elsewhere: its local members follow it."""
        remote = self.remotes.get(room_id) or RemoteRoom(self, room_id, None)
        self.remotes[room_id] = remote
        for peer, seat in members:
            conn = self.connections.get(getattr(peer, "id", ""))
            if conn is not None and conn is peer:
                remote.members[conn.id] = seat
                conn.rooms[room_id] = remote
        for key in [k for k, p in self.peers.items() if room_id in p.rooms]:
            self.peers[key].rooms.discard(room_id)
        self._spawn(self.reattach_at(room_id, None))

    # -- the member's side ------------------------------------------------------------

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

    async def rooms_store_holder(self, room_id: str) -> str | None:
        return await self.rooms.owner(room_id)

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
        members = []
        for conn_id, seat in remote.members.items():
            conn = self.connections.get(conn_id)
            if conn is not None:
                members.append([conn_id, conn.name, seat, conn.protocol])
        if members:
            await self._publish(self.channel(target), {"t": "att", "room": room_id, "from": self.node_id, "m": members})

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
        msg = {"t": "req", "rid": rid, "from": self.node_id, "conn": getattr(conn, "id", ""),
               "name": conn.name, "p": conn.protocol, "room": remote.id, "op": op, "a": args}
        self.requests_relayed += 1
        try:
            receivers = await self._publish(self.channel(owner), msg)
            if receivers == 0:
                raise OwnerGone(delivered=False)
            # A busy owner is still an owner: keep waiting while it holds the room's
            # lease (checked twice a second), up to 4 relay timeouts; a dead one loses
            # the lease within the lease TTL.
            end = time.monotonic() + 4 * self.timeout
            while True:
                done, _pending = await asyncio.wait([fut], timeout=min(self.timeout, 0.5))
                if done:
                    return fut.result()
                if time.monotonic() > end or await self.rooms.owner(remote.id) != owner:
                    raise OwnerGone(delivered=True)
        finally:
            self._pending.pop(rid, None)
