"""Tara positions for rule tests: the engine, an empty board picture, a position drawn
as the 7 x 7 cross, moves played by notation and the legal list read as notation."""

from __future__ import annotations

from dataclasses import replace

from engines import (
    get_engine,
)
from engines.tara import (
    BY_NAME,
    NAMES,
    NEIGHBOURS,
    WHITE,
    Tara,
    TaraState,
    new_match_game,
    parse_picture,
)

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


# A board full but for b2, Black on a2 (TA-7's OUT cases).
FULL_BUT_B2 = """
    7   W W W W W
    6 W W W W W W W
    5 W W W W W W W
    4 W W W W W W W
    3 W W W W W W W
    2 B . W W W W W
    1   W W W W W
"""
