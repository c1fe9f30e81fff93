"""Tara — Four Treasures (singles) rule by rule (shared/specs/tara.md, TA-1 … TA-11)."""

from __future__ import annotations

import statistics
from dataclasses import replace

import msgpack
import pytest

from engines import (
    BadOptionsError,
    GameOverError,
    IllegalActionError,
    NotationError,
    NotYourTurnError,
    get_engine,
)
from engines.base import Transition
from engines.playout import PlayoutResult, random_playout
from engines.tara import (
    BLACK,
    BY_NAME,
    EMPTY,
    NAMES,
    NEIGHBOURS,
    PAIRS,
    WHITE,
    Move,
    Tara,
    TaraState,
    new_match_game,
    parse_move,
    parse_picture,
    render_picture,
    score_game,
)
from engines.tara.board import bridges_used, links

ENGINE: Tara = get_engine("tara")  # type: ignore[assignment]

EMPTY_BOARD = """
7   . . . . .
6 . . . . . . .
5 . . . . . . .
4 . . . . . . .
3 . . . . . . .
2 . . . . . . .
1   . . . . .
  A B C D E F G
"""


def position(picture: str, to_move: int = WHITE, games: int = 1, lots: int = 0) -> TaraState:
    """A game-1 position drawn as the 7 x 7 cross (seat `lots` plays White and started)."""
    return replace(
        new_match_game(games, lots, 0, ()), board=parse_picture(picture), to_move=to_move
    )


def play(state: TaraState, *moves: str) -> TaraState:
    for text in moves:
        state = ENGINE.apply_text(state, state.mover, text).state
    return state


def legal(state: TaraState) -> list[str]:
    return [ENGINE.format_action(state, m) for m in ENGINE.legal_actions(state, state.mover)]


def hills(state: TaraState, piece: int) -> set[str]:
    return {NAMES[i] for i, p in enumerate(state.board) if p == piece}


def neighbours(name: str) -> set[str]:
    return {NAMES[j] for j in NEIGHBOURS[BY_NAME[name]]}


# -- the picture helper ----------------------------------------------------------


def test_picture_helper_reads_and_writes_the_cross() -> None:
    board = parse_picture("""
        7   W . . . B
        6 . . . . . . .
        5 . . . . . . .
        4 . . . W . . .
        3 . . . . . . .
        2 B . . . . . .
        1   . . . . W
    """)
    assert board[BY_NAME["B7"]] == WHITE and board[BY_NAME["F7"]] == BLACK
    assert board[BY_NAME["D4"]] == WHITE and board[BY_NAME["A2"]] == BLACK
    assert board[BY_NAME["F1"]] == WHITE
    assert board.count(EMPTY) == 40
    assert parse_picture(render_picture(board)) == board
    # corners may be written as '-' when a row is given all seven columns
    dashed = "7 - . . . . . -\n" + "6 . . . . . . .\n" * 5 + "1 - . . . . . -\n"
    assert parse_picture(dashed) == bytes(45)
    with pytest.raises(ValueError):
        parse_picture("7 . . . . . . .\n" * 7)  # row 7 has only five hills


# -- board ----------------------------------------------------------------------


def test_ta1_board_is_7x7_minus_corners_45_hills() -> None:
    assert len(NAMES) == 45
    assert {"A1", "A7", "G1", "G7"}.isdisjoint(BY_NAME)
    assert {"A2", "B1", "F1", "G2", "A6", "B7", "F7", "G6", "D4"} <= set(BY_NAME)


def test_ta2_adjacency_is_orthogonal_with_76_pairs() -> None:
    assert len(PAIRS) == 76
    assert neighbours("D4") == {"D5", "E4", "D3", "C4"}
    assert neighbours("A2") == {"A3", "B2"}  # the missing corner A1 takes a neighbour away
    assert neighbours("B1") == {"B2", "C1"}
    assert neighbours("G6") == {"G5", "F6"}
    assert neighbours("A4") == {"A5", "A3", "B4"}
    assert all(i in NEIGHBOURS[j] for i, j in PAIRS)  # symmetric


# -- captures (TA-4) -------------------------------------------------------------


