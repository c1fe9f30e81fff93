"""protocol/compact_view.py: `diff_view`, the compact diff told what changed (the room
part's entries, the engine's edits of the game map), against `diff_compact`'s ops on
random views, op for op."""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engines.base import OP_PUSH, OP_SET, OP_TRUNC
from protocol import compact_ops, diff, diff_compact, diff_view, key_refs
from protocol.compact import PUSH, SET, TRUNC, _Inexpressible, _walk
from tests.protocol.test_compact import KEY_POOL, any_views, exact, map_keys, tables
from tests.protocol.test_patch import scalars
from tests.protocol.test_patch_shared import TRICKY, mutate

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
@given(st.dictionaries(st.sampled_from(ROOM_POOL), one_entry | any_views, min_size=1, max_size=10),
       one_entry | any_views | st.sampled_from(TRICKY), st.integers(0, 2**32), tables)
def test_diff_view_of_one_named_room_entry_is_diff_compact(part: dict[str, Any], value: Any, seed: int,
                                                          keys: tuple[str, ...]) -> None:
    """A move's usual room part change, one entry named (`to_act`), which `diff_view`
    sets without `_walk_keys`: the same ops as `diff_compact` whatever the old and new
    entry are (one-entry lists of every kind, plain values, 1 for True, 0.0 for 0, the
    same object, an equal copy, containers, which are walked), in a room part of any
    size and next to a game map's change; and a key the part lacks sends it to
    `diff_compact`."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    name = rng.choice(list(part))
    if rng.random() < 0.5:  # a plain entry before (1 then True, 0 then 0.0, ...)
        part = {**part, name: rng.choice([1, True, 0, 0.0, False, 1.0, "1", None])}
    room = dict(part)
    room[name] = rng.choice([value, part[name], copy.deepcopy(part[name]), [0], [1], [True], [0.0], [None], 1,
                             True, 1.0, "1", None])
    for game in ({"a": 1}, {"a": 2}):
        old = {"room": part, "game": {"a": 1}, "outcome": None}
        new = {"room": room, "game": game, "outcome": None}
        want = diff_compact(old, new, refs)
        assert exact(want, compact_ops(diff(old, new), refs, new))
        assert exact(diff_view(old, new, refs, part, [name]), want)
        assert exact(diff_view(old, new, refs, part, (name,)), want)
    stray = {**room, "new key": 1}  # not the part's keys: the caller's promise broken, diff_compact's ops
    new = {"room": stray, "game": {"a": 1}, "outcome": None}
    assert exact(diff_view(old, new, refs, part, ["new key"]), diff_compact(old, new, refs))


@settings(max_examples=300, deadline=None)
@given(st.lists(scalars | any_views, max_size=8), scalars | any_views | st.sampled_from(TRICKY), st.integers(0, 2**32),
       tables)
def test_diff_view_of_a_list_pushed_to_once_is_diff_compact(base: list[Any], pushed: Any, seed: int,
                                                           keys: tuple[str, ...]) -> None:
    """A list of the game map whose edit names no entry and which grew by one (a quiet
    move's text pushed: Giantslayer's `quiet_moves`), set by one push: the same ops as
    `diff_compact` for entries and pushed values of every kind, short lists included
    (no whole `set` weighed for one op), next to other changes of the game map; and
    lists that grew by two or none, or lost one, with the same edit."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    part = {"id": "r1"}
    for value in ([*base, pushed], [*base, pushed, pushed], base[:], base[:-1]):
        # other entries, some rewritten: with the push counted, the game map's own ops
        # may or may not reach a whole `set` of it
        old_game = {"moves": base, **{f"k{i}": i for i in range(6)}}
        new_game = {"moves": value, **{f"k{i}": rng.choice([i, i + 1]) for i in range(6)}}
        old = {"room": part, "game": old_game, "outcome": None}
        new = {"room": part, "game": new_game, "outcome": None}
        want = diff_compact(old, new, refs)
        assert exact(want, compact_ops(diff(old, new), refs, new))
        assert exact(diff_view(old, new, refs, part, [], [(base, value, ())]), want)
        assert exact(diff_view(old, new, refs, part, [], [(base, value, ()), (old_game, new_game, tuple(new_game))]),
                     want)


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


def test_diff_view_with_edits_naming_pushed_entries_and_keys_the_maps_lack() -> None:
    """The walks' bail-outs, case by case, against `diff_compact`: a list edit naming a
    pushed container (past the old list's end), a container rewritten, indexes past
    both ends or out of order, and a game map edit naming a key one of the maps lacks
    (its walk of the whole map), each in a game map told made from the old one."""
    refs = key_refs(("board", "quiet", "turn"))
    part = {"id": "r1"}
    base = [".", "W", "B", "."]
    cases: list[tuple[list[Any], list[int]]] = [
        ([".", "W", "B", ".", ["x"], "W"], [4, 5]),  # pushed: a container, then a str
        ([".", "W", "B", ".", "W"], [4, 9]),  # pushed, and an index past both ends
        ([".", {"a": 1}, "B", "."], [1]),  # a container where a str was
        ([".", ".", "W", "."], [2, 1]),  # out of order
        (["W", "W"], [0, 2, 3]),  # cut
    ]
    for value, at in cases:
        for names in (("board", "turn"), ("board", "turn", "gone"), ("gone", "board", "turn")):
            old_game = {"board": base, "quiet": [], "turn": 1}
            new_game = {**old_game, "board": value, "turn": 2}
            old = {"room": part, "game": old_game, "outcome": None}
            new = {"room": part, "game": new_game, "outcome": None}
            want = diff_compact(old, new, refs)
            edits = [(base, value, at), (old_game, new_game, names)]
            assert exact(diff_view(old, new, refs, part, [], edits), want), (value, at, names)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(KEY_POOL) | st.text(max_size=4), scalars | any_views, min_size=1, max_size=45),
       st.integers(0, 2**32), tables)
