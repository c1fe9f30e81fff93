"""Tara — Four Treasures (singles): importing this package registers the engine.

`engines.tara.board` holds the board, notation and rule primitives (TA-1 … TA-6,
TA-11); `engines.tara.engine` the turn order, OUT and the match (TA-4 … TA-10),
`engines.tara.state` the state and scoring (TA-8, TA-9), `engines.tara.views` the view.
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
from engines.tara.engine import Tara
from engines.tara.state import GameResult, TaraState, new_match_game, score_game

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
