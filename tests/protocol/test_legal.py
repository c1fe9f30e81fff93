"""protocol.legal: a legal list sent as splices from the seat's previous one."""

from __future__ import annotations

import random

import msgpack
import pytest

from engines import registry
from protocol import PatchError, apply_legal_edit, legal_edit


def test_the_documented_example() -> None:
    base = ["a1-a2", "a1-b1", "c3-c4", "d1-d2"]
    assert apply_legal_edit(base, [[1, 1], [2, 0, "d1-e1", "e5-e6"]]) == ["a1-a2", "c3-c4", "d1-e1", "e5-e6", "d1-d2"]
    assert base == ["a1-a2", "a1-b1", "c3-c4", "d1-d2"]  # left as it was


def test_random_edits_rebuild_the_new_list() -> None:
    rng = random.Random(1)
    pool = [f"move {i}" for i in range(300)]
    for _ in range(500):
        base = sorted(rng.sample(range(300), rng.randint(0, 80)))
        new = sorted(rng.sample(range(300), rng.randint(1, 80)))
        old, fresh = [pool[i] for i in base], [pool[i] for i in new]
        edit = legal_edit(old, fresh)
        if edit is not None:
            assert apply_legal_edit(old, edit) == fresh
            assert len(msgpack.packb(edit)) < len(msgpack.packb(fresh)) + 8


def test_a_seats_next_turn_in_a_real_game_is_a_small_edit() -> None:
    """GIANTS placement turns: the next list shares most of the previous one."""
    engine = registry.get_engine("giants")
    rng = random.Random(2)
    state = engine.new_game(2, {}, 2)
    last: dict[int, list[str]] = {}
    sizes = []
    for _ in range(300):
        seat = min(engine.to_act(state))
        legal = engine.legal_notation(state, seat)
        if seat in last:
            edit = legal_edit(last[seat], legal)
            if edit is not None:
                assert apply_legal_edit(last[seat], edit) == legal
                sizes.append(len(msgpack.packb(edit)) / len(msgpack.packb(legal)))
        last[seat] = legal
        state = engine.apply_text(state, seat, rng.choice(legal)).state
    assert len(sizes) > 100 and sorted(sizes)[len(sizes) // 2] < 0.25


def test_reordered_or_repeated_lists_are_sent_whole() -> None:
    assert legal_edit(["a", "b", "c"], ["c", "b", "a"]) is None
    assert legal_edit(["a", "a"], ["a", "b"]) is None
    assert legal_edit(["a"], ["b"]) is None  # an edit no smaller than the list


@pytest.mark.parametrize(
    "splices",
    [{}, [[0]], [[5, 0]], [[0, 4]], [["0", 0]], [[0, 0, 3]], [[True, 0]], "x", [[-1, 0]]],
)
def test_an_edit_that_does_not_fit_is_a_patch_error(splices: object) -> None:
    with pytest.raises(PatchError):
        apply_legal_edit(["a", "b", "c"], splices)