def test_ta4_sieges_next_to_missing_corners_need_only_two_ringforts() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . . .
        5 . . . . . . .
        4 . . . . . . .
        3 W . . . . . .
        2 B W . . . . .
        1   . . . . .
    """)
    assert legal(state) == ["xA2"]  # compulsory: no build is offered
    state = play(state, "xA2")
    assert hills(state, WHITE) == {"A3", "B2", "A2"}
    assert hills(state, BLACK) == set()
    assert ENGINE.view(state, None)["bridges"] == [2, 0]  # linked to both besiegers


def test_ta4_corner_siege_at_b1_and_g6() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . B W
        5 . . . . . . B
        4 . . . . . . .
        3 . . . . . . .
        2 . W . . . . .
        1   B W . . .
    """, to_move=BLACK)
    # Black besieges White's G6 (F6, G5: G7 is missing); White besieges B1 (B2, C1: A1 is missing).
    assert legal(state) == ["xG6"]
    state = position(render_picture(state.board), to_move=WHITE)
    assert legal(state) == ["xB1"]


def test_ta4_a_siege_you_create_is_executed_on_your_next_turn() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . . .
        5 . . . W . . .
        4 . . W B W . .
        3 . . . . . . .
        2 . . . . . . .
        1   . . . . .
    """)
    state = play(state, "D3")  # White completes the siege of D4
    assert ENGINE.view(state, None)["must_capture"] == []  # Black is to move: nothing to take
    assert "D3" not in legal(state)
    state = play(state, "A2")  # Black cannot relieve D4: every neighbour is White's
    assert legal(state) == ["xD4"]
    transition = ENGINE.apply_text(state, 0, "xD4")
    assert transition.events[0] == {
        "type": "capture", "seat": 0, "colour": "white", "hill": "D4", "bridges": 4,
    }
    assert transition.state.board[BY_NAME["D4"]] == WHITE


def test_ta4_building_on_a_hill_the_opponent_surrounds_is_captured_at_once() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . . .
        5 . . . W . . .
        4 . . W . W . .
        3 . . . W . . .
        2 . . . . . . .
        1   . . . . .
    """, to_move=BLACK)
    assert "D4" in legal(state)  # TA-5: building there is allowed ...
    state = play(state, "D4")
    assert legal(state) == ["xD4"]  # ... and White must capture it on the very next turn
    state = play(state, "xD4")
    assert hills(state, BLACK) == set()
    assert ENGINE.view(state, None)["bridges"] == [4, 0]


def test_ta4_two_besieged_ringforts_capture_one_of_your_choice_per_turn() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . W .
        5 . . . . W B W
        4 . . . . . W .
        3 W . . . . . .
        2 B W . . . . .
        1   . . . . .
    """)
    assert legal(state) == ["xF5", "xA2"]  # reading order: row 5 before row 2
    state = play(state, "xA2")
    assert hills(state, BLACK) == {"F5"}  # only one capture per turn
    state = play(state, "D1")  # Black builds elsewhere
    assert legal(state) == ["xF5"]  # the other siege is still compulsory
    state = play(state, "xF5")
    assert hills(state, BLACK) == {"D1"}


def test_ta4_capture_is_compulsory_and_builds_are_refused() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . . .
        5 . . . . . . .
        4 . . . . . . .
        3 W . . . . . .
        2 B W . . . . .
        1   . . . . .
    """)
    with pytest.raises(IllegalActionError, match="TA-4"):
        ENGINE.apply_text(state, 0, "D4")
    with pytest.raises(IllegalActionError, match="xA2"):
        ENGINE.apply_text(state, 0, "xB2")


