"""Giantslayer's fast paths agree with the plain code they replace.

The engine makes its states without the dataclass's __init__, writes its views with
the state's properties inlined and its legal lists straight in notation; each is
checked here against the obvious reading (shared/specs/giantslayer.md) over random
matches with fixed seeds.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import FrozenInstanceError, fields, replace
from typing import Any

import msgpack
import pytest

from engines import get_engine
from engines.base import FixedNotation, NotationError, Transition
from engines.giantslayer import (
    BLACK,
    CELLS,
    EMPTY,
    NAMES,
    PASS,
    WHITE,
    Giantslayer,
    GiantslayerState,
    Move,
    format_move,
    moves_for,
    parse_move,
)
from engines.giantslayer.board import (
    CENTRE,
    INITIAL_BOARD,
    JUMPS,
    MOVES_BY_TEXT,
    NEIGHBOURS,
    NO_CELL,
    PATH_TEXTS,
    SLIDE_WIDTH,
    SYMBOLS,
    WHITE_NEIGHBOURS,
    _parse_move,
    black_moves,
    black_notation,
    cells_of,
    flanked,
    white_lines,
    white_moves,
    white_notation,
)

ENGINE: Giantslayer = get_engine("giantslayer")  # type: ignore[assignment]


def playout_states(seed: int, rounds: int = 2) -> Iterator[GiantslayerState]:
    """Every state of a random match played through the engine (GS-13: `rounds` rounds)."""
    rng = random.Random(seed)
    state = ENGINE.new_game(2, {"rounds": rounds}, seed)
    yield state
    while ENGINE.outcome(state) is None:
        seat = state.mover
        text = rng.choice(ENGINE.legal_notation(state, seat))
        state = ENGINE.apply(state, seat, ENGINE.parse_action(state, seat, text)).state
        yield state


def random_boards(seed: int, count: int) -> Iterator[bytes]:
    """Boards of every density (GS-2: never a stone on the centre)."""
    rng = random.Random(seed)
    for _ in range(count):
        weights = [rng.random() for _ in range(3)]
        board = bytearray(rng.choices((EMPTY, WHITE, BLACK), weights, k=len(CELLS)))
        board[CENTRE] = EMPTY
        yield bytes(board)


def view_ref(state: GiantslayerState) -> dict[str, Any]:
    """The view as the state's own fields and properties say it (GS-14 notation)."""
    return {
        "cells": list(NAMES),
        "board": [SYMBOLS[p] for p in state.board],
        "round": state.round_index + 1,
        "rounds": state.rounds,
        "white": state.white_seat,
        "black": 1 - state.white_seat,
        "to_move": None if state.finished else ("white" if state.white_to_move else "black"),
        "black_left": state.board.count(BLACK),
        "white_left": state.board.count(WHITE),
        "quiet_plies": state.quiet_plies,
        "quiet_moves": [format_move(m) for m in state.quiet_moves],
        "results": [r.to_data() for r in state.results],
        "totals": list(state.totals()),
        "last_move": state.last_move,
    }


def test_states_made_by_a_move_equal_those_the_dataclass_makes() -> None:
    # `_play` sets the slots itself; every field must come out as the constructor's.
    for seed in range(6):
        for state in playout_states(seed):
            made = GiantslayerState(**{f.name: getattr(state, f.name) for f in fields(state) if f.init})
            assert made == state
            # every field but `edits`, which says how the view's board was made (a move's
            # state has one, a constructed one none: test_view_edits_name_every_board_cell_a_move_wrote)
            names = [f.name for f in fields(state) if f.name != "edits"]
            assert [getattr(made, name) for name in names] == [getattr(state, name) for name in names]
            assert made.edits == ()
            assert hash(made) == hash(state)
            # made through `_Blank`, it is a GiantslayerState and as frozen as any
            assert type(state) is GiantslayerState
            with pytest.raises(FrozenInstanceError):
                state.board = made.board  # type: ignore[misc]


def test_views_equal_the_plain_reading_of_the_state() -> None:
    # GS-14: cells and moves in notation; a finished match has nobody to move.
    seen_finished = 0
    for seed in range(12):
        for state in playout_states(seed, rounds=1 if seed % 3 == 0 else 2):
            assert ENGINE.view(state, None) == view_ref(state)
            seen_finished += state.finished
    assert seen_finished == 12


def test_legal_lists_are_the_moves_in_notation_in_move_order() -> None:
    # GS-5/GS-6/GS-12: the notation lists are the generated moves, in the same order.
    for seed in range(12):
        for state in playout_states(seed):
            if state.finished:
                assert ENGINE.legal_notation(state, 0) == ENGINE.legal_notation(state, 1) == []
                continue
            expected = [format_move(m) for m in moves_for(state.board, state.white_to_move)]
            assert ENGINE.legal_notation(state, state.mover) == expected
            assert ENGINE.legal_notation(state, 1 - state.mover) == []


