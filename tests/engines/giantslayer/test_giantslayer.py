"""Giantslayer rule by rule (shared/specs/giantslayer.md, GS-1 … GS-14)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engines import (
    BadOptionsError,
    GameOverError,
    IllegalActionError,
    NotationError,
    NotYourTurnError,
    get_engine,
)
from engines.giantslayer import (
    BLACK,
    BY_NAME,
    CELLS,
    EDGE,
    INITIAL_BOARD,
    NAMES,
    PASS,
    WHITE,
    Giantslayer,
    GiantslayerState,
    Move,
    new_round,
    parse_move,
    position_key,
)

ENGINE: Giantslayer = get_engine("giantslayer")  # type: ignore[assignment]


def position(
    white: str = "", black: str = "", white_to_move: bool = True, rounds: int = 1
) -> GiantslayerState:
    """A round-1 position from cell lists like "a5 b5 c5" (seat 0 plays White)."""
    board = bytearray(len(CELLS))
    for name in white.split():
        board[BY_NAME[name]] = WHITE
    for name in black.split():
        board[BY_NAME[name]] = BLACK
    key = position_key(bytes(board), white_to_move)
    return replace(
        new_round(rounds, 0, ()), board=bytes(board), white_to_move=white_to_move, history=(key,)
    )


def play(state: GiantslayerState, *moves: str) -> GiantslayerState:
    for text in moves:
        state = ENGINE.apply_text(state, state.mover, text).state
    return state


def legal(state: GiantslayerState) -> set[str]:
    return {ENGINE.format_action(state, m) for m in ENGINE.legal_actions(state, state.mover)}


def stones(state: GiantslayerState, piece: int) -> set[str]:
    return {NAMES[i] for i, p in enumerate(state.board) if p == piece}


# -- board ---------------------------------------------------------------------


def test_gs1_board_is_radius_4_hexhex_of_61_cells() -> None:
    assert len(CELLS) == 61
    assert all(max(abs(q), abs(r), abs(q + r)) <= 4 for q, r in CELLS)
    assert NAMES[BY_NAME["e5"]] == "e5" and CELLS[BY_NAME["e5"]] == (0, 0)


def test_gs2_centre_is_impassable_for_slides_steps_and_tramples() -> None:
    # c5 slides east along its row: d5, then the centre e5 stops it.
    state = position(white="c5", black="g6")
    assert "c5-d5" in legal(state)
    assert "c5-e5" not in legal(state) and "c5-f5" not in legal(state)
    # A black stone beside the centre cannot step onto it ...
    state = position(white="a5", black="d5", white_to_move=False)
    assert "d5-e5" not in legal(state)
    # ... nor land a trample on it (c5 over d5 would land on e5).
    state = position(white="d5", black="c5", white_to_move=False)
    assert not any("x" in m for m in legal(state))


def test_gs3_edge_is_the_24_cells_at_distance_4() -> None:
    assert len(EDGE) == 24
    assert {NAMES[i] for i in EDGE} >= {"a5", "a1", "e9", "i9", "i5", "e1", "c7", "h4"}


def test_gs4_setup_white_on_edge_black_around_centre_white_first() -> None:
    state = ENGINE.new_game(2, {}, seed=0)
    assert stones(state, WHITE) == {NAMES[i] for i in EDGE}
    assert stones(state, BLACK) == {"f5", "f6", "e6", "d5", "d4", "e4"}
    assert ENGINE.to_act(state) == frozenset({0})
    assert ENGINE.view(state, None)["to_move"] == "white"


def test_gs4_fact_opening_move_counts_144_and_18() -> None:
    state = ENGINE.new_game(2, {}, seed=0)
    assert len(ENGINE.legal_actions(state, 0)) == 144
    as_black = replace(state, white_to_move=False)
    assert len(ENGINE.legal_actions(as_black, 1)) == 18


# -- moves ---------------------------------------------------------------------


def test_gs5_white_slides_any_distance_but_not_over_or_onto_stones() -> None:
    state = position(white="a5 c5", black="e9 g5")
    moves = legal(state)
    assert "a5-b5" in moves and "a5-c5" not in moves and "a5-d5" not in moves
    assert {"a5-b6", "a5-c7", "a5-d8"} <= moves and "a5-e9" not in moves
    with pytest.raises(IllegalActionError, match="blocked"):
        ENGINE.apply_text(state, 0, "a5-d5")


def test_gs5_white_moves_along_straight_lines_only() -> None:
    state = position(white="a5", black="g5")
    with pytest.raises(IllegalActionError, match="straight"):
        ENGINE.apply_text(state, 0, "a5-c6")


def test_gs6_black_steps_to_adjacent_vacant_cells() -> None:
    state = position(white="a5", black="c6", white_to_move=False)
    steps = {m for m in legal(state) if "-" in m}
    assert steps == {f"c6-{n}" for n in ("d6", "d7", "c7", "b6", "b5", "c5")}


def test_gs6_trample_removes_the_jumped_stones_and_every_prefix_is_a_move() -> None:
    state = position(white="d7 f7 a5", black="c7", white_to_move=False)
    moves = legal(state)
    assert "c7xe7" in moves and "c7xe7xg7" in moves
    after = play(state, "c7xe7xg7")
    assert stones(after, WHITE) == {"a5"}
    assert stones(after, BLACK) == {"g7"}
    shorter = play(state, "c7xe7")  # stopping early is a distinct legal move
    assert stones(shorter, WHITE) == {"a5", "f7"}


def test_gs6_cells_emptied_earlier_in_the_chain_count_as_vacant() -> None:
    # A triangle of jumps returns to the stone's own, now vacant, start cell.
    state = position(white="d7 e8 d8 a5", black="c7", white_to_move=False)
    assert "c7xe7xe9xc7" in legal(state)
    after = play(state, "c7xe7xe9xc7")
    assert stones(after, BLACK) == {"c7"}
    assert stones(after, WHITE) == {"a5"}


def test_gs6_step_and_trample_cannot_combine() -> None:
    state = position(white="d7 a5", black="c7", white_to_move=False)
    with pytest.raises(NotationError):
        ENGINE.parse_action(state, 1, "c7xe7-e6")
    with pytest.raises(IllegalActionError):
        ENGINE.apply_text(state, 1, "c7xd7")  # a trample lands beyond the stone


def test_gs7_flank_capture_happens_at_start_of_whites_turn_all_at_once() -> None:
    state = position(white="c7 e7 c3 e3", black="d7 d3 g5", white_to_move=False)
    transition = ENGINE.apply_text(state, 1, "g5-g6")
    assert stones(transition.state, BLACK) == {"g6"}
    flank = [e for e in transition.events if e["type"] == "flank"]
    assert flank and sorted(flank[0]["captured"]) == ["d3", "d7"]


def test_gs7_black_always_gets_one_move_to_escape_a_flank() -> None:
    state = position(white="c7 e9", black="d7 g5")
    after = play(state, "e9-e8")  # d7 now has two white neighbours, c7 and e8
    assert "d7" in stones(after, BLACK) and not after.white_to_move
    escaped = play(after, "d7-d6")
    assert stones(escaped, BLACK) == {"d6", "g5"}


def test_gs8_escape_ends_the_round_before_any_flank_capture() -> None:
    # c6 steps onto the edge at b6, between c7 and b5: flanked, but every giant is on the edge.
    state = position(white="c7 b5 i9 e1", black="c6 a3", white_to_move=False)
    transition = ENGINE.apply_text(state, 1, "c6-b6")
    ends = [e for e in transition.events if e["type"] == "round_end"]
    assert ends and ends[0]["reason"] == "escape"
    assert ends[0]["black_points"] == 2 and ends[0]["white_points"] == 4
    assert not any(e["type"] == "flank" for e in transition.events)


def test_gs9_round_ends_when_all_black_stones_are_killed() -> None:
    # d7 is already flanked; g5 steps into a flank at g6: both die, none remain.
    state = position(white="c7 e7 h7 f6", black="d7 g5", white_to_move=False)
    transition = ENGINE.apply_text(state, 1, "g5-g6")
    ends = [e for e in transition.events if e["type"] == "round_end"]
    assert ends and ends[0]["reason"] == "all_killed"
    assert ends[0]["white_points"] == 6 and ends[0]["black_points"] == 0


def test_gs9_escape_is_checked_after_flank_captures() -> None:
    # h5 reaches the edge; d7 dies in the flank; a5 and i5 remain, both on the edge.
    state = position(white="c7 e7 e1", black="d7 a5 h5", white_to_move=False)
    transition = ENGINE.apply_text(state, 1, "h5-i5")
    ends = [e for e in transition.events if e["type"] == "round_end"]
    assert any(e["type"] == "flank" for e in transition.events)
    assert ends and ends[0]["reason"] == "escape"
    assert ends[0]["black_points"] == 2 and ends[0]["white_points"] == 4


def test_gs10_scores_white_captures_black_escapees() -> None:
    state = position(white="c7 b5 i9 e1", black="c6 a3", white_to_move=False)
    outcome = ENGINE.outcome(play(state, "c6-b6"))
    assert outcome is not None
    assert outcome.scores == (4.0, 2.0)  # seat 0 (White): 4 giants gone; seat 1: 2 escaped
    assert outcome.winners == (0,)


def test_gs11_round_ends_after_100_plies_without_capture() -> None:
    state = replace(position(white="a5 e1", black="f8 g5"), quiet_plies=99)
    transition = ENGINE.apply_text(state, 0, "a5-b5")
    end = [e for e in transition.events if e["type"] == "round_end"]
    assert end and end[0]["reason"] == "no_capture_limit"
    assert end[0]["black_points"] == 0 and end[0]["white_points"] == 4


def test_gs11_third_repetition_ends_the_round() -> None:
    state = position(white="a5 e1", black="f8")
    cycle = ("a5-b5", "f8-f7", "b5-a5", "f7-f8")
    state = play(state, *cycle)  # the start position occurs a second time
    assert ENGINE.outcome(state) is None
    events: tuple = ()
    for move in cycle:
        transition = ENGINE.apply_text(state, state.mover, move)
        state, events = transition.state, transition.events
    end = [e for e in events if e["type"] == "round_end"]
    assert end and end[0]["reason"] == "repetition"


def test_gs12_a_side_without_moves_passes() -> None:
    state = position(white="a5", black="b5 b6 a4")  # a5's three neighbours are taken
    assert ENGINE.legal_actions(state, 0) == [PASS]
    after = play(state, "pass")
    assert not after.white_to_move
    with pytest.raises(IllegalActionError, match="GS-12"):
        ENGINE.apply(position(white="a5", black="g5"), 0, PASS)


def test_gs13_match_of_two_rounds_switches_sides_and_totals() -> None:
    state = ENGINE.new_game(2, {}, seed=0)
    assert state.rounds == 2 and state.white_seat == 0
    finish = position(white="c7 b5 i9 e1", black="c6 a3", white_to_move=False, rounds=2)
    after = play(finish, "c6-b6")  # round 1: seat 0 (White) 4, seat 1 (Black) 2
    assert ENGINE.outcome(after) is None
    assert after.round_index == 1 and after.white_seat == 1
    assert after.board == INITIAL_BOARD and after.white_to_move
    assert ENGINE.to_act(after) == frozenset({1})  # seat 1 now plays White and starts
    assert ENGINE.view(after, None)["totals"] == [4, 2]


def test_gs13_rounds_option_is_one_or_even() -> None:
    assert ENGINE.new_game(2, {"rounds": 1}, 0).rounds == 1
    assert ENGINE.new_game(2, {"rounds": 4}, 0).rounds == 4
    with pytest.raises(BadOptionsError):
        ENGINE.validate_options(2, {"rounds": 3})
    with pytest.raises(BadOptionsError):
        ENGINE.validate_options(3, {})


def test_gs13_equal_totals_draw() -> None:
    first = position(white="c7 b5 i9 e1", black="c6 a3", white_to_move=False, rounds=2)
    results = play(first, "c6-b6").results
    # Round 2 repeats the same ending with seats swapped: 4 + 2 each.
    second = replace(first, round_index=1, results=results)
    final = play(second, "c6-b6")
    outcome = ENGINE.outcome(final)
    assert outcome is not None and outcome.is_draw and outcome.scores == (6.0, 6.0)
    with pytest.raises(GameOverError):
        ENGINE.apply(final, 0, PASS)


def test_gs14_notation_round_trips_and_rejects_garbage() -> None:
    assert parse_move("a5-b5") == Move((BY_NAME["a5"], BY_NAME["b5"]))
    assert parse_move("C7xE7xG7") == Move((BY_NAME["c7"], BY_NAME["e7"], BY_NAME["g7"]), True)
    assert parse_move("pass") == PASS
    for bad in ("", "a5", "a9-a5", "a5-b5-c5", "a5xb5-c5", "hello"):
        with pytest.raises(NotationError):
            parse_move(bad)


def test_out_of_turn_and_illegal_moves_say_why() -> None:
    state = ENGINE.new_game(2, {}, 0)
    with pytest.raises(NotYourTurnError, match="White"):
        ENGINE.apply_text(state, 1, "d5-d3")
    with pytest.raises(IllegalActionError, match="no white stone"):
        ENGINE.apply_text(state, 0, "d5-c5")


def test_view_rebuilds_the_exact_position_for_search_bots() -> None:
    state = position(white="a5 e1", black="f8")
    state = play(state, "a5-b5", "f8-f7", "b5-a5")
    rebuilt = ENGINE.state_from_view(ENGINE.view(state, None))
    assert rebuilt.history == state.history
    assert rebuilt.quiet_plies == state.quiet_plies


def test_view_lists_the_quiet_plies_in_notation_also_after_a_restore() -> None:
    """GS-11/GS-14: the view's quiet_moves are the plies since the last capture, written
    out, whether the state was played to (texts carried along) or restored (rebuilt)."""
    state = play(position(white="a5 e1 i5", black="f8"), "a5-b5", "f8-f7", "b5-a5")
    assert ENGINE.view(state, None)["quiet_moves"] == ["a5-b5", "f8-f7", "b5-a5"]
    restored = ENGINE.restore(ENGINE.snapshot(state))
    assert ENGINE.view(restored, None) == ENGINE.view(state, None)
    after = play(restored, "f7-f6")
    assert ENGINE.view(after, None)["quiet_moves"] == ["a5-b5", "f8-f7", "b5-a5", "f7-f6"]
    assert ENGINE.view(after, None) == ENGINE.view(play(state, "f7-f6"), None)


def test_fast_legality_check_agrees_with_move_generation() -> None:
    """apply() validates one move directly (GS-5, GS-6, GS-12); it must agree with the full list."""
    import random

    from engines.giantslayer import is_legal, moves_for
    from engines.playout import random_playout

    rng = random.Random(5)
    checked = 0
    for seed in range(10):
        result = random_playout(ENGINE, 2, seed)
        state = ENGINE.new_game(2, {}, seed)
        for seat, action in result.log[:120]:
            listed = set(moves_for(state.board, state.white_to_move))
            candidates = list(listed)
            for _ in range(40):
                a, b, c = (rng.randrange(len(CELLS)) for _ in range(3))
                candidates += [Move((a, b)), Move((a, b), True), Move((a, b, c), True)]
            for move in candidates:
                assert is_legal(state.board, state.white_to_move, move) == (move in listed), move
                checked += 1
            state = ENGINE.apply(state, seat, action).state
    assert checked > 10_000