def test_ta4_a_ringfort_with_a_friendly_neighbour_is_not_besieged() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . . .
        5 . . . W W . .
        4 . . W B B W .
        3 . . . W W . .
        2 . . . . . . .
        1   . . . . .
    """)
    assert not any(m.capture for m in ENGINE.legal_actions(state, 0))
    assert len(legal(state)) == 45 - 8
    with pytest.raises(IllegalActionError, match="not besieged"):
        ENGINE.apply_text(state, 0, "xD4")


# -- builds and bridges (TA-5, TA-6) --------------------------------------------


def test_ta5_build_on_any_vacant_hill_only() -> None:
    state = position(EMPTY_BOARD)
    assert len(legal(state)) == 45 and all(not m.capture for m in ENGINE.legal_actions(state, 0))
    state = play(state, "D4")
    assert "D4" not in legal(state)
    with pytest.raises(IllegalActionError, match="not vacant"):
        ENGINE.apply_text(state, 1, "D4")


def test_ta6_bridges_link_every_adjacent_own_ringfort_never_an_enemy() -> None:
    state = position("""
        7   . . . . .
        6 . . . . . . .
        5 . . . W . . .
        4 . . B . W . .
        3 . . . W . . .
        2 . . . . . . .
        1   . . . . .
    """)
    transition = ENGINE.apply_text(state, 0, "D4")
    assert transition.events[0]["bridges"] == 3  # D5, E4, D3; not the black C4
    view = ENGINE.view(transition.state, None)
    assert view["bridges"] == [3, 0] and view["bridges_left"] == [37, 40]
    assert view["territory"] == [4, 1]


def test_ta6_bridge_supply_saturates_at_40_and_never_blocks_a_move() -> None:
    state = position("""
        7   W W W W W
        6 W W W W W W W
        5 W W W W W W W
        4 W W W W W W .
        3 . . . . . . .
        2 . . B B . . .
        1   . . . . .
    """)
    assert links(state.board, WHITE) == 39
    transition = ENGINE.apply_text(state, 0, "G4")  # would need 2 bridges, 1 is left
    assert transition.events[0]["bridges"] == 1
    state = transition.state
    assert links(state.board, WHITE) == 41 and bridges_used(state.board, WHITE) == 40
    state = play(state, "A2")
    transition = ENGINE.apply_text(state, 0, "A3")  # no bridge left: still a legal build
    assert transition.events[0]["bridges"] == 0
    assert ENGINE.view(transition.state, None)["bridges_left"] == [0, 39]  # Black: C2-D2


# -- OUT (TA-7) ------------------------------------------------------------------

FULL_BUT_B2 = """
    7   W W W W W
    6 W W W W W W W
    5 W W W W W W W
    4 W W W W W W W
    3 W W W W W W W
    2 B . W W W W W
    1   W W W W W
"""


def test_ta7_out_with_a_pending_capture_gives_the_opponent_one_extra_turn() -> None:
    state = position(FULL_BUT_B2)
    transition = ENGINE.apply_text(state, 0, "B2")  # fills the last hill, besieging A2
    state = transition.state
    assert {"type": "out", "seat": 1, "colour": "black"} in transition.events
    assert state.mover == 0  # White moves again: Black called OUT
    view = ENGINE.view(state, None)
    assert view["out"] == "black" and view["must_capture"] == ["A2"]
    assert legal(state) == ["xA2"]
    transition = ENGINE.apply_text(state, 0, "xA2")
    final = transition.state
    assert ENGINE.outcome(final) is not None  # the extra turn ends the game
    assert [e["type"] for e in transition.events] == ["capture", "game_end", "match_end"]
    result = final.results[0]
    assert result.out == 1 and result.territory == (45, 0)
    assert result.bridges == (40, 0) and result.points == (42, 0)  # saturated: 76 links


def test_ta7_out_without_a_capture_ends_the_game_at_once() -> None:
    state = position("""
        7   B W W W W
        6 W W W W W W W
        5 W W W W W W W
        4 W W W W W W W
        3 W W W W W W W
        2 . W W W W W W
        1   W W W W W
    """)
    assert legal(state) == ["xB7"]  # B7 touches only C7 and B6 (A7 is missing)
    state = play(state, "xB7")
    assert legal(state) == ["A2"]  # Black's only move, and it is captured at once ...
    transition = ENGINE.apply_text(state, 1, "A2")
    state = transition.state
    assert legal(state) == ["xA2"]
    transition = ENGINE.apply_text(state, 0, "xA2")
    # ... then Black has nothing: OUT; White has no capture left, so the game ends.
    types = [e["type"] for e in transition.events]
    assert types == ["capture", "out", "game_end", "match_end"]
    assert transition.state.results[0].out == 1


def test_ta7_a_full_board_with_a_capture_is_played_not_out() -> None:
    state = position("""
        7   W W W W W
        6 W W W W W W W
        5 W W W W W W W
        4 W W W B W W W
        3 B B B W B B B
        2 B B B B B B B
        1   B B B B B
    """, to_move=WHITE)
    assert legal(state) == ["xD4"]
    transition = ENGINE.apply_text(state, 0, "xD4")
    # Black's siege of D3 is broken (D4 is White's now) and no hill is vacant: Black
    # calls OUT, and White has nothing left to capture, so the game ends.
    assert [e["type"] for e in transition.events][:2] == ["capture", "out"]
    assert ENGINE.outcome(transition.state) is not None


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
