"""Tara's fast paths agree with the rules written out the slow, obvious way.

The engine writes its legal notation directly (no move objects), keeps per-state work
on the state and builds views from the last one; each is checked here against a
straightforward reading of shared/specs/tara.md over random playouts and random
boards with fixed seeds.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import msgpack
import pytest

from engines import get_engine
from engines.base import NotationError
from engines.tara import BLACK, EMPTY, NAMES, NEIGHBOURS, PAIRS, WHITE, Tara, TaraState
from engines.tara.board import (
    BRIDGES,
    HILLS,
    Move,
    besieged,
    bridges_used,
    format_move,
    links,
    moves_for,
    notation_for,
    parse_move,
    place,
    play,
    sieges_of,
)
from engines.tara.state import captures_of
from engines.tara.views import build_view

ENGINE: Tara = get_engine("tara")  # type: ignore[assignment]


def besieged_ref(board: bytes, colour: int) -> list[int]:
    """TA-2/TA-4: enemy hills whose every orthogonal neighbour holds `colour`."""
    enemy = BLACK if colour == WHITE else WHITE
    return [i for i in range(HILLS) if board[i] == enemy and all(board[j] == colour for j in NEIGHBOURS[i])]


def notation_ref(board: bytes, colour: int) -> list[str]:
    """TA-4/TA-5/TA-11: the captures (`xD4`) if any, else a build (`D4`) on every vacant hill."""
    captures = besieged_ref(board, colour)
    if captures:
        return ["x" + NAMES[i] for i in captures]
    return [NAMES[i] for i in range(HILLS) if board[i] == EMPTY]


def links_ref(board: bytes, colour: int) -> int:
    """TA-6: adjacent pairs of `colour`'s ringforts."""
    return sum(1 for i, j in PAIRS if board[i] == colour and board[j] == colour)


def random_boards(seed: int, count: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for _ in range(count):
        weights = [rng.random() for _ in range(3)]
        yield bytes(rng.choices((EMPTY, WHITE, BLACK), weights, k=HILLS))


def crowded_boards(seed: int, count: int) -> Iterator[bytes]:
    """Boards with one colour on most hills: its bridges near or at the supply (TA-6)."""
    rng = random.Random(seed)
    for _ in range(count):
        main = rng.choice((WHITE, BLACK))
        weights = {EMPTY: 0.25, main: 0.65, WHITE + BLACK - main: 0.1}
        yield bytes(rng.choices(list(weights), list(weights.values()), k=HILLS))


def playout_states(seed: int) -> Iterator[TaraState]:
    """Every state of a random 2-game match played through the engine."""
    rng = random.Random(seed)
    state = ENGINE.new_game(2, {}, seed)
    yield state
    while ENGINE.outcome(state) is None:
        seat = state.mover
        state = ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat))).state
        yield state


def test_notation_matches_the_rules_on_random_boards() -> None:
    # TA-4 (captures compulsory), TA-5 (builds on vacant hills), TA-11 (notation).
    for board in random_boards(1, 3000):
        for colour in (WHITE, BLACK):
            assert besieged(board, colour) == besieged_ref(board, colour)
            assert notation_for(board, colour) == notation_ref(board, colour)
            assert notation_for(board, colour) == [format_move(m) for m in moves_for(board, colour)]


def test_links_match_the_rules_on_random_boards() -> None:
    # TA-2 (orthogonal adjacency, no corners) and TA-6 (a bridge per adjacent pair).
    for board in random_boards(2, 3000):
        for colour in (EMPTY, WHITE, BLACK):
            assert links(board, colour) == links_ref(board, colour)
    for colour in (WHITE, BLACK):
        assert links(bytes([colour]) * HILLS, colour) == len(PAIRS) == 76


def test_legal_notation_matches_legal_actions_in_playouts() -> None:
    # TA-4/TA-5/TA-7: the room's list is the formatted legal actions, for both seats.
    for seed in range(40):
        for state in playout_states(seed):
            for seat in (0, 1):
                expected = [ENGINE.format_action(state, a) for a in ENGINE.legal_actions(state, seat)]
                assert ENGINE.legal_notation(state, seat) == expected
                if expected:
                    assert expected == notation_ref(state.board, state.to_move)


def test_captures_kept_with_a_state_are_its_own() -> None:
    # TA-4: what one state computed once is never another state's answer, even for a
    # copy with another player to move (`replace` starts without the cache).
    for seed in range(10):
        for state in playout_states(seed):
            # TA-10: the seat to move plays this game's colour to move.
            if not state.finished:
                assert ENGINE.to_act(state) == {state.mover} == {state.seat_of(state.to_move)}
            assert captures_of(state) == besieged_ref(state.board, state.to_move)
            flipped = replace(state, to_move=BLACK if state.to_move == WHITE else WHITE)
            assert flipped.mover == flipped.seat_of(flipped.to_move)  # worked out when made, `replace` too
            assert captures_of(flipped) == besieged_ref(state.board, flipped.to_move)
            assert captures_of(state) == besieged_ref(state.board, state.to_move)


