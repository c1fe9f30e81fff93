"""decode_client's first try (a small map of a flat request type validated before the
checks that bound hostile frames) against the plain order: unpack, id, type, shape,
then the type's validator. Every frame must give the same model (same type, fields,
field types and fields set) or the same error (class, code, message, detail, id)."""

from __future__ import annotations

import random
import typing
from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from protocol import codec
from protocol.codec import (
    _bad_message,
    _check_type,
    act_frame,
    check_shape,
    decode_client,
    recover_id,
    unpack_map,
)
from protocol.errors import ProtocolError
from protocol.messages import CLIENT_MESSAGE_TYPES, Act


def plain_decode(frame: bytes) -> Any:
    """decode_client as it was before its first try: every check, then the validator."""
    data = unpack_map(frame)
    rid = recover_id(data)
    kind = _check_type(data, CLIENT_MESSAGE_TYPES, rid)
    check_shape(data, kind, rid)
    try:
        return CLIENT_MESSAGE_TYPES[kind].__pydantic_validator__.validate_python(data)
    except ValidationError as exc:
        raise _bad_message(kind, data, exc, rid, tagged=False) from None


def outcome(decode: Any, frame: bytes) -> tuple[Any, ...]:
    try:
        msg = decode(frame)
    except ProtocolError as exc:
        return ("error", type(exc), exc.code, exc.message, exc.detail, exc.id, type(exc.id))
    fields = tuple((name, type(value), repr(value)) for name, value in msg.__dict__.items())
    return ("model", type(msg), fields, msg.__pydantic_fields_set__, msg.__pydantic_extra__, msg.__pydantic_private__)


def check(frame: bytes) -> tuple[Any, ...]:
    fast, plain = outcome(decode_client, frame), outcome(plain_decode, frame)
    assert fast == plain, frame
    check_act_frame(frame, plain)
    return fast


def check_act_frame(frame: bytes, plain: tuple[Any, ...]) -> None:
    """act_frame (Connection.handle's move, no model built) against the plain decoder:
    fields exactly when the plain decoder makes an `Act` of a frame within
    ACT_FRAME_MAX bytes, and then the Act's fields, of the same types; None for
    everything else (which handle passes to unpack_map and validate_client)."""
    fields = act_frame(frame)
    # A room the caller knows to be valid is not checked again: the same result
    assert act_frame(frame, codec.MAX_FRAME, KNOWN_ROOMS) == fields, frame
    if plain[0] == "model" and plain[1] is Act and len(frame) <= codec.ACT_FRAME_MAX:
        assert fields is not None, frame
        msg = plain_decode(frame)
        expected = (msg.id, msg.room, msg.action, msg.version)
        assert fields == expected and list(map(type, fields)) == list(map(type, expected)), frame
        assert act_frame(frame, len(frame) - 1) is None  # over the frame limit: FrameTooLarge from the plain path
    else:
        assert fields is None, frame


# Valid room ids, as a connection's rooms hold them (`act_frame`'s `known`)
KNOWN_ROOMS = {"AbCdEfGh12": None, "a-b_C9": None, "a" * 64: None, "x" * 16: None, "act": None}


def test_known_rooms_are_room_ids() -> None:
    for room in KNOWN_ROOMS:
        frame = msgpack.packb({"type": "act", "id": 1, "room": room, "action": "a"})
        assert check(frame)[0] == "model"


def test_first_try_types_take_no_container() -> None:
    """The premise: no field of a type tried first admits a map or an array, so a map its
    validator accepts is flat and within check_shape's bounds."""

    def containers(annotation: Any) -> bool:
        if annotation is Any or typing.get_origin(annotation) in (dict, list) or annotation in (dict, list):
            return True
        return any(containers(arg) for arg in typing.get_args(annotation) if not isinstance(arg, str | int))

    for kind, (validate, fields) in codec._FLAT_FIRST.items():
        model = CLIENT_MESSAGE_TYPES[kind]
        assert validate.__self__ is model.__pydantic_validator__
        assert fields == len(model.model_fields) < codec.MAX_CONTAINER
        for name, info in model.model_fields.items():
            assert not containers(info.annotation), (kind, name)
    assert set(CLIENT_MESSAGE_TYPES) - set(codec._FLAT_FIRST) == {"create_room"}


# -- values: valid ones at their bounds, and the junk around them ---------------------

