"""The msgpack codec: round trips, and a stable error for every kind of bad frame."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    MAX_FRAME,
    Act,
    BadFrame,
    BadMessage,
    ClientMessage,
    CreateRoom,
    ErrorCode,
    FrameTooLarge,
    Hello,
    Join,
    Leave,
    ListRooms,
    Patch,
    Ping,
    ProtocolError,
    Replay,
    Resume,
    Resync,
    Snapshot,
    Start,
    UnknownType,
    Watch,
    decode_client,
    decode_server,
    encode,
    error_frame,
    ok_frame,
    patch_frame,
    recover_id,
    snapshot_frame,
)
from protocol.messages import CLIENT_MESSAGE_TYPES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def pack(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


ALL_REQUESTS: list[ClientMessage] = [
    Hello(id=1, protocol=1, name="ann", client="test/1"),
    ListRooms(id=2, game="giantslayer", include_finished=True),
    CreateRoom(
        id="c3", game="giantslayer", rules="standard", players=2, options={"size": 5},
        private=True, password="pw", bots={"1": "random"}, deadline=30.0, autostart=False,
    ),
    Join(id=4, room="r1", seat=1, password="pw"),
    Watch(id=5, room="r1"),
    Resume(id=6, room="r1", token="tok"),
    Leave(id=7, room="r1"),
    Start(id=8, room="r1"),
    Act(id=9, room="r1", action="a1-b2", version=12),
    Resync(id=10, room="r1"),
    Replay(id=11, room="r1"),
    Ping(id=12),
]  # fmt: skip


@pytest.mark.parametrize("msg", ALL_REQUESTS, ids=lambda m: m.type)
def test_every_request_round_trips(msg: ClientMessage) -> None:
    assert decode_client(encode(msg)) == msg


def test_server_pushes_built_as_dicts_decode_on_the_client() -> None:
    snap = decode_server(encode(snapshot_frame("r", 3, None, {"game": {"b": b"\x00"}}, [])))
    assert isinstance(snap, Snapshot) and snap.seat is None and snap.view["game"]["b"] == b"\x00"
    patch = decode_server(
        encode(patch_frame("r", 3, 4, [["set", ["a"], 1]], [{"type": "x"}], ["a1"]))
    )
    assert isinstance(patch, Patch) and (patch.from_, patch.to, patch.legal) == (3, 4, ["a1"])
    ok = decode_server(encode(ok_frame("q", {"room": "r"})))
    assert ok.type == "ok" and ok.id == "q" and ok.data == {"room": "r"}


def test_oversized_frame_is_rejected_before_decoding() -> None:
    frame = pack({"type": "act", "id": 1, "room": "r", "action": "x" * MAX_FRAME})
    with pytest.raises(FrameTooLarge) as info:
        decode_client(frame)
    assert info.value.code == ErrorCode.FRAME_TOO_LARGE and info.value.id is None
    with pytest.raises(FrameTooLarge):
        decode_client(pack({"type": "ping", "id": 1}), max_size=4)


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"\xc1",  # never-used msgpack byte
        b"\x92\x01",  # truncated array
        pack({"type": "ping", "id": 1}) + pack({"type": "ping", "id": 2}),  # trailing data
        msgpack.packb(msgpack.ExtType(5, b"x")),
        pack({1: "int keys are not allowed in requests"}),
        "text frame",
    ],
)
def test_non_msgpack_is_bad_frame(frame: Any) -> None:
    with pytest.raises(BadFrame) as info:
        decode_client(frame)
    assert info.value.code == "bad_frame" and info.value.id is None


@pytest.mark.parametrize("value", [[1, 2], 5, "hello", None, b"\x00"])
def test_non_map_is_bad_frame(value: Any) -> None:
    with pytest.raises(BadFrame):
        decode_client(pack(value))


def test_unknown_type_keeps_the_id() -> None:
    with pytest.raises(UnknownType) as info:
        decode_client(pack({"type": "teleport", "id": 42}))
    exc = info.value
    assert exc.code == "unknown_type" and exc.id == 42 and exc.detail is not None
    assert exc.detail["type"] == "teleport" and "act" in exc.detail["known"]


@pytest.mark.parametrize("kind", [None, 5])
def test_missing_or_non_string_type_is_bad_message(kind: Any) -> None:
    data = {"id": "q"} if kind is None else {"id": "q", "type": kind}
    with pytest.raises(BadMessage) as info:
        decode_client(pack(data))
    assert info.value.id == "q"
    detail = info.value.detail
    assert detail is not None and [f["field"] for f in detail["fields"]] == ["type"]


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"type": "act", "id": 1, "room": 5, "action": "a"}, ["room"]),
        ({"type": "act", "id": 1, "room": "r"}, ["action"]),
        ({"type": "act", "id": 1, "room": "r", "action": "a", "version": "7"}, ["version"]),
        ({"type": "join", "id": 1, "room": "r", "seat": "0"}, ["seat"]),
        ({"type": "join", "id": 1, "room": "r", "seat": False}, ["seat"]),
        ({"type": "hello", "id": 1, "protocol": 1.0}, ["protocol"]),
        ({"type": "ping", "id": 1, "junk": True}, ["junk"]),
        ({"type": "create_room", "id": 1, "game": "g", "options": {"n": [1]}}, ["options.n"]),
        ({"type": "create_room", "id": 1, "game": 1, "players": "2"}, ["game", "players"]),
    ],
)
def test_wrong_fields_are_bad_message_naming_each_field(
    data: dict[str, Any], fields: list[str]
) -> None:
    with pytest.raises(BadMessage) as info:
        decode_client(pack(data))
    exc = info.value
    assert exc.code == "bad_message" and exc.id == 1
    assert exc.detail is not None and exc.detail["type"] == data["type"]
    assert [f["field"] for f in exc.detail["fields"]] == fields
    for name in fields:
        assert name in exc.message


def test_missing_id_is_bad_message_without_id() -> None:
    with pytest.raises(BadMessage) as info:
        decode_client(pack({"type": "ping"}))
    assert info.value.id is None
    assert [f["field"] for f in info.value.detail["fields"]] == ["id"]  # type: ignore[index]


@pytest.mark.parametrize("rid", [True, 1.5, [1], "x" * 65, 2**64 - 1])
def test_unusable_ids_are_not_echoed(rid: Any) -> None:
    with pytest.raises(BadMessage) as info:
        decode_client(pack({"type": "ping", "id": rid}))
    assert info.value.id is None
    assert error_frame(info.value)["id"] is None


def test_error_frame_carries_code_id_and_detail() -> None:
    try:
        decode_client(pack({"type": "join", "id": "j1", "room": "r", "seat": "x"}))
    except ProtocolError as exc:
        frame = error_frame(exc)
    assert frame["type"] == "error" and frame["id"] == "j1" and frame["code"] == "bad_message"
    assert frame["detail"]["fields"][0]["field"] == "seat"
    assert decode_server(encode(frame)).type == "error"
    plain = error_frame(ErrorCode.NO_SUCH_ROOM, "no room r", id=3)
    assert plain == {"type": "error", "id": 3, "code": "no_such_room", "message": "no room r"}


CONTRACT_CODES = [
    "bad_frame",
    "frame_too_large",
    "bad_message",
    "unknown_type",
    "protocol_mismatch",
    "hello_required",
    "rate_limited",
    "server_full",
    "quota_exceeded",
    "no_such_room",
    "room_full",
    "seat_taken",
    "bad_password",
    "bad_token",
    "not_in_room",
    "not_seated",
    "not_started",
    "already_started",
    "stale_version",
    "not_finished",
    "internal_error",
    "shutting_down",
    "abort_too_late",
    "draw_not_allowed",
    "no_draw_offer",
    "storage_unavailable",
    "too_many_changes",
    "too_many_guesses",
    "unknown_game",
    "unknown_rules",
    "bad_options",
    "bad_notation",
    "illegal_action",
    "not_your_turn",
    "game_over",
]


def test_error_codes_are_exactly_the_contract_and_all_documented() -> None:
    """Clients switch on these strings: none may go missing from the enum or the docs."""
    assert {c.value for c in ErrorCode} == set(CONTRACT_CODES)
    text = DOCS.read_text()
    section = text[text.index("## 8. Error codes") : text.index("## 9.")]
    doc_codes = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert doc_codes == set(CONTRACT_CODES)


json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["id", "room", "seat", "action", "version", "protocol", "name", "game", "options", "bots",
     "token", "password", "players", "deadline", "private", "autostart", "rules", "junk"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_escape_as_anything_but_protocol_error(frame: bytes) -> None:
    """Nothing a client sends can crash the decoder: it is a request or a ProtocolError."""
    with contextlib.suppress(ProtocolError):
        decode_client(frame)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([*sorted(CLIENT_MESSAGE_TYPES), "nope"]),
    st.dictionaries(field_names, json_like, max_size=6),
)
def test_arbitrary_maps_give_a_request_or_a_coded_error(kind: str, fields: dict[str, Any]) -> None:
    frame = pack({"type": kind, **fields})
    try:
        msg = decode_client(frame)
    except ProtocolError as exc:
        assert exc.code in {ErrorCode.BAD_MESSAGE, ErrorCode.UNKNOWN_TYPE}
        assert exc.id == recover_id(fields)
        assert decode_server(encode(error_frame(exc))).type == "error"
    else:
        assert msg.type == kind
        assert decode_client(encode(msg)) == msg  # what was accepted round-trips
