"""Protocol 2's compact patches (protocol/compact.py): what the server encodes, a client
decodes and applies to exactly the server's view, for any view and any key table."""

from __future__ import annotations

import copy
import itertools
import random
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    PatchError,
    apply_patch,
    compact_ops,
    compact_patch_frame,
    decode_server,
    diff,
    diff_compact,
    encode,
    expand_ops,
    key_refs,
    key_table,
    snapshot_frame,
)
from protocol.compact import _whole_compact
from protocol.messages import Patch, Snapshot
from tests.protocol.test_patch import scalars
from tests.protocol.test_patch import tagged as tagged_value
from tests.protocol.test_patch_shared import mutate


def tagged(x: Any) -> Any:
    """As test_patch's `tagged`, for maps whose keys mix types (str, int, bool, bytes)."""
    if isinstance(x, dict):
        return ("map", sorted(((tagged(k), tagged(v)) for k, v in x.items()), key=repr))
    if isinstance(x, list | tuple):
        return ("list", [tagged(v) for v in x])
    return tagged_value(x)


def exact(a: Any, b: Any) -> bool:
    return tagged(a) == tagged(b)

# Map keys of every kind msgpack carries: strings (some in the key table, some not),
# ints (negative ones read like key references), bools, bytes.
KEY_POOL = ["room", "game", "board", "to_act", "a", "b", ""]
map_keys = (
    st.sampled_from(KEY_POOL)
    | st.text(max_size=4)
    | st.integers(min_value=-3, max_value=3)
    | st.booleans()
    | st.binary(max_size=2)
)
any_views = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(map_keys, inner, max_size=5),
    max_leaves=30,
)
tables = st.lists(st.sampled_from(KEY_POOL) | st.text(max_size=3), max_size=40).map(key_table)


def over_the_wire(
    room_view_old: Any, new: Any, keys: tuple[str, ...], events: list[Any], legal: list[str] | None
) -> Patch:
    """Server: diff, compact, frame, pack. Client: unpack, validate."""
    ops = compact_ops(diff(room_view_old, new), key_refs(keys), new)
    frame = encode(compact_patch_frame("r1", 7, ops, events, legal))
    msg = decode_server(frame)
    assert isinstance(msg, Patch)
    return msg


@settings(max_examples=400, deadline=None)
@given(any_views, any_views, tables)
def test_compact_patch_round_trips_any_view_exactly(old: Any, new: Any, keys: tuple[str, ...]) -> None:
    mine = msgpack.unpackb(msgpack.packb(old, use_bin_type=True), raw=False, strict_map_key=False)
    msg = over_the_wire(old, new, keys, [], [])
    assert exact(apply_patch(mine, expand_ops(msg.ops, keys), in_place=True), new)


@settings(max_examples=400, deadline=None)
@given(any_views, st.integers(0, 2**32), st.sampled_from([0.1, 0.5, 0.9]), tables)
def test_diff_compact_is_diff_then_compact_ops(old: Any, seed: int, rate: float, keys: tuple[str, ...]) -> None:
    """The one-walk form (the server's) gives what diff then compact_ops give, op for op,
    on views sharing their unchanged parts and with keys of every kind."""
    refs = key_refs(keys)
    for new in (mutate(old, random.Random(seed), rate), mutate(old, random.Random(seed + 1), rate), old):
        assert exact(diff_compact(old, new, refs), compact_ops(diff(old, new), refs, new))
        if new is not old:
            assert exact(diff_compact(new, old, refs), compact_ops(diff(new, old), refs, old))
    if old is not None:  # a member's first patch (views are never None)
        assert exact(diff_compact(None, old, refs), [[0, old]])


def test_diff_compact_replaces_a_container_as_diff_does_with_any_refs() -> None:
    """The whole-container choice is made on the plain ops' sizes, whatever the table
    (here one with a key twice, whose first reference is never used)."""
    old = {"board": ["."] * 10, "to_act": [0], "xy": {"a": 1, "b": 2, "c": 3, "d": 4}}
    for keys in (key_table(["board", "a", "b"]), ("board", "a", "board", "b", "xy"), ()):
        refs = key_refs(keys)
        for new in ({**old, "board": ["W"] * 10}, {**old, "board": ["W"] * 3 + ["."] * 7},
                    {**old, "xy": {"a": 5, "b": 6, "c": 7, "d": 4}}, {**old, "xy": {"a": 5, "b": 2, "c": 3, "d": 4}}):
            assert exact(diff_compact(old, new, refs), compact_ops(diff(old, new), refs, new))
            assert exact(apply_patch(old, expand_ops(diff_compact(old, new, refs), keys)), new)