ROOM_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
INTS = [0, 1, -1, 17, 63, 64, 200, 201, 2**31, 2**63 - 1, -(2**63), 2**63, 2**64 - 1]
FLOATS = [0.0, -0.0, 1.0, 17.0, 1.5, float("nan"), float("inf"), float("-inf"), 86_400.0, 86_400.5]
STRS = ["", "a", " a", "a ", "act", "hello", "ping", "AbCdEfGh12", "ab:cd", "ab\n", "é", "a\u202eb", "\x00",
        "c3-d4", "x" * 16, "x" * 63, "x" * 64, "x" * 65, "x" * 128, "x" * 129, "x" * 1024, "x" * 1025]
KINDS = [*sorted(CLIENT_MESSAGE_TYPES), "nope", "Act", "act ", ""]
EXTRA_KEYS = ["junk", "Type", "act", "from", "options", "bots"]
SIZES = [(0, 1, 3, 65), (0, 1, 3), (0, 1, 3), (0, 1)]  # of a container, by its depth


def random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if pick < 0.25:
        return rng.choice([*INTS, rng.randrange(-(2**63), 2**64)])
    if pick < 0.45:
        return rng.choice([*STRS, "".join(rng.choice(ROOM_CHARS + "é: ") for _ in range(rng.randrange(1, 70)))])
    if pick < 0.55:
        return rng.choice(FLOATS)
    if pick < 0.65:
        return rng.choice([True, False, None])
    if pick < 0.7:
        return rng.choice([b"", b"act", b"x" * 70])
    if depth > 2:
        return None
    if pick < 0.85:
        return [random_value(rng, depth + 1) for _ in range(rng.choice(SIZES[depth]))]
    return {rng.choice(EXTRA_KEYS + STRS[:8]): random_value(rng, depth + 1) for _ in range(rng.choice(SIZES[depth]))}


def random_request(rng: random.Random) -> dict[Any, Any]:
    """Mostly a valid request of a random type, then some of its fields spoilt."""
    kind = rng.choice(KINDS)
    model = CLIENT_MESSAGE_TYPES.get(kind, CLIENT_MESSAGE_TYPES["act"])
    data: dict[Any, Any] = {"type": kind, "id": rng.choice([rng.randrange(-(2**63), 2**63), "r" * rng.randrange(65)])}
    valid = {"room": "AbCdEfGh12", "action": "c3-d4", "version": rng.choice([0, 17, 2**63 - 1, None]),
             "protocol": 3, "name": "ann", "client": "cli/1", "seat": rng.choice([0, 63, None]),
             "password": rng.choice(["", "pw", None]), "key": rng.choice(["k" * 16, None]), "token": "t" * 20,
             "positions": rng.choice([True, False]), "game": "giantslayer", "include_finished": False,
             "limit": rng.choice([1, 200, None]), "cursor": "c1"}  # fmt: skip
    for name in model.model_fields:
        if name not in ("id", "type") and name in valid and rng.random() < 0.9:
            data[name] = valid[name]
    for _ in range(rng.choice([0, 0, 0, 1, 2])):  # spoil some fields
        name = rng.choice([*model.model_fields, "type", "id"])
        if rng.random() < 0.2:
            data.pop(name, None)
        else:
            data[name] = random_value(rng)
    for _ in range(rng.choice([0, 0, 0, 0, 1, 3, 70])):  # extra keys, bytes keys among them
        data[rng.choice([*EXTRA_KEYS, f"k{rng.randrange(100)}", b"id", b"type", b"room"])] = random_value(rng)
    if rng.random() < 0.05:
        data.pop("type", None)
    return data


def test_seeded_requests() -> None:
    rng = random.Random(13)
    seen: dict[str, int] = {}
    for _ in range(4000):
        data = random_request(rng)
        frame = msgpack.packb(data, use_bin_type=True)
        result = check(frame)
        label = "model" if result[0] == "model" else result[2].value
        seen[label] = seen.get(label, 0) + 1
    # Both sides of the first try were exercised, and the checks ahead of the validator.
    assert seen["model"] > 800 and seen["bad_message"] > 800 and seen["unknown_type"] > 100, seen