def test_the_seats_to_act_are_the_movers_until_the_match_ends() -> None:
    # GS-13: seat round_index % 2 plays White; nobody acts once the match is over
    # (worked out when a state is made: by a move, the constructor, replace or restore).
    for seed in range(6):
        for state in playout_states(seed):
            expected = frozenset() if state.finished else frozenset({state.mover})
            assert ENGINE.to_act(state) == expected
            assert ENGINE.to_act(ENGINE.restore(ENGINE.snapshot(state))) == expected
            flipped = replace(state, white_to_move=not state.white_to_move)
            assert ENGINE.to_act(flipped) == (frozenset() if state.finished else frozenset({flipped.mover}))


def test_legal_notation_lists_every_move_in_order_on_random_boards() -> None:
    # GS-5 (slides stop before a stone, the centre or the edge), GS-6 (steps and every
    # prefix of every trample chain), GS-14 (notation): the order of move generation.
    for board in random_boards(3, 4000):
        white = white_notation(board)
        assert white == [format_move(m) for m in white_moves(board)]
        # GS-14: every slide is `from-to`, SLIDE_WIDTH ASCII characters (the white list
        # promises it as a FixedNotation, which a room packs in one join)
        assert type(white) is FixedNotation and white.width == SLIDE_WIDTH
        assert all(len(text) == SLIDE_WIDTH and text.isascii() for text in white)
        # the same slides as one str, each after a line break (what a room packs)
        assert white_lines(board) == "".join("\n" + text for text in white)
        assert black_notation(board) == [format_move(m) for m in black_moves(board)]


def test_moves_are_written_as_the_notation_says() -> None:
    # GS-14: `from-to` for a slide or step, `from x landing x …` for a trample chain,
    # `pass`; any two cells for a move that is not along a line (an illegal move's text).
    def plain(move: Move) -> str:
        if not move.path:
            return "pass"
        return ("x" if move.trample else "-").join(NAMES[i] for i in move.path)

    moves = [PASS, *(Move((i, j)) for i in range(len(CELLS)) for j in range(len(CELLS)))]
    for board in random_boards(4, 300):
        moves += white_moves(board) + black_moves(board)
    for move in moves:
        assert format_move(move) == plain(move)
        assert parse_move(format_move(move)) == move


def test_view_parts_kept_along_by_moves_equal_those_worked_out_afresh() -> None:
    # GS-7 (flank captures), GS-6 (tramples), GS-10/GS-13 (results and totals): the
    # board symbols `_play` edits in the parent's copy, the stones left it counts down,
    # and the results lists it passes on are what the state's own fields give.
    from engines.giantslayer.state import _view_parts

    captures = 0
    for seed in range(12):
        parent = None
        for state in playout_states(seed, rounds=1 if seed % 3 == 0 else 2):
            assert state.view_parts == _view_parts(state)
            if parent is not None and state.results is parent.results:
                # no round ended: the very lists of the parent's view (the diff skips them)
                assert state.view_parts[3] is parent.view_parts[3]
                assert state.view_parts[4] is parent.view_parts[4]
                assert state.view_parts[0] is not parent.view_parts[0]
                captures += state.quiet_plies == 0
            parent = state
    assert captures > 100


def test_view_edits_name_every_board_cell_a_move_wrote() -> None:
    # GS-5/GS-6 (a slide, a step, a trample chain: its jumped stones and a landing that
    # may be its own start), GS-7 (flank captures, the moved stone among them),
    # GS-4/GS-13 (a new round's setup: no edit), GS-12 (a pass: nothing written), GS-11
    # (a quiet move pushed on the quiet moves, a capture empties them: no edit). The
    # server's diff looks only at the cells an edit names: the view's board must hold
    # the parent view's very symbols everywhere else.
    edited = tramples = 0
    for seed in range(12):
        parent = None
        for state in playout_states(seed, rounds=1 if seed % 3 == 0 else 2):
            edits = ENGINE.view_edits(state)
            if parent is None or state.round_index != parent.round_index:
                assert edits == ()  # a new round's (or game's) board: walked whole
                parent = state
                continue
            (base, value, at), *quiet = edits  # a move's, the match's last one too
            assert base is parent.view_parts[0] and value is state.view_parts[0]
            assert value is ENGINE.view(state, None)["board"]
            assert list(at) == sorted(set(at))
            assert all(value[i] is base[i] for i in range(len(base)) if i not in at)
            assert {i for i in range(len(base)) if value[i] != base[i]} <= set(at)
            if state.quiet_plies:  # one quiet move pushed, nothing else changed
                [(was, now, pushed_at)] = quiet
                assert was is ENGINE.view(parent, None)["quiet_moves"] and now is ENGINE.view(state, None)["quiet_moves"]
                assert pushed_at == () and now == [*was, state.last_move]
            else:
                assert quiet == []
            edited += 1
            tramples += len(at) > 2
            parent = state
    assert edited > 700 and tramples > 20, (edited, tramples)
    assert ENGINE.view_edits(ENGINE.restore(ENGINE.snapshot(state))) == ()  # a state made afresh: none


