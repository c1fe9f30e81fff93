"""bench/lean_load.py's shortcuts against the general paths they stand for: the act
frame's bytes, the frame parser's payloads, and the patch recognised without decoding."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import msgpack
from hypothesis import given
from hypothesis import strategies as st

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

import lean_load
import wsclient

from protocol.codec import encode
from protocol.frames import compact_patch_frame, patch_body, patch_bytes, patch_head

rooms = st.text(min_size=1, max_size=40)
actions = st.text(min_size=1, max_size=200)


@given(rooms, actions)
def test_act_frame_is_packb_of_the_act(room: str, action: str) -> None:
    head = msgpack.packb({"type": "act", "id": 0, "room": room, "action": ""})[:-1]
    assert head + msgpack.packb(action) == msgpack.packb({"type": "act", "id": 0, "room": room, "action": action})


@given(st.text(min_size=8, max_size=8), st.integers(0, 70000), st.lists(st.text(max_size=6), max_size=5))
def test_every_patch_the_server_packs_is_recognised(room: str, from_: int, legal: list[str]) -> None:
    frame = patch_bytes(patch_head(room), from_, patch_body([[0, -1, 3]], []), legal)
    assert frame == encode(compact_patch_frame(room, from_, [[0, -1, 3]], [], legal))
    assert frame.startswith(lean_load.PATCH_START, 1)
    assert not encode({"type": "ok", "id": 0, "data": {}}).startswith(lean_load.PATCH_START, 1)
    assert encode({"type": "ok", "id": 0, "data": {}}).startswith(lean_load.OK_START, 1)
    assert not encode({"type": "error", "id": 0, "code": "x", "message": ""}).startswith(lean_load.OK_START, 1)


def server_frame(payload: bytes) -> bytes:
    n = len(payload)
    if n < 126:
        return bytes((0x82, n)) + payload
    if n < 65536:
        return bytes((0x82, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x82, 127)) + n.to_bytes(8, "big") + payload


def feed(conn: Any, chunks: list[bytes]) -> list[bytes]:
    got: list[bytes] = []
    conn._handshaking = False
    conn.on_frame = got.append
    for chunk in chunks:
        conn.data_received(chunk)
    return got


@given(st.lists(st.binary(max_size=70000), min_size=1, max_size=6),
       st.lists(st.integers(1, 200000), max_size=8))
def test_lean_parser_gives_the_general_parsers_payloads(payloads: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(server_frame(p) for p in payloads)
    points = sorted({c % len(stream) for c in cuts} - {0})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]

    async def both() -> tuple[list[bytes], list[bytes]]:
        return feed(wsclient.LeanConnection(), chunks), feed(lean_load.LeanWire(), chunks)

    general, lean = asyncio.run(both())
    assert general == lean == payloads


class _Wake:
    def __init__(self) -> None:
        self.calls = 0

    def set(self) -> None:
        self.calls += 1


def _member(cls: Any) -> Any:
    import loadgen

    load = loadgen.Load("ws://unused", "giantslayer", None, 1, 1.0)
    load.stats.measuring = True
    m = cls(None, load, False, _Wake())
    m.seat, m.version = 0, 5
    return m


@given(st.lists(st.sampled_from(["a1-a2", "b1-b2", "c3-c4", "d1-d2", "é5-é6"]), min_size=1, max_size=6, unique=True),
       st.lists(st.sampled_from(["e1-e2", "f1-f2", "g1-g2"]), max_size=3, unique=True))
def test_lean_member_keeps_the_legal_list_classic_does(first: list[str], added: list[str]) -> None:
    """A patch with a whole list, one with an empty list, one with an edit of the base,
    one whose act is the seat's own: the lean member's legal list (as str), version,
    round trips and frame counts are the classic member's."""
    import loadgen

    head, body = patch_head("abcdefgh"), patch_body([[0, -1, 3]], [])
    own = patch_body([[0, -1, 3]], [{"type": "action", "seat": 0, "action": "a1-a2"}])
    frames = [patch_bytes(head, 5, body, first), patch_bytes(head, 6, body, []),
              patch_bytes(head, 7, body, None, [[0, 1], [len(first) - 1, 0, *added]]),
              patch_bytes(head, 8, own, None)]
    members = [_member(loadgen.Member), _member(lean_load.LeanMember)]
    for m in members:
        for i, frame in enumerate(frames):
            if i == 3:
                m.sent_at = 0.0
            m.on_frame(frame)
    classic, lean = members
    assert [a.decode() if type(a) is bytes else a for a in lean.legal] == classic.legal
    assert lean.version == classic.version == 9
    assert len(lean.load.stats.rtts) == len(classic.load.stats.rtts) == 1
    assert lean.sent_at is classic.sent_at is None
    assert lean.load.stats.legal_frames == classic.load.stats.legal_frames
    assert lean.load.stats.seat_frames == classic.load.stats.seat_frames
    assert lean.load.stats.errors == classic.load.stats.errors == {}
