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
    diff_view,
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
from tests.protocol.test_patch_shared import TRICKY, mutate


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


ROOM_POOL = ["id", "game", "status", "seats", "to_act", "deadline", "answered", "draw_offer", "a", "b"]
room_parts = st.dictionaries(st.sampled_from(ROOM_POOL), any_views, max_size=10)


@settings(max_examples=400, deadline=None)
@given(room_parts, any_views, any_views, st.integers(0, 2**32), st.sampled_from([0.1, 0.5, 0.9]), tables)
def test_diff_view_is_diff_compact(part: dict[str, Any], game: Any, outcome: Any, seed: int, rate: float,
                                   keys: tuple[str, ...]) -> None:
    """`diff_view` (publish's diff in a room without hidden information, told which room
    part entries changed) gives `diff_compact`'s ops, op for op: changed entries of
    every kind (equal rebuilt, 1 for True, nested), a room part with its keys in
    another order, entries named that did not change, and views it is not told about."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    room = {k: (mutate(v, rng, rate) if rng.random() < rate else rng.choice(TRICKY)) if rng.random() < rate else v
            for k, v in part.items()}
    if rng.random() < 0.3:  # the same keys in another order
        items = list(room.items())
        rng.shuffle(items)
        room = dict(items)
    changed = [k for k in room if room[k] is not part[k] or rng.random() < 0.2]  # some named needlessly
    old = {"room": part, "game": game, "outcome": outcome}
    if rng.random() < 0.3:
        old = {"outcome": outcome, "room": part, "game": game}  # another order of the view's keys
    for new_game, new_outcome in ((mutate(game, rng, rate), outcome), (game, mutate(outcome, rng, rate)),
                                  (rng.choice(TRICKY), rng.choice(TRICKY)), (game, outcome)):
        new = {"room": room, "game": new_game, "outcome": new_outcome}
        want = diff_compact(old, new, refs)
        assert exact(diff_view(old, new, refs, part, changed), want)
        assert exact(want, compact_ops(diff(old, new), refs, new))
        # views it cannot walk so: another room part, other keys, no view
        for other in ({**old, "room": dict(part)}, {**old, "extra": 1}, {"room": part, "game": game, "x": 1},
                      None, [part]):
            assert exact(diff_view(other, new, refs, part, changed), diff_compact(other, new, refs))


# (values equal across types among them: 1 and True, 0 and 0.0 and False)
one_entry = st.lists(st.sampled_from([0, 1, True, False, 0.0, 1.0, -0.0, "1", None]) | scalars | any_views,
                     min_size=1, max_size=1)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(ROOM_POOL), one_entry | any_views, max_size=10),
       st.lists(st.tuples(st.sampled_from(ROOM_POOL), one_entry), max_size=4), st.integers(0, 2**32), tables)
def test_diff_view_of_one_entry_lists_in_the_room_part_is_diff_compact(
        part: dict[str, Any], lists: list[tuple[str, list[Any]]], seed: int, keys: tuple[str, ...]) -> None:
    """The room part's one-entry lists (a turn passing: `to_act` [0] -> [1]), which
    `diff_view` sets by their entry without walking them: the same ops as `diff_compact`
    for entries of every kind (equal, the same, 1 for True, 0.0 for 0, a container, which
    is walked), next to other changes."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    room = dict(part)
    for k, v in lists:
        if k in room:
            room[k] = rng.choice([v, [copy.deepcopy(room[k][0])] if type(room[k]) is list and room[k] else v,
                                  [rng.choice(TRICKY)], [0.0], [0], [False], [True], [1], [1.0]])
    changed = [k for k in room if room[k] is not part[k] or rng.random() < 0.2]
    old = {"room": part, "game": {"a": 1}, "outcome": None}
    new = {"room": room, "game": {"a": 1}, "outcome": None}
    want = diff_compact(old, new, refs)
    assert exact(want, compact_ops(diff(old, new), refs, new))
    assert exact(diff_view(old, new, refs, part, changed), want)


@settings(max_examples=400, deadline=None)
@given(st.lists(scalars, max_size=70), st.dictionaries(map_keys, any_views, max_size=6), st.integers(0, 2**32),
       st.sampled_from([0.05, 0.3, 0.9]), tables)
