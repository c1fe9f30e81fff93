"""Hidden information: each member's ops from `SplitDiffs` (the parts every member sees
diffed once, server.split_diffs) are exactly its own view's diff, member by member.

GIANTS (the game with sealed bids and screens, GI-8, GI-28) is played in rooms with
both seats and spectators, seats leaving and coming back, resyncs, replaced bids that
only their bidder is sent (GI-8), packed views and more (tests/server/frame_record.py).
At every diff of every publish the ops must equal `diff_compact(old, new, refs)` of that
member's own old and new views: then no member's ops hold anything of another's view
(its screen, its bid, the Ahu owners only it may see), and nothing in them differs from
what the member-by-member diff sends. The split path must be the one taken for most of
them (else this tests nothing).
"""

from __future__ import annotations

import random
from itertools import compress, islice
from operator import is_, is_not
from typing import Any

import pytest

from engines.base import Seat
from engines.giants.views import SHARED_START
from protocol.compact import _walk
from server import split_diffs
from server.room import Room
from server.wire import diff_compact
from tests.server.frame_record import play
from tests.server.test_publish_frames import PlainRoom

_split_ops = split_diffs.SplitDiffs.ops
_member = split_diffs.SplitDiffs._member


class _Counts:
    diffs = split = 0


def _checked_ops(self: split_diffs.SplitDiffs, seat: Seat | None, old: Any, new: Any) -> list[list[Any]]:
    got = _split_ops(self, seat, old, new)
    assert got == diff_compact(old, new, self.refs), seat
    _Counts.diffs += 1
    return got


def _counted_member(self: split_diffs.SplitDiffs, old: Any, new: Any) -> list[list[Any]]:
    got = _member(self, old, new)
    _Counts.split += 1
    return got


@pytest.mark.parametrize("players", [2, 3, 5])
def test_each_members_split_ops_are_its_own_diff(monkeypatch: pytest.MonkeyPatch, players: int) -> None:
    monkeypatch.setattr(split_diffs.SplitDiffs, "ops", _checked_ops)
    monkeypatch.setattr(split_diffs.SplitDiffs, "_member", _counted_member)
    _Counts.diffs = _Counts.split = 0
    for seed in range(8):
        play(Room, "giants", None, players, seed, steps=250, deadline=600.0 if seed % 2 else None)
    assert _Counts.diffs > 200
    assert _Counts.split > _Counts.diffs // 2


@pytest.mark.parametrize("seed", range(3))
def test_split_frames_are_the_plain_frames(seed: int) -> None:
    """Longer GIANTS sessions than test_publish_frames': the same bytes to every peer."""
    fast = play(Room, "giants", None, 4, 100 + seed, steps=400)
    plain = play(PlainRoom, "giants", None, 4, 100 + seed, steps=400)
    assert fast == plain


def test_the_shared_start_is_what_the_split_takes() -> None:
    """An engine without `view_shared_start` never splits (0: every member diffed whole)."""
    assert SHARED_START > 0
    splits = split_diffs.SplitDiffs({}, {}, {None: {}}, 0)
    assert splits.gen == {}


def _forward_own_ops(old: dict[Any, Any], new: dict[Any, Any], ck: Any, refs: Any,
                     start: int) -> tuple[list[list[Any]], int] | None:
    """`_own_ops` as it was until session 20, a forward walk from `start` (`islice`):
    the oracle of the test below."""
    ops: list[list[Any]] | None = None
    direct = 0
    for (k, w), (key, v) in zip(islice(old.items(), start, None), islice(new.items(), start, None), strict=True):
        if k is not key and k != key:
            raise split_diffs._Unsplit
        if w is v:
            continue
        if type(key) is not str:
            raise split_diffs._Unsplit
        if ops is None:
            ops = []
        ckey = refs.get(key, key)
        if type(v) in (str, int, bool, bytes, type(None)):
            if type(w) is not type(v) or w != v:
                ops.append([0, ck, ckey, v])
                direct += 1
            continue
        direct += _walk(w, v, [ck, ckey], refs, ops)
    return (ops, direct) if ops else None


