"""The server frames its own outbound binary messages (server.connection.push):
the bytes must be exactly what websockets would have written, at every length
boundary of RFC 6455's payload-length encoding, and a real client must read them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from server.config import Config
from server.connection import FRAME_OVERHEAD, Connection, binary_header
from server.metrics import Metrics

BOUNDARIES = [0, 1, 125, 126, 127, 1023, 1024, 1025, 65535, 65536, 65537]


@pytest.mark.parametrize("size", BOUNDARIES)
def test_header_matches_websockets_at_length_boundaries(size: int) -> None:
    payload = bytes(size)
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False, extensions=[])
    assert binary_header(size) + payload == expected


@given(st.binary(max_size=70_000))
def test_header_matches_websockets_for_any_payload(payload: bytes) -> None:
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False, extensions=[])
    assert binary_header(len(payload)) + payload == expected


class _Protocol:  # websockets' sans-I/O protocol, as far as Connection.push reads it
    def __init__(self) -> None:
        self.state = self._state = State.OPEN
        self.writes, self.extensions, self.expect_continuation_frame = [], [], False


class _Transport:
    def __init__(self, buffered: int) -> None:
        self.buffered = buffered

    def get_write_buffer_size(self) -> int:
        return self.buffered


def test_push_frames_as_websockets_at_every_length() -> None:
    """push frames in place from a table (under 1 KiB), a packer (under 64 KiB) or
    binary_header: the bytes websockets would write, at and around every boundary; the
    bytes counted against max_write_buffer as before (payload + FRAME_OVERHEAD each)."""
    flushes: list[Any] = []
    server = SimpleNamespace(config=Config(), metrics=Metrics(), dirty=[], flush_promised=False, schedule_flush=flushes.append, router=None)
    ws = SimpleNamespace(request=None, response=None, protocol=_Protocol(), transport=_Transport(0),
                         send_in_progress=None)  # fmt: skip
    conn = Connection(ws, server)  # type: ignore[arg-type]
    sizes = sorted({*range(0, 300), *(b + d for b in BOUNDARIES for d in (-2, -1, 0, 1, 2) if b + d >= 0), 100_000})
    expected = []
    for size in sizes:
        payload = bytes([size % 251]) * size
        conn.push(payload)
        expected.append(Frame(Opcode.BINARY, payload).serialize(mask=False, extensions=[]))
    assert ws.protocol.writes == expected
    assert conn.queued == sum(sizes) + FRAME_OVERHEAD * len(sizes)
    assert conn.metrics.frames_out == len(sizes) and flushes == [conn]


def test_push_drops_a_connection_over_its_write_buffer_as_before() -> None:
    """The limit: write buffer + bytes framed since the last flush + this frame's."""
    for buffered, queued, size in [(0, 0, 100), (10, 90, 50), (0, 0, 0)]:
        limit = buffered + queued + size + FRAME_OVERHEAD
        for max_write_buffer, dropped in [(limit, None), (limit - 1, "slow")]:
            spawned: list[Any] = []
            server = SimpleNamespace(config=Config(max_write_buffer=max_write_buffer), metrics=Metrics(),
                                     dirty=[], flush_promised=False, schedule_flush=lambda conn: None, router=None,
                                     limit_closed=lambda reason: None, spawn=spawned.append)  # fmt: skip
            ws = SimpleNamespace(request=None, response=None, protocol=_Protocol(), transport=_Transport(buffered),
                                 send_in_progress=None, close=lambda code, reason: None)  # fmt: skip
            conn = Connection(ws, server)  # type: ignore[arg-type]
            conn.queued = queued
            conn.push(bytes(size))
            assert conn.dropped == dropped
            assert len(ws.protocol.writes) == (dropped is None)
            assert conn.queued == queued + (size + FRAME_OVERHEAD if dropped is None else 0)


def test_push_leaves_an_extensions_frames_to_websockets() -> None:
    """With an extension negotiated (never, as the server is configured) push hands
    every frame to websockets' send_binary, which applies it: read once, at the start."""
    sent: list[bytes] = []
    protocol = _Protocol()
    protocol.extensions = [object()]
    protocol.send_binary = sent.append  # type: ignore[attr-defined]
    server = SimpleNamespace(config=Config(), metrics=Metrics(), dirty=[], flush_promised=False, schedule_flush=lambda conn: None, router=None)
    ws = SimpleNamespace(request=None, response=None, protocol=protocol, transport=_Transport(0),
                         send_in_progress=None)  # fmt: skip
    conn = Connection(ws, server)  # type: ignore[arg-type]
    conn.push(b"abc")
    conn.push(bytes(2000))
    assert sent == [b"abc", bytes(2000)] and protocol.writes == []
    assert not conn.plain_frames and Connection(SimpleNamespace(request=None, response=None), server).plain_frames  # type: ignore[arg-type]


class _Recorder:  # a transport that records what flush does with it
    def __init__(self, eof: bool) -> None:
        self.calls: list[Any] = []
        self.eof = eof

    def write(self, data: bytes) -> None:
        self.calls.append(("write", data))

    def can_write_eof(self) -> bool:
        return self.eof

    def write_eof(self) -> None:
        self.calls.append(("eof",))

    def close(self) -> None:
        self.calls.append(("close",))


def plain_flush(chunks: list[bytes], transport: _Recorder) -> None:
    """Connection.flush's writes as written before a lone frame was written as it is."""
    if all(chunks):
        if chunks:
            transport.write(b"".join(chunks))
    else:
        for chunk in chunks:
            if chunk:
                transport.write(chunk)
            elif transport.can_write_eof():
                transport.write_eof()
            else:
                transport.close()


@given(st.lists(st.sampled_from([b"", b"\x82\x01a", b"\x88\x02\x03\xe8", bytes(300)]), max_size=4), st.booleans())
def test_flush_writes_as_it_wrote_every_list(chunks: list[bytes], eof: bool) -> None:
    """flush writes a lone frame as it is (no scan, no join): the same writes, the same
    end of stream (an empty chunk: websockets' marker), as the whole list's path, for
    lists of no chunk, one, several, the marker among them."""
    server = SimpleNamespace(config=Config(), metrics=Metrics(), dirty=[], flush_promised=False, schedule_flush=lambda conn: None, router=None)
    ws = SimpleNamespace(request=None, response=None, protocol=_Protocol(), transport=_Recorder(eof),
                         send_in_progress=None)  # fmt: skip
    conn = Connection(ws, server)  # type: ignore[arg-type]
    ws.protocol.writes = list(chunks)
    conn.flush()
    expected = _Recorder(eof)
    plain_flush(chunks, expected)
    assert ws.transport.calls == expected.calls and ws.protocol.writes == [] and conn.queued == 0
