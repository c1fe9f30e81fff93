"""Requests to, and member frames from, rooms owned by other nodes — over Redis pub/sub.

Every node subscribes to its inbox channel `P relay:<node id>` and to `P relay:all`
(on a Redis Cluster the inbox is the shard channel `P relay:{<node id>}` and PUBLISH
below is SPUBLISH at its slot's master: `server.relay_channels`).
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
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import msgpack

from engines.base import Seat
from server.cancellation import cancel_and_wait, checkpoint
from server.errors import RequestError, RoomMoved
from server.relay_channels import open_channels
from server.relay_handles import RelayPeer, RemoteRoom
from server.relay_requests import LiveRoom, LocalConnection, RelayRequests, Rooms
from server.seats import Peer
from server.subscription import Subscription
from server.wire import encode

log = logging.getLogger("giants.relay")

# Room calls a relayed request may make, with their argument counts after (peer, req_id).
ADMITTED = {"join", "watch", "resume"}  # relayed requests that build a snapshot: admitted a few per turn
OPS = {"join": 3, "watch": 1, "resume": 1, "start": 1, "act": 2, "resync": 0, "leave": 1,
       "resign": 0, "abort": 0, "offer_draw": 0, "decline_draw": 0}
# Leaves of a dead node's members in flight at once (each a commit; the commit pipe
# batches them). One at a time, 1,000 members took 1,000 Redis round trips in turn.
FORGET_AT_ONCE = 64


def _pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True)


class Relay(RelayRequests):
    """One node's end of the relay; see the module docstring (the requesting side is
    `server.relay_requests`)."""

    def __init__(self, url: str, prefix: str, node_id: str, rooms: Rooms, timeout: float = 5.0,
                 cluster: bool = False) -> None:
        # Classic pub/sub on one Redis server; sharded pub/sub on a Redis Cluster
        # (server.relay_channels: where each inbox lives and how a message gets there).
        self.channels = open_channels(url, prefix, timeout, cluster)
        self.prefix = prefix
        self.node_id = node_id
        self.rooms = rooms
        self.timeout = timeout
        self.connections: dict[str, LocalConnection] = {}
        self.remotes: dict[str, RemoteRoom] = {}  # rooms owned elsewhere that local connections are in
        self.peers: dict[tuple[str, str], RelayPeer] = {}  # at the owner: (node, conn) -> peer
        self._init_requests()
        self._out: dict[str, list[list[Any]]] = {}
        self._out_scheduled = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sub: Subscription | None = None
        self.frames_relayed = 0
        self.requests_relayed = 0
        # Set by the server: waits for a place among the few admitted per turn of the loop
        # (server.admission); relayed joins, watches and resumes take one, as handshakes do.
        self.admit: Callable[[], Awaitable[None]] | None = None

    def channel(self, node_id: str) -> str:
        """The node's inbox channel."""
        return self.channels.inbox(node_id)

    @property
    def broadcast(self) -> str:
        return self.channels.broadcast

    # -- life cycle -------------------------------------------------------------------

    async def start(self) -> None:
        await self.channels.start()
        self._sub = await self._subscribe()
        self._spawn(self._keep_subscribed())

    async def stop(self) -> None:
        await self._drain()
        await cancel_and_wait(list(self._tasks))
        if self._sub is not None:
            self._sub.close()
        self.channels.close()
        await self.channels.aclose()

    async def _drain(self, timeout: float = 2.0) -> None:
        """Wait until queued frames left and Redis took them (shutdown: members elsewhere
        get their last frames)."""
        end = time.monotonic() + timeout
        while (self._out or self.channels.in_flight) and time.monotonic() < end:
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
        post, inbox = self.channels.post, self.channels.inbox
        for node_id, items in out.items():
            post(inbox(node_id), _pack({"t": "out", "i": items}))

    async def _publish(self, channel: str, data: dict[str, Any]) -> int:
        return int(await self.channels.call(channel, _pack(data)))

    # -- receiving --------------------------------------------------------------------

    async def _subscribe(self, fresh: bool = False) -> Subscription:
        return await self.channels.subscribe(self.channel(self.node_id), self._received, self.timeout, fresh)

    def _received(self, data: bytes) -> None:
        try:
            self._dispatch(msgpack.unpackb(data, raw=False))
        except Exception:
            log.exception("relay: bad message")

    async def _keep_subscribed(self) -> None:
        """Subscribe again whenever the subscription's connection breaks (or, on a
        cluster, its inbox's slot moved: then at the slot's new owner)."""
        while True:
            checkpoint()
            assert self._sub is not None
            exc = await self._sub.lost
            log.warning("relay: subscription lost (%s); resubscribing", exc)
            while True:
                await asyncio.sleep(0.2)
                try:
                    self._sub = await self._subscribe(fresh=True)
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
                    self._answered(item)
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
        if op in ADMITTED and self.admit is not None:
            await self.admit()  # a storm relayed here (hand-overs that timed out) is spread over turns
        room = self.rooms.find(msg["room"])
        if room is None or room.closing or op not in OPS:
            self.queue(node_id, ["m", rid])
            return
        peer = self.peer(node_id, msg["conn"], msg.get("name", "anonymous"), msg.get("p", 1))
        args = msg["a"]
        if "mem" in msg and op not in ADMITTED and not room.member_seat(peer)[0]:
            # A member of the room at its previous owner, vouched for by its node, whose
            # re-attachment here has not come yet (that node heard of the new owner after
            # this request was sent on): attach it now, as the re-attachment would.
            peer.rooms.add(room.id)
            await room.reattach([(peer, msg["mem"][0])])
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
        reconnect somewhere and resume), so seats stop showing them connected.

        Each leave is a commit; FORGET_AT_ONCE of them are in flight together, so the
        commit pipe writes them in a few Redis batches instead of one round trip each
        (a room's own lock orders the leaves of one room)."""
        leaves: list[tuple[LiveRoom, RelayPeer]] = []
        for key in [k for k in self.peers if k[0] in node_ids]:
            peer = self.peers.pop(key)
            for room_id in list(peer.rooms):
                room = self.rooms.find(room_id)
                if room is not None:
                    leaves.append((room, peer))
            peer.rooms.clear()
        leaves.reverse()  # taken from the end: in the order found

        async def leave_some() -> None:
            while leaves:
                room, peer = leaves.pop()
                with contextlib.suppress(Exception):
                    await room.leave(peer, False)

        await asyncio.gather(*(leave_some() for _ in range(min(FORGET_AT_ONCE, len(leaves)))))

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

