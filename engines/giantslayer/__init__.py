"""Giantslayer: importing this package registers the engine.

`engines.giantslayer.board` holds the board, notation and move rules (GS-1 … GS-12,
GS-14); `engines.giantslayer.state` the state and a round's start; `engines.giantslayer.views`
the view and its diff; `engines.giantslayer.engine` the match (GS-10 … GS-13) and the engine.
"""

from engines.giantslayer.board import (
    BLACK,
    BY_NAME,
    CELLS,
    EDGE,
    EMPTY,
    INITIAL_BOARD,
    NAMES,
    PASS,
    WHITE,
    Move,
    format_move,
    is_legal,
    moves_for,
    parse_move,
)
from engines.giantslayer.engine import (
    Giantslayer,
    GiantslayerState,
    RoundResult,
    new_round,
    position_key,
)

__all__ = [
    "BLACK",
    "BY_NAME",
    "CELLS",
    "EDGE",
    "EMPTY",
    "INITIAL_BOARD",
    "NAMES",
    "PASS",
    "WHITE",
    "Giantslayer",
    "GiantslayerState",
    "Move",
    "RoundResult",
    "format_move",
    "is_legal",
    "moves_for",
    "new_round",
    "parse_move",
    "position_key",
]
