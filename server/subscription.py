"""The relay's inbox: one Redis connection subscribed to this node's channels.

redis-py's `PubSub` reads each message through its generic reply parser, builds a dict
per message and wakes a task per `get_message`; every relayed frame and request passes
here, so `Subscription` is an `asyncio.Protocol` on a socket redis-py opened (URL, TLS,
AUTH handled as for every other command, `server.commit_pipe.take_socket`) that parses
the only replies a subscribed connection gets — `subscribe` confirmations and
`message` pushes, arrays (RESP2) or pushes (RESP3, when redis-py negotiated it) of bulk
strings and integers — and hands each message's data
to a callback, in order, from the socket's own callback.

    sub = await Subscription.open(redis_client, [inbox, broadcast], on_message)
    await sub.lost            # the connection broke: open a new one (messages sent
                              # meanwhile are lost, as with any pub/sub subscriber)
    sub.close()

`open` returns once Redis confirmed every channel, so a PUBLISH's receiver count
counts this node from then on.

On a Redis Cluster the same connection also takes shard channels (`sharded=[...]`:
SSUBSCRIBE, `ssubscribe` confirmations, `smessage` pushes); it must be opened at the
master that owns their slot. When that slot moves to another master, Redis drops the
subscription with a `sunsubscribe` push: `lost` is completed then too (the connection
is closed), so the caller subscribes again at the slot's new owner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from server.commit_pipe import pack, take_socket


class Subscription(asyncio.Protocol):
    """See the module docstring."""

    def __init__(self, channels: Sequence[str], on_message: Callable[[bytes], None],
                 sharded: Sequence[str] = ()) -> None:
        self.channels = list(channels)
        self.sharded = list(sharded)
        self.on_message = on_message
        self.transport: asyncio.Transport | None = None
        self._streams: tuple[Any, Any] = (None, None)
        self._buf = bytearray()
        loop = asyncio.get_running_loop()
        self._confirmed = 0
        self.ready: asyncio.Future[None] = loop.create_future()
        self.lost: asyncio.Future[Exception] = loop.create_future()

    @classmethod
    async def open(cls, client: aioredis.Redis, channels: Sequence[str], on_message: Callable[[bytes], None],
                   timeout: float = 5.0, sharded: Sequence[str] = ()) -> Subscription:
        """Connect, subscribe to `channels` (and SSUBSCRIBE to the shard channels
        `sharded`, which must share one slot owned by `client`'s server), and return
        once Redis confirmed them all (raises redis-py's ConnectionError / TimeoutError
        otherwise, also when Redis refuses a shard channel with MOVED)."""
        sub = cls(channels, on_message, sharded)
        sub.transport, sub._streams = await take_socket(client, sub)
        commands = [("SUBSCRIBE", *sub.channels)] if sub.channels else []
        if sub.sharded:
            commands.append(("SSUBSCRIBE", *sub.sharded))
        sub.transport.write(pack(commands))
        try:
            await asyncio.wait_for(asyncio.shield(sub.ready), timeout)
        except BaseException:
            sub.close()
            raise
        return sub

    def close(self) -> None:
        self._fail(RedisConnectionError("the subscription was closed"))

    # -- asyncio.Protocol --------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        pos, end = 0, len(buf)
        while pos < end:
            parsed = _array(buf, pos)
            if parsed is None:
                break  # an incomplete reply: wait for more
            items, pos = parsed
            if items is _ERROR:
                self._fail(RedisConnectionError(f"Redis refused the subscription: {bytes(buf[:200])!r}"))
                return
            kind = items[0]
            if (kind == b"message" or kind == b"smessage") and len(items) == 3:
                self.on_message(items[2])
            elif kind == b"subscribe" or kind == b"ssubscribe":
                self._confirmed += 1
                if self._confirmed == len(self.channels) + len(self.sharded) and not self.ready.done():
                    self.ready.set_result(None)
            elif kind == b"sunsubscribe":  # never asked for: the shard channel's slot moved
                self._fail(RedisConnectionError("Redis dropped the shard channel subscription (its slot moved)"))
                return
            # anything else a subscribed connection may get (unsubscribe, pong) is ignored
        if pos:
            del buf[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"Connection to Redis lost{f': {exc}' if exc else ''}"))

    def _fail(self, exc: Exception) -> None:
        if not self.ready.done():
            self.ready.set_exception(exc)
            self.ready.exception()  # retrieved: nobody may be waiting any more
        if not self.lost.done():
            self.lost.set_result(exc)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


_ERROR: list[Any] = []  # the parse of an error reply (a subscription never expects one)


def _array(buf: bytearray, pos: int) -> tuple[list[Any], int] | None:
    """One RESP2 array or RESP3 push of bulk strings and integers at `pos`: (items, next position),
    None if it is not all there yet, (_ERROR, ...) for an error reply or anything a
    subscribed connection is not sent."""
    eol = buf.find(b"\r\n", pos)
    if eol < 0:
        return None
    if buf[pos] not in (0x2A, 0x3E):  # '*' an array (RESP2), '>' a push (RESP3)
        return _ERROR, eol + 2
    count = int(buf[pos + 1 : eol])
    pos = eol + 2
    items: list[Any] = []
    for _ in range(count):
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        kind = buf[pos]
        if kind == 0x24:  # '$' a bulk string
            size = int(buf[pos + 1 : eol])
            start = eol + 2
            if len(buf) < start + size + 2:
                return None
            items.append(bytes(buf[start : start + size]))
            pos = start + size + 2
        elif kind == 0x3A:  # ':' an integer
            items.append(int(buf[pos + 1 : eol]))
            pos = eol + 2
        else:
            return _ERROR, eol + 2
    return items, pos
