"""One WebSocket connection: charge, decode, dispatch, reply, bounded output.

Each inbound frame is first charged to the connection's frame budget (a token bucket,
before anything is decoded: garbage costs tokens too), then size-checked, decoded and
validated (server.wire), then dispatched through the router (server.router) to the
lobby or a room: a move (`act`) straight from `handle`, every other request through its
handler (server.connection_requests: `ConnectionRequests`, a mixin of `Connection`).
Every request gets exactly one reply (`ok` or `error` with a stable code); a bad frame
never closes the connection. The connection is closed with 1008 when it floods (keeps
sending far beyond its rate), when more bytes are queued to it than `max_write_buffer`
(it does not read), or when it sends no `hello` within `hello_timeout`; websockets
closes it with 1009 above the hard frame size cap.

Scheduling: the reader yields to the event loop after every frame, so frames that
arrived in one TCP read are not handled back to back ahead of other connections.

Reading: through an `Inbox` (server.reading), websockets' own reading for a
connection the inbox cannot take.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import struct
from collections.abc import Coroutine
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol import messages as msgs
from protocol.codec import act_frame, recover_id, unpack_map, validate_client
from protocol.packer import ok_version, packb
from server.config import Config
from server.connection_requests import ConnectionRequests
from server.errors import RequestError
from server.limits import ACCEPT, AddressQuotas, FrameBudget, GuessLimiter
from server.metrics import Metrics
from server.reading import Inbox
from server.router import RoomHandle, Router
from server.shared_quotas import SharedQuotas
from server.wire import (
    PROTOCOL_VERSION,
    ProtocolError,
    encode,
    frame_version,
)

log = logging.getLogger("giants.connection")

FRAME_OVERHEAD = 10  # WebSocket header bytes of a server frame, at most
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
    # any, a flush is promised (`schedule_flush` made sure, or a room holds the flushes
    # over a move and writes them at its end: server.seats.Output), so a connection may
    # join it with `append` alone.
    dirty: list[Connection]
    flush_promised: bool  # a flush is promised (Host.dirty): joining `dirty` is enough

    def schedule_flush(self, conn: Connection) -> None:
        """Flush `conn` once the current callback is done (it joins `dirty`)."""

    def flush_now(self) -> None: ...


class Connection(ConnectionRequests):
    """Per-connection state: session, name, the rooms it is in, its budgets; the
    request handlers are `ConnectionRequests`' (server.connection_requests)."""

    server: Host  # all of it; the handlers see their part (RequestHost)
    advised: str | None = None  # the node a `moved` advisory last named (server.moved; set then)

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
        # The handshake (Origin included) is over and nothing reads its headers again:
        # free them, about 3 KiB a connection.
        if ws.request is not None:
            ws.request.headers = Headers()
        if ws.response is not None:
            ws.response.headers = Headers()
        # Bytes framed into the protocol's buffer since the last flush; not 0: frames
        # are queued and the connection is among the server's `dirty` (a flush is due).
        self.queued = 0
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
        was = self.queued
        queued = was + length + FRAME_OVERHEAD
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
        if not was:  # its first frame since its last flush: have it flushed
            server = self.server
            if server.flush_promised:  # scheduled already, or a room's hold writes it (Host.dirty): no call
                server.dirty.append(self)
            else:
                server.schedule_flush(self)

    def flush(self) -> None:
        """Write everything `push` queued, in one write."""
        self.queued = 0
        ws = self.ws
        protocol = ws.protocol
        chunks, protocol.writes = protocol.writes, []  # `protocol.data_to_send()` without its call
        if len(chunks) == 1 and chunks[0]:  # one frame (most connections' turn): no scan, no join
            ws.transport.write(chunks[0])
        elif b"" not in chunks:  # `all(chunks)` without its call and iterator
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
                    handed = await waiter
                finally:
                    inbox.waiter = None
                if handed is None or self.dropped is not None:  # queued (or the end): look again
                    continue
                frame = handed  # a binary message, handed over rather than queued
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
                try:  # a subscript, not `get` (a method call): a room not joined raises
                    room = self.rooms[room_id]
                except KeyError:
                    room = await self._my_room(room_id)
                await room.act(self, req_id, action, version)
                return
            msg = validate_client(unpack_map(frame, self.config.max_frame))  # type: ignore[arg-type]
            req_id = msg.id
            if self.server.shutting_down:
                raise RequestError("shutting_down", "the server is shutting down")
            if type(msg) is msgs.Act and self.session is not None:  # a move: no handler's coroutine
                try:
                    room = self.rooms[msg.room]
                except KeyError:
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