def test_own_ops_read_from_the_ends_are_the_forward_walks() -> None:
    """`_own_ops` reads a view's own entries (GIANTS: you, ahu, screen, my_bid, GI-28)
    from the maps' ends: the same ops in the maps' order as walking them forward, and
    _Unsplit where the keys there differ or a changed key is not a str."""
    from engines.registry import get_engine
    from server.views import engine_facts

    refs = engine_facts(get_engine("giants")).refs
    ck = refs["game"]
    shared = {f"s{i}": [i] for i in range(SHARED_START)}
    screen_a, screen_b = {"workers": 2, "logs": 0}, {"workers": 1, "logs": 0}
    bid = [1, 2, False]
    cases = [
        ({"you": 0, "ahu": {}, "screen": screen_a, "my_bid": None}, {"you": 0, "ahu": {}, "screen": screen_a, "my_bid": None}),
        ({"you": 0, "ahu": {}, "screen": screen_a, "my_bid": None}, {"you": 0, "ahu": {}, "screen": screen_b, "my_bid": bid}),
        ({"you": 1, "ahu": {"A1": {"moai": 1}}, "screen": screen_b, "my_bid": bid},
         {"you": 1, "ahu": {"A1": {"moai": 2}}, "screen": screen_a, "my_bid": None}),
        ({"you": None, "ahu": {}}, {"you": None, "ahu": {"A2": {"moai": 3}}}),
    ]
    for own_old, own_new in cases:
        old, new = {**shared, **own_old}, {**shared, **own_new}
        new.update({k: old[k] for k in own_old if own_old[k] is own_new[k]})  # unchanged: the very objects
        got = split_diffs._own_ops(old, new, ck, refs, SHARED_START)
        want = _forward_own_ops(old, new, ck, refs, SHARED_START)
        assert got == want
        if got:  # ...and exactly the changed entries' part of the whole diff, in its order
            own = [refs.get(k, k) for k in own_old]
            assert got[0] == [op for op in diff_compact({"game": old}, {"game": new}, refs) if op[2] in own]
    # the keys past `start` differ (another order): no split
    old = {**shared, "you": 0, "ahu": {}, "screen": screen_a, "my_bid": None}
    new = {**shared, "you": 0, "ahu": {}, "my_bid": None, "screen": screen_b}
    with pytest.raises(split_diffs._Unsplit):
        split_diffs._own_ops(old, new, ck, refs, SHARED_START)
    with pytest.raises(split_diffs._Unsplit):
        _forward_own_ops(old, new, ck, refs, SHARED_START)
    # a changed entry under a key that is not a str: no split; unchanged, it is passed
    old, new = {**shared, "you": 0, 7: [1]}, {**shared, "you": 0, 7: [2]}
    with pytest.raises(split_diffs._Unsplit):
        split_diffs._own_ops(old, new, ck, refs, SHARED_START)
    new[7] = old[7]
    assert split_diffs._own_ops(old, new, ck, refs, SHARED_START) is None


def _pipeline_entry_ops(old: dict[Any, Any], new: dict[Any, Any], ck: Any, refs: Any) -> list[Any] | None:
    """`_entry_ops` as it was until session 20 (the keys checked first, the changed
    entries found by compress/enumerate/map): the oracle below; None where the keys'
    objects or order differ (the caller then did not split, or walked the part whole)."""
    if not all(map(is_, old, new)):
        return None
    out: list[Any] = []
    for i, (k, v) in compress(enumerate(new.items()), map(is_not, old.values(), new.values())):
        w = old[k]
        ckey = refs.get(k, k)
        if type(v) in (str, int, bool, bytes, type(None)):
            if type(w) is not type(v) or w != v:
                out.append((i, k, [[0, ck, ckey, v]], 1))
            continue
        ops: list[list[Any]] = []
        got = _walk(w, v, [ck, ckey], refs, ops)
        if ops:
            out.append((i, k, ops, got))
    return out


