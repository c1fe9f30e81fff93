"""Tara — Four Treasures (singles): importing this package registers the engine.

`engines.tara.board` holds the board, notation and rule primitives (TA-1 … TA-6,
TA-11); `engines.tara.engine` the turn order, OUT, scoring and the match (TA-4 …
TA-10).
"""

from engines.tara.board import (
    BLACK,
    BY_NAME,
    EMPTY,
    NAMES,
    NEIGHBOURS,
    PAIRS,
    WHITE,
    Move,
    parse_move,
    parse_picture,
    render_picture,
)
from engines.tara.engine import GameResult, Tara, TaraState, new_match_game, score_game

__all__ = [
    "BLACK",
    "BY_NAME",
    "EMPTY",
    "NAMES",
    "NEIGHBOURS",
    "PAIRS",
    "WHITE",
    "GameResult",
    "Move",
    "Tara",
    "TaraState",
    "new_match_game",
    "parse_move",
    "parse_picture",
    "render_picture",
    "score_game",
]
