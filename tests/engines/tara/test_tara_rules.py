"""Tara — Four Treasures (singles) rule by rule, the board and a game's moves
(shared/specs/tara.md: TA-1, TA-2, TA-4 … TA-7)."""

from __future__ import annotations

import pytest
from tara_position import EMPTY_BOARD, ENGINE, FULL_BUT_B2, hills, legal, neighbours, play, position

from engines import (
    IllegalActionError,
)
from engines.tara import (
    BLACK,
    BY_NAME,
    EMPTY,
    NAMES,
    NEIGHBOURS,
    PAIRS,
    WHITE,
    parse_picture,
    render_picture,
)
from engines.tara.board import bridges_used, links

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

# Black's a2 walled in by White's a3 and b2 beside the missing corner (TA-4).
A2_BESIEGED = """
    7   . . . . .
    6 . . . . . . .
    5 . . . . . . .
    4 . . . . . . .
    3 W . . . . . .
    2 B W . . . . .
    1   . . . . .
"""


def test_ta4_sieges_next_to_missing_corners_need_only_two_ringforts() -> None:
    state = position(A2_BESIEGED)
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
    state = position(A2_BESIEGED)
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
