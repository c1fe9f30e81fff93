"""Connection.run reads through an `Inbox` (server.reading): the frames websockets'
parser would make of the bytes, parsed here when they are whole, final, masked binary
frames within the size limit, through websockets otherwise. Whatever a client sends,
split however the reads cut it, the connection must handle the same messages in the same
order, write the same bytes (pongs, close frames) and close with the same codes as with
websockets' own reading (`Connection._read_all`, what `run` did before: checked here as
the plain path); reading pauses above `max_queue` waiting frames and resumes below a
quarter of it (websockets' flow control); and frames that take turns with other
connections still do (tests/server/test_hostile_scheduling.py, on the wire)."""

from __future__ import annotations

import asyncio
import itertools
import os
import struct
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.server import ServerConnection
from websockets.server import ServerProtocol

from server import reading as reading_module
from server.config import Config
from server.connection import Connection
from server.metrics import Metrics
from server.reading import Inbox

MAX_SIZE = 200  # websockets' max_size in these tests: frames above it are closed with 1009
MAX_QUEUE = 4

HANDSHAKE = (b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


class Transport:
    """An asyncio transport as websockets' connection and the inbox use it."""

    def __init__(self) -> None:
        self.protocol: Any = None
        self.written: list[bytes] = []
        self.reading = True
        self.pauses = 0
        self.closing = False
        self.handled: list[Any] = []  # the connection's, to log when reading paused and resumed
        self.flow: list[tuple[str, int]] = []

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def get_protocol(self) -> Any:
        return self.protocol

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))

    def writelines(self, chunks: list[bytes]) -> None:
        for chunk in chunks:
            self.write(chunk)

    def pause_reading(self) -> None:
        assert self.reading
        self.reading = False
        self.pauses += 1
        self.flow.append(("pause", len(self.handled)))

    def resume_reading(self) -> None:
        assert not self.reading
        self.reading = True
        self.flow.append(("resume", len(self.handled)))

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closing

    def can_write_eof(self) -> bool:
        return False

    def write_eof(self) -> None:
        raise NotImplementedError

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    abort = close


class Recorder(Connection):
    """A connection whose `handle` records each message (and may be held)."""

    def __init__(self, ws: ServerConnection, server: Any) -> None:
        super().__init__(ws, server)
        self.handled: list[bytes | str] = []
        self.gate: asyncio.Event | None = None

    async def handle(self, frame: bytes | str) -> None:
        self.handled.append(frame)
        if self.gate is not None:
            await self.gate.wait()


def open_connection(plain: bool, max_size: int = MAX_SIZE) -> tuple[Recorder, ServerConnection, Transport]:
    protocol = ServerProtocol(max_size=max_size)
    protocol.receive_data(HANDSHAKE)
    request = protocol.events_received()[0]
    protocol.send_response(protocol.accept(request))
    protocol.data_to_send()
    ws = ServerConnection(protocol, None, ping_interval=None, ping_timeout=None, max_queue=MAX_QUEUE,  # type: ignore[arg-type]
                          close_timeout=0.01)
    transport = Transport()
    transport.protocol = ws
    super(ServerConnection, ws).connection_made(transport)  # type: ignore[arg-type]
    ws.request = request
    server = SimpleNamespace(config=Config(), metrics=Metrics(), router=None, shutting_down=False,
                             flush_now=lambda: None, dirty=[], flush_promised=False, schedule_flush=lambda conn: None, limit_closed=lambda reason: None,
                             spawn=asyncio.ensure_future)
    conn = Recorder(ws, server)
    transport.handled = conn.handled
    conn.config.hello_timeout = 3600.0
    if plain:
        conn._inbox_off = True  # type: ignore[attr-defined]
    return conn, ws, transport


async def run(conn: Recorder) -> asyncio.Task[None]:
    if getattr(conn, "_inbox_off", False):
        original = Inbox.install
        Inbox.install = classmethod(lambda cls, ws: None)  # type: ignore[assignment,method-assign]
        try:
            task = asyncio.ensure_future(conn.run())
            await asyncio.sleep(0)  # run() has chosen its reading
        finally:
            Inbox.install = original  # type: ignore[method-assign]
    else:
        task = asyncio.ensure_future(conn.run())
        await asyncio.sleep(0)
    return task


def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, masked: bool = True, wide: int = 0) -> bytes:
    """A client frame's bytes, any of its fields as given (wide: force the 16- or 64-bit length)."""
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    length = len(payload)
    flag = 0x80 if masked else 0
    if length < 126 and not wide:
        head += bytes([flag | length])
    elif length < 65536 and wide != 8:
        head += bytes([flag | 126]) + struct.pack("!H", length)
    else:
        head += bytes([flag | 127]) + struct.pack("!Q", length)
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