@settings(max_examples=200, deadline=None)
@given(st.lists(any_views, min_size=2, max_size=6), tables)
def test_successive_compact_patches_follow_the_views(chain: list[Any], keys: tuple[str, ...]) -> None:
    """A client that applies each patch to its own copy keeps the server's view."""
    mine = copy.deepcopy(chain[0])
    for old, new in itertools.pairwise(chain):
        msg = over_the_wire(old, new, keys, [], [])
        mine = apply_patch(mine, expand_ops(msg.ops, keys))
        assert exact(mine, new)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.dictionaries(st.text(max_size=5), scalars, max_size=3), max_size=3),
    st.integers(min_value=0, max_value=5),
    st.text(max_size=8) | st.none(),
    st.lists(st.text(max_size=6), max_size=4),
)
def test_events_and_legal_arrive_as_in_protocol_1(
    rest: list[dict[str, Any]], seat: int, action: str | None, legal: list[str]
) -> None:
    """The leading action event travels as `act` and comes back first; `to` is from + 1."""
    events = [{"type": "action", "seat": seat, "action": action}, *rest]
    msg = over_the_wire({}, {}, key_table(()), events, legal)
    assert msg.from_ == 7 and msg.to == 8
    assert exact(msg.events, events)
    assert msg.legal == legal
    # and without an action event, the others stay as they were; no legal list: unchanged
    unchanged = over_the_wire({}, {}, key_table(()), rest, None)
    assert exact(unchanged.events, rest) and unchanged.legal is None


def test_documented_example() -> None:
    """docs/protocol.md section 6: the Giantslayer-like move as a protocol-2 frame."""
    keys = key_table(("board", "to_move", "quiet_plies", "quiet_moves", "last_move"))
    old = {"room": {"status": "playing", "to_act": [0]},
           "game": {"board": ["W", ".", ".", "B", "."], "round": 1, "rounds": 2, "totals": [0, 0],
                    "white_left": 24, "black_left": 6, "to_move": "white", "quiet_moves": [],
                    "last_move": "d2-d1"},
           "outcome": None}
    new = copy.deepcopy(old)
    new["room"]["to_act"] = [1]
    new["game"].update(board=["W", ".", ".", ".", "B"], to_move="black", quiet_moves=["d1-e1"], last_move="d1-e1")
    ops = compact_ops(diff(old, new), key_refs(keys), new)
    assert ops == [[0, -1, -3, 0, 1], [0, -2, -11, 3, "."], [0, -2, -11, 4, "B"], [0, -2, -12, "black"],
                   [3, -2, -14, "d1-e1"], [0, -2, -15, "d1-e1"]]
    frame = compact_patch_frame("k7qm2x9p", 12, ops, [{"type": "action", "seat": 0, "action": "d1-e1"}], None)
    assert frame == {"type": "patch", "room": "k7qm2x9p", "from": 12, "ops": ops, "act": [0, "d1-e1"]}
    assert len(encode(frame)) == 99  # the same patch is 230 bytes in protocol 1
    assert exact(apply_patch(old, expand_ops(ops, keys)), new)


def test_a_key_that_reads_as_a_reference_makes_the_whole_view_one_set() -> None:
    new = {"m": {-1: "x"}}
    ops = compact_ops(diff({"m": {}}, new), key_refs(key_table(())), new)
    assert ops == [[0, new]]
    assert exact(apply_patch({"m": {}}, expand_ops(ops, ())), new)


def test_snapshot_carries_the_key_table() -> None:
    keys = list(key_table(("board",)))
    msg = decode_server(encode(snapshot_frame("r", 3, 0, {"a": 1}, ["x"], keys)))
    assert isinstance(msg, Snapshot) and msg.keys == keys
    assert decode_server(encode(snapshot_frame("r", 3, 0, {"a": 1}, []))).keys is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "ops",
    [
        "not a list",
        [["set", ["a"], 1]],  # protocol 1's op names are not protocol 2's codes
        [[4, -1, 1]],  # unknown code
        [[-1, 1]],
        [[0]],  # set without a value
        [[2]],
        [[0, -99, 1]],  # a reference past the table
        [[]],
        [None],
    ],
)
def test_malformed_compact_ops_raise_patch_error(ops: Any) -> None:
    with pytest.raises(PatchError):
        apply_patch({"room": {}}, expand_ops(ops, key_table(())))


def test_a_patch_with_a_bad_act_is_a_bad_message() -> None:
    from protocol import BadMessage

    with pytest.raises(BadMessage):
        decode_server(msgpack.packb({"type": "patch", "room": "r", "from": 1, "ops": [], "act": [1]}))


plain_keys = st.sampled_from(KEY_POOL) | st.text(max_size=20)
containers = st.lists(any_views, max_size=20) | st.dictionaries(plain_keys, any_views, max_size=20)


