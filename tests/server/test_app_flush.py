"""The server's flush scheduling (server.app: `schedule_flush`, `flush_now`, `_flush`,
the hold a room takes over a move: `flush_promised` set, then `flush_now`)
with `Connection.push` and `flush`, on websockets' own connections: every frame pushed
is written once, in order, in one write per connection per flush, whoever pushed it
(a handler, which flushes at once, or any other callback, flushed at the end of its
turn), and a connection queues nothing once flushed."""

from __future__ import annotations

import asyncio
import random

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.app import GiantsServer
from server.config import Config
from server.connection import Connection


class _Transport:  # records each write
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass


def _connection(server: GiantsServer) -> tuple[Connection, _Transport]:
    protocol = ServerProtocol()
    protocol.state = State.OPEN
    ws = ServerConnection(protocol, None, ping_interval=None, ping_timeout=None)  # type: ignore[arg-type]
    transport = _Transport()
    super(ServerConnection, ws).connection_made(transport)  # type: ignore[arg-type]
    return Connection(ws, server), transport


def _hold(server: GiantsServer) -> bool:  # what Room.act does around a move's reply and patches
    held, server.flush_promised = server.flush_promised, True
    return held


def _release(server: GiantsServer, held: bool) -> None:
    server.flush_promised = held
    server.flush_now()


def _framed(*payloads: bytes) -> bytes:
    return b"".join(Frame(Opcode.BINARY, p).serialize(mask=False, extensions=[]) for p in payloads)


async def test_frames_pushed_outside_a_handler_leave_at_the_end_of_the_turn() -> None:
    server = GiantsServer(Config())
    (a, ta), (b, tb) = _connection(server), _connection(server)
    loop = asyncio.get_running_loop()
    turn = loop.create_future()

    def callback() -> None:  # a timer's or a commit reply's callback: no handler flushes after it
        a.push(b"one")
        b.push(b"x" * 300)
        a.push(b"two")
        assert ta.writes == [] and tb.writes == [] and server.dirty == [a, b]
        turn.set_result(None)

    loop.call_soon(callback)
    await turn
    await asyncio.sleep(0)  # the scheduled flush runs in the next turn
    assert ta.writes == [_framed(b"one", b"two")] and tb.writes == [_framed(b"x" * 300)]
    assert server.dirty == [] and a.queued == b.queued == 0 and not server.flush_promised
    a.push(b"three")  # a later turn schedules again
    assert server.flush_promised
    await asyncio.sleep(0)
    assert ta.writes[1:] == [_framed(b"three")] and not server.flush_promised


async def test_a_handlers_flush_now_writes_at_once_and_the_turns_flush_the_rest() -> None:
    server = GiantsServer(Config())
    (a, ta), (b, tb) = _connection(server), _connection(server)
    a.push(b"ok")
    a.push(b"patch")
    b.push(b"patch")
    server.flush_now()  # what a handler does after each request
    assert ta.writes == [_framed(b"ok", b"patch")] and tb.writes == [_framed(b"patch")]
    b.push(b"later")  # after the handler's flush, in the same turn: the scheduled flush writes it
    assert server.dirty == [b]
    await asyncio.sleep(0)
    assert ta.writes == [_framed(b"ok", b"patch")] and tb.writes == [_framed(b"patch"), _framed(b"later")]
    assert server.dirty == [] and a.queued == b.queued == 0


async def test_nothing_is_written_twice_or_lost_over_many_turns() -> None:
    server = GiantsServer(Config())
    conns = [_connection(server) for _ in range(3)]
    sent: list[list[bytes]] = [[], [], []]
    for turn in range(40):
        for i, (conn, _) in enumerate(conns):
            for k in range((turn + i) % 3):
                payload = bytes([turn, i, k]) * (1 + turn * 7)
                conn.push(payload)
                sent[i].append(payload)
        if turn % 2:
            server.flush_now()
        await asyncio.sleep(0)
    for i, (_, transport) in enumerate(conns):
        assert b"".join(transport.writes) == _framed(*sent[i])
        assert all(transport.writes)  # no empty write


async def test_frames_pushed_while_held_are_written_by_the_release_and_schedule_nothing() -> None:
    server = GiantsServer(Config())
    (a, ta), (b, tb) = _connection(server), _connection(server)
    scheduled: list[None] = []
    server._flush_soon = lambda: scheduled.append(None)  # type: ignore[method-assign]
    held = _hold(server)
    try:
        a.push(b"ok")
        a.push(b"patch")
        b.push(b"patch")
        assert server.dirty == [a, b] and ta.writes == tb.writes == []
    finally:
        _release(server, held)
    assert ta.writes == [_framed(b"ok", b"patch")] and tb.writes == [_framed(b"patch")]
    assert server.dirty == [] and not server.flush_promised
    server.flush_now()  # the actor's handler: nothing left
    await asyncio.sleep(0)
    assert scheduled == [] and len(ta.writes) == len(tb.writes) == 1
    b.push(b"later")  # not held: scheduled as before
    assert server.flush_promised
    await asyncio.sleep(0)
    assert scheduled == [None]


async def test_a_hold_keeps_aflush_promised_before_it_and_nests() -> None:
    server = GiantsServer(Config())
    (a, ta), (b, tb) = _connection(server), _connection(server)
    a.push(b"before")  # a callback's frame: its flush is scheduled
    outer = _hold(server)
    inner = _hold(server)
    b.push(b"inner")
    _release(server, inner)
    assert tb.writes == [_framed(b"inner")] and ta.writes == [_framed(b"before")]  # written with the release
    b.push(b"outer")
    _release(server, outer)
    assert tb.writes[1:] == [_framed(b"outer")] and server.flush_promised  # the loop's pending flush
    await asyncio.sleep(0)
    assert not server.flush_promised and server.dirty == [] and len(ta.writes) == 1


async def test_held_and_scheduled_flushes_write_the_same_bytes() -> None:
    """Random pushes, each turn held or not: every connection's bytes are the same."""
    rng = random.Random(11)
    written: list[list[bytes]] = []
    for hold in (False, True):
        rng.seed(11)
        server = GiantsServer(Config())
        conns = [_connection(server) for _ in range(4)]
        for _turn in range(60):
            take = rng.random() < 0.7  # drawn in both runs: the same pushes follow
            held = _hold(server) if hold and take else None
            try:
                for _ in range(rng.randrange(6)):
                    conn, _ = rng.choice(conns)
                    conn.push(rng.randbytes(rng.choice((1, 30, 200, 2000))))
            finally:
                if held is not None:
                    _release(server, held)
            server.flush_now() if rng.random() < 0.5 else None
            await asyncio.sleep(0)
            assert server.dirty == [] and not server.flush_promised
        written.append([b"".join(t.writes) for _, t in conns])
    assert written[0] == written[1]
