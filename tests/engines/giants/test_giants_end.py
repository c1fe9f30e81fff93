"""End of phase 4, cleanup, end of game and scoring (GI-24 … GI-27, GI-30)."""

from __future__ import annotations

import pytest
from giants_builders import ENGINE, act, at_transport, legal_texts

from engines.giants import dice
from engines.giants.state import AUCTION, CLEANUP, OVER, PLACE, RETURNS, Statue

Q = (12, 4)


def all_pass(state, seats):  # type: ignore[no-untyped-def]
    for seat in seats:
        state, _ = act(state, seat, "pass")
    return state


def test_gi24_statues_in_front_return_and_their_owner_may_mark_them() -> None:
    state = at_transport(3, statues={"M1": Statue("M", 2, Q, 1, None),
                                     "H2": Statue("H", 1, (0, 3), 1, None)})
    state = all_pass(state, [0, 1, 2])
    assert state.phase == RETURNS and state.current == 1
    assert legal_texts(state, 1) == ["mark M1", "mark H2", "pass"]
    state, _ = act(state, 1, "mark M1")
    state, _ = act(state, 1, "pass")
    assert (state.statues["M1"].front, state.statues["M1"].marker) == (None, 1)
    assert (state.statues["H2"].front, state.statues["H2"].hex) == (None, (0, 3))
    assert state.phase == CLEANUP and state.current == 1  # may take the marker back


def test_gi25_cleanup_returns_figures_removes_logs_keeps_neutral_workers() -> None:
    board = {(5, 3): {"w0": 2, "l": 1, "n1": 1}, (6, 3): {"c1": 1, "s0": 1, "n": 1}}
    state = at_transport(2, board=board)
    state.seats[0].workers, state.seats[1].markers = 0, 1
    state.seats[0].front_markers = 2
    state.seats[1].front_chief = True
    state.seats[1].chief = False
    state = all_pass(state, [0, 1])
    p0, p1 = state.seats
    assert state.phase in (AUCTION, PLACE) and state.turn == 2 and state.first == 1
    assert (p0.workers, p0.sorcerer, p0.markers) == (2, True, 5)
    assert (p1.chief, p1.markers) == (True, 2)  # the marker on the neutral came back
    assert state.board == {(5, 3): {"n": [1, 0]}, (6, 3): {"n": [1, 0]}}


def test_gi25_markers_on_statues_may_be_taken_back() -> None:
    state = at_transport(3, statues={"M1": Statue("M", 1, (5, 3), None, 2)})
    state = all_pass(state, [0, 1, 2])
    assert state.phase == CLEANUP and state.current == 2
    assert legal_texts(state, 2) == ["release M1", "pass"]
    markers = state.seats[2].markers
    state, _ = act(state, 2, "release M1")
    assert state.statues["M1"].marker is None and state.seats[2].markers == markers + 1
    assert state.turn == 2


def test_gi26_the_game_ends_after_phase_4_of_the_turn_the_last_base_is_used() -> None:
    state = at_transport(3, board={(7, 0): {"w0": 1}},
                         statues={"M1": Statue("M", 3, (6, 0), None, None)})
    for ahu in ("A01", "A02", "A03", "A14", "A16"):
        state.ahu[ahu].size, state.ahu[ahu].owner = 1, 0
    state.seats[0].bases = 1
    state, _ = act(state, 0, "erect M1 A05")
    assert state.phase != OVER and ENGINE.to_act(state) == frozenset({1})  # phase 4 goes on
    state = all_pass(state, [1, 2, 0])
    assert state.phase == OVER and ENGINE.to_act(state) == frozenset()
    outcome = ENGINE.outcome(state)
    assert outcome.reason == "all_bases" and outcome.winners == (0,)
    assert outcome.scores[0] == 5 + 5 + 4 + 3 + 4 + 3 * 3


def test_gi26_guards_turn_20_and_no_ahu_left() -> None:
    state = at_transport(3)
    state.turn = 20
    state = all_pass(state, [0, 1, 2])
    assert ENGINE.outcome(state).reason == "turn_limit"
    state = at_transport(5)  # 5 x 5 bases: 20 Ahu filled, nobody used all bases
    for i, a in enumerate(state.ahu.values()):
        a.size, a.owner = 1, i % 5
    state = all_pass(state, [0, 1, 2, 3, 4])
    assert ENGINE.outcome(state).reason == "no_ahu"


def over_with(points: list[int], erected: dict[str, tuple[int, int, bool]]):  # type: ignore[no-untyped-def]
    state = at_transport(3)
    for seat, pts in enumerate(points):
        state.seats[seat].points = pts
    for ahu, (owner, size, head) in erected.items():
        a = state.ahu[ahu]
        a.owner, a.size, a.headdress = owner, size, head
    state.turn = 20
    return all_pass(state, [0, 1, 2])


def test_gi27_score_is_points_plus_size_times_value_plus_headdress() -> None:
    state = over_with([3, 0, 1], {"A01": (0, 2, True), "A10": (1, 3, True)})
    # A01: 2 x 5 + 1; A10: 3 x 1 + 3
    assert ENGINE.outcome(state).scores == (3 + 11.0, 6.0, 1.0)


def test_gi27_ties_more_moai_then_more_transport_points_then_shared() -> None:
    state = over_with([0, 5, 0], {"A01": (0, 1, False), "A08": (2, 1, False), "A09": (2, 4, False)})
    outcome = ENGINE.outcome(state)
    assert outcome.scores == (5.0, 5.0, 5.0) and outcome.winners == (2,)  # two Moai
    state = over_with([2, 4, 0], {"A08": (0, 3, False), "A09": (1, 1, False)})
    assert ENGINE.outcome(state).winners == (1,)  # 5 each, one Moai each: more points
    state = over_with([5, 5, 1], {})
    assert ENGINE.outcome(state).winners == (0, 1)


def test_gi30_at_the_end_everything_is_revealed_and_dice_reroll() -> None:
    from engines.playout import random_playout

    result = random_playout(ENGINE, 3, 5150)
    final = result.final_state
    view = ENGINE.view(final, None)
    assert view["seed"] == 5150 and view["seed_commitment"] == dice.commitment(5150)
    assert set(view["screens"]) == {"0", "1", "2"}
    for a in view["ahu"].values():
        assert not a["moai"] or "owner" in a
    assert view["dice"] == dice.roll(5150, final.turn, 3)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_gi6_every_turns_offer_re_derives_from_the_revealed_seed(players: int) -> None:
    from engines.playout import random_playout

    seen: dict[int, list[int]] = {}

    def hook(before, seat, action, transition) -> None:  # type: ignore[no-untyped-def]
        for event in transition.events:
            if event["type"] == "moai_draw":
                seen[event["turn"]] = event["faces"]

    result = random_playout(ENGINE, players, 31337, on_step=hook)
    seed = ENGINE.view(result.final_state, 0)["seed"]
    assert seen and all(
        faces == dice.roll(seed, turn, dice.dice_count(players)) for turn, faces in seen.items()
    )


def test_gi24_an_owner_without_markers_still_gets_the_returns_turn() -> None:
    # Whether a screen holds markers is private (GI-28): the turn order must not tell.
    state = at_transport(3, statues={"M1": Statue("M", 2, Q, 1, None)})
    state.seats[1].markers = 0
    state = all_pass(state, [0, 1, 2])
    assert state.phase == RETURNS and ENGINE.to_act(state) == frozenset({1})
    assert legal_texts(state, 1) == ["pass"]
    state, _ = act(state, 1, "pass")
    assert state.statues["M1"].front is None and state.turn == 2