@settings(max_examples=400, deadline=None)
@given(containers, st.integers(0, 2**32), st.sampled_from([0.5, 0.9, 1.0]), tables,
       st.lists(st.sampled_from(KEY_POOL) | st.integers(0, 300) | st.text(max_size=40), max_size=3))
def test_whole_compact_chooses_as_the_plain_ops_sizes_do(old: Any, seed: int, rate: float, keys: tuple[str, ...],
                                                          path: list[Any]) -> None:
    """The whole-container choice on a container's compact ops is the plain ops' choice
    (patch._whole's) exactly: one whole set when it packs to fewer bytes than the
    container's plain ops, else the ops as they are, whatever the path, key table and
    values (str keys and values up to 40 characters, up to 20 entries changed): the
    check for any way of deciding it without packing the plain ops."""
    refs = key_refs(keys)
    new = mutate(old, random.Random(seed), rate)
    plain = [[op[0], [*path, *op[1]], *op[2:]] for op in diff(old, new)]
    cops = compact_ops(plain, refs, new)
    if not plain or cops == [[0, new]]:
        return
    cpath = [refs.get(e, e) for e in path]
    sized = len(msgpack.packb(["set", path, new], use_bin_type=True)) < len(msgpack.packb(plain, use_bin_type=True))
    mine = [[9], *cops]
    got = _whole_compact(cpath, new, refs, mine, 1, 7)
    if sized:
        assert got == 1 and mine == [[9], [0, *cpath, new]]
    else:
        assert got == 7 and mine == [[9], *cops]


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        # a GIANTS screen with four of its seven entries changed (GI-28): decided by the
        # bound on its ops' size, without summing them
        ({"workers": 0, "chief": False, "sorcerer": False, "markers": 0, "tablets": 0, "logs": 0, "bases": 6},
         {"workers": 2, "chief": True, "sorcerer": True, "markers": 3, "tablets": 0, "logs": 0, "bases": 6},
         ["game", "screen"]),
        # a board losing most of its hexes and every figure (its cleanup)
        ({"4,2": {"n1": [1, 0]}, "8,6": {"w0": [1, 0]}, "6,7": {"s1": [1, 0]}, "1,2": {"n0": [1, 0]},
          "10,3": {"n1": [1, 0]}, "4,0": {"s0": [1, 0]}, "8,4": {"w1": [1, 0]}},
         {"4,2": {"n": [1, 0]}, "1,2": {"n": [1, 0]}, "10,3": {"n": [1, 0]}}, ["game", "board"]),
        # long values: the ops win, or the whole map only on their summed size
        ({"a": "x" * 40, "b": "y" * 40, "c": 1, "d": 2, "e": 3, "f": 4, "g": 5, "h": 6},
         {"a": "z" * 40, "b": "w" * 40, "c": 7, "d": 8, "e": 3, "f": 4, "g": 5, "h": 6}, ["game", "seats", "0"]),
        ({"a": "x" * 40, "b": "y" * 40, "c": 1, "d": 2}, {"a": "z" * 40, "b": "w" * 40, "c": 7, "d": 8},
         ["game", 3]),
        ([1, 2, 3, 4, 5, 6], [9, 8, 7, 6], ["game", "dice"]),  # a list (no bound): set, set, set, trunc
    ],
)
def test_whole_compact_of_whole_views_parts(old: Any, new: Any, path: list[Any]) -> None:
    """`_whole_compact`'s choice, by its cheap bound or by the plain ops' summed sizes, is
    the one their packed bytes make (patch._whole's), for parts of game views."""
    refs = key_refs(key_table(("screen", "board", "seats", "dice", "workers", "chief", "n", "w0")))
    ops: list[Any] = []  # the container's ops, entry by entry (before any whole choice at its level)
    if type(new) is dict:
        ops += [["del", [k]] for k in old if k not in new]
        for k, v in new.items():
            if k not in old:
                ops.append(["set", [k], v])
            elif old[k] != v:
                ops += [[op[0], [k, *op[1]], *op[2:]] for op in diff(old[k], v)]
    else:
        ops += [["set", [i], v] for i, v in enumerate(new[:len(old)]) if old[i] != v]
        ops += [["trunc", [], len(new)]] if len(new) < len(old) else [["push", [], v] for v in new[len(old):]]
    plain = [[op[0], [*path, *op[1]], *op[2:]] for op in ops]
    cops = compact_ops(plain, refs, new)
    assert len(cops) >= 4 and cops != [[0, new]]
    cpath = [refs.get(e, e) for e in path]
    sized = len(msgpack.packb(["set", path, new], use_bin_type=True)) < len(msgpack.packb(plain, use_bin_type=True))
    mine = [[9], *cops]
    got = _whole_compact(cpath, new, refs, mine, 1, 7)
    assert (got, mine) == ((1, [[9], [0, *cpath, new]]) if sized else (7, [[9], *cops]))
