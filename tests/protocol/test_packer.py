"""protocol.packer: the reused Packer packs exactly what msgpack.packb packs."""

from __future__ import annotations

import threading
from typing import Any

import msgpack
import pytest

from protocol.packer import packb, packer

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
