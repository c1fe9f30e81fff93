"""Phase 3: placement and powers (GI-12 … GI-17)."""

from __future__ import annotations

import random

import pytest
from giants_builders import ENGINE, act, at_place, legal_texts

from engines import IllegalActionError, NotYourTurnError
from engines.giants import placement
from engines.giants.actions import Pass, Power, format_action
from engines.giants.board import ISLAND
from engines.giants.state import PLACE, TRANSPORT, GameState


def test_gi12_a_worker_goes_on_any_land_hex_with_up_to_two_logs() -> None:
    state = at_place(3)
    state.seats[0].logs = 3
    state, events = act(state, 0, "place worker (5,3) logs 2")
    assert state.board[(5, 3)] == {"w0": [1, 0], "l": [2, 0]}
    assert state.seats[0].logs == 1 and state.seats[0].workers == 0
    assert events[0] == {"type": "place", "seat": 0, "figure": "worker", "hex": "5,3", "logs": 2}
    assert state.current == 1  # one action, then the next seat clockwise


def test_gi12_limits_chief_alone_logs_and_land() -> None:
    state = at_place(3)
    state.seats[0].logs = 5
    for text in ("place chief (5,3) logs 1", "place worker (5,3) logs 3",
                 "place worker (13,4) logs 0", "place sorcerer (5,3) logs 6"):
        with pytest.raises(Exception):  # noqa: B017 - notation or rule error, both refuse
            act(state, 0, text)
    state, _ = act(state, 0, "place chief (5,3)")
    assert state.board[(5, 3)] == {"c0": [1, 0]}
    state.current = 0
    with pytest.raises(IllegalActionError):
        act(state, 0, "place chief (6,3)")  # the chief is already out


def test_gi13_sorcerer_village_hut_forest_clay() -> None:
    state = at_place(3)
    state, _ = act(state, 0, "sorcerer village")
    assert state.seats[0].workers == 2 and state.seats[0].reserve_workers == 4
    assert state.board[(1, 4)] == {"s0": [1, 0]}
    state, _ = act(state, 1, "sorcerer forest (6,4)")
    assert state.seats[1].logs == 6 and state.forests[(6, 4)] == 0
    assert "sorcerer forest (6,4)" not in legal_texts(state, 2)  # exhausted
    state, _ = act(state, 2, "sorcerer clay")
    (_sid, statue), = state.statues.items()
    assert (statue.kind, statue.hex, statue.front) == ("H", (0, 3), 2)
    state.current = 0
    state.seats[0].sorcerer = True
    state, _ = act(state, 0, "sorcerer hut")
    assert state.seats[0].markers == 3


def test_gi13_forest_logs_cannot_come_with_the_sorcerer() -> None:
    state = at_place(3)
    state, _ = act(state, 0, "sorcerer forest (5,5)")
    assert state.board[(5, 5)] == {"s0": [1, 0]}  # no logs on the board with it
    assert state.seats[0].logs == 5


def test_gi13_reserve_an_ahu_with_a_base_from_an_adjacent_hex() -> None:
    state = at_place(3)
    with pytest.raises(IllegalActionError):
        act(state, 0, "sorcerer reserve A05 (5,3)")  # not adjacent
    state, events = act(state, 0, "sorcerer reserve A05 (6,0)")
    assert state.ahu["A05"].reserved == 0 and state.seats[0].bases == 5
    assert events[0]["ahu"] == "A05"
    assert ENGINE.view(state, None)["ahu"]["A05"]["reserved"] == 0  # colour side up
    assert not any("A05" in t for t in legal_texts(state, 1))


def test_gi14_chief_uses_a_power_for_two_half_tablets() -> None:
    state = at_place(3)
    assert not any(t.startswith("chief village") for t in legal_texts(state, 0))
    with pytest.raises(IllegalActionError):
        act(state, 0, "chief village")
    state.seats[0].tablets = 3
    supply = state.tablets
    state, _ = act(state, 0, "chief village")
    assert state.seats[0].tablets == 1 and state.tablets == supply + 2
    assert state.board[(1, 4)] == {"c0": [1, 0]} and state.seats[0].workers == 2


