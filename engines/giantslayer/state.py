"""Giantslayer's state: a match's rounds (GS-10 … GS-13), the position, and the view
parts each state keeps (`engines.giantslayer.engine` plays moves on it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engines.base import (
    Seat,
    View,
    ViewEdit,
)
from engines.giantslayer.board import (
    BLACK,
    INITIAL_BOARD,
    STONES_PER_SIDE,
    TO_SYMBOLS,
    WHITE,
    Move,
    cells_of,
)

# ----------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class RoundResult:
    white: Seat
    white_points: int
    black_points: int
    reason: str

    def to_data(self) -> dict[str, Any]:
        return {
            "white": self.white,
            "white_points": self.white_points,
            "black_points": self.black_points,
            "reason": self.reason,
        }


_NOBODY: frozenset[Seat] = frozenset()
# (board symbols, black stones left, white stones left, results, totals): see `view_parts`.
ViewParts = tuple[list[str], int, int, list[dict[str, Any]], list[int]]
_ACTING: tuple[frozenset[Seat], frozenset[Seat]] = (frozenset((0,)), frozenset((1,)))  # to_act by seat


@dataclass(frozen=True, slots=True)
class GiantslayerState:
    rounds: int
    round_index: int  # 0-based; seat round_index % 2 plays White
    board: bytes
    white_to_move: bool
    quiet_plies: int  # plies since the last capture (GS-11)
    history: tuple[bytes, ...]  # position keys since the last capture, current last
    quiet_moves: tuple[Move, ...]  # the moves that produced history[1:]
    results: tuple[RoundResult, ...]
    last_move: str | None = None
    # `quiet_moves` in notation, kept along by `_play`: the view's list itself, so a view
    # neither copies nor formats it (None: not known yet, e.g. after a restore). Read,
    # never changed: a move makes a new list.
    quiet_texts: list[str] | None = field(default=None, compare=False, repr=False)
    # `to_act`'s answer (the seats to act: the mover's, none once finished), worked out
    # when the state is made: the server asks it several times a move.
    acting: frozenset[Seat] = field(default=_NOBODY, init=False, compare=False, repr=False)
    # The parts of the view a move changes little, kept along by `_play` (`ViewParts`):
    # the board as the view's list of symbols (the parent's copied, the cells the move
    # changed written), the stones left, and the results and totals lists (the
    # parent's own objects, which a room's diff passes by identity). Read, never changed.
    view_parts: ViewParts = field(default=None, init=False, compare=False, repr=False)  # type: ignore[assignment]
    # The cells of the black stones, in cell order (`cells_of(board, BLACK)`), kept along
    # by `_play`: only a black move or a flank capture changes them, and finding them
    # on the board (a `find` call a stone) costs more than the rest of a black move's
    # GS-7/GS-8 checks. `black_notation` starts from them too.
    blacks: tuple[int, ...] = field(default=(), init=False, compare=False, repr=False)
    # How the view's board and quiet moves were made from those of the view of the state
    # this one was played from (`Engine.view_edits`): (that list, `view_parts[0]`, the
    # cells written, ascending) and (that list, `quiet_texts`, none: one pushed), made
    # by `_play`; () for a state made any other way.
    edits: tuple[ViewEdit, ...] = field(default=(), init=False, compare=False, repr=False)
    # The view (`Giantslayer.view`), made on first use and then handed out again (views
    # are read, never changed), and what `_play` knew of it: the view of the state this
    # one was played from, if it was made, and the keys whose entries the move changed
    # (in the view's order). The view is then that one's copy with those entries new,
    # and `view_edits` names them (the room's diff looks at no other key).
    view_made: View | None = field(default=None, init=False, compare=False, repr=False)
    view_from: tuple[View, tuple[str, ...]] | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        finished = len(self.results) == self.rounds
        acting = _NOBODY if finished else _ACTING[self.round_index % 2 ^ (not self.white_to_move)]
        object.__setattr__(self, "acting", acting)
        object.__setattr__(self, "view_parts", _view_parts(self))
        object.__setattr__(self, "blacks", tuple(cells_of(self.board, BLACK)))

    @property
    def finished(self) -> bool:
        return len(self.results) == self.rounds

    @property
    def white_seat(self) -> Seat:
        return self.round_index % 2

    @property
    def mover(self) -> Seat:
        return self.white_seat if self.white_to_move else 1 - self.white_seat

    def totals(self) -> tuple[int, int]:
        totals = [0, 0]
        for result in self.results:
            totals[result.white] += result.white_points
            totals[1 - result.white] += result.black_points
        return (totals[0], totals[1])


def _view_parts(state: GiantslayerState) -> ViewParts:
    """`view_parts` worked out from the state's fields alone."""
    board = state.board
    return (
        list(board.translate(TO_SYMBOLS).decode()),
        board.count(BLACK),
        board.count(WHITE),
        [r.to_data() for r in state.results],
        list(state.totals()),
    )


