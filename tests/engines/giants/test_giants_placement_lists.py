"""Phase 3's legal list (`placement.notation`, built from shared tuples and the few
hexes that matter) against GI-12 … GI-17 written out plainly, hex by hex over the whole
island, in every placement state of random games (fixed seeds); and the runs it says it
is made of (NotationList.runs)."""

from __future__ import annotations

import pytest
from giants_builders import ENGINE, random_turns

from engines.base import NotationList
from engines.giants.actions import Action, Neutral, Pass, Place, Power, Tablet, format_action
from engines.giants.board import ISLAND
from engines.giants.state import PLACE, GameState


def _plain_powers(state: GameState, seat: int, figure: str) -> list[Action]:
    """GI-13 (the sorcerer) / GI-14 (the chief): each power the seat could use now."""
    p = state.seats[seat]
    out: list[Action] = []
    if p.reserve_workers > 0:
        out.append(Power(figure, "village", ISLAND.village))  # +1 worker from reserve
    if p.reserve_markers > 0:
        out.append(Power(figure, "hut", ISLAND.hut))  # +1 marker from reserve
    for cell in ISLAND.land_order:  # every unexhausted forest hex
        if state.forests.get(cell, 0) > 0:
            out.append(Power(figure, "forest", cell))
    if p.bases > 0:  # a free Ahu, from any land hex next to it
        for site in ISLAND.ahu:
            st = state.ahu[site.id]
            if st.reserved is None and st.size == 0:
                out.extend(Power(figure, "reserve", cell, site.id) for cell in site.adjacent)
    if state.headdresses > 0:
        out.append(Power(figure, "clay", ISLAND.clay_pit))
    return out


def _plain_list(state: GameState, seat: int) -> list[str]:
    p = state.seats[seat]
    land = ISLAND.land_order
    acts: list[Action] = []
    logs = range(min(2, p.logs) + 1)  # GI-12: 0-2 logs from behind the screen
    if p.workers > 0:
        acts += [Place("worker", cell, k) for k in logs for cell in land]
    if p.sorcerer:
        acts += [Place("sorcerer", cell, k) for k in logs for cell in land]
        acts += _plain_powers(state, seat, "sorcerer")
    if p.chief:
        acts += [Place("chief", cell, 0) for cell in land]  # the chief alone
        if p.tablets >= 2:
            acts += _plain_powers(state, seat, "chief")
    if p.markers > 0 and state.tablets > 0:
        acts.append(Tablet())  # GI-15
    if state.players == 2 and p.markers > 0:  # GI-16
        if state.neutrals > 0:
            acts += [Neutral(None, cell) for cell in land]
        for source in land:
            if "n" in state.board.get(source, {}):  # an unmarked neutral worker there
                acts += [Neutral(source, cell) for cell in land]
    acts.append(Pass())  # GI-17
    return [format_action(a) for a in acts]


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (2, 9), (3, 4), (5, 2)])
def test_placement_lists_are_the_rule(players: int, seed: int) -> None:
    seen = neutral_moves = 0
    for state, seat, legal in random_turns(players, seed):
        if state.phase == PLACE:
            assert legal == _plain_list(state, seat), (state.turn, seat)
            # the runs it says it is made of (NotationList): the list, in order; the
            # tuples are the tables' own, the same objects from one list to the next
            assert type(legal) is NotationList and [a for run in legal.runs for a in run] == legal
            assert all(type(run) is tuple or type(run) is list for run in legal.runs)
            tables = {id(run) for run in legal.runs if type(run) is tuple}
            again = ENGINE.legal_notation(state, seat)
            assert {id(run) for run in again.runs if type(run) is tuple} == tables  # type: ignore[attr-defined]
            seen += 1
            neutral_moves += any(">" in a for a in legal if a.startswith("neutral"))
    assert seen > 50 and (players != 2 or neutral_moves > 0)
