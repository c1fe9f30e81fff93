"""`apply` changes a copy that shares the hexes, statues and Ahu of the state it came
from (`GameState.successor`); playing must give exactly what full copies gave and never
change the state it started from (GI-12 … GI-25 change hexes, statues and Ahu)."""

from __future__ import annotations

import random
from dataclasses import fields
from typing import Any

import pytest
from giants_builders import ENGINE

from engines.giants.state import GameState, Player, to_data


def _playout(players: int, seed: int, apply_on_clones: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every state's snapshot and every move's events of a random game."""
    with monkeypatch.context() as patch:
        if apply_on_clones:  # what `apply` did before: copy everything
            patch.setattr(GameState, "successor", GameState.clone)
        rng = random.Random(seed)
        state = ENGINE.new_game(players, {}, seed)
        seen: list[Any] = [to_data(state)]
        while ENGINE.outcome(state) is None:
            seat = rng.choice(sorted(ENGINE.to_act(state)))
            text = rng.choice(ENGINE.legal_notation(state, seat))
            before = to_data(state)
            result = ENGINE.apply_text(state, seat, text)
            assert to_data(state) == before, f"{text!r} changed the state it was applied to"
            state = result.state
            seen += [text, list(result.events), to_data(state)]
        return seen


@pytest.mark.parametrize(("players", "seed"), [(2, 3), (2, 41), (3, 7), (4, 12), (5, 99)])
def test_successors_play_as_full_copies_and_leave_their_origin(
    players: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GI-18 (pieces used per hex), GI-20/21 (erect, headdress), GI-22/24/25 (markers on
    statues), GI-15 (reserve): a random game plays move for move as with full copies,
    and no move changes the state it was applied to."""
    shared = _playout(players, seed, False, monkeypatch)
    assert shared == _playout(players, seed, True, monkeypatch)
    assert len(shared) > 100  # a whole game, through every phase


def test_successor_and_player_clone_copy_every_field() -> None:
    """The copies are made slot by slot (no constructor call): every field of the state
    and of each seat is there and equal, the shared maps' contents too, and the lists a
    move changes in place are the copy's own."""
    rng = random.Random(8)
    state = ENGINE.new_game(3, {}, 8)
    for _ in range(60):
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        state = ENGINE.apply_text(state, seat, rng.choice(ENGINE.legal_notation(state, seat))).state
    new = state.successor()
    for f in fields(GameState):
        assert getattr(new, f.name) == getattr(state, f.name), f.name
    assert new.view_memo is state.view_memo and new == state
    for mine, theirs in zip(new.seats, state.seats, strict=True):
        # `looked` is shared (a look replaces it, never changes it: test_giants_move_path.py)
        assert mine is not theirs and mine.looked is theirs.looked
        assert all(getattr(mine, f.name) == getattr(theirs, f.name) for f in fields(Player))
        assert mine == theirs.clone() == theirs
    for name in ("seats", "stock", "offer", "faces", "forests", "board", "statues", "ahu", "passed", "order"):
        assert getattr(new, name) is not getattr(state, name), name
