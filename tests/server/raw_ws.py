"""A deliberately crude WebSocket client for the hostile-client tests.

It does what a library client never does: writes hundreds of frames in one TCP
write, never reads, sends garbage, and reports exactly what came back, including the
close code. Only what the tests need: client frames are masked binary frames; server
frames are read unfragmented (the server never fragments).
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import redis.asyncio as aioredis


def frame(payload: bytes, opcode: int = 2) -> bytes:
    """One masked client frame (FIN set)."""
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


def request(kind: str, req_id: Any, **fields: Any) -> bytes:
    return frame(msgpack.packb({"type": kind, "id": req_id, **fields}, use_bin_type=True))


@dataclass
class Received:
    """Everything the server sent: decoded messages, then the close code (None if
    the connection ended without a close frame)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    close_code: int | None = None
    close_reason: str = ""


class RawWs:
    """One raw connection: `await RawWs.open(url)`, `write(frames)`, `read_all()`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(
        cls, url: str, *, origin: str | None = None, local_host: str | None = None, rcvbuf: int | None = None
    ) -> RawWs:
        """Connect and finish the opening handshake (raises on anything but 101)."""
        hostport = url.split("://", 1)[1].rstrip("/")
        host, port = hostport.rsplit(":", 1)
        kwargs: dict[str, Any] = {}
        if local_host is not None:
            kwargs["local_addr"] = (local_host, 0)
        if rcvbuf is not None:
            import socket

            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if local_host is not None:
                sock.bind((local_host, 0))
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
            reader, writer = await asyncio.open_connection(sock=sock)
        else:
            reader, writer = await asyncio.open_connection(host, int(port), **kwargs)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            "GET / HTTP/1.1",
            f"Host: {hostport}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if origin is not None:
            lines.append(f"Origin: {origin}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            writer.close()
            raise ConnectionRefusedError(status.decode(errors="replace"))
        return cls(reader, writer)

    async def write(self, frames: Iterable[bytes]) -> None:
        """All frames in one write call (one TCP segment burst)."""
        self.writer.write(b"".join(frames))
        await self.writer.drain()

    async def read_all(self, timeout: float = 30.0) -> Received:
        """Read until the server closes; decode every binary frame."""
        out = Received()

        async def run() -> None:
            while True:
                try:
                    b0, b1 = await self.reader.readexactly(2)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                n = b1 & 0x7F
                if n == 126:
                    (n,) = struct.unpack("!H", await self.reader.readexactly(2))
                elif n == 127:
                    (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
                payload = await self.reader.readexactly(n)
                opcode = b0 & 0x0F
                if opcode == 8:
                    if len(payload) >= 2:
                        out.close_code = struct.unpack("!H", payload[:2])[0]
                        out.close_reason = payload[2:].decode(errors="replace")
                    return
                if opcode == 2:
                    out.messages.append(msgpack.unpackb(payload, raw=False))

        await asyncio.wait_for(run(), timeout)
        self.writer.close()
        return out

    def close(self) -> None:
        self.writer.close()


async def stored(redis_url: str, prefix: str) -> dict[str, Any]:
    """Every room key under `prefix` with its full content: compare before and after
    an attack to show nothing stored changed. Node bookkeeping (heartbeats, leases,
    the per-address counts of open connections behind the quota across nodes) changes
    on its own and is left out."""
    client = aioredis.Redis.from_url(redis_url)
    out: dict[str, Any] = {}
    try:
        async for key in client.scan_iter(match=prefix + "*", count=1000):
            name = key.decode()[len(prefix):]
            if name == "nodes" or name.startswith(("node:", "quota:")) or name.endswith(":lease"):
                continue
            kind = (await client.type(key)).decode()
            if kind == "hash":
                out[key.decode()] = (kind, await client.hgetall(key))
            elif kind == "list":
                out[key.decode()] = (kind, await client.lrange(key, 0, -1))
            elif kind == "set":
                out[key.decode()] = (kind, await client.smembers(key))
            elif kind == "zset":
                out[key.decode()] = (kind, await client.zrange(key, 0, -1, withscores=True))
            else:
                out[key.decode()] = (kind, await client.get(key) if kind == "string" else None)
    finally:
        await client.aclose()
    return out
