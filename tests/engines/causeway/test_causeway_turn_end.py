"""Giant's Causeway's turn end (engines.causeway.turn_end) against the plain rules.

`apply` plays steps and leaps by their exact class (no isinstance chain) and `_finish`
tells moves apart the same way, passing the state's very giants map on when the move
was not a step or a leap; `outcome` is worked out once a finished position. Over random
games of every rule set, each gives what the plain way gives: the same move played as an
instance of a subclass (the isinstance path), the maps compared, the outcome worked out
afresh on a copy of the position that keeps nothing.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from engines.causeway import CausewayState
from engines.causeway.engine import CausewayEngine
from engines.causeway.notation import Action, Destroy, Leap, Pass, Step
from engines.registry import get_engine

RULES = ["barrier", "spellstone", "quick"]


@dataclasses.dataclass(frozen=True, slots=True)
class OtherStep(Step):
    """A step that is not of the exact class (the general path's isinstance)."""


@dataclasses.dataclass(frozen=True, slots=True)
class OtherLeap(Leap):
    """A leap that is not of the exact class."""


@dataclasses.dataclass(frozen=True, slots=True)
class OtherPass(Pass):
    """A pass that is not of the exact class."""


@dataclasses.dataclass(frozen=True, slots=True)
class OtherDestroy(Destroy):
    """A destroy step that is not of the exact class."""


def subclassed(action: Action) -> Action:
    """`action` as an instance of a subclass of its class, with the same fields."""
    others: dict[type, type] = {Step: OtherStep, Leap: OtherLeap, Pass: OtherPass, Destroy: OtherDestroy}
    other = others.get(type(action))
    if other is None:
        return action
    return other(*(getattr(action, f.name) for f in dataclasses.fields(action)))  # type: ignore[no-any-return]


def played(engine: CausewayEngine, state: CausewayState) -> tuple[object, ...]:
    """What a user sees of a state: its view, snapshot (with the repetition history,
    GC-B11 / GC-S7), the seats to act and the outcome."""
    return (engine.view(state, None), engine.snapshot(state), engine.to_act(state), engine.outcome(state))


@pytest.mark.parametrize("rules", RULES)
def test_moves_played_by_their_exact_class_are_the_moves_played_as_any_instance(rules: str) -> None:
    """GC-B4 / GC-S2 steps, GC-B5 / GC-S4 leaps, passes (GC-B11 / GC-S7) and GC-B10's
    destroy steps: applied as parse_action makes them and as instances of subclasses,
    the events and every later position agree, and the giants map is the old one's very
    object exactly when the move moved no giant."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    kinds: set[type] = set()
    for seed in range(8):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        while engine.outcome(state) is None:
            seat = state.to_move
            action = engine.parse_action(state, seat, rng.choice(engine.legal_notation(state, seat)))
            fresh = dataclasses.replace(state)  # the same position, nothing kept in its memo
            fast = engine.apply(state, seat, action)
            plain = engine.apply(fresh, seat, subclassed(action))
            assert fast.events == plain.events
            assert played(engine, fast.state) == played(engine, plain.state)
            if type(action) in (Step, Leap):
                assert fast.state.giants != state.giants
            else:
                assert fast.state.giants is state.giants or type(action).__name__ == "Place"
            kinds.add(type(action))
            state = fast.state
    assert {Step, Leap} <= kinds


@pytest.mark.parametrize("rules", RULES)
def test_the_outcome_kept_with_a_finished_position_is_the_one_worked_out_afresh(rules: str) -> None:
    """GC-B9 / B10 / B11, GC-S7, GC-Q2: the outcome of a finished position, asked for
    twice (the move's game_end event and the room), is the same object, equal to the
    one worked out on a copy of the position, and the game_end event says it."""
    engine = get_engine("causeway", rules)
    assert isinstance(engine, CausewayEngine)
    finished = 0
    for seed in range(8):
        rng = random.Random(seed)
        state = engine.new_game(2, {}, seed)
        events: tuple[dict[str, object], ...] = ()
        while engine.outcome(state) is None:
            seat = state.to_move
            transition = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(
                engine.legal_notation(state, seat))))
            state, events = transition.state, transition.events
        outcome = engine.outcome(state)
        assert outcome is not None and engine.outcome(state) is outcome
        assert outcome == engine.outcome(dataclasses.replace(state))
        assert events[-1] == {"type": "game_end", **outcome.to_data()}
        finished += 1
    assert finished == 8
