"""The hot path's own Redis channel: batches of integer-answering commands.

Every stored change is one EVALSHA of the commit script, and every relayed request one
PUBLISH. redis-py's connection would read each reply through a StreamReader under its
own timeout (a timer per reply) and pack each command in Python, and a pool lends one
connection per command in flight. `CommitPipe` is an `asyncio.Protocol` on a socket
redis-py opened (so the URL, TLS, AUTH and SELECT are handled exactly as for every
other command): a batch is packed into one RESP buffer and written at once; the
replies — these commands only ever answer an integer or an error — are parsed as they
arrive and handed to the batch's callback when its last one is in (or, for the
group sender's batches, complete each command's future as it arrives). Several batches may
be in flight; replies come back in order. `GroupSender` gathers the commands issued
during one turn of the event loop into one batch and sends it at the end of that turn,
without waiting for earlier batches: no command waits for another's round trip.

Failures keep redis-py's exception types, which `server.store` classifies
(`is_transient`): a socket that closes or breaks fails every batch in flight with
`ConnectionError`, no answer within `timeout` with `TimeoutError` (the channel is
closed either way, and the next batch opens a fresh one); an error reply becomes that
command's result, as redis-py's `parse_error` would build it (`NoScriptError`,
`ResponseError`…). Anything else on the wire closes the channel (`ConnectionError`).

    sender = GroupSender(redis_client, timeout=5.0)
    result = await sender.call("EVALSHA", sha, 3, *keys, *args)   # many tasks at once
    sender.close()
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

import redis.asyncio as aioredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)


def _pack_python(commands: Sequence[Sequence[Any]]) -> bytes:
    parts: list[bytes] = []
    add = parts.append
    for command in commands:
        if command.__class__ is bytes:  # already RESP
            add(command)
            continue
        add(b"*%d\r\n" % len(command))
        for arg in command:
            kind = arg.__class__
            if kind is str:
                arg = arg.encode()
            elif kind is int:
                arg = b"%d" % arg
            elif kind is not bytes:
                raise TypeError(f"cannot send {kind.__name__} to Redis")
            add(b"$%d\r\n" % len(arg))
            add(arg)
            add(b"\r\n")
    return b"".join(parts)


def _pack_hiredis(commands: Sequence[Sequence[Any]]) -> bytes:
    for command in commands:  # hiredis would send a float; nothing here should be one
        if command.__class__ is bytes:  # already RESP
            continue
        if not _SENDABLE.issuperset(map(type, command)):  # one C-speed scan of a command
            bad = next(arg for arg in command if type(arg) not in _SENDABLE)
            raise TypeError(f"cannot send {type(bad).__name__} to Redis")
    if len(commands) == 1:  # most batches at a human pace
        command = commands[0]
        return command if command.__class__ is bytes else _hiredis_pack(tuple(command))
    return b"".join([command if command.__class__ is bytes else _hiredis_pack(tuple(command))
                     for command in commands])


_SENDABLE = frozenset((str, bytes, int))
try:  # the speed extra: commands packed in C, about 2x faster than the Python packer
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - plain install
    pack = _pack_python
else:
    pack = _pack_hiredis
pack.__doc__ = """RESP for `commands` (each a sequence of str, bytes or int, or bytes that
are one command's RESP already), as one buffer."""


Done = Callable[[Any], None]  # gets the batch's results (a list) or the exception that failed it


def resolve(fut: asyncio.Future[Any], result: Any) -> None:
    """Complete `fut` with `result`, raised if it is an exception (no-op once done)."""
    if fut.done():
        return
    if isinstance(result, BaseException):
        fut.set_exception(result)
    else:
        fut.set_result(result)


async def take_socket(client: aioredis.Redis, protocol: asyncio.Protocol) -> tuple[asyncio.Transport, tuple[Any, Any]]:
    """Open a connection the way `client` connects (URL, TLS, AUTH, SELECT) and hand
    its socket to `protocol`: the transport, and redis-py's stream objects, which the
    caller keeps alive (their finaliser would close the socket under it). redis-py
    forgets the socket, so it warns of nothing when the caller closes it."""
    conn = client.connection_pool.make_connection()
    await conn.connect()
    writer = conn._writer  # redis-py's StreamWriter: the transport under it is ours now
    if writer is None:  # pragma: no cover - connect() either sets it or raises
        raise RedisConnectionError("Redis connection has no socket")
    streams = (conn._reader, writer)
    conn._reader = conn._writer = None
    transport = writer.transport
    transport.set_protocol(protocol)
    return transport, streams


class CommitPipe(asyncio.Protocol):
    """A Redis connection that sends batches of integer-answering commands."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._buf = bytearray()
        self._streams: tuple[Any, Any] = (None, None)
        # Batches in flight, oldest first: [replies still expected, results, done, deadline]
        # (deadlines in perf_counter's seconds)
        # (`send_for`'s: [replies still expected, futures, None, deadline, on_batch, started]).
        self._batches: collections.deque[list[Any]] = collections.deque()
        # One timer for all batches, armed at the oldest's deadline: it stays armed
        # while batches come and go and, when it fires, fails the channel if the oldest
        # batch is past its deadline, else re-arms for it (a timer per batch cost ~5,500
        # instructions of a commit under uvloop, bench/move_instructions.py --part commit).
        self._timer: asyncio.TimerHandle | None = None

    @classmethod
    async def open(cls, client: aioredis.Redis, timeout: float | None) -> CommitPipe:
        """Connect the way `client` connects (URL, TLS, AUTH, SELECT), then take the socket."""
        pipe = cls(timeout)
        pipe.transport, pipe._streams = await take_socket(client, pipe)
        return pipe

    # -- asyncio.Protocol --------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        batches = self._batches
        if data == b":1\r\n" and not self._buf and batches:
            # One commit applied, the last reply of the oldest batch, a group sender's
            # (a move at a human pace: most reads): the loop below's one turn.
            batch = batches[0]
            if batch[0] == 1 and batch[2] is None:
                batches.popleft()
                fut = batch[1][-1]
                if not fut.done():
                    fut.set_result(1)
                if batch[4] is not None:
                    batch[4](len(batch[1]), perf_counter() - batch[5])
                return
        # Parsed from `data` itself unless part of a reply is left over (usually a
        # whole reply arrives at once: no copy into the buffer and out again).
        buf: bytes | bytearray = data
        if self._buf:
            self._buf += data
            buf = self._buf
        pos = 0
        while batches:
            if buf[pos:pos + 4] == b":1\r\n":  # a commit applied (most replies): no search, no int()
                # (a slice compared: startswith's argument parsing costs ~400 instructions more)
                value: Any = 1
                end = pos + 2
            else:
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    break
                kind = buf[pos]
                if kind == 0x3A:  # ':' an integer
                    value = int(buf[pos + 1 : end])
                elif kind == 0x2D:  # '-' an error reply
                    value = BaseParser.parse_error(bytes(buf[pos + 1 : end]).decode("utf-8", "replace"))
                else:
                    self._fail(RedisConnectionError(f"unexpected reply from Redis: {bytes(buf[pos:end])[:80]!r}"))
                    return
            pos = end + 2
            batch = batches[0]
            if batch[2] is None:  # `send_for`: the reply completes its command's future now
                fut = batch[1][-batch[0]]
                if not fut.done():
                    if value.__class__ is int:
                        fut.set_result(value)
                    else:
                        fut.set_exception(value)
            else:
                batch[1].append(value)
            batch[0] -= 1
            if not batch[0]:
                batches.popleft()
                if batch[2] is not None:
                    batch[2](batch[1])
                elif batch[4] is not None:
                    batch[4](len(batch[1]), perf_counter() - batch[5])
        if pos == len(buf):
            if buf is self._buf:
                self._buf.clear()
            return
        if not batches:
            self._fail(RedisConnectionError("Redis sent a reply nobody asked for"))
        elif buf is self._buf:
            del self._buf[:pos]
        else:
            self._buf += buf[pos:]

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"Connection to Redis lost{f': {exc}' if exc else ''}"))

    # -- use ------------------------------------------------------------------------------

    def send(self, commands: Sequence[Sequence[Any]], done: Done) -> None:
        """Write `commands` now; `done(results)` once their replies are in (in order, an
        error reply is that command's result), or `done(exc)` if the channel fails
        first or the replies take longer than `timeout` (the channel closes then)."""
        if self.closed or self.transport is None:
            done(RedisConnectionError("the commit channel is closed"))
            return
        deadline = 0.0
        if self.timeout is not None:
            deadline = perf_counter() + self.timeout  # the clock of `_watch` (and `send_for`)
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self.timeout, self._watch)
        self._batches.append([len(commands), [], done, deadline])
        self.transport.write(pack(commands))

    def send_for(self, commands: Sequence[Sequence[Any]], futures: list[asyncio.Future[Any]],
                 on_batch: Callable[[int, float], None] | None) -> None:
        """`send` whose replies complete `futures` (one per command, in order) as they
        arrive, an error reply raised by its own future; a failure of the channel is
        raised by the futures not done yet. `on_batch(size, seconds)` once all are in."""
        if self.closed or self.transport is None:
            exc = RedisConnectionError("the commit channel is closed")
            for fut in futures:
                resolve(fut, exc)
            return
        # One clock read for both the deadline and the batch's start: perf_counter's
        # (the loop's clock is read only when the timer is armed: `_watch`).
        started = perf_counter()
        deadline = 0.0
        if self.timeout is not None:
            deadline = started + self.timeout
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self.timeout, self._watch)
        self._batches.append([len(commands), futures, None, deadline, on_batch, started])
        # A lone command already in RESP (a plain move's: most batches at a human pace)
        # is written as it is: `pack` would only hand it back.
        if len(commands) == 1 and commands[0].__class__ is bytes:
            self.transport.write(commands[0])  # bytes, checked above
        else:
            self.transport.write(pack(commands))

    async def roundtrip(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """`send`, awaited: the results, or the batch's failure raised. Cancelling the
        wait closes the channel (its replies could no longer be matched)."""
        fut: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()

        self.send(commands, lambda results: resolve(fut, results))
        try:
            return await fut
        except asyncio.CancelledError:
            self._fail(RedisConnectionError("commit batch abandoned"))
            raise

    def close(self) -> None:
        self._fail(RedisConnectionError("the commit channel was closed"))

    def _watch(self) -> None:
        """The timer fired: fail the channel if its oldest batch is past its deadline,
        else wait for that deadline (nothing in flight: disarmed until the next send)."""
        self._timer = None
        if not self._batches or self.closed:
            return
        left = self._batches[0][3] - perf_counter()  # deadlines are perf_counter times
        if left <= 0.001:  # loops may fire a timer a little early
            self._fail(RedisTimeoutError("Timeout reading from Redis (commit batch)"))
        else:
            self._timer = asyncio.get_running_loop().call_later(left, self._watch)

    def _fail(self, exc: Exception) -> None:
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._batches:
            batch = self._batches.popleft()
            if batch[2] is None:
                for fut in batch[1]:
                    resolve(fut, exc)
            else:
                batch[2](exc)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class GroupSender:
    """Integer-answering commands from many tasks over one `CommitPipe`.

    The commands issued during one turn of the event loop leave together, in one write,
    at the end of that turn; batches do not wait for each other. A pool would lend one
    connection per command in flight (and refuse past its limit).

        sender = GroupSender(redis_client, timeout=5.0)
        receivers = await sender.call("PUBLISH", channel, payload)
        sender.close()

    `on_batch(size, seconds)` (optional) is told of each batch answered.
    """

    def __init__(self, client: aioredis.Redis, timeout: float | None,
                 on_batch: Callable[[int, float], None] | None = None) -> None:
        self.client = client
        self.timeout = timeout
        self.on_batch = on_batch
        self._pipe: CommitPipe | None = None
        # This turn's commands and their replies' futures, in the same order.
        self._pending: list[tuple[Any, ...] | bytes] = []
        self._futures: list[asyncio.Future[Any]] = []
        self._scheduled = False
        self._opening: asyncio.Task[None] | None = None
        self.in_flight = 0  # posted commands not answered yet
        # A subclass that sends its batches its own way (its `_send`) sets this: the
        # turn's flush writes a batch without calling `_send` otherwise.
        self.own_send = False
        self._post_failing = False
        # The loop of the first command since the sender was made or closed: a sender
        # serves one loop (its channel's socket, its turn's flush), and asking for the
        # running loop costs a getpid system call on Python 3.11, once a commit.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flush_soon = self._flush  # the turn's flush, bound once

    async def call(self, *command: Any) -> Any:
        """Send one command with those of this turn of the loop; its reply. An error
        reply is raised; a failed batch raises redis-py's ConnectionError / TimeoutError."""
        return await self.add(command)

    def add(self, command: tuple[Any, ...] | bytes) -> asyncio.Future[Any]:
        """`call` without its coroutine: the reply's future (callers on the hot path).
        `command` may be bytes: one command's RESP already (`pack`)."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._pending.append(command)
        self._futures.append(fut)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush_soon)
        return fut

    def post(self, *command: Any) -> asyncio.Future[Any]:
        """Send one command with those of this turn of the loop, not waiting for its
        reply (the relay's frames: nothing can be done about one lost). A failure is
        logged once until a posted command succeeds again; `in_flight` counts the
        posted commands not answered yet (shutdown waits for them). Returns the reply's
        future, for a caller that acts on a failure (server.relay_channels)."""
        fut = self.add(command)
        fut.add_done_callback(self._posted)
        self.in_flight += 1
        return fut

    def _posted(self, fut: asyncio.Future[Any]) -> None:
        self.in_flight -= 1
        exc = None if fut.cancelled() else fut.exception()
        if exc is None:
            self._post_failing = False
        elif not self._post_failing:
            self._post_failing = True
            log.warning("Redis refused or lost a posted command: %s", exc)

    def _flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        pipe = self._pipe
        if pipe is None or pipe.closed:
            if self._opening is None:
                self._opening = asyncio.get_running_loop().create_task(self._open_and_send())
            return
        if self.own_send:
            self._send(pipe)
            return
        # `_send(pipe)` without its call (a batch every turn of the loop with commits)
        commands, futures = self._pending, self._futures
        self._pending, self._futures = [], []
        pipe.send_for(commands, futures, self.on_batch)

    async def _open_and_send(self) -> None:
        try:
            try:
                self._pipe = pipe = await CommitPipe.open(self.client, self.timeout)
            except BaseException as exc:
                self._fail_pending(exc if isinstance(exc, Exception) else RedisConnectionError("cancelled"))
                if not isinstance(exc, Exception):
                    raise
                return
            if self._pending:
                self._send(pipe)
        finally:
            self._opening = None

    def _take(self) -> tuple[list[tuple[Any, ...] | bytes], list[asyncio.Future[Any]]]:
        """This turn's commands and futures, handed over (the next turn starts afresh)."""
        commands, futures = self._pending, self._futures
        self._pending, self._futures = [], []
        return commands, futures

    def _send(self, pipe: CommitPipe) -> None:
        commands, futures = self._pending, self._futures  # `_take`, without its call
        self._pending, self._futures = [], []
        pipe.send_for(commands, futures, self.on_batch)

    def _fail_pending(self, exc: Exception) -> None:
        for fut in self._take()[1]:
            resolve(fut, exc)

    def close(self) -> None:
        """Fail what is pending or in flight (ConnectionError); later calls reopen."""
        if self._opening is not None:
            self._opening.cancel()
        if self._pipe is not None:
            self._pipe.close()
        self._fail_pending(RedisConnectionError("the commit channel was closed"))
        self._loop = None  # reopened later, maybe in another loop's run