def test_diff_view_with_a_map_edit_of_one_key_is_diff_compact(base: dict[str, Any], seed: int,
                                                              keys: tuple[str, ...]) -> None:
    """A map edit naming one key (a Tara move's hill: `_walk_keys_at`'s one-key path)
    gives `diff_compact`'s ops, op for op, whatever the key's old and new values:
    another plain value, the same object, an equal one, 1 for True, a container; and a
    key added or gone (the maps' lengths differ) or one the maps lack go the general
    way, with the same ops."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    k = rng.choice(list(base))
    cases: list[tuple[dict[str, Any], dict[str, Any], str]] = []
    for was in (base[k], 1, True, 1.0, "x", [1]):
        before = {**base, k: was}
        for now in (*TRICKY, was, copy.deepcopy(was), "x", 7, True, 1, 1.0, [1]):
            cases.append((before, {**before, k: now}, k))
    gone = dict(base)
    del gone[k]
    cases.append((base, gone, k))
    new_key = "new" + str(rng.randrange(5))
    cases.append((base, {**base, new_key: rng.choice(TRICKY)}, new_key))
    cases.append((base, dict(base), "no such key"))
    part = {"id": "r1"}
    for before, after, named in cases:
        old_game = {"hills": before, "turns": 1}
        new_game = {"hills": after, "turns": 2}
        old = {"room": part, "game": old_game, "outcome": None}
        new = {"room": part, "game": new_game, "outcome": None}
        want = diff_compact(old, new, refs)
        assert exact(diff_view(old, new, refs, part, [], [(before, after, (named,))]), want)
        assert exact(diff_view(old, new, refs, part, [], [(before, after, (named,)),
                                                          (old_game, new_game, ("hills", "turns"))]), want)


def test_the_engines_op_codes_are_protocol_2s() -> None:
    # what an engine writes its own ops with (`Engine.view_ops`)
    assert (OP_SET, OP_TRUNC, OP_PUSH) == (SET, TRUNC, PUSH)


@settings(max_examples=400, deadline=None)
@given(room_parts, st.dictionaries(map_keys, any_views, max_size=8), any_views, st.integers(0, 2**32),
       st.sampled_from([0.1, 0.5, 0.9]), tables)
def test_diff_view_with_the_game_maps_ops_written_is_diff_compact(part: dict[str, Any], game: dict[Any, Any],
                                                                  outcome: Any, seed: int, rate: float,
                                                                  keys: tuple[str, ...]) -> None:
    """`diff_view` handed the game map's ops (`Engine.view_ops`: the walk's, never one
    `set` of the map) takes them where the old view holds their base, between the room
    part's ops and the outcome's: `diff_compact`'s ops, op for op, next to changes of the
    room part (one entry of any kind: a move's usual change) and the outcome, a whole `set`
    of the view included, the view's keys in another order; ops whose base the old view
    does not hold change nothing."""
    rng = random.Random(seed)
    refs = key_refs(keys)
    new_game = mutate(game, rng, rate)
    if type(new_game) is not dict:
        return
    ck = refs.get("game", "game")
    ops: list[list[Any]] = []
    try:
        if _walk(game, new_game, [ck], refs, ops):  # one `set` of the map: no engine writes it
            return
    except _Inexpressible:
        return
    room = {k: mutate(v, rng, rate) if rng.random() < rate else v for k, v in part.items()}
    if part and rng.random() < 0.5:  # one entry changed (a move's usual change), of any kind
        name = rng.choice(list(part))
        room = {**part, name: rng.choice([mutate(part[name], rng, rate), *TRICKY, [0], [1], [True], [1.0]])}
    changed = [k for k in room if room[k] is not part[k]]
    old = {"room": part, "game": game, "outcome": outcome}
    for new_outcome in (outcome, mutate(outcome, rng, rate)):
        new = {"room": room, "game": new_game, "outcome": new_outcome}
        if rng.random() < 0.3:  # the view's keys in another order: its ops in that order
            new = {"game": new_game, "room": room, "outcome": new_outcome}
        want = diff_compact(old, new, refs)
        assert exact(diff_view(old, new, refs, part, changed, (), (game, ops)), want)
        other = {**old, "game": dict(game)}  # another map there: walked
        assert exact(diff_view(other, new, refs, part, changed, (), (game, ops)), diff_compact(other, new, refs))
    # a key the part lacks named (the caller's promise broken): diff_compact's ops
    stray = {"room": {**part, "new key": 1}, "game": new_game, "outcome": outcome}
    assert exact(diff_view(old, stray, refs, part, ["new key"], (), (game, ops)), diff_compact(old, stray, refs))