def test_gi15_a_marker_to_the_front_for_a_half_tablet() -> None:
    state = at_place(3)
    supply = state.tablets
    state, _ = act(state, 0, "tablet")
    p = state.seats[0]
    assert (p.markers, p.front_markers, p.tablets, state.tablets) == (1, 1, 1, supply - 1)
    state.current, state.tablets = 0, 0
    assert "tablet" not in legal_texts(state, 0)  # while the supply lasts


def test_gi16_neutral_workers_two_players_only() -> None:
    state = at_place(2)
    state, _ = act(state, 0, "neutral (5,3)")
    assert state.board[(5, 3)] == {"n0": [1, 0]} and state.neutrals == 5
    assert state.seats[0].markers == 2
    # seat 1 cannot move a neutral worker marked by the opponent
    assert not any(t.startswith("neutral (5,3)>") for t in legal_texts(state, 1))
    with pytest.raises(IllegalActionError):
        act(state, 1, "neutral (5,3)>(6,3)")
    # an unmarked one (after cleanup) can be moved and is marked by the mover
    state.board[(5, 3)] = {"n": [1, 0]}
    state, _ = act(state, 1, "neutral (5,3)>(6,3)")
    assert state.board == {(6, 3): {"n1": [1, 0]}}
    three = at_place(3)
    assert not any(t.startswith("neutral") for t in legal_texts(three, 0))
    with pytest.raises(IllegalActionError):
        act(three, 0, "neutral (5,3)")


def test_gi17_passed_players_are_skipped_and_the_phase_ends_when_all_pass() -> None:
    state = at_place(3)
    state, _ = act(state, 0, "pass")
    state, _ = act(state, 1, "place worker (5,3) logs 0")
    state, _ = act(state, 2, "pass")
    assert state.current == 1
    with pytest.raises(NotYourTurnError):
        act(state, 0, "place worker (5,3) logs 0")
    assert ENGINE.default_action(state, 1) == Pass()
    state, events = act(state, 1, "pass")
    assert state.phase == TRANSPORT and state.current == 0
    assert events[-1] == {"type": "phase", "phase": "transport", "first": 0}


def _powers_written_out(state: GameState, seat: int, figure: str) -> list[Power]:
    """GI-13/GI-14's powers of `figure`, built action by action (what the tables replace)."""
    p = state.seats[seat]
    out: list[Power] = []
    if p.reserve_workers > 0:
        out.append(Power(figure, "village", ISLAND.village))
    if p.reserve_markers > 0:
        out.append(Power(figure, "hut", ISLAND.hut))
    out += [Power(figure, "forest", cell) for cell in ISLAND.land_order if state.forests.get(cell, 0) > 0]
    if p.bases > 0:
        for ahu in ISLAND.ahu:
            st = state.ahu[ahu.id]
            if st.reserved is None and st.size == 0:
                out += [Power(figure, "reserve", cell, ahu.id) for cell in ahu.adjacent]
    if state.headdresses > 0:
        out.append(Power(figure, "clay", ISLAND.clay_pit))
    return out


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 8), (5, 13)])
def test_gi13_gi14_power_lists_from_tables_are_the_powers_written_out(players: int, seed: int) -> None:
    """The sorcerer's and chief's powers (GI-13, GI-14) come from tables built once; on
    every placement state of random games they are the powers built one by one, and
    their notation is those actions formatted."""
    rng = random.Random(seed)
    state, checked = ENGINE.new_game(players, {}, seed), 0
    while ENGINE.outcome(state) is None:
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        if state.phase == PLACE:
            for figure in ("sorcerer", "chief"):
                expected = _powers_written_out(state, seat, figure)
                assert placement._powers(state, seat, figure, False) == expected
                assert placement._powers(state, seat, figure, True) == list(map(format_action, expected))
                checked += 1
        state, _ = act(state, seat, rng.choice(ENGINE.legal_notation(state, seat)))
    assert checked > 20