def test_act_at_its_bounds() -> None:
    base = {"type": "act", "id": 1, "room": "AbCdEfGh12", "action": "c3-d4", "version": 17}
    for field in ("id", "room", "action", "version"):
        for value in [*INTS, *FLOATS, *STRS, True, False, None, b"x", [], {}, [1], {"a": 1}, [[1]]]:
            check(msgpack.packb({**base, field: value}, use_bin_type=True))
        rest = dict(base)
        del rest[field]
        check(msgpack.packb(rest, use_bin_type=True))
    for extra in ([("junk", 1)], [(b"room", "AbCdEfGh12")], [(f"x{i}", i) for i in range(70)]):
        check(msgpack.packb({**base, **dict(extra)}, use_bin_type=True))
    for room in ["a" * 64, "a" * 65, "a-b_C9", "a b", "ab\n", "\nab", "a\u0660", "Ab\u212a"]:
        check(msgpack.packb({**base, "room": room}, use_bin_type=True))
    assert check(msgpack.packb(base))[0] == "model"
    # No map (act_frame reads a frame's fields by subscript: a list, str, bin... raises)
    for value in ["act", "type", b"type", ["type", "act"], [base], 17, None, 1.5, True, {1: "act"},
                  {"type": ["act"]}, {"type": b"act"}, {b"type": "act", "id": 1, "room": "AbCdEfGh12", "action": "x"}]:
        check(msgpack.packb(value, use_bin_type=True))


json_like = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.floats()
    | st.text(max_size=70) | st.binary(max_size=8) | st.sampled_from(STRS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
field_names = st.sampled_from(["id", "room", "action", "version", "seat", "protocol", "name", "token",
                               "password", "key", "positions", "limit", "cursor", "junk"])  # fmt: skip


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.sampled_from(KINDS), st.dictionaries(field_names, json_like, max_size=6))
def test_arbitrary_requests(kind: str, fields: dict[str, Any]) -> None:
    check(msgpack.packb({"type": kind, **fields}, use_bin_type=True))


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.binary(max_size=40))
def test_arbitrary_bytes(frame: bytes) -> None:
    check(frame)


act_values = {
    "id": st.one_of(st.integers(min_value=-(2**63), max_value=2**64 - 1), st.text(max_size=66), json_like),
    "room": st.one_of(st.text(alphabet=ROOM_CHARS, min_size=0, max_size=66), st.sampled_from([*STRS, "a" * 65]),
                      st.text(max_size=8), json_like),
    "action": st.one_of(st.text(max_size=8), st.sampled_from([*STRS, "é" * 1024, "é" * 1025]), json_like),
    "version": st.one_of(st.integers(min_value=-2, max_value=2**64 - 1), st.none(), json_like),
    "type": st.one_of(st.just("act"), st.sampled_from(KINDS), json_like),
}


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.permutations(["type", "id", "room", "action", "version"]), st.data())
def test_act_frame_on_acts(names: list[str], data: st.DataObject) -> None:
    """Acts in every key order, one or two fields drawn around each bound and beyond,
    some left out, a key too many now and then: the fields act_frame returns are
    exactly the plain decoder's Act."""
    base = {"type": "act", "id": 3, "room": "AbCdEfGh12", "action": "c3-d4", "version": 0}
    spoilt = data.draw(st.lists(st.sampled_from(names), max_size=2), label="spoilt")
    fields: dict[str, Any] = {}
    for name in names:
        if name in spoilt and data.draw(st.integers(0, 9), label="missing") == 0:
            continue
        fields[name] = data.draw(act_values[name], label=name) if name in spoilt else base[name]
    if data.draw(st.integers(0, 9), label="extra") == 0:
        fields[data.draw(st.sampled_from(EXTRA_KEYS), label="key")] = data.draw(json_like, label="value")
    check(msgpack.packb(fields, use_bin_type=True))


def test_act_frame_takes_every_act() -> None:
    """Valid acts in every key order and field form reach act_frame's fields (within its size)."""
    base = {"type": "act", "id": 1, "room": "AbCdEfGh12", "action": "c3-d4", "version": 17}
    rng = random.Random(7)
    for _ in range(300):
        items = list({**base, "id": rng.choice([0, -(2**63), 2**63 - 1, "", "r" * 64]),
                      "room": rng.choice(["a", "a" * 64, "a-b_C9", "-", "_"]), "action": rng.choice(["x", "é" * 1024]),
                      "version": rng.choice([0, 2**64 - 1, None, "absent"])}.items())  # fmt: skip
        rng.shuffle(items)
        frame = msgpack.packb({k: v for k, v in items if v != "absent"}, use_bin_type=True)
        assert check(frame)[1] is Act
        assert (act_frame(frame) is not None) == (len(frame) <= codec.ACT_FRAME_MAX)
