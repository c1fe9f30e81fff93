"""Tara — Four Treasures (singles) rule by rule, the end of a game and the match
(shared/specs/tara.md: TA-8 … TA-11), the engine's contract and the spec's facts."""

from __future__ import annotations

import statistics
from dataclasses import replace

import msgpack
import pytest
from tara_position import EMPTY_BOARD, ENGINE, FULL_BUT_B2, play, position

from engines import (
    BadOptionsError,
    GameOverError,
    NotationError,
    NotYourTurnError,
)
from engines.base import Transition
from engines.playout import PlayoutResult, random_playout
from engines.tara import (
    BLACK,
    BY_NAME,
    WHITE,
    Move,
    TaraState,
    parse_move,
    parse_picture,
    score_game,
)
from engines.tara.board import links

# -- scoring (TA-8, TA-9) --------------------------------------------------------


def test_ta9_more_bridges_wins_two_plus_the_difference() -> None:
    board = parse_picture("""
        7   W W W . .
        6 . . . . . . .
        5 . . . . . . .
        4 . . . . . . .
        3 . . . . . . .
        2 . . . . . . .
        1   B . B . B
    """)
    result = score_game(board, 0, None)
    assert result.bridges == (2, 0) and result.territory == (3, 3)
    assert result.reason == "bridges" and result.points == (4, 0) and result.winner == 0
    result = score_game(board, 1, None)  # seat 1 played White
    assert result.points == (0, 4) and result.winner == 1


def test_ta9_equal_bridges_more_territory_wins_two_plus_the_difference() -> None:
    board = parse_picture("""
        7   W W . . .
        6 . . . . . . .
        5 . . . W . . .
        4 . . . . . . .
        3 . . . . . . W
        2 . . . . . . .
        1   B B . B .
    """)
    result = score_game(board, 0, None)
    assert result.bridges == (1, 1) and result.territory == (4, 3)
    assert result.reason == "territory" and result.points == (3, 0)


def test_ta9_equal_bridges_and_territory_is_a_one_one_draw() -> None:
    board = parse_picture("""
        7   W W . . .
        6 . . . . . . .
        5 . . . . . . .
        4 . . . . . . .
        3 . . . . . . .
        2 . . . . . . .
        1   B B . . .
    """)
    result = score_game(board, 0, None)
    assert result.reason == "draw" and result.points == (1, 1) and result.winner is None


def test_ta9_scoring_at_the_end_of_a_played_game() -> None:
    state = position(FULL_BUT_B2.replace("4 W W W W W W W", "4 B B B B B B B"), to_move=BLACK)
    state = play(state, "B2")  # Black fills the last hill; White has no capture: OUT
    result = state.results[0]
    assert result.out == 0
    white = links(state.board, WHITE)
    assert result.bridges == (min(40, white), 7)  # row 4 (6) + B2 to A2 (1)
    assert result.points[0] == 2 + min(40, white) - 7


@pytest.mark.parametrize("games", [1, 2])
def test_ta9_the_final_view_credits_each_seat_its_own_bridges_and_territory(games: int) -> None:
    """TA-8/TA-9: once the match is over, the view's bridges and territory are those
    of the last game's scoring, seat by seat (not swapped by the next starter)."""
    starters = set()
    for seed in range(8):
        final: TaraState = random_playout(ENGINE, 2, seed, {"games": games}).final_state
        assert final.finished
        starters.add(final.lots)
        last = final.results[-1]
        view = ENGINE.view(final, None)
        assert view["bridges"] == list(last.bridges)
        assert view["territory"] == list(last.territory)
        assert view["bridges_left"] == [40 - b for b in last.bridges]
        assert ENGINE.view(ENGINE.state_from_view(view), None) == view
    assert starters == {0, 1}


# -- the match (TA-10) -----------------------------------------------------------


def test_ta10_lots_from_the_seed_choose_the_first_starter() -> None:
    starters = {ENGINE.new_game(2, {}, seed).lots for seed in range(40)}
    assert starters == {0, 1}
    for seed in (3, 4, 5):
        a = ENGINE.new_game(2, {}, seed)
        assert a == ENGINE.new_game(2, {}, seed)  # same seed, same lots
        view = ENGINE.view(a, None)
        assert view["starter"] == view["lots"] == view["seat_to_move"] == a.lots
        assert view["colours"][a.lots] == "white"


def first_movers_of_each_game(seed: int) -> tuple[list[int], PlayoutResult]:
    """A random two-game match and the seat that made the first ply of each game."""
    movers: list[int] = []
    opens_game = [True]

    def watch(before: object, seat: int, action: object, transition: Transition[TaraState]) -> None:
        if opens_game[0]:
            movers.append(seat)
        opens_game[0] = any(e["type"] == "game_start" for e in transition.events)

    return movers, random_playout(ENGINE, 2, seed, on_step=watch)


def test_ta10_match_of_two_games_alternates_the_starter_and_adds_points() -> None:
    for seed in range(6):
        first_movers, result = first_movers_of_each_game(seed)
        final: TaraState = result.final_state
        lots = final.lots
        assert [r.starter for r in final.results] == [lots, 1 - lots]
        outcome = ENGINE.outcome(final)
        assert outcome is not None
        totals = [sum(r.points[s] for r in final.results) for s in (0, 1)]
        assert list(outcome.scores) == totals
        assert outcome.reason == "points"
        assert outcome.extra["games"] == [r.to_data() for r in final.results]
        assert first_movers == [lots, 1 - lots]  # each game's first ply: its starter


