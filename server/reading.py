"""What a connection received and has not read yet: the `Inbox`.

An `Inbox` takes the place of websockets' Assembler (and of its transport's
protocol): whole, final, masked binary frames within the size limit that arrive while
websockets' parser stands between frames are unmasked straight from the bytes read and
handed to the connection's task; everything else (other opcodes, fragments, text, a
frame cut by the read, a limit crossed, closing) goes through websockets' own
`data_received` and parser, and its data frames into the same queue, in order. Reading
pauses while more than `max_queue` frames wait, as websockets' connection does.
"""

from __future__ import annotations

import asyncio
import collections

from websockets.asyncio.messages import MAX_FRAGMENTS
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import TooManyFragments
from websockets.frames import BINARY, TEXT, CloseCode, Frame, apply_mask
from websockets.protocol import Protocol as WsProtocol
from websockets.protocol import State
from websockets.streams import StreamReader

_OPEN = State.OPEN  # an enum member read from its class costs a lookup through the metaclass

# Where websockets' parser waits between two frames: in Protocol.parse, in at_eof.
_AT_EOF = StreamReader.at_eof.__code__
_PARSE = WsProtocol.parse.__code__


class Inbox(asyncio.Protocol):
    """The frames a connection received and has not read yet, in order.

    Installed in place of websockets' Assembler (`ws.recv_messages`: websockets puts
    the data frames its parser produced here, and closes it when the connection is
    lost) and of `ws` as its transport's protocol (`data_received` comes here first;
    every other callback is passed on to `ws`). Items are a message's bytes or, for
    what websockets parsed, its `Frame`s (text and fragmented messages are assembled
    and decoded when read, as the Assembler does).
    """

    __slots__ = ("between", "closed", "fast", "high", "items", "limit", "low", "paused", "protocol", "transport",
                 "waiter", "ws")

    def __init__(self, ws: ServerConnection, high: int | None, low: int | None) -> None:
        self.ws = ws
        self.protocol = protocol = ws.protocol
        self.transport = ws.transport
        self.items: collections.deque[bytes | Frame] = collections.deque()
        # The connection's task waiting for an item: its result is a binary message
        # handed over (`data_received`), or None when one was queued or the stream ended.
        self.waiter: asyncio.Future[bytes | None] | None = None
        self.closed = False
        if high is not None and low is None:
            low = high // 4
        self.high, self.low = high, low
        self.paused = False
        # Whether websockets' parser waits for the first byte of a frame, none of a
        # message read yet: only then are frames parsed here.
        self.between = False
        # Frames larger than this are left to websockets (PayloadTooBig: 1009).
        limit = protocol.max_message_size
        if protocol.max_fragment_size is not None:
            limit = protocol.max_fragment_size if limit is None else min(limit, protocol.max_fragment_size)
        self.limit = limit if limit is not None else 1 << 62
        # No frame of an extension or of a debug log is ever parsed here.
        self.fast = not protocol.extensions and not protocol.debug

    @classmethod
    def install(cls, ws: ServerConnection) -> Inbox | None:
        """Take over `ws`'s reading (None: not websockets' connection as known here)."""
        old = getattr(ws, "recv_messages", None)
        transport = getattr(ws, "transport", None)
        frames = getattr(getattr(old, "frames", None), "queue", None)
        if (old is None or transport is None or type(frames) is not collections.deque
                or getattr(old, "get_in_progress", True) or not hasattr(transport, "set_protocol")
                or not hasattr(ws.protocol, "parser")):
            return None
        inbox = cls(ws, old.high, old.low)
        inbox.items.extend(frames)  # frames that came with or right after the handshake
        frames.clear()
        inbox.paused = old.paused
        inbox.closed = old.closed
        ws.recv_messages = inbox  # type: ignore[assignment]
        if not inbox.closed:
            transport.set_protocol(inbox)
        inbox.between = inbox.fast and inbox.at_frame_start()
        return inbox

    def at_frame_start(self) -> bool:
        """Whether websockets' parser waits for the next frame (`Protocol.parse` in
        `at_eof`), nothing of it read, no fragmented message under way."""
        protocol = self.protocol
        outer, inner = None, getattr(protocol, "parser", None)
        while (down := getattr(inner, "gi_yieldfrom", None)) is not None:
            outer, inner = inner, down
        return (getattr(inner, "gi_code", None) is _AT_EOF and getattr(outer, "gi_code", None) is _PARSE
                and not protocol.reader.buffer and protocol.current_size is None)

    # -- what websockets' connection calls (the Assembler's part) -------------------

    def put(self, frame: Frame) -> None:
        if self.closed:
            raise EOFError("stream of frames ended")
        if frame.fin and frame.opcode is BINARY:
            self.items.append(bytes(frame.data))
        else:
            self.items.append(frame)
        self._arrived()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- what the transport calls (the protocol's part) -----------------------------

    def data_received(self, data: bytes) -> None:
        if self.between and self.protocol._state is _OPEN:  # `state` is a property (a call)
            # Whole final binary frames, masked, within the limit: what Frame.parse and
            # recv_frame would make of them, without the parser's generators.
            size = len(data)
            items = self.items
            if 6 <= size < 132 and data[1] == size + 122 and data[0] == 0x82 and size - 6 <= self.limit:
                # One whole frame of under 126 bytes, the whole read (most reads): the
                # loop below's first turn, and its end, without its sums and tests.
                # (data[1]: the mask bit and a 7-bit length that ends the frame at `size`.)
                waiter = self.waiter
                if waiter is not None and not waiter.done():
                    # The connection's task waits, so nothing is queued (every item queued
                    # wakes it): the frame is handed to it, not queued and taken back.
                    waiter.set_result(apply_mask(data[6:], data[2:6]))
                    return
                items.append(apply_mask(data[6:], data[2:6]))
                if self.high is not None and len(items) > self.high and not self.paused:
                    self.paused = True
                    self.transport.pause_reading()
                return
            limit = self.limit
            at = 0
            while at + 6 <= size and data[at] == 0x82:
                length = data[at + 1] - 0x80  # masked: the high bit set
                if length < 0:
                    break
                if length < 126:
                    head = at + 6
                elif length == 126:
                    head = at + 8
                    length = int.from_bytes(data[at + 2:at + 4], "big")
                else:
                    break
                end = head + length
                if end > size or length > limit:
                    break
                items.append(apply_mask(data[head:end], data[head - 4:head]))
                at = end
            if at:
                self._arrived()
                if at == size:
                    return
                data = data[at:]
        self.ws.data_received(data)
        self.between = self.fast and self.at_frame_start()

    def eof_received(self) -> bool | None:
        self.between = False
        self.ws.eof_received()  # websockets' returns None: the transport closes
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.between = False
        self.ws.connection_lost(exc)

    def pause_writing(self) -> None:
        self.ws.pause_writing()

    def resume_writing(self) -> None:
        self.ws.resume_writing()

    # -- the connection's task ------------------------------------------------------

    def _arrived(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self.high is not None and len(self.items) > self.high and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def taken(self) -> None:
        """An item was taken from `items`: resume reading below the low mark."""
        if self.paused and len(self.items) <= self.low:  # type: ignore[operator]
            self.paused = False
            self.transport.resume_reading()

    async def wait(self) -> bytes | None:
        """Until an item arrives or the stream ends: a binary message handed over
        instead of queued (`data_received`), else None (look at `items`)."""
        self.waiter = waiter = self.ws.loop.create_future()
        try:
            return await waiter
        finally:
            self.waiter = None

    async def receive(self) -> bytes | str:
        """The next message, as websockets' `recv` returns it; ConnectionClosed at the end."""
        ws = self.ws
        try:
            item = await self._next()
            if type(item) is bytes:
                return item
            assert isinstance(item, Frame)
            frame, frames = item, [item]
            while not frame.fin:
                item = await self._next()
                assert isinstance(item, Frame)  # websockets' parser let nothing else in
                frame = item
                if len(frames) >= MAX_FRAGMENTS:
                    raise TooManyFragments(MAX_FRAGMENTS)
                frames.append(frame)
            data = b"".join([frame.data for frame in frames])
            return data.decode() if frames[0].opcode is TEXT else data
        except EOFError:
            pass
        except TooManyFragments as exc:
            ws.set_connection_exc(exc)
            async with ws.send_context():
                ws.protocol.fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
        except UnicodeDecodeError as exc:
            ws.set_connection_exc(exc)
            async with ws.send_context():
                ws.protocol.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
        await asyncio.shield(ws.connection_lost_waiter)
        raise ws.close_exc

    async def _next(self) -> bytes | Frame:
        while not self.items:
            if self.closed:
                raise EOFError("stream of frames ended")
            handed = await self.wait()
            if handed is not None:
                return handed
        item = self.items.popleft()
        self.taken()
        return item
