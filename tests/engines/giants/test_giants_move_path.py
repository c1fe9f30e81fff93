"""A move's engine path without calls it does not need (session 20): `legal_notation`
and `apply` decide who acts without a `to_act` call, `apply` runs `flow.settle` only
when a step is pending, placement finds the next seat without a `range` (GI-12 …
GI-17) and writes its figures' runs by slicing, and `successor`'s players share the
list of Ahu looked under (GI-23), which a look replaces instead of changing. Each must
give exactly what the general path gives (`Engine.legal_notation`: every legal action
formatted; `to_act` deciding who may act; states never changed by `apply`)."""

from __future__ import annotations

import random

import pytest
from giants_builders import ENGINE

from engines.base import Engine, NotYourTurnError
from engines.giants.state import OVER


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 8), (5, 13)])
def test_lists_and_turns_are_the_general_paths(players: int, seed: int) -> None:
    """At every state of random games: each seat's notation list is `Engine`'s general
    one (its legal actions formatted, [] for a seat not in `to_act`: GI-8 every bidder,
    GI-12/GI-18 the current seat), and `apply` refuses exactly the seats not in
    `to_act`."""
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, 500 + seed)
    steps = 0
    while ENGINE.outcome(state) is None:
        acting = ENGINE.to_act(state)
        for seat in range(players):
            assert ENGINE.legal_notation(state, seat) == Engine.legal_notation(ENGINE, state, seat), (
                state.phase, seat)
            if seat not in acting:
                with pytest.raises(NotYourTurnError):
                    ENGINE.apply_text(state, seat, "pass")
        seat = rng.choice(sorted(acting))
        text = rng.choice(ENGINE.legal_notation(state, seat))
        state = ENGINE.apply_text(state, seat, text).state
        steps += 1
    assert state.phase == OVER and steps > 100


def test_a_look_replaces_the_list_the_last_state_shares() -> None:
    """GI-23: a look adds the Ahu to the seat's own list in the new state only; the state
    it was played from, whose players `successor` shares that list with, keeps its own;
    and a clone (changed in place by tests) shares no list with its original."""
    rng = random.Random(1)
    seen = 0
    for seed in range(30):
        state = ENGINE.new_game(2, {}, 700 + seed)
        while ENGINE.outcome(state) is None:
            seat = rng.choice(sorted(ENGINE.to_act(state)))
            options = ENGINE.legal_notation(state, seat)
            looks = [text for text in options if text.startswith("look ")]
            text = looks[0] if looks else rng.choice(options)
            was = [list(p.looked) for p in state.seats]
            new = ENGINE.apply_text(state, seat, text).state
            assert [list(p.looked) for p in state.seats] == was
            if looks:
                seen += 1
                ahu = text.split()[1]
                assert new.seats[seat].looked == [*was[seat], ahu]
                assert state.seats[seat].looked is not new.seats[seat].looked
            clone = new.clone()
            assert all(a.looked is not b.looked for a, b in zip(clone.seats, new.seats, strict=True))
            state = new
        if seen >= 2:
            break
    assert seen >= 2
