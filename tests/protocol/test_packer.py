"""protocol.packer: the reused Packer packs exactly what msgpack.packb packs, and
`ok_version` exactly what the general encoder makes of a move's reply."""

from __future__ import annotations

import threading
from typing import Any

import msgpack
import pytest
from hypothesis import given
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