# `_play` makes a state on every move. A frozen dataclass's __init__ sets each field
# through `object.__setattr__`, and a slot's own setter (a method-wrapper) still costs
# ~850 instructions a field; a plain twin with the same slots takes plain attribute
# stores (~40), then becomes a GiantslayerState by one `__class__` assignment (same
# layout: Python checks it). The state stays frozen to everyone else.
class _Blank:
    __slots__ = GiantslayerState.__slots__


_new = object.__new__
_from_bytes = int.from_bytes
_become = object.__setattr__  # _become(blank, "__class__", GiantslayerState)


def position_key(board: bytes, white_to_move: bool) -> bytes:
    return board + (b"W" if white_to_move else b"B")


def _made(
    rounds: int,
    round_index: int,
    board: bytes,
    white_to_move: bool,
    quiet_plies: int,
    history: tuple[bytes, ...],
    quiet_moves: tuple[Move, ...],
    results: tuple[RoundResult, ...],
    last_move: str | None,
    quiet_texts: list[str] | None,
    view_parts: ViewParts,
    blacks: tuple[int, ...],
    edits: tuple[ViewEdit, ...] = (),
) -> GiantslayerState:
    """`GiantslayerState(...)` through `_Blank`, the derived fields given (`view_parts`,
    `blacks`: the caller's, which must be what `_view_parts` and `cells_of` give) and
    `acting` worked out as `__post_init__` does. For the states a round's end makes
    (`_end_round`): `dataclasses.replace` and the constructor cost ~40,000
    instructions a state, mostly `__post_init__` finding what the caller knows."""
    state: Any = _new(_Blank)
    state.rounds = rounds
    state.round_index = round_index
    state.board = board
    state.white_to_move = white_to_move
    state.quiet_plies = quiet_plies
    state.history = history
    state.quiet_moves = quiet_moves
    state.results = results
    state.last_move = last_move
    state.quiet_texts = quiet_texts
    state.acting = _NOBODY if len(results) == rounds else _ACTING[round_index % 2 ^ (not white_to_move)]
    state.view_parts = view_parts
    state.blacks = blacks
    state.edits = edits
    state.view_made = state.view_from = None
    _become(state, "__class__", GiantslayerState)
    made: GiantslayerState = state
    return made


INITIAL_KEY = position_key(INITIAL_BOARD, True)
INITIAL_SYMBOLS = INITIAL_BOARD.translate(TO_SYMBOLS).decode()
INITIAL_BLACKS = tuple(cells_of(INITIAL_BOARD, BLACK))


def _results_parts(results: tuple[RoundResult, ...]) -> tuple[list[dict[str, Any]], list[int]]:
    """The results and totals lists of a view (`view_parts[3:]`)."""
    totals = [0, 0]
    for result in results:
        totals[result.white] += result.white_points
        totals[1 - result.white] += result.black_points
    return [r.to_data() for r in results], totals


def new_round(
    rounds: int, round_index: int, results: tuple[RoundResult, ...], last_move: str | None = None
) -> GiantslayerState:
    """GS-4: the setup, White to move first; GS-13: `round_index` 0-based."""
    listed, totals = _results_parts(results)
    view_parts = (list(INITIAL_SYMBOLS), STONES_PER_SIDE[BLACK], STONES_PER_SIDE[WHITE], listed, totals)
    return _made(rounds, round_index, INITIAL_BOARD, True, 0, (INITIAL_KEY,), (), results, last_move, [],
                 view_parts, INITIAL_BLACKS)