# Sizes at the length forms' and the limit's edges, and any other.
sizes = st.one_of(st.sampled_from([0, 1, 124, 125, 126, 127, MAX_SIZE - 1, MAX_SIZE, MAX_SIZE + 1, MAX_SIZE + 2]),
                  st.integers(0, MAX_SIZE + 20))
payloads = st.builds(lambda n, b: (b * n)[:n], sizes, st.binary(min_size=1, max_size=3))
plain_binary = st.builds(lambda p: frame(2, p), payloads)
other_frames = st.one_of(
    st.builds(lambda p, w: frame(2, p, wide=w), payloads, st.sampled_from([0, 2, 8])),  # non-minimal lengths
    st.builds(lambda t: frame(1, t.encode()), st.text(max_size=40)),  # text
    st.builds(lambda p: frame(1, p), st.binary(max_size=20)),  # text, maybe not UTF-8: 1007
    st.builds(lambda a, b: frame(2, a, fin=False) + frame(0, b), st.binary(max_size=90), st.binary(max_size=90)),
    st.builds(lambda a, b: frame(1, a.encode(), fin=False) + frame(0, b.encode()), st.text(max_size=20), st.text(max_size=20)),
    st.builds(lambda p: frame(2, p, fin=False), st.binary(max_size=10)),  # a fragment whose message never ends
    st.builds(lambda p: frame(0, p), st.binary(max_size=10)),  # a continuation with no message: 1002
    st.builds(lambda p: frame(9, p), st.binary(max_size=20)),  # ping: a pong is written
    st.builds(lambda p: frame(10, p), st.binary(max_size=20)),  # unsolicited pong
    st.builds(lambda p: frame(2, p, masked=False), st.binary(max_size=20)),  # unmasked: 1002
    st.builds(lambda p, r: frame(2, p, rsv=r), st.binary(max_size=20), st.integers(1, 7)),  # reserved bits: 1002
    st.builds(lambda o, p: frame(o, p), st.sampled_from([3, 7, 11, 15]), st.binary(max_size=5)),  # unknown opcodes
    st.builds(lambda p: frame(8, struct.pack("!H", 1000) + p), st.binary(max_size=10)),  # close
    st.builds(lambda p: frame(9, p, fin=False), st.binary(max_size=5)),  # a fragmented control frame: 1002
)
streams = st.lists(st.one_of(plain_binary, plain_binary, other_frames), min_size=1, max_size=25)


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


async def feed(conn: Recorder, ws: ServerConnection, transport: Transport, chunks: list[bytes],
               turns: list[int], end: str) -> dict[str, Any]:
    task = await run(conn)
    for i, chunk in enumerate(chunks):
        if transport.closing:
            break
        transport.protocol.data_received(chunk)  # as the transport calls it
        for _ in range(turns[i % len(turns)] if turns else 0):
            await asyncio.sleep(0)
    for _ in range(40):  # drain what was read
        await asyncio.sleep(0)
    if not transport.closing:
        if end == "eof":
            transport.protocol.eof_received()
        transport.close()
    await asyncio.wait_for(task, 5)
    protocol = ws.protocol
    return {
        "handled": conn.handled,
        "written": b"".join(transport.written),
        "state": protocol.state,
        "close_rcvd": protocol.close_rcvd,
        "close_sent": protocol.close_sent,
        "reading": transport.reading,
        "flow": transport.flow,
    }


async def both(chunks: list[bytes], turns: list[int], end: str,
               max_size: int = MAX_SIZE) -> tuple[dict[str, Any], dict[str, Any]]:
    plain = await feed(*open_connection(plain=True, max_size=max_size), chunks, turns, end)
    fast = await feed(*open_connection(plain=False, max_size=max_size), chunks, turns, end)
    return plain, fast


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams, st.lists(st.integers(0, 10_000), max_size=8), st.lists(st.integers(0, 3), max_size=5),
       st.sampled_from(["eof", "lost"]))
def test_any_stream_is_read_as_websockets_reads_it(frames: list[bytes], cuts: list[int], turns: list[int], end: str) -> None:
    data = b"".join(frames)
    plain, fast = asyncio.run(both(chunked(data, cuts), turns, end))
    assert fast == plain


