"""Giant's Causeway notation, snapshots and the spec's "facts for tests"."""

from __future__ import annotations

import random
import statistics

import pytest
from causeway_position import engine, position

from engines import BadSnapshotError, NotationError, hexgrid
from engines.causeway import PASS, Destroy, Drop, Leap, Place, Step, format_action, parse_action
from engines.playout import random_playout


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("giant@0,1", Place("giant", (0, 1))),
        ("blank@-1,2", Place("blank", (-1, 2))),
        ("trapper@2,-1", Place("trapper", (2, -1))),
        ("spikey@0,-3", Place("spikey", (0, -3))),
        ("0,1>-3,2", Step((0, 1), (-3, 2))),
        ("0,1^e", Leap((0, 1), 0)),
        ("-1,0^sw+-2,1", Leap((-1, 0), 4, (Drop((-2, 1)),))),
        ("0,0^se+0,1+0,2/5,-3", Leap((0, 0), 5, (Drop((0, 1)), Drop((0, 2), (5, -3))))),
        ("destroy@4,0", Destroy((4, 0))),
        ("pass", PASS),
    ],
)
def test_gc1_notation_round_trips(text: str, action: object) -> None:
    assert parse_action(text) == action
    assert format_action(parse_action(text)) == text


def test_notation_ignores_spaces_and_case() -> None:
    assert parse_action(" 0, 1 ^ NE + 1,0 ") == Leap((0, 1), 1, (Drop((1, 0)),))
    assert parse_action("PASS") == PASS


@pytest.mark.parametrize("text", ["", "castle@0,0", "0,0^up", "0,0>", "0,0", "a1-b2", "0,0^e+x", "0;0>1,1"])
def test_unreadable_text_is_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError):
        parse_action(text)


def test_snapshots_round_trip_and_refuse_other_rule_sets() -> None:
    barrier, spell = engine("barrier"), engine("spellstone")
    state = position("barrier", "-1,0:@w 0,0:bb 0,-1:@b 1,-1:bbW", won="")
    snap = barrier.snapshot(state)
    assert barrier.restore(snap) == state
    with pytest.raises(BadSnapshotError):
        spell.restore(snap)
    with pytest.raises(BadSnapshotError):
        barrier.restore({"game": "causeway", "schema": 1, "rules": "barrier"})


def _mean_choices(rules: str, games: int) -> tuple[float, int]:
    """Average and largest number of legal moves per play-phase turn in random games."""
    e = engine(rules)
    counts = []
    for seed in range(games):
        rng = random.Random(seed)
        state = e.new_game(2, {}, seed)
        while e.outcome(state) is None:
            actions = e.legal_actions(state, state.to_move)
            if state.phase == "play":
                counts.append(len(actions))
            state = e.apply(state, state.to_move, rng.choice(actions)).state
    return statistics.mean(counts), max(counts)


def test_fact_barrier_offers_about_70_moves_a_turn() -> None:
    mean, most = _mean_choices("barrier", 10)
    assert 55 <= mean <= 85 and 100 <= most <= 200


def test_fact_spellstone_offers_about_5_to_30_moves_a_turn() -> None:
    mean, _ = _mean_choices("spellstone", 10)
    assert 5 <= mean <= 30


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_gc3_the_causeway_stays_one_group_after_every_move(rules: str) -> None:
    e = engine(rules)

    def check(before: object, seat: int, action: object, transition: object) -> None:
        state = transition.state  # type: ignore[attr-defined]
        assert hexgrid.is_connected(set(state.stacks) | set(state.giants)), e.format_action(before, action)

    for seed in range(8):
        random_playout(e, 2, seed, on_step=check)
