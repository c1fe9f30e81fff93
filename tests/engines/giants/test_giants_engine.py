"""Engine contract details specific to GIANTS: steps, wrong-phase actions, snapshots."""

from __future__ import annotations

from typing import Any

import pytest
from giants_builders import ENGINE, act, at_auction, at_place, at_transport

from engines import BadSnapshotError, GameOverError, IllegalActionError, get_engine
from engines.giants.actions import Pass, Transport


def test_registered_with_incomplete_lists_and_simultaneous_steps() -> None:
    info = get_engine("giants").info
    assert (info.min_players, info.max_players) == (2, 5)
    assert info.simultaneous and info.hidden_information and info.chance
    assert not info.complete_action_lists


@pytest.mark.parametrize(
    ("state_factory", "text"),
    [
        (at_auction, "pass"),
        (at_auction, "place worker (5,3) logs 0"),
        (at_place, "bid 1"),
        (at_place, "mark M1"),
        (at_transport, "place worker (5,3) logs 0"),
        (at_transport, "claim 1 workers"),
    ],
)
def test_an_action_of_another_phase_is_illegal(state_factory, text: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IllegalActionError):
        act(state_factory(3), 0, text)


def test_a_transport_the_list_does_not_show_is_still_accepted() -> None:
    # Listed: the cheapest route to (10,4) (through (11,4), own workers). A longer,
    # dearer path is legal too and apply takes it.
    board = {(11, 4): {"w0": 1}, (11, 5): {"w1": 1}, (10, 5): {"w1": 1}, (10, 4): {"w0": 1}}
    from engines.giants.state import Statue

    state = at_transport(3, board=board, statues={"M1": Statue("M", 1, (12, 4), 0, None)})
    listed = ENGINE.legal_actions(state, 0)
    explicit = Transport("M1", ((12, 4), (11, 5), (10, 5), (10, 4)))
    assert explicit not in listed
    state = ENGINE.apply(state, 0, explicit).state
    assert state.statues["M1"].hex == (10, 4) and state.seats[1].points == 2


def test_restore_refuses_what_is_not_a_snapshot() -> None:
    bads: list[Any] = [{}, {"version": 99}, {"version": 1, "players": 3}, []]
    for bad in bads:
        with pytest.raises(BadSnapshotError):
            ENGINE.restore(bad)


def test_no_action_after_the_end() -> None:
    state = at_transport(3)
    state.turn = 20
    for seat in (0, 1, 2):
        state, _ = act(state, seat, "pass")
    assert ENGINE.to_act(state) == frozenset() and ENGINE.legal_actions(state, 0) == []
    with pytest.raises(GameOverError):
        ENGINE.apply(state, 0, Pass())


def test_new_games_share_read_only_ahu_and_forests_and_play_on_clones() -> None:
    """A new game's Ahu and forests are one shared, read-only object (memory per new
    room); `apply` works on a clone, so playing never changes them."""
    from engines.giants.state import AhuState

    engine: Any = get_engine("giants")
    first, second = engine.new_game(2, {}, 1), engine.new_game(3, {}, 2)
    assert first.ahu is second.ahu and first.forests is second.forests
    with pytest.raises(TypeError):
        first.ahu["A01"].size = 1
    with pytest.raises(TypeError):
        first.forests[next(iter(first.forests))] = 0
    with pytest.raises(TypeError):
        first.ahu["A01"] = AhuState()
    clone = first.clone()
    clone.ahu["A01"].size = 1
    clone.forests[next(iter(clone.forests))] = 0
    assert clone != first and first.ahu["A01"] == AhuState() and first.clone() == engine.new_game(2, {}, 1)
    import copy
    import pickle

    for twin in (copy.deepcopy(first), pickle.loads(pickle.dumps(first))):  # ordinary, changeable copies
        assert twin == first
        twin.ahu["A01"].size = 1
        twin.forests[next(iter(twin.forests))] = 0
    assert first.ahu["A01"] == AhuState()
