"""Message models: strict client requests, tolerant server messages, wire shapes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from protocol import (
    Act,
    CreateRoom,
    Error,
    Hello,
    Join,
    Patch,
    Snapshot,
    to_wire,
)
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    SERVER_MESSAGE_TYPES,
    client_adapter,
    server_adapter,
)

CONTRACT_CLIENT_TYPES = {
    "hello", "list_rooms", "create_room", "join", "watch", "resume",
    "leave", "start", "act", "resync", "replay", "ping",
    "resign", "abort", "offer_draw", "decline_draw",
}  # fmt: skip
CONTRACT_SERVER_TYPES = {"ok", "error", "snapshot", "patch", "closing", "moved"}


def test_every_contract_message_type_has_a_model() -> None:
    assert set(CLIENT_MESSAGE_TYPES) == CONTRACT_CLIENT_TYPES
    assert set(SERVER_MESSAGE_TYPES) == CONTRACT_SERVER_TYPES


@pytest.mark.parametrize(
    "data",
    [
        {"type": "act", "id": 1, "room": "r", "action": "a1", "version": "3"},  # str -> int
        {"type": "act", "id": 1, "room": 7, "action": "a1"},  # int -> str
        {"type": "act", "id": True, "room": "r", "action": "a1"},  # bool id
        {"type": "join", "id": 1, "room": "r", "seat": True},  # bool -> int
        {"type": "join", "id": 1, "room": "r", "seat": 1.0},  # float -> int
        {"type": "hello", "id": 1, "protocol": "1"},
        {"type": "list_rooms", "id": 1, "include_finished": 1},  # int -> bool
        {"type": "act", "id": 1, "room": "r", "action": b"a1"},  # bytes -> str
        {"type": "create_room", "id": 1, "game": "g", "options": {"x": [1, 2]}},  # nested
        {"type": "create_room", "id": 1, "game": "g", "bots": {"one": "random"}},
        {"type": "ping", "id": 1, "extra": 0},  # extra fields are forbidden
    ],
)
def test_client_models_never_coerce_or_accept_unknown_fields(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        client_adapter.validate_python(data)


@pytest.mark.parametrize(
    "data",
    [
        {"type": "act", "id": "x" * 65, "room": "r", "action": "a"},
        {"type": "act", "id": 1, "room": "r" * 65, "action": "a"},
        {"type": "act", "id": 1, "room": "", "action": "a"},
        {"type": "act", "id": 1, "room": "r", "action": "a" * 1025},
        {"type": "act", "id": 1, "room": "r", "action": "a", "version": -1},
        {"type": "act", "id": 2**63, "room": "r", "action": "a"},
        {"type": "join", "id": 1, "room": "r", "seat": 64},
        {"type": "join", "id": 1, "room": "r", "seat": -1},
        {"type": "hello", "id": 1, "protocol": 1, "name": "n" * 65},
        {"type": "create_room", "id": 1, "game": "g", "players": 0},
        {"type": "create_room", "id": 1, "game": "g", "deadline": -1.0},
        {"type": "create_room", "id": 1, "game": "g", "options": {f"o{i}": i for i in range(33)}},
        {"type": "create_room", "id": 1, "game": "g", "options": {"s": "x" * 257}},
        {"type": "resume", "id": 1, "room": "r", "token": "t" * 129},
    ],
)
def test_client_models_bound_sizes(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        client_adapter.validate_python(data)


def test_option_values_keep_their_exact_type() -> None:
    """An engine tells bool from int options, so validation must not convert them."""
    msg = client_adapter.validate_python(
        {
            "type": "create_room",
            "id": 1,
            "game": "g",
            "options": {"a": 1, "b": True, "c": 1.5, "d": "x"},
        }
    )
    assert isinstance(msg, CreateRoom) and msg.options is not None
    assert [type(v) for v in msg.options.values()] == [int, bool, float, str]


def test_request_defaults_and_wire_shape() -> None:
    act = Act(id=3, room="r", action="a1")
    assert to_wire(act) == {"type": "act", "id": 3, "room": "r", "action": "a1"}  # None left out
    create = CreateRoom(id="c", game="giantslayer")
    assert create.autostart is True and create.private is False
    assert to_wire(Join(id=1, room="r", seat=0)) == {
        "type": "join",
        "id": 1,
        "room": "r",
        "seat": 0,
    }
    assert Hello(id=1, protocol=1).type == "hello"


def test_server_messages_keep_meaningful_nulls_and_the_from_alias() -> None:
    snap = Snapshot(room="r", version=0, seat=None, view={}, legal=[])
    assert to_wire(snap)["seat"] is None
    err = Error(id=None, code="bad_frame", message="m")
    assert to_wire(err) == {"type": "error", "id": None, "code": "bad_frame", "message": "m"}
    patch = server_adapter.validate_python(
        {"type": "patch", "room": "r", "from": 4, "to": 5, "ops": [], "events": [], "legal": ["a1"]}
    )
    assert isinstance(patch, Patch) and patch.from_ == 4
    assert to_wire(patch)["from"] == 4


def test_server_messages_tolerate_fields_a_newer_server_adds() -> None:
    msg = server_adapter.validate_python({"type": "ok", "id": 1, "data": {}, "trace": "x"})
    assert msg.type == "ok"
