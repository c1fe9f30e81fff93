"""A lean WebSocket client for the load generators of bench/ (not used by the server).

The benchmarks run their load generator on the same 2 cores as the server(s) they
measure, so every microsecond the load generator spends per frame is taken from the
server. The `websockets` client spends about as much CPU per move as the server does
(≈ 370–440 µs per move for 1 frame out and 4 in); this one is an `asyncio.Protocol`
with the RFC 6455 framing done by hand for the one case the benchmarks need: binary
frames, no extensions, no fragmentation on send. Frames are still masked with a random
key (RFC 6455 §5.3), with websockets' C `apply_mask`. It speaks to the real server
exactly as any client does: the HTTP upgrade, masked frames, close handshake.

    ws = await connect("ws://127.0.0.1:8765")
    await ws.send(msgpack.packb({...}))
    async for frame in ws: ...          # or: frame = await ws.recv()
    await ws.close()
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import os
import random
import struct
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from websockets.speedups import apply_mask


class ConnectionClosed(Exception):
    """The server closed the connection (or the socket broke)."""


class LeanConnection(asyncio.Protocol):
    """One client connection: `send`, `recv`, `async for`, `close`."""

    def __init__(self, max_size: int = 2**22) -> None:
        self.transport: asyncio.Transport | None = None
        self.max_size = max_size
        self._buf = bytearray()
        self._handshaking = True
        self._handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._frames: collections.deque[bytes] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._fragments: list[bytes] = []
        self.closed = False
        # Set to receive each frame straight from the socket's callback instead of
        # through recv() / async for (no task wake-up per frame).
        self.on_frame: Callable[[bytes], None] | None = None
        self._rand = random.Random(os.urandom(16))

    # -- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        # Frames are parsed straight from `data` (one copy per payload); only an
        # incomplete tail waits in `_buf` for the next read.
        if self._buf or self._handshaking:
            buf = self._buf
            buf += data
            if self._handshaking:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                status = bytes(buf[:end]).split(b"\r\n", 1)[0]
                del buf[: end + 4]
                self._handshaking = False
                if b" 101 " not in status + b" ":
                    self._handshake.set_exception(ConnectionError(f"upgrade refused: {status!r}"))
                    return
                self._handshake.set_result(None)
            data = bytes(buf)
            buf.clear()
        delivered = False
        pos, n = 0, len(data)
        while n - pos >= 2:
            b0, b1 = data[pos], data[pos + 1]
            length = b1 & 0x7F
            start = pos + 2
            if length == 126:
                if n - pos < 4:
                    break
                length = struct.unpack_from("!H", data, pos + 2)[0]
                start = pos + 4
            elif length == 127:
                if n - pos < 10:
                    break
                length = struct.unpack_from("!Q", data, pos + 2)[0]
                start = pos + 10
            if b1 & 0x80 or length > self.max_size:
                self._fail()
                return
            end = start + length
            if n < end:
                break
            payload = data[start:end]
            pos = end
            opcode = b0 & 0x0F
            if opcode in (1, 2, 0):
                if not b0 & 0x80:
                    self._fragments.append(payload)
                    continue
                if self._fragments:
                    payload = b"".join([*self._fragments, payload])
                    self._fragments = []
                if self.on_frame is not None:
                    self.on_frame(payload)
                else:
                    self._frames.append(payload)
                    delivered = True
            elif opcode == 8:  # close: answer it, then the server closes the socket
                self._write(0x88, payload[:2])
                self.closed = True
                delivered = True
            elif opcode == 9:  # ping
                self._write(0x8A, payload)
        if pos < n:
            self._buf += memoryview(data)[pos:]
        if delivered and self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self._handshake.done():
            self._handshake.set_exception(ConnectionError("closed during the upgrade"))
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # -- the client API -----------------------------------------------------------------

    def _write(self, first: int, payload: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        n = len(payload)
        if n < 126:
            head = bytes((first, 0x80 | n))
        elif n < 65536:
            head = struct.pack("!BBH", first, 0xFE, n)
        else:
            head = struct.pack("!BBQ", first, 0xFF, n)
        key = self._rand.getrandbits(32).to_bytes(4, "big")
        self.transport.write(head + key + apply_mask(payload, key))

    async def send(self, data: bytes) -> None:
        """Send one binary frame (written at once; loopback needs no flow control)."""
        self.send_now(data)

    def send_now(self, data: bytes) -> None:
        """`send` from a plain callback (no coroutine)."""
        if self.closed:
            raise ConnectionClosed("the connection is closed")
        self._write(0x82, data)

    async def recv(self) -> bytes:
        """The next frame; ConnectionClosed once the server has closed."""
        while not self._frames:
            if self.closed:
                raise ConnectionClosed("the connection is closed")
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._frames.popleft()

    def __aiter__(self) -> LeanConnection:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self.recv()
        except ConnectionClosed:
            raise StopAsyncIteration from None

    async def close(self) -> None:
        """Close handshake (1000), then drop the socket after a second at most."""
        if self.transport is None:
            return
        if not self.closed:
            self._write(0x88, struct.pack("!H", 1000))
            self.closed = True
            with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
                await asyncio.wait_for(self._drain_until_lost(), 1.0)
        self.transport.close()

    async def _drain_until_lost(self) -> None:
        while self.transport is not None and not self.transport.is_closing():
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter

    def _fail(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


async def connect(url: str, factory: Callable[[], LeanConnection] = LeanConnection,
                  **_ignored: Any) -> LeanConnection:
    """Open a WebSocket to `url` (ws://host:port/path) with a `factory()` connection
    (LeanConnection or a subclass); keyword options of websockets' `connect` are
    accepted and ignored, so call sites can switch."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(factory, host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {parts.path or '/'}{'?' + parts.query if parts.query else ''} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    assert conn.transport is not None
    conn.transport.write(request.encode())
    await conn._handshake
    return conn
