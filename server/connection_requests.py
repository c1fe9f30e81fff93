"""A connection's requests (`ConnectionRequests`, a mixin of `server.connection.Connection`):
`hello`, the lobby's (list, create), a room's membership (join, watch, resume, leave,
start), games ended early, resync, replay, ping.

`Connection.handle` charges, decodes and validates a frame, then answers `hello` with
`on_hello` and every other request but a move through `HANDLERS`; a move (`act`) goes
from `handle` straight to its room and never comes here. Each handler answers its
request exactly once (`send_ok`, or through the room it calls) or raises RequestError,
which `handle` turns into the one `error` reply.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from engines import registry
from engines.bots import registry as bot_registry
from protocol import messages as msgs
from server import replays
from server.errors import RequestError, RoomMoved
from server.limits import AddressQuotas, FrameBudget, GuessLimiter
from server.router import RoomHandle, Router
from server.shared_quotas import SharedQuotas
from server.wire import PROTOCOL_VERSION, SUPPORTED_VERSIONS, frame_version

T = TypeVar("T")

SERVER_NAME = "giants-table/0.1"

# Requests that cost far more than a frame spend more tokens (a frame spends one):
# a listing page per room it may return, a replay for reading a whole action log.
LIST_TOKENS_PER_ROOM = 0.1
REPLAY_TOKENS = 5.0


@functools.cache
def bundled_bots() -> list[dict[str, Any]]:
    """The bot names `create_room` accepts, with the games each plays (None = all)."""
    out: list[dict[str, Any]] = []
    for name in bot_registry.bundled_names():
        games = bot_registry.bundled_class(name).games
        out.append({"name": name, "games": sorted(games) if games is not None else None})
    return out


class RequestHost(Protocol):
    """What the requests need from the server (a part of `server.connection.Host`)."""

    quotas: AddressQuotas
    shared_quotas: SharedQuotas | None  # the per-address quotas across nodes
    guesses: GuessLimiter  # wrong room passwords per address

    def counts_against_quota(self, room_id: str) -> bool: ...

    def rooms_changed(self, conn: Any) -> None:
        """`conn` (the Connection: no import of server.connection here) joined, watched,
        resumed or left a room (server.moved may advise it)."""


class ConnectionRequests:
    """Mixin for Connection: the request handlers. Connection supplies the attributes
    declared here, and the output (`push`, `send_ok`, `send_ok_version`)."""

    server: RequestHost
    router: Router
    address: str  # the quota key of the client's address (server.limits)
    session: str | None
    name: str
    version: int  # what `hello` chose
    protocol: int  # how its snapshots and patches are encoded
    rooms: dict[str, RoomHandle]
    budget: FrameBudget

    if TYPE_CHECKING:  # provided by Connection; no import of server.connection here
        def push(self, frame: bytes) -> None: ...
        def send_ok(self, req_id: Any, data: dict[str, Any]) -> None: ...
        def send_ok_version(self, req_id: Any, version: int) -> None: ...

    # Request type -> handler method name: one table for the class, not a dict of
    # bound methods per connection (about 1 KiB each). `hello` and `act` (every move)
    # are handled in `Connection.handle` itself.
    HANDLERS: ClassVar[dict[str, str]] = {
        "list_rooms": "on_list_rooms",
        "create_room": "on_create_room",
        "join": "on_join",
        "watch": "on_watch",
        "resume": "on_resume",
        "leave": "on_leave",
        "start": "on_start",
        "resync": "on_resync",
        "replay": "on_replay",
        "resign": "on_ending",
        "abort": "on_ending",
        "offer_draw": "on_ending",
        "decline_draw": "on_ending",
        "ping": "on_ping",
    }

    def on_hello(self, req_id: Any, m: msgs.Hello) -> None:
        if m.protocol not in SUPPORTED_VERSIONS:
            raise RequestError(
                "protocol_mismatch",
                f"this server speaks protocol {' or '.join(map(str, SUPPORTED_VERSIONS))}, you sent {m.protocol}",
                {"server": PROTOCOL_VERSION, "supported": list(SUPPORTED_VERSIONS)},
            )
        if self.rooms and m.protocol != self.version:
            # Frames already sent in one encoding cannot be read on in another.
            raise RequestError(
                "protocol_mismatch",
                f"this connection speaks protocol {self.version} in its rooms; leave them first",
                {"server": PROTOCOL_VERSION, "supported": list(SUPPORTED_VERSIONS)},
            )
        self.version, self.protocol = m.protocol, frame_version(m.protocol)
        if m.name:
            self.name = m.name
        self.session = self.session or secrets.token_urlsafe(12)
        games = [info.describe() for entry in registry.all_games() for info in entry.infos]
        self.send_ok(
            req_id,
            {
                "session": self.session,
                "protocol": self.version,
                "server": SERVER_NAME,
                "games": games,
                "bots": bundled_bots(),
                # The server's clock (unix seconds) so clients can show deadlines,
                # which are server unix times, without trusting their own clock.
                "time": time.time(),
            },
        )

    async def on_ping(self, req_id: Any, m: msgs.Ping) -> None:
        self.send_ok(req_id, {})

    def _charge_more(self, tokens: float) -> None:
        if not self.budget.charge_more(tokens):
            raise RequestError(
                "rate_limited", f"this request costs {tokens + 1:g} requests of your rate; slow down"
            )

    async def on_list_rooms(self, req_id: Any, m: msgs.ListRooms) -> None:
        limit = m.limit or msgs.DEFAULT_LIST_LIMIT
        self._charge_more(limit * LIST_TOKENS_PER_ROOM)
        rooms, cursor = await self.router.list(m.game, m.include_finished, limit, m.cursor)
        self.send_ok(req_id, {"rooms": rooms, "next": cursor})

    async def on_create_room(self, req_id: Any, m: msgs.CreateRoom) -> None:
        quotas = self.server.quotas
        # Reserved before the first await, so concurrent creates cannot overshoot.
        ticket = quotas.reserve_room(self.address, self.server.counts_against_quota)
        shared = self.server.shared_quotas
        if ticket is not None and shared is not None and quotas.max_rooms:
            # Within this node's count: now the address's rooms on every live node.
            held = quotas.rooms_of(self.address, self.server.counts_against_quota)
            if await shared.admit_room(self.address, held) is False:
                quotas.release_room(self.address, ticket)
                ticket = None
        if ticket is None:
            raise RequestError(
                "quota_exceeded",
                f"your address already has {quotas.max_rooms} open rooms; finish or leave one first",
                {"limit": quotas.max_rooms},
            )
        try:
            room = await self.router.create(m)
        except BaseException:
            quotas.release_room(self.address, ticket)
            raise
        quotas.room_created(self.address, ticket, room.id)
        # An all-bot room starts playing on its own, before the one reply: if the start
        # cannot be stored the create answers the error (a retry with the same key
        # finds the room and starts it).
        await room.autostart_if_full()
        self.send_ok(req_id, {"room": room.id, "summary": room.summary()})

    async def _guessing(self, password: str | None, call: Coroutine[Any, Any, T]) -> T:
        """Run a request that may check a room password, charging a wrong one to this
        client's address (too_many_guesses once it missed too often)."""
        key = f"addr:{self.address}"
        if password is not None:
            try:
                self.server.guesses.check(key)
            except RequestError:
                call.close()
                raise
        try:
            return await call
        except RequestError as exc:
            if exc.code == "bad_password" and password is not None:
                self.server.guesses.failed(key)
            raise

    async def on_join(self, req_id: Any, m: msgs.Join) -> None:
        try:
            await self._join(req_id, m)
        except RoomMoved:
            # This node found the room owned by another (it stalled past its lease)
            # and stored nothing: join it where it is now (the router finds it there).
            await self._join(req_id, m)
        self.server.rooms_changed(self)

    async def _join(self, req_id: Any, m: msgs.Join) -> None:
        room = await self.router.room(m.room)
        self.rooms[room.id] = room
        try:
            await self._guessing(m.password, room.join(self, req_id, m.seat, m.password, m.key))
        finally:
            if not room.has_member(self):
                self.rooms.pop(room.id, None)

    async def on_watch(self, req_id: Any, m: msgs.Watch) -> None:
        room = await self.router.room(m.room)
        await self._guessing(m.password, room.watch(self, req_id, m.password))
        self.rooms[room.id] = room
        self.server.rooms_changed(self)

    async def on_resume(self, req_id: Any, m: msgs.Resume) -> None:
        room = await self.router.room(m.room)
        try:
            await room.resume(self, req_id, m.token)
        except RoomMoved:  # as in on_join: resume it where the room is now
            room = await self.router.room(m.room)
            await room.resume(self, req_id, m.token)
        self.rooms[room.id] = room
        self.server.rooms_changed(self)

    async def _my_room(self, room_id: str) -> RoomHandle:
        room = self.rooms.get(room_id)
        if room is None:
            await self.router.room(room_id)  # no_such_room beats not_in_room
            raise RequestError("not_in_room", f"you are not in room {room_id}; join, watch or resume first")
        return room

    async def on_leave(self, req_id: Any, m: msgs.Leave) -> None:
        room = await self._my_room(m.room)
        self.rooms.pop(room.id, None)
        await room.leave(self, explicit=True)
        self.send_ok(req_id, {})
        if self.rooms:
            self.server.rooms_changed(self)

    async def on_start(self, req_id: Any, m: msgs.Start) -> None:
        await (await self._my_room(m.room)).start(self, req_id, m.key)

    async def on_ending(self, req_id: Any, m: msgs.Resign | msgs.Abort | msgs.OfferDraw | msgs.DeclineDraw) -> None:
        # resign, abort, offer_draw, decline_draw: Room methods of the same names (server.endings)
        await getattr(await self._my_room(m.room), m.type)(self, req_id)

    async def on_resync(self, req_id: Any, m: msgs.Resync) -> None:
        await (await self._my_room(m.room)).resync(self, req_id)

    async def on_replay(self, req_id: Any, m: msgs.Replay) -> None:
        self._charge_more(REPLAY_TOKENS)
        data = await self._guessing(m.password, self.router.replay(m.room, m.password))
        if m.positions:
            data["positions"] = await replays.positions(m.room, data)
        self.send_ok(req_id, data)