def test_ta10_second_game_starts_fresh_with_colours_swapped() -> None:
    state = position(FULL_BUT_B2, games=2, lots=1)
    state = play(state, "B2", "xA2")  # seat 1 (White) wins game one
    view = ENGINE.view(state, None)
    assert view["game"] == 2 and len(view["results"]) == 1
    assert view["results"][0]["points"] == [0, 42]
    assert view["starter"] == 0 and view["colours"] == ["white", "black"]
    assert view["seat_to_move"] == 0 and set(view["hills"].values()) == {"."}
    assert view["totals"] == [0, 42] and view["out"] is None
    assert ENGINE.outcome(state) is None


def test_ta10_equal_match_totals_draw() -> None:
    state = position(FULL_BUT_B2, games=2)
    state = play(state, "B2", "xA2")  # seat 0 starts and wins game one 42-0
    state = replace(state, board=parse_picture(FULL_BUT_B2))  # seat 1 is White now
    state = play(state, "B2", "xA2")
    outcome = ENGINE.outcome(state)
    assert outcome is not None and outcome.scores == (42.0, 42.0)
    assert outcome.winners == (0, 1) and outcome.is_draw


def test_ta10_games_option_is_one_or_two() -> None:
    assert ENGINE.validate_options(2, {}) == {"games": 2}
    assert len(random_playout(ENGINE, 2, 1, options={"games": 1}).final_state.results) == 1
    for bad in (0, 3, "2"):
        with pytest.raises(BadOptionsError):
            ENGINE.validate_options(2, {"games": bad})
    with pytest.raises(BadOptionsError):
        ENGINE.validate_options(3, {})


# -- notation (TA-11) ------------------------------------------------------------


def test_ta11_notation_builds_and_captures() -> None:
    assert parse_move("D4") == Move(BY_NAME["D4"]) and parse_move("xD4") == Move(BY_NAME["D4"], True)
    assert parse_move(" d4 ") == parse_move("D4") and parse_move("XD4") == parse_move("xD4")
    state = position(EMPTY_BOARD)
    for move in (Move(BY_NAME["A2"]), Move(BY_NAME["G6"], True)):
        assert parse_move(ENGINE.format_action(state, move)) == move
    assert ENGINE.format_action(state, Move(BY_NAME["D4"], True)) == "xD4"
    for bad in ("A1", "G7", "H4", "D8", "x", "", "D", "4D", "xxD4", "D4 E4"):
        with pytest.raises(NotationError):
            parse_move(bad)


# -- engine contract -------------------------------------------------------------


def test_turns_alternate_and_wrong_seat_or_finished_game_are_refused() -> None:
    state = ENGINE.new_game(2, {"games": 1}, 7)
    with pytest.raises(NotYourTurnError):
        ENGINE.apply_text(state, 1 - state.mover, "D4")
    seat = state.mover
    state = play(state, "D4")
    assert state.mover == 1 - seat
    final = random_playout(ENGINE, 2, 7, options={"games": 1}).final_state
    with pytest.raises(GameOverError):
        ENGINE.apply_text(final, 0, "D4")
    assert ENGINE.to_act(final) == frozenset()


def test_view_is_the_same_for_everyone_and_rebuilds_the_position() -> None:
    state = position(FULL_BUT_B2, games=2, lots=1)
    state = play(state, "B2")  # OUT pending: the view must carry it
    views = [ENGINE.view(state, seat) for seat in (0, 1, None)]
    assert views[0] == views[1] == views[2]
    rebuilt = ENGINE.state_from_view(msgpack.unpackb(msgpack.packb(views[2])))
    assert rebuilt == state
    assert ENGINE.restore(msgpack.unpackb(msgpack.packb(ENGINE.snapshot(state)))) == state


def test_a_build_changes_only_a_few_view_entries() -> None:
    state = play(ENGINE.new_game(2, {}, 1), "D4", "E4")
    before = ENGINE.view(state, None)
    after = ENGINE.view(play(state, "D5"), None)
    changed_hills = [h for h in before["hills"] if before["hills"][h] != after["hills"][h]]
    assert changed_hills == ["D5"]
    changed = {k for k in before if before[k] != after[k]}
    assert changed <= {"hills", "to_move", "seat_to_move", "turns", "bridges", "bridges_left",
                       "territory", "last_move", "must_capture"}


# -- facts (end of the spec) -----------------------------------------------------


def test_facts_random_games_last_45_to_56_turns_with_about_21_choices() -> None:
    lengths = []
    choices = plies = 0
    for seed in range(300):
        result = random_playout(ENGINE, 2, seed, options={"games": 1})
        lengths.append(len(result.log))
        choices += result.decisions
        plies += len(result.log)
    # 5000 games measured: 45-55 turns, mean 48.8 (sd 1.75), 21.3 legal moves a turn
    assert min(lengths) >= 45 and max(lengths) <= 56
    assert 48.0 <= statistics.mean(lengths) <= 49.7
    assert 20.8 <= choices / plies <= 21.8
    assert 2 * max(lengths) <= ENGINE.info.max_plies