def test_views_built_from_an_ancestors_are_built_from_nothing() -> None:
    # TA-6/TA-8 (bridges, territory), TA-4 (must_capture), TA-9/TA-10 (results,
    # totals): a view built from the last one an ancestor had equals, value and type
    # for type, the one built from the state alone, whether every state was viewed
    # (a room) or only some (views skipped over several moves and across games).
    for seed in range(30):
        rng = random.Random(seed)
        every = seed % 2 == 0
        for state in playout_states(seed):
            if every or rng.random() < 0.2:
                view = ENGINE.view(state, None)
                fresh = build_view(state)
                assert view == fresh
                assert msgpack.packb(view) == msgpack.packb(fresh)  # the same types, keys in one order
                assert ENGINE.view(state, 0) is view  # kept with the state
                assert build_view(ENGINE.state_from_view(view)) == view  # restored rooms see the same


def test_notation_reads_back_every_move_in_every_spelling() -> None:
    # TA-11: `D4` builds, `xD4` captures, any case, spaces around (and after the x).
    for hill, name in enumerate(NAMES):
        for move in (Move(hill), Move(hill, True)):
            text = format_move(move)
            assert text == ("x" if move.capture else "") + name
            for spelling in (text, text.lower(), text.upper(), f"  {text} ", text.replace("x", "x ")):
                assert parse_move(spelling) == move


def test_views_built_from_the_parents_move_count_saturated_bridges() -> None:
    # TA-6: a view built from its parent's and the move (the hill, and the bridges
    # `place` says it used) equals the one built from the state alone, also where a
    # count reaches the supply of 40 and stops there: crowded boards (random, most
    # hills white), every state viewed as a room does.
    saturated = 0
    for seed in range(40):
        rng = random.Random(seed)
        board = bytes(rng.choices((EMPTY, WHITE, BLACK), (0.3, 0.6, 0.1), k=HILLS))
        state = replace(ENGINE.new_game(2, {"games": 1}, seed), board=board)
        while ENGINE.outcome(state) is None:
            view = ENGINE.view(state, None)
            assert view == build_view(state)
            assert msgpack.packb(view) == msgpack.packb(build_view(state))
            saturated += BRIDGES in view["bridges"]
            seat = state.mover
            state = ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat))).state
    assert saturated


def test_sieges_after_a_move_are_the_new_boards_on_random_boards() -> None:
    # TA-2/TA-4: `play` hands down each colour's besieged hills from the old board's;
    # they are the new board's, lowest hill first, for a ringfort put on any hill
    # not already its own (a build on a vacant one, TA-5, or a capture's replacement
    # of an enemy one, besieged or not),
    # and the board and bridges are `place`'s (TA-6).
    rng = random.Random(7)
    for board in [*random_boards(3, 4000), *crowded_boards(4, 1000)]:
        sieges = sieges_of(board)
        assert sieges[WHITE] == besieged_ref(board, WHITE) and sieges[BLACK] == besieged_ref(board, BLACK)
        for _ in range(3):
            hill, colour = rng.randrange(HILLS), rng.choice((WHITE, BLACK))
            if board[hill] == colour:  # never a move: a build needs a vacant hill, a capture an enemy one
                continue
            new, used, after = play(board, hill, colour, sieges, BRIDGES - bridges_used(board, colour))
            assert (new, used) == place(board, hill, colour)
            assert after[WHITE] == besieged_ref(new, WHITE)
            assert after[BLACK] == besieged_ref(new, BLACK)
            assert sieges == sieges_of(board)  # the old lists are not changed


def room_states(seed: int, every: bool) -> Iterator[TaraState]:
    """A random match played as a room plays it: the legal list (notation) and the
    view of every state asked for (`every`), or only of some, before a move."""
    rng = random.Random(seed)
    state = ENGINE.new_game(2, {}, seed)
    while True:
        yield state
        if ENGINE.outcome(state) is not None:
            return
        seat = state.mover
        if every or rng.random() < 0.3:
            ENGINE.view(state, None)
        if every or rng.random() < 0.5:
            text = rng.choice(ENGINE.legal_notation(state, seat))
        else:
            text = format_move(rng.choice(ENGINE.legal_actions(state, seat)))
        state = ENGINE.apply(state, seat, ENGINE.parse_action(state, seat, text)).state