@pytest.mark.parametrize("size", [0, 1, 124, 125, 126, 127, MAX_SIZE - 1, MAX_SIZE, MAX_SIZE + 1, 65535, 65536])
@pytest.mark.parametrize("wide", [0, 2, 8])
def test_sizes_at_the_edges_are_read_as_websockets_reads_them(size: int, wide: int) -> None:
    """Each length form at its edges, and the size limit (1009 above it), alone in a
    read and after a whole frame."""
    payload = bytes(range(256)) * (size // 256 + 1)
    for stream in ([frame(2, payload[:size], wide=wide)], [frame(2, b"ok") + frame(2, payload[:size], wide=wide)]):
        plain, fast = asyncio.run(both(stream, [1], "lost"))
        assert fast == plain


@pytest.mark.parametrize("max_size", [MAX_SIZE, 60])
def test_a_read_of_one_short_frame_is_read_as_websockets_reads_it(max_size: int) -> None:
    """A read that is one whole frame of under 126 bytes and nothing else (the inbox's
    shortest path: most reads): every such size, under and over a size limit below 126
    (1009), and reads that only look like one: another opcode, no fin, reserved bits,
    no mask, a byte more or less; alone, and after a ping that websockets answered."""
    for size in sorted({*range(8), *range(54, 68), *range(118, 126)}):
        payload = bytes(range(size))
        one = frame(2, payload)
        looks_like_one = [frame(1, b"t" * size), frame(2, payload, fin=False), frame(2, payload, rsv=4),
                          frame(2, payload, masked=False), one + b"\x82", one[:-1]]
        for stream in ([one], [frame(9, b"p"), one], *([x] for x in looks_like_one), [one, one]):
            plain, fast = asyncio.run(both(stream, [1], "lost", max_size))
            assert fast == plain, (size, stream)


def test_whole_binary_frames_skip_websockets_parser_and_arrive_in_order() -> None:
    """The fast path is taken (a websockets upgrade that moves its parser's wait would
    turn it off silently: this fails instead), one read of many frames or a frame a read."""

    async def go() -> None:
        conn, ws, transport = open_connection(plain=False)
        task = await run(conn)
        inbox = ws.recv_messages
        assert isinstance(inbox, Inbox) and transport.protocol is inbox and inbox.between
        parsed: list[bytes] = []
        original = ws.data_received
        ws.data_received = lambda data: (parsed.append(data), original(data))  # type: ignore[method-assign]
        messages = [bytes([i]) * (i * 7 % (MAX_SIZE + 1)) for i in range(40)]  # 0 to MAX_SIZE bytes: both length forms
        inbox.data_received(b"".join(frame(2, m) for m in messages[:3]))
        for m in messages[3:]:
            inbox.data_received(frame(2, m))
            await asyncio.sleep(0)
        for _ in range(10):
            await asyncio.sleep(0)
        assert parsed == [] and conn.handled == messages
        # A ping between them goes through websockets (a pong is written) and the next
        # frames are parsed here again.
        inbox.data_received(frame(2, b"a") + frame(9, b"p") + frame(2, b"b"))
        inbox.data_received(frame(2, b"c"))
        for _ in range(10):
            await asyncio.sleep(0)
        assert len(parsed) == 1 and conn.handled[-3:] == [b"a", b"b", b"c"] and b"".join(transport.written) == b"\x8a\x01p"
        assert inbox.between
        # A frame cut by the read: websockets' parser holds part of it; the rest goes to
        # it too, and the next whole frame is parsed here.
        cut = frame(2, b"x" * 50)
        inbox.data_received(cut[:10])
        assert not inbox.between
        inbox.data_received(cut[10:])
        assert inbox.between
        inbox.data_received(frame(2, b"y"))
        for _ in range(10):
            await asyncio.sleep(0)
        assert conn.handled[-2:] == [b"x" * 50, b"y"] and len(parsed) == 3
        transport.close()
        await task

    asyncio.run(go())


def test_a_frame_read_while_the_task_waits_is_handed_to_it() -> None:
    """A one-frame read while the connection's task waits is handed to the task (the
    waiter's result), not queued; reads that come before the task wakes queue behind
    it, and everything is handled in the order it came (for any stream and turns:
    test_any_stream_is_read_as_websockets_reads_it)."""

    async def go() -> None:
        conn, ws, transport = open_connection(plain=False)
        task = await run(conn)
        inbox = ws.recv_messages
        assert isinstance(inbox, Inbox) and inbox.waiter is not None
        waiter = inbox.waiter
        inbox.data_received(frame(2, b"one"))
        assert waiter.result() == b"one" and not inbox.items  # handed over, not queued
        inbox.data_received(frame(2, b"two"))  # the task has not woken yet: queued
        inbox.data_received(frame(2, b"three"))
        assert list(inbox.items) == [b"two", b"three"]
        for _ in range(5):
            await asyncio.sleep(0)
        assert conn.handled == [b"one", b"two", b"three"] and not inbox.items and inbox.waiter is not None
        transport.close()
        await task

    asyncio.run(go())


@pytest.mark.parametrize("plain", [True, False])
def test_reading_pauses_while_frames_wait_and_resumes_once_read(plain: bool) -> None:
    """A client sending faster than its frames are handled: above max_queue waiting frames
    the transport stops reading, at a quarter of it again (as websockets' Assembler)."""

    async def go() -> None:
        conn, _, transport = open_connection(plain=plain)
        conn.gate = asyncio.Event()  # handling is held
        task = await run(conn)
        messages = [b"m%d" % i for i in range(30)]
        transport.protocol.data_received(b"".join(frame(2, m) for m in messages[:2]))
        await asyncio.sleep(0)
        assert conn.handled == [b"m0"] and transport.reading
        transport.protocol.data_received(b"".join(frame(2, m) for m in messages[2:]))  # 28 more in one read
        await asyncio.sleep(0)
        assert not transport.reading and transport.pauses == 1
        conn.gate.set()
        for _ in range(200):
            await asyncio.sleep(0)
            if len(conn.handled) == len(messages):
                break
        assert conn.handled == messages and transport.reading and transport.pauses == 1
        # Paused with 29 waiting (the first one being handled), resumed once at most
        # MAX_QUEUE // 4 were left waiting.
        assert transport.flow == [("pause", 1), ("resume", len(messages) - 1 - MAX_QUEUE // 4)]
        transport.close()
        await task

    asyncio.run(go())


@pytest.mark.parametrize("plain", [True, False])
def test_frames_of_one_read_take_turns_with_other_connections(plain: bool) -> None:
    """50 frames in one read on one connection, a frame on another right after: the
    other's is handled after one more of the first's, not after all of them (each
    connection yields to the loop between frames while more wait)."""

    async def go() -> None:
        (a, _, ta), (b, _, tb) = open_connection(plain=plain), open_connection(plain=plain)
        order: list[bytes | str] = []
        a.handled = b.handled = order
        tasks = [await run(a), await run(b)]
        ta.protocol.data_received(b"".join(frame(2, b"a%d" % i) for i in range(50)))
        tb.protocol.data_received(frame(2, b"b"))
        for _ in range(100):
            await asyncio.sleep(0)
        assert sorted(order) == sorted([b"a%d" % i for i in range(50)] + [b"b"])  # type: ignore[type-var]
        assert order.index(b"b") <= 2
        for transport in (ta, tb):
            transport.close()
        await asyncio.gather(*tasks)

    asyncio.run(go())


def test_frames_that_came_with_the_handshake_are_read_first() -> None:
    """Frames websockets queued in its Assembler before the handler ran are taken over."""

    async def go() -> None:
        conn, ws, transport = open_connection(plain=False)
        ws.data_received(frame(2, b"early") + frame(1, b"text"))  # before run(): websockets' Assembler
        task = await run(conn)
        transport.protocol.data_received(frame(2, b"late"))
        for _ in range(10):
            await asyncio.sleep(0)
        assert conn.handled == [b"early", "text", b"late"]
        transport.close()
        await task

    asyncio.run(go())


def test_a_connection_dropped_while_waiting_stops_reading() -> None:
    """drop() (flood, hello timeout) while the task waits for a frame: the close handshake
    ends the read, and frames that arrive meanwhile are not handled."""

    async def go() -> None:
        conn, ws, transport = open_connection(plain=False)
        task = await run(conn)
        conn.drop("flood", "flooding")
        transport.protocol.data_received(frame(2, b"after"))
        for _ in range(5):
            await asyncio.sleep(0)
        assert conn.handled == []
        transport.protocol.data_received(frame(8, struct.pack("!H", 1000)))  # the client answers the close
        await asyncio.wait_for(task, 5)
        assert ws.protocol.close_sent is not None and ws.protocol.close_sent.code == 1008

    asyncio.run(go())


def test_frames_go_through_websockets_when_its_parser_waits_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser not found where this websockets waits between frames: every frame is
    parsed by websockets, into the inbox."""
    monkeypatch.setattr(reading_module, "_PARSE", None)

    async def go() -> None:
        conn, _, transport = open_connection(plain=False)
        task = await run(conn)
        transport.protocol.data_received(frame(2, b"a") + frame(2, b"b"))
        for _ in range(10):
            await asyncio.sleep(0)
        assert conn.handled == [b"a", b"b"]
        transport.close()
        await task

    asyncio.run(go())


@pytest.mark.redis
async def test_a_served_connection_reads_through_its_inbox(server_factory, client_factory) -> None:
    """On a real server (whichever event loop runs the tests) each connection's transport
    delivers to its inbox, and requests in one read and one by one are all answered."""
    server = await server_factory()
    client = await client_factory(server.url, "reader")
    await asyncio.gather(*(client.ok("ping") for _ in range(20)))
    (conn,) = server.connections
    inbox = conn.ws.recv_messages
    assert isinstance(inbox, Inbox) and conn.ws.transport.get_protocol() is inbox and inbox.between
    await client.ok("ping")