def test_entry_ops_checking_keys_as_it_walks_are_the_pipelines() -> None:
    """`_entry_ops` checks the two maps' key objects and order in its own walk: the same
    segments as checking them first and finding the changed entries with iterators, for
    GIANTS' game views of consecutive states (GI-28, GI-29: boards, seats, screens),
    and _Rekeyed exactly where that check failed; a room part whose keys moved is
    walked whole, its ops still the whole diff's."""
    from engines.registry import get_engine
    from server.views import engine_facts

    engine = get_engine("giants")
    refs = engine_facts(engine).refs
    ck = refs["game"]
    rng = random.Random(3)
    state = engine.new_game(3, {}, 9)
    compared = 0
    while engine.outcome(state) is None and compared < 300:
        seat = rng.choice(sorted(engine.to_act(state)))
        nxt = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat))).state
        for viewer in (0, 1, 2, None):
            old, new = engine.view(state, viewer), engine.view(nxt, viewer)
            if len(old) != len(new):
                continue
            got: list[Any] | None = []
            try:
                split_diffs._entry_ops(old, new, ck, refs, got)  # type: ignore[arg-type]
            except split_diffs._Rekeyed:
                got = None
            assert got == _pipeline_entry_ops(old, new, ck, refs)
            compared += 1
        state = nxt
    assert compared >= 300
    # the same keys in another order, or equal keys that are other objects: _Rekeyed
    a = {"x": [1], "yy": [2], "z": 3}
    other = "".join(["y", "y"])  # equal to "yy", another object
    assert other == "yy" and other is not "yy"  # noqa: F632 (identity is the point)
    for b in ({"yy": [2], "x": [1], "z": 4}, {"x": [1], other: [5], "z": 3}):
        assert _pipeline_entry_ops(a, b, ck, refs) is None
        with pytest.raises(split_diffs._Rekeyed):
            split_diffs._entry_ops(a, b, ck, refs, [])
    # a room part with its keys moved: not split entry by entry, the ops still the diff's
    splits = split_diffs.SplitDiffs(refs, {}, {0: None}, SHARED_START)
    game = {f"g{i}": i for i in range(SHARED_START)}
    old_view = {"room": {"to_act": [0], "status": "playing"}, "game": game, "outcome": None}
    new_view = {"room": {"status": "playing", "to_act": [1]}, "game": dict(game), "outcome": None}
    splits.gen = {0: old_view}
    assert splits.ops(0, old_view, new_view) == diff_compact(old_view, new_view, refs)


def test_a_root_with_its_keys_moved_is_diffed_whole() -> None:
    """`_reference` reads the root's three keys by unpacking: a view whose `room`, `game`
    and `outcome` keys come in another order is not split, its ops the whole diff's."""
    from engines.registry import get_engine
    from server.views import engine_facts

    refs = engine_facts(get_engine("giants")).refs
    game = {f"g{i}": i for i in range(SHARED_START)}
    old_view = {"room": {"to_act": [0]}, "game": game, "outcome": None}
    new_view = {"game": {**game, "g0": 5}, "room": {"to_act": [1]}, "outcome": None}
    splits = split_diffs.SplitDiffs(refs, {}, {0: old_view}, SHARED_START)
    assert splits.ops(0, old_view, new_view) == diff_compact(old_view, new_view, refs)
    assert splits.old is None  # no reference was taken: the member was diffed whole


class _Shared:
    calls = common = 0


def _checked_common(self: split_diffs.SplitDiffs, seat: Seat | None, old: Any, new: Any) -> list[list[Any]]:
    got = _split_ops(self, seat, old, new)
    if got is self.common:  # one list for every member none of whose own entries changed
        _Shared.common += 1
    _Shared.calls += 1
    # Each member's ops are its own diff, the shared list too (GI-28: nothing behind
    # another seat's screen; GI-8: no other seat's sealed bid)
    assert got == diff_compact(old, new, self.refs), seat
    return got


@pytest.mark.parametrize("players", [2, 4])
def test_members_without_own_changes_share_one_ops_list(monkeypatch: pytest.MonkeyPatch, players: int) -> None:
    """`SplitDiffs.common`, which publish packs once with the events for every member
    who gets it, is handed only to members whose whole diff it is (GI-28, GI-29), and
    is handed out often (else the frames test below it tests nothing of it)."""
    monkeypatch.setattr(split_diffs.SplitDiffs, "ops", _checked_common)
    _Shared.calls = _Shared.common = 0
    for seed in range(6):
        play(Room, "giants", None, players, 40 + seed, steps=250)
    assert _Shared.calls > 500
    assert _Shared.common > _Shared.calls // 4


def test_the_room_part_is_walked_at_the_keys_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's room part, the one `_room_part` built from the part the old views
    hold, is walked at the keys it says changed (`to_act` as the turn passes, GI-8's
    `answered` as bids come in), and every member's ops are still its own whole diff."""
    walked: list[tuple[str, ...]] = []
    walk_keys = split_diffs._walk_keys

    def counted(old: Any, new: Any, keys: Any, *rest: Any) -> int:
        walked.append(tuple(keys))
        return walk_keys(old, new, keys, *rest)

    monkeypatch.setattr(split_diffs, "_walk_keys", counted)
    monkeypatch.setattr(split_diffs.SplitDiffs, "ops", _checked_ops)
    _Counts.diffs = 0
    for seed in range(4):
        play(Room, "giants", None, 3, 60 + seed, steps=200)
    assert len(walked) > _Counts.diffs // 6
    assert ("to_act",) in walked and any("answered" in keys for keys in walked)