def test_views_made_from_the_last_one_are_those_made_afresh() -> None:
    # GS-14: a view made from the last state's (its copy, the entries the move changed
    # new: the board and the moves, the stones left after a capture GS-6/GS-7) is the
    # view of the state made afresh, key order included (msgpack bytes); a new round's
    # (GS-13) and the match's last state are made whole. `view_edits` names the view
    # itself then: every entry it does not name is the last view's very object.
    made = captured = 0
    for seed in range(12):
        parent = None
        for state in playout_states(seed, rounds=1 if seed % 3 == 0 else 2):
            view = ENGINE.view(state, None)
            assert ENGINE.view(state, 0) is view  # made once
            fresh = ENGINE.view(replace(state), None)  # (a state made by the constructor: no last view)
            assert fresh is not view and msgpack.packb(view) == msgpack.packb(fresh)
            assert list(view) == list(fresh)
            edits = [edit for edit in ENGINE.view_edits(state) if edit[1] is view]
            if parent is not None and state.results is parent.results and not state.finished:
                [(last, _, at)] = edits
                assert last is ENGINE.view(parent, None)
                assert [k for k in view if view[k] is not last[k]] == [k for k in at if view[k] is not last[k]]
                made += 1
                captured += "black_left" in at
            else:
                assert edits == []
            snapshot = ENGINE.snapshot(state)
            assert "cells" not in snapshot and "cells" in ENGINE.view(state, None)  # the kept view untouched
            parent = state
    assert made > 700 and captured > 100, (made, captured)


def test_white_notation_on_every_stone_and_blocker_pair() -> None:
    # GS-5: a slide stops before a stone (either colour), the edge or the centre (GS-2).
    # `white_notation` is written out per cell and ray: a lone white stone on each cell
    # walks every ray to its end, and one blocker on each other cell cuts each ray at
    # every depth.
    for i in range(len(CELLS)):
        if i == CENTRE:
            continue
        lone = bytearray(len(CELLS))
        lone[i] = WHITE
        assert white_notation(bytes(lone)) == [format_move(m) for m in white_moves(bytes(lone))]
        assert white_lines(bytes(lone)) == "".join("\n" + format_move(m) for m in white_moves(bytes(lone)))
        for j in range(len(CELLS)):
            if j in (i, CENTRE):
                continue
            for blocker in (WHITE, BLACK):
                board = bytearray(lone)
                board[j] = blocker
                assert white_notation(bytes(board)) == [format_move(m) for m in white_moves(bytes(board))]
                assert white_lines(bytes(board)) == "".join("\n" + format_move(m) for m in white_moves(bytes(board)))


def test_black_stones_kept_along_by_moves_are_those_on_the_board() -> None:
    # GS-6 (a step or a trample chain moves one black stone), GS-7 (flanked stones
    # removed), GS-4/GS-13 (a new round's setup): the cells `_play` keeps are the board's,
    # in cell order, whatever made the state.
    flanks = 0
    for seed in range(12):
        parent = None
        for state in playout_states(seed, rounds=1 if seed % 3 == 0 else 2):
            assert state.blacks == tuple(cells_of(state.board, BLACK))
            assert type(state.blacks) is tuple
            if parent is not None and state.white_to_move and state.results is parent.results:
                flanks += len(state.blacks) < len(parent.blacks)
            parent = state
    assert flanks > 20
    for board in random_boards(5, 200):
        made = GiantslayerState(2, 0, board, False, 0, (board + b"B",), (), ())
        assert made.blacks == tuple(cells_of(board, BLACK))


def test_white_neighbours_counted_on_the_board_as_an_int() -> None:
    # GS-7: a black stone with two or more white neighbours is flanked; the centre (GS-2)
    # and cells off the board are no neighbours.
    for board in random_boards(6, 2000):
        pieces = int.from_bytes(board, "little")
        for i in range(len(CELLS)):
            around = [board[j] for j in NEIGHBOURS[i] if j != NO_CELL]
            assert (pieces & WHITE_NEIGHBOURS[i]).bit_count() == around.count(WHITE)
        assert [i for i in cells_of(board, BLACK) if (pieces & WHITE_NEIGHBOURS[i]).bit_count() >= 2] == flanked(board)


