"""A patch frame packed in parts (`patch_head`, `patch_body`, `patch_bytes`: the server
packs a change's ops and events once for every member who sees them) is the very frame
`encode(compact_patch_frame(...))` packs, byte for byte, for any content."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    compact_patch_frame,
    decode_server,
    encode,
    frames,
    patch_body,
    patch_bytes,
    patch_head,
)
from protocol.packer import packb
from tests.protocol.test_patch import scalars

values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=12)
ops = st.lists(st.lists(st.integers(-200, 200) | st.text(max_size=3), min_size=1, max_size=4).map(
    lambda path: [0, *path]) | st.tuples(st.just(3), values).map(list), max_size=6)
action_event = st.fixed_dictionaries({"type": st.just("action"), "seat": st.integers(0, 4),
                                      "action": st.text(max_size=12)})
other_event = st.dictionaries(st.sampled_from(["type", "seat", "captured", "round"]), values, max_size=3)
events = st.lists(action_event | other_event, max_size=3)
legal = st.none() | st.lists(st.text(max_size=10), max_size=40)
edits = st.none() | st.lists(st.lists(st.integers(0, 300) | st.text(max_size=6), max_size=3), max_size=4)
versions = st.integers(0, 2**40) | st.integers(0, 300) | st.sampled_from([0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32])
rooms = st.text(min_size=1, max_size=12)


@settings(max_examples=400, deadline=None)
@given(rooms, versions, ops, events, legal, edits)
def test_parts_make_the_same_bytes(room: str, version: int, ops: list[Any], events: list[Any],
                                   legal: list[str] | None, edit: list[Any] | None) -> None:
    whole = encode(compact_patch_frame(room, version, ops, events, legal, edit))
    assert patch_bytes(patch_head(room), version, patch_body(ops, events), legal, edit) == whole


def test_one_body_serves_members_at_other_versions_and_lists() -> None:
    ops = [[0, -1, -3, 0, 1], [0, -2, -11, 44, "."], [3, -2, -14, "g8-g7"]]
    events = [{"type": "action", "seat": 0, "action": "g8-g7"}, {"type": "trample", "captured": ["g6"]}]
    head, body = patch_head("AbCdEfGh12"), patch_body(ops, events)
    for version, legal, edit in ((7, None, None), (300, ["e3-f3", "e3xe1"], None), (2**33, None, [[3, 5, "x"]])):
        frame = patch_bytes(head, version, body, legal, edit)
        assert frame == encode(compact_patch_frame("AbCdEfGh12", version, ops, events, legal, edit))
        patch = decode_server(frame)
        assert patch.from_ == version and patch.ops == ops


@given(st.text(max_size=40) | st.text(alphabet="AbCdEfGh0123456789", min_size=28, max_size=34))
def test_head_is_packb_for_any_room(room: str) -> None:
    """patch_head writes an ASCII room id under 32 bytes as a fixstr itself: the bytes
    msgpack writes, for ids around the fixstr bound (31/32) and non-ASCII ones too."""
    assert patch_head(room) == encode({"type": "patch", "room": room, "from": 0})[1:-1]


def test_heads_are_kept_within_their_bound(monkeypatch: Any) -> None:
    """patch_head keeps each room's head (the same bytes every change) and empties the
    table when it holds HEADS_KEPT: a server of many rooms keeps a bounded number."""
    monkeypatch.setattr(frames, "HEADS_KEPT", 3)
    monkeypatch.setattr(frames, "_HEADS", {})
    for n in range(10):
        room = f"room{n % 5}" if n % 2 else "é" * (n + 30)  # fixstr and longer ids, ASCII and not
        assert patch_head(room) == patch_head(room) == encode({"type": "patch", "room": room, "from": 0})[1:-1]
        assert 1 <= len(frames._HEADS) <= 3


@settings(max_examples=200, deadline=None)
@given(rooms, versions, ops, events, st.lists(st.text(max_size=10), max_size=40))
def test_a_prepacked_legal_list_makes_the_same_bytes(room: str, version: int, ops: list[Any], events: list[Any],
                                                      legal: list[str]) -> None:
    """publish packs a seat's list once for all its members (`packed_legal`)."""
    whole = encode(compact_patch_frame(room, version, ops, events, legal))
    assert patch_bytes(patch_head(room), version, patch_body(ops, events), None, None, packb(legal)) == whole
