"""protocol.packer: the reused Packer packs exactly what msgpack.packb packs, its
strict-types Packer included (subclasses and tuples come out as their base types do),
and `ok_version` exactly what the general encoder makes of a move's reply."""

from __future__ import annotations

import collections
import enum
import threading
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import encode
from protocol.messages import MAX_ID_LEN
from protocol.packer import OK_TABLE, ok_version, packb, packer

VALUES: list[Any] = [
    {},
    [],
    {"type": "patch", "room": "r1", "from": 3, "ops": [[0, -1, 2, "x"], [2, -3, 0]]},
    [1, 1.0, True, None, -0.0, b"\x00bin", "text", 2**63, -(2**63)],
    {"nested": {"deep": [{"a": [1, 2, {"b": b""}]}]}},
    "x" * 300_000,  # beyond the Packer's initial buffer
]


@pytest.mark.parametrize("value", VALUES)
def test_same_bytes_as_msgpack(value: Any) -> None:
    assert packb(value) == msgpack.packb(value, use_bin_type=True)
    assert packb(value) == msgpack.packb(value, use_bin_type=True)  # reused: no leftovers


@pytest.mark.parametrize("value", VALUES)
def test_the_thread_packer_packs_the_same(value: Any) -> None:
    pack = packer()
    assert pack(value) == pack(value) == msgpack.packb(value, use_bin_type=True)
    with pytest.raises(TypeError):
        pack([value, object()])
    assert pack(value) == packb(value)  # the same Packer, nothing left over


def test_a_failed_pack_leaves_nothing_behind() -> None:
    with pytest.raises(TypeError):
        packb({"ok": [1, 2, 3], "bad": object()})
    with pytest.raises(OverflowError):
        packb([1, 2, 2**64])
    assert packb({"after": 1}) == msgpack.packb({"after": 1})


def test_each_thread_has_its_own_packer() -> None:
    results: list[bool] = []

    def work() -> None:
        results.append(all(packb([i, "v" * i]) == msgpack.packb([i, "v" * i]) for i in range(2000)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


# -- ok_version: a move's reply from constant pieces ----------------------------------

REQUEST_IDS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),  # every id a client may send (RequestIdInt)
    st.integers(0, 2**32 + 5),  # the fast ranges and their edges more often
    st.sampled_from([0, 127, 128, 255, 256, OK_TABLE - 1, OK_TABLE, 65535, 65536, 2**32 - 1, 2**32, -1, -32, -33]),
    st.text(max_size=MAX_ID_LEN),
    st.none(),  # the id of a request whose id could not be read
)
VERSIONS = st.one_of(st.integers(0, 2**40), st.sampled_from([0, 1, 127, 128, OK_TABLE - 1, OK_TABLE]))


@given(REQUEST_IDS, VERSIONS)
def test_ok_version_is_the_general_encoders_frame(req_id: Any, version: int) -> None:
    expected = encode({"type": "ok", "id": req_id, "data": {"version": version}})
    assert ok_version(req_id, version) == expected
    assert msgpack.unpackb(ok_version(req_id, version)) == {"type": "ok", "id": req_id, "data": {"version": version}}


def test_ok_version_of_a_bool_is_packed_as_a_bool() -> None:
    # bool is an int subclass: the tables would make 1 of True
    assert ok_version(True, 1) == encode({"type": "ok", "id": True, "data": {"version": 1}})
class _Colour(str, enum.Enum):  # noqa: UP042 (its __str__ is not its text, unlike StrEnum's)
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Text(str):
    def __str__(self) -> str:  # packed as its text, not as what it prints
        return "something else"


class _Ints(list):  # type: ignore[type-arg]
    pass


_Pair = collections.namedtuple("_Pair", "a b")

_SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.binary(max_size=40) | st.text(max_size=40)
    | st.sampled_from([_Colour.RED, _Level.HIGH, _Text("t"), bytearray(b"ba"), float("inf")])
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.text(max_size=8) | st.integers(-5, 5) | st.sampled_from([_Colour.RED, _Level.HIGH])
    return (
        st.lists(children, max_size=5)
        | st.lists(children, max_size=5).map(tuple)
        | st.lists(children, max_size=5).map(_Ints)
        | st.tuples(children, children).map(lambda t: _Pair(*t))
        | st.dictionaries(keys, children, max_size=5)
        | st.dictionaries(keys, children, max_size=5).map(collections.OrderedDict)
    )


@settings(max_examples=400, deadline=None)
@given(st.recursive(_SCALARS, _containers, max_leaves=25))
def test_strict_types_pack_what_the_default_mode_packs(value: Any) -> None:
    # The server's Packer checks exact types (fewer instructions); anything the default
    # mode packs as a base type — tuples, namedtuples, enums, str/list/dict subclasses —
    # must come out byte for byte as msgpack.packb packs it.
    assert packb(value) == msgpack.packb(value, use_bin_type=True)
    assert packer()(value) == msgpack.packb(value, use_bin_type=True)


def test_what_msgpack_cannot_pack_fails_the_same_way() -> None:
    for bad in (object(), {1, 2}, [1, {"deep": frozenset()}], complex(1, 2)):
        with pytest.raises(TypeError, match="can not serialize"):
            msgpack.packb(bad, use_bin_type=True)
        with pytest.raises(TypeError, match="can not serialize"):
            packb(bad)
    assert packb([1, (2, 3)]) == msgpack.packb([1, [2, 3]])  # nothing left over