def test_black_notation_from_the_known_stones_equals_the_scan() -> None:
    # GS-6/GS-14: the black list from the stones' cells as a state keeps them.
    for board in random_boards(7, 2000):
        assert black_notation(board, tuple(cells_of(board, BLACK))) == black_notation(board)


def test_transitions_made_by_a_move_are_those_the_constructor_makes() -> None:
    # `_play` sets a Transition's slots itself: every field it has must be one it sets.
    assert [f.name for f in fields(Transition)] == ["state", "events"]
    for seed in range(3):
        rng = random.Random(seed)
        state = ENGINE.new_game(2, {"rounds": 2}, seed)
        while ENGINE.outcome(state) is None:
            move = parse_move(rng.choice(ENGINE.legal_notation(state, state.mover)))
            made = ENGINE.apply(state, state.mover, move)
            assert type(made) is Transition
            assert made == Transition(made.state, made.events)
            assert type(made.events) is tuple
            state = made.state


def test_moves_read_from_the_table_are_those_the_parser_reads() -> None:
    # GS-14: every slide and step (and `pass`) read from the table made at import is the
    # move `_parse_move` reads from the same text, and is written back as that text.
    assert len(MOVES_BY_TEXT) == len(PATH_TEXTS)
    for text, move in MOVES_BY_TEXT.items():
        assert _parse_move(text) == move
        assert format_move(move) == text
        assert parse_move(text) is move
    assert parse_move("pass") is PASS
    # the texts of the legal lists of random boards, trample chains included (GS-6)
    for board in random_boards(8, 500):
        for text in white_notation(board) + black_notation(board):
            assert parse_move(text) == _parse_move(text)
            assert format_move(parse_move(text)) == text
    # texts no table holds are read as before: other case, spaces, off-line pairs, errors
    for text in ("A5-B5", " a5-b5 ", "a5-i9", "c7xe7xg7"):
        assert parse_move(text) == _parse_move(text)
    for bad in ("a5", "a5-z9", "a5-b5xc5", ""):
        with pytest.raises(NotationError):
            parse_move(bad)


def test_black_notation_on_every_cell_and_neighbour() -> None:
    # GS-6: a step to a vacant neighbour (never the centre, GS-2), a jump over a white
    # neighbour to a vacant landing just beyond it. `black_notation` has code of its own
    # per cell (BLACK_STEP_TEXTS): a lone black stone on each cell, then each neighbour
    # taken by either colour, with the landing beyond a white one vacant or taken.
    for i in range(len(CELLS)):
        if i == CENTRE:
            continue
        lone = bytearray(len(CELLS))
        lone[i] = BLACK
        boards = [bytes(lone)]
        for d in range(6):
            j, land = NEIGHBOURS[i][d], JUMPS[i][d]
            if j == NO_CELL:
                continue
            for piece in (WHITE, BLACK):
                board = bytearray(lone)
                board[j] = piece
                boards.append(bytes(board))
                if piece == WHITE and land != NO_CELL:
                    for blocker in (WHITE, BLACK):
                        board[land] = blocker
                        boards.append(bytes(board))
        for board in boards:
            assert black_notation(board) == [format_move(m) for m in black_moves(board)]
            assert black_notation(board, tuple(cells_of(board, BLACK))) == black_notation(board)


def test_legal_lines_are_the_white_lists_written_as_one_str() -> None:
    # GS-5/GS-14: White's list (SLIDE_WIDTH characters a slide) as `Engine.legal_lines`
    # writes it; Black's lists, the idle seat's and a forced pass (GS-12) go as lists.
    written = first = 0
    for seed in range(4):
        for state in playout_states(seed):
            first += state.board is INITIAL_BOARD  # a round's first position: its constant list
            for seat in (0, 1):
                lines = ENGINE.legal_lines(state, seat)
                legal = ENGINE.legal_notation(state, seat)
                if lines is None:
                    assert not legal or not state.white_to_move or legal == ["pass"]
                    continue
                text, width = lines
                assert state.white_to_move and seat == state.mover and width == SLIDE_WIDTH
                assert text == "".join("\n" + entry for entry in legal) and len(text) == len(legal) * (width + 1)
                written += 1
    assert written > 100 and first >= 8  # every match's two rounds
    board = bytearray(len(CELLS))  # a lone white stone walled in by black ones: no slide
    board[0] = WHITE
    for j in NEIGHBOURS[0]:
        if j != NO_CELL:
            board[j] = BLACK
    walled = replace(ENGINE.new_game(2, {}, 0), board=bytes(board))
    assert ENGINE.legal_notation(walled, walled.mover) == ["pass"]
    assert ENGINE.legal_lines(walled, walled.mover) is None
