"""Tara's state: the match position (`TaraState`), its finished games (`GameResult`)
and TA-9 scoring; `StateMemo` keeps a state's derived data with it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.base import Seat, ViewEdit
from engines.tara.board import (
    BLACK,
    EMPTY,
    HILLS,
    NO_SIEGES,
    WHITE,
    Sieges,
    bridges_used,
    sieges_of,
    territory,
)


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game, per seat (index = seat): TA-8 counts and TA-9 points."""

    starter: Seat
    bridges: tuple[int, int]
    territory: tuple[int, int]
    points: tuple[int, int]
    reason: str  # "bridges", "territory" or "draw"
    out: Seat | None  # the seat that called OUT (None if the game ended otherwise)

    @property
    def winner(self) -> Seat | None:
        return None if self.reason == "draw" else (0 if self.points[0] > self.points[1] else 1)

    def to_data(self) -> dict[str, Any]:
        return {
            "starter": self.starter,
            "bridges": list(self.bridges),
            "territory": list(self.territory),
            "points": list(self.points),
            "winner": self.winner,
            "reason": self.reason,
            "out": self.out,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> GameResult:
        def pair(key: str) -> tuple[int, int]:
            a, b = data[key]
            return (int(a), int(b))

        out = data["out"]
        return cls(
            starter=int(data["starter"]),
            bridges=pair("bridges"),
            territory=pair("territory"),
            points=pair("points"),
            reason=str(data["reason"]),
            out=None if out is None else int(out),
        )


def score_game(board: bytes, white_seat: Seat, out: Seat | None) -> GameResult:
    """TA-9: more bridges wins 2 + difference; else more territory 2 + difference; else 1-1."""
    bridges = [0, 0]
    land = [0, 0]
    for colour, seat in ((WHITE, white_seat), (BLACK, 1 - white_seat)):
        bridges[seat] = bridges_used(board, colour)
        land[seat] = territory(board, colour)
    points = [0, 0]
    if bridges[0] != bridges[1]:
        reason, counts = "bridges", bridges
    elif land[0] != land[1]:
        reason, counts = "territory", land
    else:
        reason, counts = "draw", [0, 0]
    if reason == "draw":
        points = [1, 1]
    else:
        winner = 0 if counts[0] > counts[1] else 1
        points[winner] = 2 + abs(counts[0] - counts[1])
    return GameResult(
        starter=white_seat,
        bridges=(bridges[0], bridges[1]),
        territory=(land[0], land[1]),
        points=(points[0], points[1]),
        reason=reason,
        out=out,
    )


class StateMemo:
    """A state's own derived data, computed on first use or handed down by `apply`:
    its board's sieges (`board.Sieges`: the hills each colour may capture, TA-4; the
    player to move's are asked by `apply`, the legal list and the view of one state),
    the bridges each colour has used (`spent`, by colour, index 0 unused: TA-6's
    `bridges_used`, which `apply` needs to saturate a move's count),
    the names of its vacant hills (`vacant`, TA-5's builds in notation, once its legal
    list was asked for; `lines`, the same as `Engine.legal_lines` writes it, once that was
    asked for), its view (`engines.tara.views`), and until then the last view
    an ancestor had with that ancestor's board (`last`, passed on by `apply`), to
    build it from.

    When `last` is the parent's, `step` says what the move did (hill, colour, bridges
    it used as `board.place` counts them, the seat that moved, whether it captured),
    so the view is built without comparing the boards or counting anything again,
    and `edits` then says how it was made from the parent's (`Tara.view_edits`).

    It holds boards, names and views, never a state (no chain of ancestors stays
    alive), and lives and dies with its state; nothing in it changes once it is set.
    """

    __slots__ = ("edits", "last", "lines", "sieges", "spent", "step", "vacant", "view")

    def __init__(
        self,
        last: tuple[bytes, dict[str, Any]] | None = None,
        step: tuple[int, int, int, Seat, bool] | None = None,
        sieges: Sieges | None = None,
        vacant: list[str] | None = None,
        spent: tuple[int, int, int] | None = None,
    ) -> None:
        self.edits: tuple[ViewEdit, ...] = ()
        self.lines: str | None = None
        self.sieges = sieges
        self.spent = spent
        self.vacant = vacant
        self.view: dict[str, Any] | None = None
        self.last = last
        self.step = step


def memo_of(state: TaraState) -> StateMemo:
    """The state's memo, made on first use (a cache, not part of the state's value)."""
    memo = state.memo
    if memo is None:
        memo = state.memo = StateMemo()
    return memo


def board_sieges(state: TaraState) -> Sieges:
    """`sieges_of(state.board)`, computed once per state or handed down by `apply`."""
    memo = memo_of(state)
    sieges = memo.sieges
    if sieges is None:
        sieges = memo.sieges = sieges_of(state.board)
    return sieges


NO_BRIDGES = (0, 0, 0)


def bridges_spent(board: bytes) -> tuple[int, int, int]:
    """TA-6: `bridges_used` of WHITE and BLACK on `board` (index 0 unused)."""
    return (0, bridges_used(board, WHITE), bridges_used(board, BLACK))


def captures_of(state: TaraState) -> list[int]:
    """TA-4: `besieged(state.board, state.to_move)`, computed once per state (read only)."""
    memo = state.memo
    if memo is not None:
        sieges = memo.sieges
        if sieges is not None:
            return sieges[state.to_move]
    return board_sieges(state)[state.to_move]


NO_SEATS: frozenset[Seat] = frozenset()
ONE_SEAT = (frozenset((0,)), frozenset((1,)))  # to_act's answers, made once


# Not frozen: a frozen dataclass sets each field through `object.__setattr__` (~1,500
# instructions each in this interpreter), a tenth of a move's engine work here
# (docs/performance.md, session 13). Nothing assigns to a state's fields once it is made
# but `memo`, the cache; still hashable on its fields, as when it was frozen.
@dataclass(slots=True, unsafe_hash=True)
class TaraState:
    games: int  # games in the match (1 or 2)
    lots: Seat  # the seat the lots chose to start game one (TA-10)
    game_index: int  # 0-based; the current game (== games once the match is over)
    board: bytes
    to_move: int  # colour to move, WHITE or BLACK
    out: int  # EMPTY, or the colour that called OUT this game (TA-7)
    turns: int  # actions applied in the current game
    results: tuple[GameResult, ...]
    last_move: str | None = None
    # Work done on this state, kept with it (`StateMemo`): a cache, not part of its value
    # or snapshot, never copied by `replace` (the copy may differ in what it depends on).
    memo: StateMemo | None = field(default=None, init=False, compare=False, repr=False)
    # `seat_of(to_move)`: every request asks it, some several times (to_act, the legal
    # list, apply), so it is worked out once when the state is made (`__post_init__`,
    # which `replace` runs too) rather than by a property call each time.
    mover: Seat = field(default=0, init=False, compare=False, repr=False)
    # `Tara.to_act`'s answer (asked several times a move): {mover}, none once finished.
    acting: frozenset[Seat] = field(default=NO_SEATS, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        index = self.game_index if self.game_index < self.games else self.games - 1
        white = self.lots if index % 2 == 0 else 1 - self.lots
        self.mover = white if self.to_move == WHITE else 1 - white
        self.acting = NO_SEATS if len(self.results) == self.games else ONE_SEAT[self.mover]

    @property
    def finished(self) -> bool:
        return len(self.results) == self.games

    @property
    def white_seat(self) -> Seat:
        """The starter of the current game; starters alternate from the lots (TA-10).

        Once the match is over (game_index == games) the board is the last game's, so
        its colours are that game's: the next game's starter would swap the seats'
        bridges and territory in the final view.
        """
        index = min(self.game_index, self.games - 1)
        return self.lots if index % 2 == 0 else 1 - self.lots

    def seat_of(self, colour: int) -> Seat:
        return self.white_seat if colour == WHITE else 1 - self.white_seat

    def totals(self) -> tuple[int, int]:
        return (
            sum(r.points[0] for r in self.results),
            sum(r.points[1] for r in self.results),
        )


def new_match_game(games: int, lots: Seat, game_index: int, results: tuple[GameResult, ...]) -> TaraState:
    """An empty board with White (this game's starter) to move."""
    state = TaraState(
        games=games,
        lots=lots,
        game_index=game_index,
        board=bytes(HILLS),
        to_move=WHITE,
        out=EMPTY,
        turns=0,
        results=results,
    )
    state.memo = StateMemo(sieges=NO_SIEGES, spent=NO_BRIDGES)  # nothing on an empty board
    return state
