"""The group commit's own Redis channel: one write per batch, integer replies.

Every stored change is one EVALSHA of the commit script, and the store sends them in
batches (`Store._submit`). redis-py's connection would read each reply through a
StreamReader under its own timeout (a timer per reply) and pack each command in
Python; at a thousand moves a second that was ~70 µs of server CPU per commit out of a
~110 µs round trip. This channel is an `asyncio.Protocol` on the socket redis-py opened
(so the URL, TLS, AUTH and SELECT are handled exactly as for every other command): the
batch is packed into one RESP buffer, written at once, and the replies — the commit
script only ever answers an integer or an error — are parsed as they arrive; the batch's
future completes when the last one is in. One timer per batch.

Failures keep redis-py's exception types, which `server.store` classifies
(`is_transient`): a socket that closes or breaks fails the batch in flight with
`ConnectionError`, no answer within `timeout` with `TimeoutError` (the channel is
closed either way, and the next batch opens a fresh one); an error reply becomes that
command's result, as redis-py's `parse_error` would build it (`NoScriptError`,
`ResponseError`…). Anything else on the wire closes the channel (`ConnectionError`).

    pipe = await CommitPipe.open(redis_client)
    results = await pipe.roundtrip([("EVALSHA", sha, 3, *keys, *args), ...])
    pipe.close()
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError


def pack(commands: Sequence[Sequence[Any]]) -> bytes:
    """RESP for `commands` (each a sequence of str, bytes or int), as one buffer."""
    out: list[bytes] = []
    for command in commands:
        out.append(b"*%d\r\n" % len(command))
        for arg in command:
            if isinstance(arg, bytes):
                data = arg
            elif isinstance(arg, str):
                data = arg.encode()
            elif isinstance(arg, int):
                data = b"%d" % arg
            else:
                raise TypeError(f"cannot send {type(arg).__name__} to Redis")
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class CommitPipe(asyncio.Protocol):
    """A Redis connection that sends batches of integer-answering commands."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._buf = bytearray()
        self._streams: tuple[Any, Any] = (None, None)
        # Batches in flight, oldest first: (replies still expected, results, future).
        self._batches: collections.deque[tuple[list[int], list[Any], asyncio.Future[list[Any]]]] = collections.deque()

    @classmethod
    async def open(cls, client: aioredis.Redis, timeout: float | None) -> CommitPipe:
        """Connect the way `client` connects (URL, TLS, AUTH, SELECT), then take the socket."""
        conn = client.connection_pool.make_connection()
        await conn.connect()
        writer = conn._writer  # redis-py's StreamWriter: the transport under it is ours now
        if writer is None:  # pragma: no cover - connect() either sets it or raises
            raise RedisConnectionError("Redis connection has no socket")
        pipe = cls(timeout)
        transport = writer.transport
        # redis-py forgets the socket (no "unclosed" warning from it); the pipe keeps its
        # stream objects alive, or their finaliser would close the socket under it.
        pipe._streams = (conn._reader, writer)
        conn._reader = conn._writer = None
        pipe.transport = transport
        transport.set_protocol(pipe)
        return pipe

    # -- asyncio.Protocol --------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        pos = 0
        while self._batches:
            end = buf.find(b"\r\n", pos)
            if end < 0:
                break
            kind = buf[pos]
            if kind == 0x3A:  # ':' an integer
                value: Any = int(buf[pos + 1 : end])
            elif kind == 0x2D:  # '-' an error reply
                value = BaseParser.parse_error(bytes(buf[pos + 1 : end]).decode("utf-8", "replace"))
            else:
                self._fail(RedisConnectionError(f"unexpected reply from Redis: {bytes(buf[pos:end])[:80]!r}"))
                return
            pos = end + 2
            left, results, fut = self._batches[0]
            results.append(value)
            left[0] -= 1
            if left[0] == 0:
                self._batches.popleft()
                if not fut.done():
                    fut.set_result(results)
        if pos:
            del buf[:pos]
        if buf and not self._batches:
            self._fail(RedisConnectionError("Redis sent a reply nobody asked for"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"Connection to Redis lost{f': {exc}' if exc else ''}"))

    # -- use ------------------------------------------------------------------------------

    async def roundtrip(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Send `commands` in one write; their replies in order (an error reply is
        that command's result). Raises ConnectionError / TimeoutError (redis-py's) and
        closes the channel when the batch as a whole fails."""
        if self.closed or self.transport is None:
            raise RedisConnectionError("the commit channel is closed")
        fut: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._batches.append(([len(commands)], [], fut))
        self.transport.write(pack(commands))
        try:
            async with asyncio.timeout(self.timeout):
                return await fut
        except TimeoutError:
            self._fail(RedisTimeoutError("Timeout reading from Redis (commit batch)"))
            raise RedisTimeoutError("Timeout reading from Redis (commit batch)") from None
        except BaseException:
            self._fail(RedisConnectionError("commit batch abandoned"))
            raise

    def close(self) -> None:
        self._fail(RedisConnectionError("the commit channel was closed"))

    def _fail(self, exc: Exception) -> None:
        self.closed = True
        while self._batches:
            _, _, fut = self._batches.popleft()
            if not fut.done():
                fut.set_exception(exc)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class GroupSender:
    """Integer-answering commands from many tasks over one `CommitPipe`: while a batch
    is in flight, new commands queue and leave together in the next one.

    For commands issued concurrently by many requests (the relay's PUBLISH of each
    relayed request): one connection however many are in flight, where a pool would
    open one per concurrent command (and refuse past its limit). The first caller sends
    its batch from its own task; commands queued meanwhile go out from a helper task.

        sender = GroupSender(redis_client, timeout=5.0)
        receivers = await sender.call("PUBLISH", channel, payload)
        sender.close()
    """

    def __init__(self, client: aioredis.Redis, timeout: float | None) -> None:
        self.client = client
        self.timeout = timeout
        self._pipe: CommitPipe | None = None
        self._pending: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self._busy = False
        self._task: asyncio.Task[None] | None = None

    async def call(self, *command: Any) -> Any:
        """Send one command (grouped with those pending); its reply. An error reply
        is raised; a failed batch raises redis-py's ConnectionError / TimeoutError."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((command, fut))
        if not self._busy:
            self._busy = True
            try:
                await self._send_one()
            finally:
                if self._pending:
                    self._task = asyncio.get_running_loop().create_task(self._send_rest())
                else:
                    self._busy = False
        return await fut

    async def _send_rest(self) -> None:
        try:
            while self._pending:
                await self._send_one()
        finally:
            self._busy = False

    async def _send_one(self) -> None:
        batch, self._pending = self._pending, []
        try:
            pipe = self._pipe
            if pipe is None or pipe.closed:
                pipe = self._pipe = await CommitPipe.open(self.client, self.timeout)
            results = await pipe.roundtrip([command for command, _ in batch])
        except BaseException as exc:
            failure = exc if isinstance(exc, Exception) else RedisConnectionError("cancelled")
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(failure)
            if not isinstance(exc, Exception):
                raise
            return
        for (_, fut), result in zip(batch, results, strict=True):
            if fut.done():
                continue
            if isinstance(result, Exception):
                fut.set_exception(result)
            else:
                fut.set_result(result)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._pipe is not None:
            self._pipe.close()
