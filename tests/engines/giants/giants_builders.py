"""Hand-made GIANTS situations for the rule tests (imported by test_giants_*.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from engines import get_engine
from engines.giants.state import AUCTION, PLACE, TRANSPORT, GameState, Statue

ENGINE: Any = get_engine("giants")


def fresh(players: int = 3, seed: int = 12345) -> GameState:
    """A new game with seat 0 holding the first-player pawn, as a clone the tests may
    change in place (a new game's Ahu and forests are shared and read only)."""
    state: GameState = ENGINE.new_game(players, {}, seed).clone()
    state.first = 0
    return state


def random_turns(players: int, seed: int) -> Iterator[tuple[GameState, int, list[str]]]:
    """The turns of a random full game (`seed` for the game and for the choices): the
    state, the seat asked (one of those to act, at random) and its legal list, before
    that seat's move, a random entry of the list, is played."""
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, seed)
    while ENGINE.outcome(state) is None:
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        legal = ENGINE.legal_notation(state, seat)
        yield state, seat, legal
        state = ENGINE.apply_text(state, seat, rng.choice(legal)).state


def act(state: GameState, seat: int, text: str) -> tuple[GameState, tuple[dict[str, Any], ...]]:
    """Apply one action written in notation; return the new state and the events."""
    result = ENGINE.apply_text(state, seat, text)
    return result.state, result.events


def at_auction(players: int = 3, offer: tuple[int, int, int] = (1, 1, 1)) -> GameState:
    state = fresh(players)
    state.phase, state.current = AUCTION, None
    state.offer = list(offer)
    state.stock = [10, 10, 5]  # the offer came out of a known stock
    for p in state.seats:
        p.bid = None
    return state


def at_place(players: int = 3, current: int = 0) -> GameState:
    state = fresh(players)
    state.phase, state.current = PLACE, current
    state.offer = [0, 0, 0]
    state.passed = [False] * players
    return state


def at_transport(
    players: int = 3,
    current: int = 0,
    board: dict[tuple[int, int], dict[str, int]] | None = None,
    statues: dict[str, Statue] | None = None,
) -> GameState:
    """Phase 4 with `board` = {hex: {token: count}} (all fresh) and the given statues."""
    state = fresh(players)
    state.phase, state.current = TRANSPORT, current
    state.offer = [0, 0, 0]
    state.passed = [False] * players
    state.board = {
        cell: {token: [count, 0] for token, count in tokens.items()}
        for cell, tokens in (board or {}).items()
    }
    state.statues = dict(statues or {})
    state.next_statue = 100
    return state


def legal_texts(state: GameState, seat: int) -> list[str]:
    return [ENGINE.format_action(state, a) for a in ENGINE.legal_actions(state, seat)]
