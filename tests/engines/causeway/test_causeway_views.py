"""Giant's Causeway views: parts kept from the last view are exactly what a fresh build gives."""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import permutations, product
from typing import Any

import msgpack
import pytest

from engines import IllegalActionError, NotationError, hexgrid
from engines.causeway import CausewayState, Drop, Leap, Place, format_action
from engines.causeway.board import DIRECTIONS
from engines.registry import get_engine


def afresh(state: CausewayState) -> CausewayState:
    """The same position in maps no view has seen."""
    return replace(state, stacks=dict(state.stacks), giants=dict(state.giants), won=dict(state.won),
                   destroyed=dict(state.destroyed))


def applies(engine: Any, state: CausewayState, seat: int, action: Any) -> bool:
    """Whether `apply` accepts `action` (it refuses an illegal one with IllegalActionError)."""
    try:
        engine.apply(state, seat, action)
    except IllegalActionError:
        return False
    return True


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_views_over_games_are_those_built_afresh(rules: str) -> None:
    """A view hands back the last view's parts for the maps a move left alone (the room's
    diff skips them by identity): every view over whole games, viewed as a room does
    after each change, is exactly (msgpack bytes) the view built with nothing kept, and
    a map the move did not change is the last view's very object."""
    engine = get_engine("causeway", rules)
    rng = random.Random(13)
    kept = 0
    for seed in range(6):
        state = engine.new_game(2, {}, seed)
        last: dict[str, Any] | None = None
        while True:
            view = engine.view(state, None)  # as a room views it, after the last state's view
            assert msgpack.packb(view) == msgpack.packb(engine.view(afresh(state), None))
            assert engine.view(state, seat=0) == view  # one document for every seat
            if last is not None:
                for key in ("stacks", "giants", "won", "destroyed"):
                    if last[key] == view[key]:
                        assert last[key] is view[key], key
                        kept += 1
            last = engine.view(state, None)  # the memo as the room's sequence leaves it
            if engine.outcome(state) is not None:
                break
            seat = state.to_move
            state = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat))).state
    assert kept


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_an_action_is_judged_alike_after_the_position_was_listed_and_viewed(rules: str) -> None:
    """What listing and viewing a position keeps (cell names, the barrier frontier, the
    view's parts on the state) never changes a judgement: every listed action applies
    exactly as on the same position never listed or viewed, and actions near the listed
    ones (other targets, drops, choices, directions) are refused with the same reason."""
    engine = get_engine("causeway", rules)
    rng = random.Random(29)
    state = engine.new_game(2, {}, 0)
    checked = 0
    while engine.outcome(state) is None:
        seat = state.to_move
        listed = engine.legal_notation(state, seat)
        engine.view(state, None)
        fresh = afresh(state)
        tries = [*listed, *(t.replace("+", "/", 1) for t in listed[:5]), *(t + "+0,0" for t in listed[:5]),
                 *(t[:-1] + "9" for t in listed[:5]), "pass", "0,0^e", "destroy@0,0"]
        for text in tries:
            try:
                action = engine.parse_action(state, seat, text)
            except NotationError:
                continue
            outcomes = []
            for position in (state, fresh):
                try:
                    transition = engine.apply(position, seat, action)
                    outcomes.append(msgpack.packb([engine.view(transition.state, None), list(transition.events)]))
                except IllegalActionError as exc:
                    outcomes.append(str(exc).encode())
            assert outcomes[0] == outcomes[1], text
            checked += 1
        state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(listed))).state
    assert checked


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_apply_takes_exactly_the_listed_leaps(rules: str) -> None:
    """`apply` checks a leap without listing every leap: over random games, a leap from
    each giant in each direction with drops on any cells it passes over or lands on (any
    order, repeated, too many, with and without a barrier/spellstone choice) is accepted
    exactly when the legal list names it."""
    engine = get_engine("causeway", rules)
    rng = random.Random(41)
    tried = accepted = 0
    for seed in range(2):
        state = engine.new_game(2, {}, seed)
        while engine.outcome(state) is None:
            seat = state.to_move
            listed = set(engine.legal_notation(state, seat))
            specials = [c for c, s in state.stacks.items() if s[-1] in "WB"][:2]
            for start, (owner, _) in state.giants.items():
                if owner != seat or state.phase != "play":
                    continue
                for direction in range(6):
                    dq, dr = DIRECTIONS[direction]
                    line = [(start[0] + dq * k, start[1] + dr * k) for k in range(1, 5)]
                    for cells in [*(c for n in range(3) for c in product(line, repeat=n)), *permutations(line, 3)]:
                        for choice in [None, *specials]:
                            drops = tuple(Drop(c, choice if i == len(cells) - 1 else None) for i, c in enumerate(cells))
                            leap = Leap(start, direction, drops)
                            ok = applies(engine, state, seat, leap)
                            assert ok == (format_action(leap) in listed), format_action(leap)
                            tried += 1
                            accepted += ok
            state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(sorted(listed)))).state
    assert tried and accepted


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_apply_takes_exactly_the_listed_placements(rules: str) -> None:
    """`apply` checks a setup placement without listing them all: every piece on every
    cell near the start, at each setup ply of a few games, is accepted exactly when the
    legal list names it."""
    engine = get_engine("causeway", rules)
    rng = random.Random(43)
    tried = accepted = 0
    for seed in range(3):
        state = engine.new_game(2, {}, seed)
        while state.phase == "setup":
            seat = state.to_move
            listed = set(engine.legal_notation(state, seat))
            for piece in ("giant", "blank", "trapper", "spikey"):
                for cell in hexgrid.disk(4):
                    place = Place(piece, cell)
                    ok = applies(engine, state, seat, place)
                    assert ok == (format_action(place) in listed), format_action(place)
                    tried += 1
                    accepted += ok
            state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(sorted(listed)))).state
    assert tried and accepted