def test_legal_lists_handed_down_are_the_rules_in_room_play() -> None:
    # TA-4/TA-5/TA-7/TA-11: the legal list a state builds from its parent's (the vacant
    # hills but the one just built on; a capture leaves them) and its handed-down
    # sieges are the rules' list, in order, for both seats; the seat not to move gets
    # nothing, and each call returns a list of its own.
    for seed in range(60):
        for state in room_states(seed, every=seed % 3 != 0):
            assert captures_of(state) == besieged_ref(state.board, state.to_move)
            for seat in (0, 1):
                got = ENGINE.legal_notation(state, seat)
                if state.finished or seat != state.mover:
                    assert got == []
                    continue
                assert got == notation_ref(state.board, state.to_move)
                assert got == [format_move(m) for m in ENGINE.legal_actions(state, seat)]
                got.append("spoiled")  # the caller's own list
                assert ENGINE.legal_notation(state, seat) == notation_ref(state.board, state.to_move)


def test_views_built_from_the_parents_are_built_from_nothing_in_room_play() -> None:
    # TA-6/TA-8/TA-4/TA-9/TA-10: every view of a room's match, built from its parent's
    # and the move where it can be, equals the one built from the state alone, value,
    # type and key order (the packed bytes); the parent's view is not changed.
    for seed in range(60):
        before: list[tuple[dict[str, object], bytes]] = []
        for state in room_states(seed, every=seed % 3 != 0):
            view = ENGINE.view(state, None)
            assert msgpack.packb(view) == msgpack.packb(build_view(state))
            before.append((view, msgpack.packb(view)))
        for view, packed in before:
            assert msgpack.packb(view) == packed


def test_states_apply_sets_slot_by_slot_are_the_constructors_in_room_play() -> None:
    # TA-7/TA-10: a state `apply` builds by setting its slots equals, field for field
    # and in hash, the one `TaraState(...)` builds from the same fields (`replace`
    # runs it), with the same seat to move and `to_act` answer (none once finished).
    for seed in range(40):
        for state in room_states(seed, every=seed % 2 == 0):
            # TA-6: the bridges each colour used, handed down move by move
            spent = state.memo.spent if state.memo is not None else None
            assert spent in (None, (0, bridges_used(state.board, WHITE), bridges_used(state.board, BLACK)))
            made = replace(state)
            assert made == state and hash(made) == hash(state)
            assert (made.mover, made.acting) == (state.mover, state.acting)
            expected = frozenset() if state.finished else frozenset({state.seat_of(state.to_move)})
            assert ENGINE.to_act(state) == expected


def test_actions_read_and_written_by_the_engine_are_the_notations() -> None:
    # TA-11: the engine's reading of every spelling (its table of the usual ones first)
    # and its writing agree with parse_move and format_move.
    state = ENGINE.new_game(2, {}, 0)
    for hill in range(HILLS):
        for move in (Move(hill), Move(hill, True)):
            text = format_move(move)
            assert ENGINE.format_action(state, move) == text
            for spelling in (text, text.lower(), text.upper(), f" {text} ", text.replace("x", "x ")):
                assert ENGINE.parse_action(state, 0, spelling) == parse_move(spelling) == move
    for bad in ("", "A1", "xG7", "H4", "D8", "xx D4"):
        with pytest.raises(NotationError):
            ENGINE.parse_action(state, 0, bad)


def test_legal_lines_handed_down_are_the_rules_in_room_play() -> None:
    # TA-4/TA-5/TA-7/TA-11: the text `legal_lines` writes (a room's packing of the list),
    # asked of every state or only of some (the builds' text then made afresh or handed
    # down, one build cut a move, a capture leaving it), is the rules' list after line
    # breaks, builds 2 characters and captures 3, for the seat to move; the other seat
    # and a finished match get None.
    captures = 0
    for seed in range(60):
        rng = random.Random(seed)
        every = seed % 3 != 0
        state = ENGINE.new_game(2, {}, seed)
        while True:
            for seat in (0, 1):
                if not (every or rng.random() < 0.4):
                    continue
                got = ENGINE.legal_lines(state, seat)
                if state.finished or seat != state.mover:
                    assert got is None
                    continue
                want = notation_ref(state.board, state.to_move)
                assert got == ("".join("\n" + entry for entry in want), len(want[0]))
                assert got[1] == (3 if want[0].startswith("x") else 2)
                captures += got[1] == 3
            if ENGINE.outcome(state) is not None:
                break
            seat = state.mover
            text = rng.choice(notation_ref(state.board, state.to_move))
            state = ENGINE.apply(state, seat, ENGINE.parse_action(state, seat, text)).state
    assert captures
