"""Fast paths of a move's work against the rules written out plainly (fixed seeds):
`to_act` made once per seat count, and a seat's public lists in views handed back from
the last view when equal (the room's diff then passes them by identity)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from giants_builders import ENGINE

from engines.giants.state import AUCTION, OVER, GameState


def _plain_to_act(state: GameState) -> frozenset[int]:
    """GI-8: every seat in the sealed auction until it closes; GI-10, GI-12 … GI-25: the
    one seat whose turn it is in every other step; nobody once the game is over (GI-26)."""
    if state.phase == OVER:
        return frozenset()
    if state.phase == AUCTION:
        return frozenset(range(state.players))
    return frozenset({state.current}) if state.current is not None else frozenset()


def _games(players: int, seed: int) -> Any:
    """Every state of a random game; a look under a Moai (GI-23) or an erection (GI-20),
    rare among hundreds of choices, is taken whenever one is legal."""
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, seed)
    while True:
        yield state
        if ENGINE.outcome(state) is not None:
            return
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        legal = ENGINE.legal_notation(state, seat)
        looks = [a for a in legal if a.startswith(("look ", "erect "))]
        state = ENGINE.apply_text(state, seat, rng.choice(looks or legal)).state


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 8), (5, 13)])
def test_to_act_is_the_rule(players: int, seed: int) -> None:
    """GI-8, GI-10, GI-12, GI-18, GI-24, GI-25, GI-26 as written above, in every state of
    a game; the set is an immutable frozenset (shared between states, never changed)."""
    phases = set()
    for state in _games(players, seed):
        to_act = ENGINE.to_act(state)
        assert type(to_act) is frozenset and to_act == _plain_to_act(state), (state.turn, state.phase)
        phases.add(state.phase)
    assert {"auction", "place", "transport", "over"} <= phases


def _plain_public_lists(state: GameState, seat: int) -> dict[str, Any]:
    """GI-23: the Ahu a seat paid to look under, public (not what it saw); GI-8: its bid,
    revealed once the auction is over, until cleanup."""
    p = state.seats[seat]
    out: dict[str, Any] = {"looked": list(p.looked)}
    if state.phase != AUCTION and p.bid is not None:
        out["bid"] = [p.bid.markers, p.bid.workers, p.bid.chief]
    return out


@pytest.mark.parametrize(("players", "seed"), [(2, 7), (3, 4), (4, 2)])
def test_a_seats_public_lists_are_the_rule_and_kept_when_equal(players: int, seed: int) -> None:
    """In every view (each seat and a spectator, as a room views each state): a seat's
    `looked` and revealed `bid` are the rule's lists (GI-23, GI-8); equal to the last
    state's, they are its very objects."""
    viewers: list[int | None] = [*range(players), None]
    last: dict[int | None, dict[str, Any]] = {}
    kept = looked = 0
    for state in _games(players, seed):
        if state.phase == OVER:
            break
        for viewer in viewers:
            view = ENGINE.view(state, viewer)
            for seat in range(players):
                part = view["seats"][str(seat)]
                plain = _plain_public_lists(state, seat)
                assert {k: part[k] for k in ("looked", "bid") if k in part} == plain
                looked += bool(plain["looked"])
                before = last.get(viewer, {}).get(str(seat))
                if before is None:
                    continue
                for key in ("looked", "bid"):
                    if key in part and key in before and part[key] == before[key]:
                        assert part[key] is before[key], (state.turn, state.phase, viewer, seat, key)
                        kept += 1
            last[viewer] = view["seats"]
    assert kept > 100 and looked > 0
