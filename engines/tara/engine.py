"""Tara — Four Treasures (singles): the engine, its state, views and the match.

Rules as `shared/specs/tara.md` decides them (TA-1 … TA-11); docs/rules/tara.md tells
them in the project's words. A room plays a match of `games` games (2 by default,
TA-10): lots drawn from the seed choose the starter of game one, the starter
alternates, and the starter of each game plays White (so "White moves first" holds in
every game while the seats keep their match totals).

OUT (TA-7) needs no action: when the player to move has no capture and no vacant
hill, the engine calls OUT for them and hands the opponent the one extra turn (a
capture, or nothing, which ends the game at once).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engines.base import (
    BadSnapshotError,
    Engine,
    Event,
    GameInfo,
    GameOverError,
    IllegalActionError,
    NotYourTurnError,
    OptionSpec,
    Outcome,
    Seat,
    Transition,
    View,
    winners_by_score,
)
from engines.registry import register
from engines.tara.board import (
    BLACK,
    BRIDGES,
    CAPTURE_NAMES,
    COLOUR_NAMES,
    EMPTY,
    HILLS,
    NAMES,
    PAIRS,
    SYMBOLS,
    WHITE,
    Move,
    besieged,
    bridges_used,
    format_move,
    has_move,
    moves_for,
    other,
    parse_move,
    place,
    territory,
    vacant_names,
)

# Per game: exactly 45 builds (a build fills a hill, nothing empties one) plus at most
# 38 captures — each capture turns an all-enemy neighbourhood of k >= 2 hills into k
# same-colour pairs, and only 76 pairs exist while builds never break one.
MAX_TURNS_PER_GAME = HILLS + len(PAIRS) // 2
MAX_GAMES = 2


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


class _Memo:
    """A state's own derived data, computed on first use: the hills its player to
    move must capture (asked by `apply`, the legal list and the view of one state)."""

    __slots__ = ("captures",)

    def __init__(self) -> None:
        self.captures: list[int] | None = None


def captures_of(state: TaraState) -> list[int]:
    """TA-4: `besieged(state.board, state.to_move)`, computed once per state (read only)."""
    memo = state.memo
    if memo is None:
        memo = _Memo()
        object.__setattr__(state, "memo", memo)  # a cache on a frozen state
    captures = memo.captures
    if captures is None:
        captures = memo.captures = besieged(state.board, state.to_move)
    return captures


@dataclass(frozen=True, slots=True)
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
    # Work done on this state, kept with it (`_Memo`): a cache, not part of its value
    # or snapshot, never copied by `replace` (the copy may differ in what it depends on).
    memo: _Memo | None = field(default=None, init=False, compare=False, repr=False)

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

    @property
    def mover(self) -> Seat:
        return self.seat_of(self.to_move)

    def totals(self) -> tuple[int, int]:
        return (
            sum(r.points[0] for r in self.results),
            sum(r.points[1] for r in self.results),
        )


def new_match_game(games: int, lots: Seat, game_index: int, results: tuple[GameResult, ...]) -> TaraState:
    """An empty board with White (this game's starter) to move."""
    return TaraState(
        games=games,
        lots=lots,
        game_index=game_index,
        board=bytes(HILLS),
        to_move=WHITE,
        out=EMPTY,
        turns=0,
        results=results,
    )


def explain_illegal(state: TaraState, move: Move) -> str:
    """A sentence saying why `move` is not legal now (for the error reply)."""
    name = NAMES[move.hill]
    captures = captures_of(state)
    if captures:
        choices = " ".join("x" + NAMES[i] for i in captures)
        if not move.capture:
            return f"a capture is compulsory (TA-4): choose one of {choices}"
        return f"{name} is not a besieged enemy ringfort (TA-4); choose one of {choices}"
    if move.capture:
        return f"{name} is not besieged: no enemy ringfort is fully surrounded by yours (TA-4)"
    return f"{name} is not vacant (TA-5)"


# Every map key of a view (protocol 2's key table), those a move changes first.
VIEW_KEYS = ("hills", "to_move", "seat_to_move", "turns", "bridges", "bridges_left", "territory",
             "must_capture", "last_move", "game", "out", "starter", "colours", "results", "totals",
             "games", "lots", "points", "reason", "winner", *NAMES)


@register
class Tara(Engine[TaraState, Move]):
    info = GameInfo(
        name="tara",
        title="Tara — Four Treasures",
        rules="singles",
        min_players=2,
        max_players=2,
        hidden_information=False,
        chance=True,  # only the lots for the first starter (TA-10)
        simultaneous=False,
        max_plies=MAX_GAMES * MAX_TURNS_PER_GAME,
        summary="build ringforts on 45 hills, link them with bridges, besiege and capture; "
        "a match of two games",
        options=(
            OptionSpec("games", int, 2, "games in the match: 2, or 1 for a single game (TA-10)",
                       choices=(1, 2)),
        ),
        spec="shared/specs/tara.md",
    )

    def new_game(self, players: int, options: Mapping[str, Any], seed: int) -> TaraState:
        resolved = self.validate_options(players, options)
        lots = random.Random(seed).randrange(2)  # TA-10: lots decide who starts game one
        return new_match_game(resolved["games"], lots, 0, ())

    def players(self, state: TaraState) -> int:
        return 2

    # -- turn structure -----------------------------------------------------------

    def to_act(self, state: TaraState) -> frozenset[Seat]:
        return frozenset() if state.finished else frozenset((state.mover,))

    def legal_actions(self, state: TaraState, seat: Seat) -> list[Move]:
        if state.finished or seat != state.mover:
            return []
        return moves_for(state.board, state.to_move)

    def legal_notation(self, state: TaraState, seat: Seat) -> list[str]:
        if state.finished or seat != state.mover:
            return []
        captures = captures_of(state)
        if captures:
            return [CAPTURE_NAMES[i] for i in captures]
        return vacant_names(state.board)

    def apply(self, state: TaraState, seat: Seat, action: Move) -> Transition[TaraState]:
        if state.finished:
            raise GameOverError("the match is over")
        if seat != state.mover:
            raise NotYourTurnError(
                f"it is {COLOUR_NAMES[state.to_move]}'s turn (seat {state.mover})"
            )
        if not isinstance(action, Move) or not 0 <= action.hill < HILLS:
            raise IllegalActionError(f"{action!r} is not a Tara move")
        if not self._is_legal(state, action):
            raise IllegalActionError(f"{format_move(action)}: {explain_illegal(state, action)}")
        return self._play(state, action)

    @staticmethod
    def _is_legal(state: TaraState, move: Move) -> bool:
        # Checked directly instead of regenerating every move: the hot path of playouts.
        captures = captures_of(state)
        if captures:
            return move.capture and move.hill in captures
        return not move.capture and state.board[move.hill] == EMPTY

    def _play(self, state: TaraState, move: Move) -> Transition[TaraState]:
        colour = state.to_move
        board, used = place(state.board, move.hill, colour)  # a capture replaces in place
        text = format_move(move)
        events: list[Event] = [{
            "type": "capture" if move.capture else "build",
            "seat": state.mover,
            "colour": COLOUR_NAMES[colour],
            "hill": NAMES[move.hill],
            "bridges": used,
        }]
        opponent = other(colour)
        # Built directly rather than with dataclasses.replace: this is the playout hot path.
        after = TaraState(
            state.games, state.lots, state.game_index, board,
            opponent if not state.out and has_move(board, opponent) else colour,
            state.out, state.turns + 1, state.results, text,
        )
        if state.out:
            # That was the extra turn after OUT (TA-7): the game ends.
            return Transition(self._end_game(after, events), tuple(events))
        if after.to_move == colour:
            return Transition(self._call_out(after, opponent, events), tuple(events))
        return Transition(after, tuple(events))

    def _call_out(self, state: TaraState, caller: int, events: list[Event]) -> TaraState:
        """TA-7: `caller` cannot act, so it calls OUT; the other colour gets one more turn.

        No hill is vacant (else the caller could build), so that extra turn is a
        capture if one is available, and otherwise nothing: the game ends now.
        """
        events.append({"type": "out", "seat": state.seat_of(caller), "colour": COLOUR_NAMES[caller]})
        state = replace(state, out=caller, to_move=other(caller))
        if captures_of(state):
            return state
        return self._end_game(state, events)

    def _end_game(self, state: TaraState, events: list[Event]) -> TaraState:
        """TA-9 scoring, then the next game with the other starter (TA-10) or the match end."""
        out_seat = state.seat_of(state.out) if state.out else None
        result = score_game(state.board, state.white_seat, out_seat)
        results = (*state.results, result)
        events.append({"type": "game_end", "game": state.game_index + 1, **result.to_data()})
        if len(results) == state.games:
            done = replace(state, results=results, game_index=state.games)
            events.append({"type": "match_end", "totals": list(done.totals())})
            return done
        nxt = new_match_game(state.games, state.lots, state.game_index + 1, results)
        events.append({"type": "game_start", "game": nxt.game_index + 1, "starter": nxt.white_seat})
        return replace(nxt, last_move=state.last_move)

    # -- outcome and views --------------------------------------------------------

    def outcome(self, state: TaraState) -> Outcome | None:
        if not state.finished:
            return None
        totals = state.totals()
        winners = winners_by_score(totals)
        games = f"{state.games} game{'s' if state.games > 1 else ''}"
        if len(winners) == 1:
            detail = f"seat {winners[0]} wins {max(totals)}-{min(totals)} over {games}"
        else:
            detail = f"drawn {totals[0]}-{totals[1]} over {games}"
        return Outcome(
            scores=(float(totals[0]), float(totals[1])),
            winners=winners,
            reason="points",
            detail=detail,
            extra={"games": [r.to_data() for r in state.results]},
        )

    restated_events = frozenset({"build", "capture"})

    def view_keys(self) -> tuple[str, ...]:
        return VIEW_KEYS

    def view(self, state: TaraState, seat: Seat | None) -> View:
        # Perfect information: every seat and spectator sees the same document. The
        # board is keyed by hill name so a move changes one entry.
        board = state.board
        colours = ["", ""]
        colours[state.white_seat] = "white"
        colours[1 - state.white_seat] = "black"
        bridges = [0, 0]
        land = [0, 0]
        for colour in (WHITE, BLACK):
            bridges[state.seat_of(colour)] = bridges_used(board, colour)
            land[state.seat_of(colour)] = territory(board, colour)
        playing = not state.finished
        return {
            "hills": {name: SYMBOLS[board[i]] for i, name in enumerate(NAMES)},
            "game": min(state.game_index + 1, state.games),
            "games": state.games,
            "lots": state.lots,
            "starter": state.white_seat if playing else None,
            "colours": colours if playing else None,
            "to_move": COLOUR_NAMES[state.to_move] if playing else None,
            "seat_to_move": state.mover if playing else None,
            "must_capture": [NAMES[i] for i in captures_of(state)] if playing else [],
            "out": COLOUR_NAMES[state.out] or None,
            "turns": state.turns,
            "bridges": bridges,
            "bridges_left": [BRIDGES - b for b in bridges],
            "territory": land,
            "results": [r.to_data() for r in state.results],
            "totals": list(state.totals()),
            "last_move": state.last_move,
        }

    def state_from_view(self, view: View) -> TaraState:
        try:
            games = int(view["games"])
            results = tuple(GameResult.from_data(r) for r in view["results"])
            hills = view["hills"]
            board = bytes(SYMBOLS.index(hills[name]) for name in NAMES)
            finished = len(results) == games
            colour_names = list(COLOUR_NAMES)
            return TaraState(
                games=games,
                lots=int(view["lots"]),
                game_index=games if finished else int(view["game"]) - 1,
                board=board,
                to_move=WHITE if finished else colour_names.index(view["to_move"]),
                out=colour_names.index(view["out"] or ""),
                turns=int(view["turns"]),
                results=results,
                last_move=view.get("last_move"),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise BadSnapshotError(f"not a Tara view: {exc}") from exc

    # -- notation and persistence -------------------------------------------------

    def parse_action(self, state: TaraState, seat: Seat, text: str) -> Move:
        return parse_move(text)

    def format_action(self, state: TaraState, action: Move) -> str:
        return format_move(action)

    def snapshot(self, state: TaraState) -> dict[str, Any]:
        # The spectator view already holds the whole state (nothing is hidden).
        return {"game": "tara", "schema": 1, "players": 2, "state": self.view(state, None)}

    def restore(self, data: Mapping[str, Any]) -> TaraState:
        if data.get("game") != "tara" or data.get("schema") != 1 or "state" not in data:
            raise BadSnapshotError("not a Tara snapshot (schema 1)")
        return self.state_from_view(dict(data["state"]))