def test_diff_view_with_edits_is_diff_compact(base: list[Any], game: dict[Any, Any], seed: int, rate: float,
                                              keys: tuple[str, ...]) -> None:
    """`diff_view` told how a list of the game map was made from the old one's
    (`Engine.view_edits`) gives `diff_compact`'s ops, op for op: entries rewritten
    (another value, the same, an equal copy, 1 for True, a container or a float, which
    it walks whole), the list truncated or pushed to, indexes named needlessly, a
    whole `set` of the list or of the game map; and edits it may not use (out of
    order, a base the old view does not hold, another value) change nothing."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    value = base[:]
    written = []
    for i in range(len(value)):
        if rng.random() < rate:
            value[i] = rng.choice([*TRICKY, value[i], copy.deepcopy(value[i]), "x", ".", 7])
            written.append(i)
    if rng.random() < 0.3:
        cut = rng.randrange(len(value) + 1)
        value = value[:cut]
        written += range(cut, len(base))  # new entries there if pushed to
    if rng.random() < 0.3:
        value += rng.sample(TRICKY, 2)
    at = sorted({*written, *(i for i in range(len(base)) if rng.random() < 0.1)})
    old_game = {**game, "board": base}
    new_game = {k: mutate(v, rng, rate) if rng.random() < rate else v for k, v in old_game.items()}
    new_game["board"] = value
    part = {"id": "r1"}
    old = {"room": part, "game": old_game, "outcome": None}
    new = {"room": part, "game": new_game, "outcome": None}
    want = diff_compact(old, new, refs)
    assert exact(want, compact_ops(diff(old, new), refs, new))
    other = [rng.choice(TRICKY)]
    for edits in ([(base, value, at)], [(other, other, [0]), (base, value, at)], [(base, value, at[::-1])],
                  [(list(base), value, at)], [(base, list(value), at)], []):
        assert exact(diff_view(old, new, refs, part, [], edits), want)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(KEY_POOL) | st.text(max_size=4), scalars | any_views, max_size=40),
       st.integers(0, 2**32), st.sampled_from([0.05, 0.3, 0.9]), tables)
def test_diff_view_with_map_edits_is_diff_compact(base: dict[str, Any], seed: int, rate: float,
                                                  keys: tuple[str, ...]) -> None:
    """`diff_view` told how a map of the game map was made from the old one's
    (`Engine.view_edits`: Causeway's stacks) gives `diff_compact`'s ops, op for op:
    entries rewritten (another value, the same, an equal copy, 1 for True, a container),
    keys added anywhere in the order or gone, keys named needlessly, a whole `set` of the
    map; and edits it may not use (keys out of the maps' order, a gone key the old map
    lacks, a count of keys that does not add up, a base the old view does not hold,
    another value) change nothing."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    items = list(base.items())
    at: set[str] = set()
    for i, (k, v) in enumerate(items):
        if rng.random() < rate:
            items[i] = (k, rng.choice([*TRICKY, v, copy.deepcopy(v), "x", 7]))
            at.add(k)
    for k in list(base):
        if rng.random() < rate / 3:
            items = [item for item in items if item[0] != k]
            at.add(k)
    for _ in range(rng.randrange(3)):
        k = rng.choice(["new", "0,1", "-1,2", *KEY_POOL]) + str(rng.randrange(5))
        if k not in base and k not in dict(items):
            items.insert(rng.randrange(len(items) + 1), (k, rng.choice(TRICKY)))
            at.add(k)
    at |= {k for k in base if rng.random() < 0.1}
    value = dict(items)
    order = {k: i for i, k in enumerate([*value, *(k for k in base if k not in value)])}
    named = tuple(sorted(at, key=order.__getitem__))  # the gone ones last: `del`s come first anyway
    old_game = {"stacks": base, "ply": 1}
    new_game = {"stacks": value, "ply": 2}
    part = {"id": "r1"}
    old = {"room": part, "game": old_game, "outcome": None}
    new = {"room": part, "game": new_game, "outcome": None}
    want = diff_compact(old, new, refs)
    assert exact(want, compact_ops(diff(old, new), refs, new))
    other: dict[str, Any] = {"x": 1}
    shuffled = list(named)
    rng.shuffle(shuffled)
    stray = ("no such key",) if rng.random() < 0.5 else ()
    for edits in ([(base, value, named)], [(other, other, ("x",)), (base, value, named)],
                  [(base, value, tuple(shuffled))], [(base, value, (*named, *stray))],
                  [(dict(base), value, named)], [(base, dict(value), named)], []):
        assert exact(diff_view(old, new, refs, part, [], edits), want), edits
    if named:  # a key left out: the counts of keys no longer add up, or it was a plain rewrite
        short = named[1:]
        if len(value) != len(base) - len([k for k in short if k not in value]) + len(
                [k for k in short if k not in base]):
            assert exact(diff_view(old, new, refs, part, [], [(base, value, short)]), want)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(KEY_POOL) | st.text(max_size=4), scalars | any_views, max_size=20),
       st.lists(scalars, max_size=12), st.integers(0, 2**32), st.sampled_from([0.05, 0.3, 0.9]), tables)
def test_diff_view_with_the_game_map_an_edit_is_diff_compact(game: dict[str, Any], base: list[Any], seed: int,
                                                            rate: float, keys: tuple[str, ...]) -> None:
    """`diff_view` told that the game map itself was made from the old one
    (`Engine.view_edits`' last edit: Giantslayer's view a copy of the last with a few
    entries new), a list of it made from the old one's too, gives `diff_compact`'s ops, op for op:
    entries rewritten (another value, the same, an equal copy, 1 for True, a container),
    keys named needlessly, the list's own edit used inside; and edits it may not use (not
    the last, a base the old view does not hold, another value, a key the maps lack)
    change nothing."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    old_game = {**game, "board": base}
    value = base[:]
    written = [i for i in range(len(value)) if rng.random() < rate]
    for i in written:
        value[i] = rng.choice([*TRICKY, value[i], copy.deepcopy(value[i]), "x", "."])
    new_game = old_game.copy()  # the same keys in the same order
    new_game["board"] = value
    at = []
    for k in new_game:
        if k == "board" or rng.random() < rate:
            if k != "board" and rng.random() < 0.7:
                new_game[k] = rng.choice([*TRICKY, new_game[k], copy.deepcopy(new_game[k]), "x", 7])
            at.append(k)
    part = {"id": "r1"}
    old = {"room": part, "game": old_game, "outcome": None}
    new = {"room": part, "game": new_game, "outcome": None}
    want = diff_compact(old, new, refs)
    assert exact(want, compact_ops(diff(old, new), refs, new))
    named = tuple(at)
    board = (base, value, written)
    for edits in ([(old_game, new_game, named), board], [board, (old_game, new_game, named)],
                  [(old_game, new_game, named)], [(dict(old_game), new_game, named), board],
                  [(old_game, dict(new_game), named), board], [(old_game, new_game, (*named, "no such key")), board]):
        assert exact(diff_view(old, new, refs, part, [], edits), want), edits


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
