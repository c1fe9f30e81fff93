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


def test_snapshots_from_before_the_view_lost_to_move_and_last_move_restore() -> None:
    """A room stored by an older server (its snapshot holds the view's old `to_move`
    and `last_move`) comes back as the same position."""
    barrier = engine("barrier")
    state = barrier.new_game(2, {}, 3)
    for text in ("giant@-1,0", "giant@2,0", "giant@-1,1"):
        state = barrier.apply_text(state, state.to_move, text).state
    old = {**barrier.snapshot(state), "to_move": "black", "last_move": "giant@-1,1"}
    assert barrier.restore(old) == state


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_the_view_leaves_out_what_state_from_view_works_out(rules: str) -> None:
    """Random games, the destroy step included: the side to move and the current
    position's digest, left out of the view, come back exactly (a search bot's
    repetition count depends on the digests)."""
    e = engine(rules)
    destroys = 0
    for seed in range(40):
        rng = random.Random(seed)
        state = e.new_game(2, {}, seed)
        while e.outcome(state) is None:
            view = e.view(state, None)
            assert not {"to_move", "last_move"} & set(view) and view["history"] == list(state.history)
            rebuilt = e.state_from_view(view)
            assert (rebuilt.to_move, rebuilt.history) == (state.to_move, state.history)
            destroys += state.phase == "destroy"
            state = e.apply(state, state.to_move, rng.choice(e.legal_actions(state, state.to_move))).state
    assert rules != "barrier" or destroys > 0


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
