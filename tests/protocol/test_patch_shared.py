"""`diff`'s fast paths against the plain definition: apply_patch(old, diff(old, new))
is exactly `new` (types compared, floats by their bits).

A server's views share what did not change with the previous view (the same objects,
the same key objects in the same order), which random pairs of views never do: here
the new view is the old one with a few random changes, everything else shared, so the
walk that skips shared entries by identity (maps of `_BY_IDENTITY` entries or more)
and the counting of each container's own ops (the whole-"set" choice) are exercised.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import apply_patch, compact_ops, diff, diff_compact, key_refs
from protocol.patch import _BY_IDENTITY
from tests.protocol.test_patch import tagged, views

# Values that == conflates or that differ only in type: each one replacing another
# must still be sent.
TRICKY: list[Any] = [0, 1, True, False, 1.0, 0.0, -0.0, float("nan"), None, "1", b"1", [], {}, [1], {"1": 1}]


def mutate(view: Any, rng: random.Random, rate: float) -> Any:
    """A copy of `view` with some entries changed; unchanged entries are the same objects."""
    if rng.random() < rate / 4:
        return rng.choice([*TRICKY, copy.deepcopy(view)])  # replaced, or rebuilt equal
    if type(view) is dict:
        out = {}
        for k, v in view.items():
            roll = rng.random()
            if roll < rate / 3:
                continue  # deleted
            out[k] = mutate(v, rng, rate) if roll < rate else v
        if rng.random() < rate:
            out[rng.choice(["k", "new", 1, True, 2.5])] = rng.choice(TRICKY)
        if rng.random() < rate / 2:  # the same keys, rebuilt (equal, not the same objects)
            out = {(k[:1] + k[1:] if type(k) is str else k): v for k, v in out.items()}
        return out
    if type(view) is list:
        out_list = [mutate(v, rng, rate) if rng.random() < rate else v for v in view]
        if rng.random() < rate:
            out_list = out_list[: rng.randrange(len(out_list) + 1)]
        if rng.random() < rate:
            out_list += rng.sample(TRICKY, 2)
        return out_list
    return view


def big_view(rng: random.Random, depth: int = 0) -> Any:
    """A map of `_BY_IDENTITY` entries or more (and some smaller), nested like a game view."""
    size = rng.choice([1, 3, _BY_IDENTITY - 1, _BY_IDENTITY, _BY_IDENTITY + 5, 40])
    out: dict[Any, Any] = {}
    for i in range(size):
        roll = rng.random()
        if depth < 3 and roll < 0.15:
            out[f"m{i}"] = big_view(rng, depth + 1)
        elif roll < 0.3:
            out[f"l{i}"] = [rng.choice(".WB") for _ in range(rng.randrange(12))]
        else:
            out[f"s{i}"] = rng.choice(TRICKY)
    if rng.random() < 0.3:
        out[1] = "one"  # an int key, which True collides with
    return out


def exact_tagged(x: Any) -> Any:
    """test_patch.tagged, with maps whose keys mix types (1, True, "k") sorted too."""
    if isinstance(x, dict):
        return ("map", sorted(((type(k).__name__, repr(k)), exact_tagged(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return ("list", [exact_tagged(v) for v in x])
    return tagged(x)


def exact(a: Any, b: Any) -> bool:
    return bool(exact_tagged(a) == exact_tagged(b))


# A key table holding some of big_view's and mutate's keys (the others are written out).
REFS = key_refs(["m0", "s1", "l2", "k", "s3", "m4", "new", "l5", "s6"])


def check(old: Any, new: Any) -> None:
    before = copy.deepcopy(old)
    ops = diff(old, new)
    assert exact(apply_patch(old, ops), new)
    assert exact(old, before)
    assert (ops == []) == exact(old, new)
    # The one-walk compact form: compact_ops' output, op for op (1/True, 0.0/-0.0 told
    # apart; a key compact paths cannot hold sends the root; many ops in one container
    # replaced by its "set" as diff chose).
    assert exact(diff_compact(old, new, REFS), compact_ops(ops, REFS, new))


@pytest.mark.parametrize("seed", range(300))
def test_views_sharing_unchanged_parts_patch_exactly(seed: int) -> None:
    rng = random.Random(seed)
    old = big_view(rng)
    view = old
    for step in range(4):  # a few successive changes, each sharing with the one before
        new = mutate(view, rng, rate=[0.05, 0.2, 0.6][step % 3])
        check(view, new)
        view = new


@settings(max_examples=300, deadline=None)
@given(views, st.integers(0, 2**32), st.sampled_from([0.1, 0.5, 0.9]))
def test_random_views_with_shared_parts_patch_exactly(old: Any, seed: int, rate: float) -> None:
    check(old, mutate(old, random.Random(seed), rate))


def test_a_big_map_with_one_changed_entry_sends_one_op() -> None:
    old = {f"k{i}": i for i in range(2 * _BY_IDENTITY)}
    new = dict(old, k3=True)  # 3 -> True: == conflates them, the wire does not
    assert diff(old, new) == [["set", ["k3"], True]]
    rebuilt = {f"k{i}": i for i in range(2 * _BY_IDENTITY)}  # equal keys, other objects
    rebuilt["k5"] = -0.0
    assert diff(old, rebuilt) == [["set", ["k5"], -0.0]]


def test_a_mostly_changed_big_map_is_replaced_whole() -> None:
    old = {f"k{i}": "." for i in range(2 * _BY_IDENTITY)}
    new = {k: "W" for k in old}
    assert diff({"m": old}, {"m": new}) == [["set", ["m"], new]]


def test_pushes_count_towards_replacing_their_parent() -> None:
    """A list's own pushes are ops on its parent's entries too (as the former pass
    over the ops counted them): four pushes, too few to replace their list of ten,
    are four ops on a two-entry map, which one "set" of the map outweighs."""
    old = {"a": ["."] * 10, "b": 1}
    new = {"a": ["."] * 10 + ["W"] * 4, "b": 1}
    assert diff(old["a"], new["a"]) == [["push", [], "W"]] * 4
    assert diff(old, new) == [["set", [], new]]


def members_views(rng: random.Random, changes: int) -> list[tuple[Any, Any]]:
    """(old, new) room views of a change in a game with hidden information, as the
    server holds them: each seat's game view its own map around parts every seat shares
    (the same objects), the room part one object for all, a seat's private part its own;
    one member may still hold an older view (it was sent a snapshot, or skipped)."""
    room, public = big_view(rng), big_view(rng)
    private = [big_view(rng) for _ in range(3)]
    history = []
    for _ in range(changes + 1):
        views_now = [{"room": room, "game": {**public, "screen": private[s], "you": s}, "outcome": None}
                     for s in range(3)]
        views_now.append({"room": room, "game": dict(public), "outcome": None})  # a spectator
        history.append(views_now)
        room, public = mutate(room, rng, 0.2), mutate(public, rng, rng.choice([0.05, 0.3]))
        if type(public) is not dict:  # mutate replaced it: a new one
            public = big_view(rng)
        private = [p if rng.random() < 0.5 else mutate(p, rng, 0.3) for p in private]
    olds = history[-2][:]
    if rng.random() < 0.3 and len(history) > 2:
        olds[rng.randrange(len(olds))] = history[0][0]
    return list(zip(olds, history[-1], strict=True))


@pytest.mark.parametrize("seed", range(300))
def test_diffs_sharing_their_parts_ops_are_each_ones_own(seed: int) -> None:
    """`diff_compact(..., shared)` over every member's pair of one change gives each
    member the ops its own diff gives, op for op (a seat gets no op of another's
    private part: the shared ops are those of the very same pair at the same path)."""
    rng = random.Random(seed)
    pairs = members_views(rng, rng.choice([1, 2, 3]))
    for refs in (REFS, key_refs(["room", "game", "screen", "you", "outcome"])):
        shared: dict[Any, Any] = {}
        for old, new in pairs:
            alone = diff_compact(old, new, refs)
            assert exact(diff_compact(old, new, refs, shared), alone)
            assert exact(alone, compact_ops(diff(old, new), refs, new))
        assert exact(diff_compact(pairs[0][0], pairs[0][1], refs, shared),
                     diff_compact(pairs[0][0], pairs[0][1], refs))  # all from `shared`


@settings(max_examples=300, deadline=None)
@given(views, views, st.integers(0, 2**32), st.sampled_from([0.1, 0.5, 0.9]))
def test_random_views_diffed_with_shared_parts_patch_exactly(a: Any, b: Any, seed: int, rate: float) -> None:
    """Any views, as roots of members' views sharing their parts (keys of any kind)."""
    rng = random.Random(seed)
    shared: dict[Any, Any] = {}
    new_a, new_b = mutate(a, rng, rate), mutate(b, rng, rate)
    for old, new in (({"x": a, 1: b}, {"x": new_a, 1: new_b}), ({"x": a, 1: a}, {"x": new_a, 1: new_b}),
                     ({"x": a, "y": [b]}, {"x": new_a, "y": [new_b]}), (a, new_a), ({"x": a}, {"x": a})):
        assert exact(diff_compact(old, new, REFS, shared), compact_ops(diff(old, new), REFS, new))
