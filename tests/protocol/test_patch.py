"""The view patch format: diff then apply reproduces the new view exactly."""

from __future__ import annotations

import copy
import math
import struct
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import PatchError, apply_patch, diff, same

# -- an exact equality written independently of protocol.patch.same ----------------


def tagged(x: Any) -> Any:
    """A Python value whose == is exact: types tagged, floats by their bits."""
    if isinstance(x, dict):
        return ("map", sorted((k, tagged(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return ("list", [tagged(v) for v in x])
    if isinstance(x, float):
        return ("float", "nan" if math.isnan(x) else struct.pack(">d", x))
    return (type(x).__name__, x)


def exact(a: Any, b: Any) -> bool:
    return tagged(a) == tagged(b)


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=6)
    | st.binary(max_size=6)
)
views = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(views, views)
def test_diff_then_apply_gives_the_new_view(old: Any, new: Any) -> None:
    before = copy.deepcopy(old)
    ops = diff(old, new)
    assert exact(apply_patch(old, ops), new)
    assert exact(old, before), "apply_patch must not mutate its input by default"


@settings(max_examples=300, deadline=None)
@given(views, views)
def test_ops_survive_the_wire_and_in_place_apply(old: Any, new: Any) -> None:
    """A client applies ops that went through msgpack, in place on its own copy."""
    wire_ops = msgpack.unpackb(msgpack.packb(diff(old, new), use_bin_type=True), raw=False)
    mine = msgpack.unpackb(msgpack.packb(old, use_bin_type=True), raw=False)
    assert exact(apply_patch(mine, wire_ops, in_place=True), new)


@settings(max_examples=300, deadline=None)
@given(views, views)
def test_diff_is_empty_exactly_when_views_are_equal(a: Any, b: Any) -> None:
    assert diff(a, copy.deepcopy(a)) == []
    assert (diff(a, b) == []) == exact(a, b)


@settings(max_examples=100, deadline=None)
@given(st.lists(views, max_size=8), st.lists(views, max_size=8))
def test_successive_patches_compose(first: list[Any], second: list[Any]) -> None:
    """A client applying patch after patch tracks the server's view version by version."""
    view: Any = {"log": []}
    for step in (first, second, first[:2]):
        nxt = {"log": step, "n": len(step)}
        view = apply_patch(view, diff(view, nxt), in_place=True)
        assert exact(view, nxt)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (1, True),
        (True, 1),
        (1, 1.0),
        (0.0, -0.0),
        ("a", b"a"),
        (0, False),
        (None, 0),
        ("1", 1),
        ({}, []),
    ],
)
def test_values_equal_in_python_but_not_on_the_wire_are_replaced(old: Any, new: Any) -> None:
    assert diff({"k": old}, {"k": new}) == [["set", ["k"], new]]
    assert exact(apply_patch({"k": old}, diff({"k": old}, {"k": new})), {"k": new})


def test_nan_is_unchanged_when_still_nan() -> None:
    assert diff({"x": math.nan}, {"x": float("nan")}) == []
    assert same(math.nan, float("nan"))


def test_ops_match_the_documented_example() -> None:
    """The example in docs/protocol.md section 6 (a Giantslayer-like move)."""
    game = {"board": ["W", ".", ".", "B", "."], "round": 1, "rounds": 2, "totals": [0, 0],
            "white_left": 24, "black_left": 6, "to_move": "white", "quiet_moves": [],
            "last_move": "d2-d1"}  # fmt: skip
    old: dict[str, Any] = {
        "room": {"status": "playing", "to_act": [0], "version": 12},
        "game": game,
        "outcome": None,
    }
    new = copy.deepcopy(old)
    new["room"].update(to_act=[1], version=13)
    new["game"].update(
        board=["W", ".", ".", ".", "B"], to_move="black", quiet_moves=["d1-e1"], last_move="d1-e1"
    )
    assert diff(old, new) == [
        ["set", ["room", "to_act", 0], 1],
        ["set", ["room", "version"], 13],
        ["set", ["game", "board", 3], "."],
        ["set", ["game", "board", 4], "B"],
        ["set", ["game", "to_move"], "black"],
        ["push", ["game", "quiet_moves"], "d1-e1"],
        ["set", ["game", "last_move"], "d1-e1"],
    ]


def test_a_mostly_changed_container_is_replaced_whole() -> None:
    """A board reset costs one op, not one per cell."""
    old = {"board": ["B"] * 30 + ["."] * 31, "round": 1}
    new = {"board": ["."] * 30 + ["W"] * 31, "round": 2}
    assert diff(old, new) == [["set", ["board"], new["board"]], ["set", ["round"], 2]]


def test_lists_grow_with_push_and_shrink_with_trunc() -> None:
    assert diff([1, 2], [1, 2, 3, 4]) == [["push", [], 3], ["push", [], 4]]
    assert diff([1, 2, 3], [9]) == [["set", [0], 9], ["trunc", [], 1]]
    assert diff({"a": [1, 2]}, {"a": []}) == [["trunc", ["a"], 0]]


def test_maps_set_new_keys_and_delete_removed_ones() -> None:
    assert diff({"a": 1, "b": 2}, {"b": 2, "c": 3}) == [["del", ["a"]], ["set", ["c"], 3]]


def test_root_replacement() -> None:
    assert diff([1], {"a": 1}) == [["set", [], {"a": 1}]]
    assert apply_patch([1], [["set", [], 5]]) == 5


def test_copy_on_write_shares_untouched_branches() -> None:
    old: dict[str, Any] = {"big": {"x": list(range(100))}, "small": {"n": 1}}
    new = apply_patch(old, [["set", ["small", "n"], 2]])
    assert new["big"] is old["big"]
    assert old["small"]["n"] == 1 and new["small"]["n"] == 2


def test_in_place_apply_modifies_the_given_view() -> None:
    view = {"a": [1]}
    out = apply_patch(view, [["push", ["a"], 2]], in_place=True)
    assert out is view and view == {"a": [1, 2]}


@pytest.mark.parametrize(
    "ops",
    [
        [["set", ["missing", "x"], 1]],
        [["del", ["nope"]]],
        [["trunc", ["a"], 5]],
        [["trunc", ["a"], -1]],
        [["trunc", ["m"], 0]],
        [["push", ["m"], 1]],
        [["set", ["a", 7], 1]],
        [["set", ["a", "0"], 1]],
        [["frob", ["a"], 1]],
        [["set"]],
        [["set", "a", 1]],
        ["set"],
        [["set", ["a"]]],
        [["push", ["a", 0], 1]],
    ],
)
def test_ops_that_do_not_fit_the_view_raise_patch_error(ops: list[Any]) -> None:
    """A client that gets PatchError resyncs; the original view is never half-patched."""
    view = {"a": [1, 2], "m": {"k": 1}}
    before = copy.deepcopy(view)
    with pytest.raises(PatchError) as info:
        apply_patch(view, ops)
    assert info.value.code == "bad_message"
    assert view == before
