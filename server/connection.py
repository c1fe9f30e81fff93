"""One WebSocket connection: charge, decode, dispatch, reply, bounded output.

Each inbound frame is first charged to the connection's frame budget (a token bucket,
before anything is decoded: garbage costs tokens too), then size-checked, decoded and
validated (server.wire), then dispatched through the router (server.router) to the
lobby or a room. Every request gets exactly one reply (`ok` or `error` with a stable
code); a bad frame never closes the connection. The connection is closed with 1008
when it floods (keeps sending far beyond its rate), when more bytes are queued to it
than `max_write_buffer` (it does not read), or when it sends no `hello` within
`hello_timeout`; websockets closes it with 1009 above the hard frame size cap.

Scheduling: the reader yields to the event loop after every frame, so frames that
arrived in one TCP read are not handled back to back ahead of other connections.

Reading: through an `Inbox` (server.reading), websockets' own reading for a
connection the inbox cannot take.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import struct
import time
from collections.abc import Coroutine
from typing import Any, ClassVar, Protocol, TypeVar

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from engines import registry
from engines.bots import registry as bot_registry
from protocol import messages as msgs
from protocol.codec import act_frame, recover_id, unpack_map, validate_client
from protocol.packer import ok_version, packb
from server import replays
from server.config import Config
from server.errors import RequestError, RoomMoved
from server.limits import ACCEPT, AddressQuotas, FrameBudget, GuessLimiter
from server.metrics import Metrics
from server.reading import Inbox
from server.router import RoomHandle, Router
from server.shared_quotas import SharedQuotas
from server.wire import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    ProtocolError,
    encode,
    frame_version,
)

log = logging.getLogger("giants.connection")

T = TypeVar("T")

SERVER_NAME = "giants-table/0.1"
FRAME_OVERHEAD = 10  # WebSocket header bytes of a server frame, at most
# Requests that cost far more than a frame spend more tokens (a frame spends one):
# a listing page per room it may return, a replay for reading a whole action log.
LIST_TOKENS_PER_ROOM = 0.1
REPLAY_TOKENS = 5.0
REFUSED_ID_MAX = 512  # a refused frame is unpacked for its id only when this small
DROP_CLOSE_TIMEOUT = 2.0  # seconds a dropped client gets to answer the close frame


def binary_header(size: int) -> bytes:
    """The header of an unmasked, final binary WebSocket frame of `size` bytes (RFC 6455 5.2)."""
    if size < 126:
        return bytes((0x82, size))
    if size < 65536:
        return b"\x82\x7e" + size.to_bytes(2, "big")
    return b"\x82\x7f" + size.to_bytes(8, "big")


# binary_header's bytes without its call: a table under 1 KiB (patches, legal lists:
# most frames; ~40 KB for the process), a packer up to 64 KiB.
_SHORT_HEADERS = [binary_header(size) for size in range(1024)]
_MEDIUM_HEADER = struct.Struct(">BBH").pack
_OPEN = State.OPEN  # an enum member read from its class costs a lookup through the metaclass


def _frames_waiting(ws: ServerConnection) -> bool:
    """Whether `ws` already holds received frames not yet read (True if unknown)."""
    frames = getattr(getattr(ws, "recv_messages", None), "frames", None)
    return frames is None or len(frames) > 0


@functools.cache
def bundled_bots() -> list[dict[str, Any]]:
    """The bot names `create_room` accepts, with the games each plays (None = all)."""
    out: list[dict[str, Any]] = []
    for name in bot_registry.bundled_names():
        games = bot_registry.bundled_class(name).games
        out.append({"name": name, "games": sorted(games) if games is not None else None})
    return out


class Host(Protocol):
    """What a connection needs from the server that accepted it (server.app wires it)."""

    config: Config
    metrics: Metrics
    router: Router
    quotas: AddressQuotas
    shared_quotas: SharedQuotas | None  # the per-address quotas across nodes
    guesses: GuessLimiter  # wrong room passwords per address

    @property
    def shutting_down(self) -> bool: ...

    def limit_closed(self, reason: str) -> None: ...

    def counts_against_quota(self, room_id: str) -> bool: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None: ...

    def rooms_changed(self, conn: Connection) -> None:
        """`conn` joined, watched, resumed or left a room (server.moved may advise it)."""

    # Connections with frames queued, in the order they were scheduled; while it holds
    # any, a flush is scheduled (`schedule_flush` made sure), so a connection may join
    # it with `append` alone.
    dirty: list[Connection]

    def schedule_flush(self, conn: Connection) -> None:
        """Flush `conn` once the current callback is done (it joins `dirty`)."""

    def flush_now(self) -> None: ...


class Connection:
    """Per-connection state: session, name, the rooms it is in, its budgets."""

    advised: str | None = None  # the node a `moved` advisory last named (server.moved; set then)

    # Request type -> handler method name: one table for the class, not a dict of
    # bound methods per connection (about 1 KiB each). `hello` and `act` (every move)
    # are handled in `handle` itself.
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

    def __init__(self, ws: ServerConnection, server: Host, address: str = "") -> None:
        self.ws = ws
        self.server = server
        self.config = server.config
        self.metrics = server.metrics
        self.router = server.router
        self.id = secrets.token_hex(8)  # names this connection to the relay (other nodes)
        self.address = address  # the quota key of the client's address (server.limits)
        self.session: str | None = None
        self.name = "anonymous"
        self.version = PROTOCOL_VERSION  # what `hello` chose
        self.protocol = frame_version(PROTOCOL_VERSION)  # how its snapshots and patches are encoded
        self.rooms: dict[str, RoomHandle] = {}
        self.budget = FrameBudget(self.config.rate, self.config.burst, self.config.flood_refusals)
        self.corked = False  # frames queued, flush scheduled
        # The handshake (Origin included) is over and nothing reads its headers again:
        # free them, about 3 KiB a connection.
        if ws.request is not None:
            ws.request.headers = Headers()
        if ws.response is not None:
            ws.response.headers = Headers()
        self.queued = 0  # bytes framed into the protocol's buffer since the last flush
        # No extension was negotiated (and none will be: the handshake is over): `push`
        # frames its frames itself. Read once, not on every frame.
        self.plain_frames = not getattr(getattr(ws, "protocol", None), "extensions", None)
        self.dropped: str | None = None  # why the server is closing this connection
        self.drop_message = ""

    # -- output ---------------------------------------------------------------------

    def push(self, frame: bytes) -> None:
        """Queue a frame without waiting: a slow client never holds up a room.

        Frames are framed into the connection's buffer now and written when the
        current callback ends (`flush`), so a reply and the patches that follow it
        leave in one write: one system call instead of one per frame. Bytes not yet
        written (framed here or in the transport's buffer) count against
        `max_write_buffer`; a client over it is closed (1008) and gets nothing more.
        """
        ws = self.ws
        protocol = ws.protocol
        # `protocol.state` is a property (a call): its attribute read directly
        if self.dropped is not None or protocol._state is not _OPEN or ws.send_in_progress is not None:
            return
        length = len(frame)
        queued = self.queued + length + FRAME_OVERHEAD
        if ws.transport.get_write_buffer_size() + queued > self.config.max_write_buffer:
            self.drop("slow", "too slow: not reading its messages")
            return
        if self.plain_frames:
            # What send_binary would append, framed here: a server frame is unmasked
            # and no extension is ever negotiated (compression=None), so it is a
            # header and the payload. Same list, so order with pongs and close holds.
            # No fragmented message is under way either (websockets' own check): only
            # `ws.send` sends fragments, with `send_in_progress` set until the last one
            # (or the connection failed, and is not open), and the server never does.
            if length < 1024:
                protocol.writes.append(_SHORT_HEADERS[length] + frame)
            elif length < 65536:
                protocol.writes.append(_MEDIUM_HEADER(0x82, 126, length) + frame)
            else:
                protocol.writes.append(binary_header(length) + frame)
        else:
            protocol.send_binary(frame)
        self.queued = queued
        self.metrics.frames_out += 1
        if not self.corked:
            self.corked = True
            server = self.server
            dirty = server.dirty
            if dirty:  # a flush is scheduled already (Host.dirty): no call (the 2nd and 3rd of a move's)
                dirty.append(self)
            else:
                server.schedule_flush(self)

    def flush(self) -> None:
        """Write everything `push` queued, in one write."""
        self.corked = False
        self.queued = 0
        ws = self.ws
        protocol = ws.protocol
        chunks, protocol.writes = protocol.writes, []  # `protocol.data_to_send()` without its call
        if len(chunks) == 1 and chunks[0]:  # one frame (most connections' turn): no scan, no join
            ws.transport.write(chunks[0])
        elif all(chunks):
            if chunks:
                ws.transport.write(b"".join(chunks))
        else:  # an end-of-stream marker is among them: let websockets handle it
            for chunk in chunks:
                if chunk:
                    ws.transport.write(chunk)
                elif ws.transport.can_write_eof():
                    ws.transport.write_eof()
                else:
                    ws.transport.close()

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.push(packb({"type": "ok", "id": req_id, "data": data}))  # `encode` of a dict, without its call

    def send_ok_version(self, req_id: Any, version: int) -> None:
        self.push(ok_version(req_id, version))  # a move's reply, from constant pieces

    def send_error(self, req_id: Any, code: str, message: str, detail: dict[str, Any] | None = None) -> None:
        self.metrics.errors[code] += 1
        msg: dict[str, Any] = {"type": "error", "id": req_id, "code": code, "message": message}
        if detail:
            msg["detail"] = detail
        self.push(encode(msg))

    def drop(self, reason: str, message: str) -> None:
        """Close the connection with 1008: it stops being read and gets nothing more.

        `reason` is the short label counted in /metrics (flood, slow, hello_timeout).
        Frames queued before are written first; a client that never reads them is cut
        off after websockets' close timeout.
        """
        if self.dropped is not None:
            return
        self.dropped = reason
        self.drop_message = message
        self.ws.close_timeout = DROP_CLOSE_TIMEOUT  # no need to wait long on a hostile peer
        self.server.limit_closed(reason)
        log.info("closing %s (%s): %s", self.address or "a client", reason, message)
        self.server.spawn(self.ws.close(1008, message))

    # -- input ----------------------------------------------------------------------

    async def run(self) -> None:
        """Serve the connection until it closes, then detach it from its rooms."""
        loop = asyncio.get_running_loop()
        hello_timer = loop.call_later(self.config.hello_timeout, self._hello_deadline)
        try:
            inbox = Inbox.install(self.ws)
            if inbox is None:
                await self._read_all()
            else:
                await self._read_inbox(inbox)
        except ConnectionClosed:
            pass
        finally:
            hello_timer.cancel()
            for room in list(self.rooms.values()):
                try:
                    await room.leave(self, explicit=False)
                except Exception:
                    log.exception("detaching from room %s failed", room.id)
            self.rooms.clear()
            if self.dropped is not None:
                # Close before returning: websockets closes with 1000 when the handler
                # returns first. A client that does not read is cut off after the
                # close timeout.
                with contextlib.suppress(Exception):
                    await self.ws.close(1008, self.drop_message)

    async def _read_inbox(self, inbox: Inbox) -> None:
        """Handle the frames `inbox` receives, in order, until the connection closes."""
        items = inbox.items
        flush_now = self.server.flush_now
        create_future = self.ws.loop.create_future
        while self.dropped is None:
            if items and type(items[0]) is bytes:  # a binary message: most frames
                frame: bytes | str = items.popleft()  # type: ignore[assignment]
                if inbox.paused:
                    inbox.taken()
            elif not items and not inbox.closed:
                # Inbox.wait without its coroutine: until an item arrives or the stream ends
                inbox.waiter = waiter = create_future()
                try:
                    await waiter
                finally:
                    inbox.waiter = None
                continue
            else:
                frame = await inbox.receive()
                if self.dropped is not None:
                    break
            await self.handle(frame)
            flush_now()
            # Let other connections' frames, timers and flushes run before our next
            # frame: frames that came in one TCP read are otherwise all handled back to
            # back. With no frame waiting, waiting for the next one yields anyway, and
            # an extra turn of the loop would only cost CPU.
            if items:
                await asyncio.sleep(0)

    async def _read_all(self) -> None:
        """`_read_inbox` through websockets' own reading (a connection the inbox cannot take)."""
        async for frame in self.ws:
            if self.dropped is not None:
                break
            await self.handle(frame)
            self.server.flush_now()
            if _frames_waiting(self.ws):
                await asyncio.sleep(0)
            if self.dropped is not None:
                break

    def _hello_deadline(self) -> None:
        if self.session is None:
            self.drop("hello_timeout", f"no hello within {self.config.hello_timeout:g} s")

    async def handle(self, frame: bytes | str) -> None:
        """Charge, decode, validate and dispatch one frame; exactly one reply."""
        self.metrics.frames_in += 1
        verdict = self.budget.charge()
        if verdict != ACCEPT:
            self._refuse(frame, verdict)
            return
        req_id: Any = None
        try:
            # `rooms` holds valid room ids only (each came in a validated request)
            act = act_frame(frame, self.config.max_frame, self.rooms)  # type: ignore[arg-type]
            if act is not None and self.session is not None:
                # A move, as `validate_client` would return it, without its model
                # (anything else, an invalid act included, gets its model or error below).
                req_id, room_id, action, version = act
                if self.server.shutting_down:
                    raise RequestError("shutting_down", "the server is shutting down")
                room = self.rooms.get(room_id)
                if room is None:
                    room = await self._my_room(room_id)
                await room.act(self, req_id, action, version)
                return
            msg = validate_client(unpack_map(frame, self.config.max_frame))  # type: ignore[arg-type]
            req_id = msg.id
            if self.server.shutting_down:
                raise RequestError("shutting_down", "the server is shutting down")
            if type(msg) is msgs.Act and self.session is not None:  # a move: no handler's coroutine
                room = self.rooms.get(msg.room)
                if room is None:
                    room = await self._my_room(msg.room)
                await room.act(self, req_id, msg.action, msg.version)
                return
            if type(msg) is msgs.Hello:  # not isinstance: pydantic's metaclass is an ABC's
                self.on_hello(req_id, msg)
                return
            if self.session is None:
                raise RequestError("hello_required", "send hello first")
            await getattr(self, self.HANDLERS[msg.type])(req_id, msg)
        except ProtocolError as exc:
            self.send_error(exc.id, exc.code.value, exc.message, exc.detail)
        except RequestError as exc:
            self.send_error(req_id, exc.code, exc.message, exc.detail)
        except ConnectionClosed:
            raise
        except Exception:
            log.exception("request %r failed", req_id)
            self.send_error(req_id, "internal_error", "the server failed on this request; it was logged")

    def _refuse(self, frame: bytes | str, verdict: int) -> None:
        """A frame over the rate: `rate_limited` (its id read without validating
        anything), or the 1008 close once the refusals show a flood."""
        if verdict == FrameBudget.FLOOD:
            self.drop("flood", "flooding: too many requests")
            return
        req_id = None
        if isinstance(frame, bytes) and len(frame) <= REFUSED_ID_MAX:
            with contextlib.suppress(ProtocolError):
                req_id = recover_id(unpack_map(frame, self.config.max_frame))
        self.send_error(req_id, "rate_limited", f"more than {self.config.rate:g} requests per second; slow down")

    # -- handlers -------------------------------------------------------------------

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
