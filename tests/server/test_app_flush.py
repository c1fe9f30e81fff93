"""The server's flush scheduling (server.app: `schedule_flush`, `flush_now`, `_flush`)
with `Connection.push` and `flush`, on websockets' own connections: every frame pushed
is written once, in order, in one write per connection per flush, whoever pushed it
(a handler, which flushes at once, or any other callback, flushed at the end of its
turn), and a connection queues nothing once flushed."""

from __future__ import annotations

import asyncio

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
    assert server.dirty == [] and a.queued == b.queued == 0 and not server._flush_scheduled
    a.push(b"three")  # a later turn schedules again
    assert server._flush_scheduled
    await asyncio.sleep(0)
    assert ta.writes[1:] == [_framed(b"three")] and not server._flush_scheduled


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
