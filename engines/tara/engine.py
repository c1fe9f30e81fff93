"""Tara — Four Treasures (singles): the engine, its turns and the match.

Rules as `shared/specs/tara.md` decides them (TA-1 … TA-11); docs/rules/tara.md tells
them in the project's words. A room plays a match of `games` games (2 by default,
TA-10): lots drawn from the seed choose the starter of game one, the starter
alternates, and the starter of each game plays White (so "White moves first" holds in
every game while the seats keep their match totals).

OUT (TA-7) needs no action: when the player to move has no capture and no vacant
hill, the engine calls OUT for them and hands the opponent the one extra turn (a
capture, or nothing, which ends the game at once).

The state and TA-9 scoring are `engines.tara.state`, the view `engines.tara.views`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from itertools import compress
from typing import Any, ClassVar

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
    ViewEdit,
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
    MOVES,
    NAMES,
    NO_SIEGES,
    ONLY,
    PAIRS,
    SYMBOLS,
    WHITE,
    Move,
    format_move,
    moves_for,
    other,
    parse_move,
    play,
    sieges_of,
    vacant_names,
)
from engines.tara.state import (
    NO_BRIDGES,
    ONE_SEAT,
    GameResult,
    StateMemo,
    TaraState,
    board_sieges,
    bridges_spent,
    captures_of,
    new_match_game,
    score_game,
)
from engines.tara.views import game_view

# Each hill's name after a line break, the way `legal_lines` writes a build
BREAKS = tuple("\n" + name for name in NAMES)

# Per game: exactly 45 builds (a build fills a hill, nothing empties one) plus at most
# 38 captures — each capture turns an all-enemy neighbourhood of k >= 2 hills into k
# same-colour pairs, and only 76 pairs exist while builds never break one.
MAX_TURNS_PER_GAME = HILLS + len(PAIRS) // 2
MAX_GAMES = 2
_new = object.__new__


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
        return state.acting

    def legal_actions(self, state: TaraState, seat: Seat) -> list[Move]:
        if state.finished or seat != state.mover:
            return []
        return moves_for(state.board, state.to_move)

    def legal_notation(self, state: TaraState, seat: Seat) -> list[str]:
        if len(state.results) == state.games or seat != state.mover:
            return []
        captures = captures_of(state)
        if captures:
            return [CAPTURE_NAMES[i] for i in captures]
        memo: StateMemo = state.memo  # type: ignore[assignment]  # made by captures_of
        vacant = memo.vacant
        if vacant is None:
            vacant = memo.vacant = vacant_names(state.board)
        return vacant.copy()  # the caller's own

    lines_notation: ClassVar[bool] = True

    def legal_lines(self, state: TaraState, seat: Seat) -> tuple[str, int] | None:
        # `legal_notation` as "\nD4\nE5…" (builds: 2 characters, TA-11) or "\nxD4…"
        # (captures: 3): the builds' text kept with the state and handed down by `apply`,
        # one entry cut a build, so a room packs the list with one replace (open_lines)
        if len(state.results) == state.games or seat != state.mover:
            return None
        captures = captures_of(state)
        if captures:
            return "".join([BREAKS[i] for i in captures]).replace("\n", "\nx"), 3
        memo: StateMemo = state.memo  # type: ignore[assignment]  # made by captures_of
        lines = memo.lines
        if lines is None:
            lines = memo.lines = "".join([BREAKS[i] for i in compress(range(HILLS), state.board.translate(ONLY[EMPTY]))])
        return lines, 2

    def apply(self, state: TaraState, seat: Seat, action: Move) -> Transition[TaraState]:
        if len(state.results) == state.games:
            raise GameOverError("the match is over")
        mover = state.mover
        if seat != mover:
            raise NotYourTurnError(
                f"it is {COLOUR_NAMES[state.to_move]}'s turn (seat {state.mover})"
            )
        if not isinstance(action, Move) or not 0 <= action.hill < HILLS:
            raise IllegalActionError(f"{action!r} is not a Tara move")
        # Checked directly instead of regenerating every move: the hot path of playouts.
        memo = state.memo  # `captures_of(state)`, inlined
        if memo is None:
            memo = state.memo = StateMemo()
        sieges = memo.sieges
        if sieges is None:
            sieges = memo.sieges = sieges_of(state.board)
        captures = sieges[state.to_move]
        hill, capture = action.hill, action.capture
        if not (capture and hill in captures if captures else not capture and state.board[hill] == EMPTY):
            raise IllegalActionError(f"{format_move(action)}: {explain_illegal(state, action)}")
        # The move, played here rather than in a method of its own (this is the playout
        # hot path: a call less).
        colour = state.to_move
        spent = memo.spent
        if spent is None:
            spent = memo.spent = bridges_spent(state.board)
        # A capture replaces in place; the new board's sieges follow from the old's (TA-4).
        board, used, sieges = play(state.board, hill, colour, sieges, BRIDGES - spent[colour])
        if used:  # TA-6: only the mover's count grows (a captured ringfort had no links)
            spent = (0, spent[1] + used, spent[2]) if colour == WHITE else (0, spent[1], spent[2] + used)
        name = NAMES[hill]
        event: Event = {
            "type": "capture" if capture else "build",
            "seat": mover,
            "colour": COLOUR_NAMES[colour],
            "hill": name,
            "bridges": used,
        }
        opponent = BLACK if colour == WHITE else WHITE
        out = state.out
        # `TaraState(...)` with every field set directly (the same state:
        # test_tara_fast_paths): this is the playout hot path. The opponent moves unless
        # it can neither build nor capture (TA-7); the same game, so the same seats.
        after: TaraState = _new(TaraState)
        after.games = state.games
        after.lots = state.lots
        after.game_index = state.game_index
        after.board = board
        if not out and (EMPTY in board or sieges[opponent]):
            after.to_move = opponent
            after.mover = 1 - mover
            after.acting = ONE_SEAT[1 - mover]
        else:
            after.to_move = colour
            after.mover = mover
            after.acting = ONE_SEAT[mover]
        after.out = out
        after.turns = state.turns + 1
        after.results = state.results
        after.last_move = CAPTURE_NAMES[hill] if capture else name
        vacant, lines = memo.vacant, memo.lines
        if not capture:  # the builds left: all but this hill (TA-5)
            if vacant is not None:
                vacant = vacant.copy()
                vacant.remove(name)
            if lines is not None:  # (every name is two characters: "\nD4" is that entry alone)
                lines = lines.replace(BREAKS[hill], "", 1)
        # `StateMemo(...)`, every slot set directly
        kept: StateMemo = _new(StateMemo)
        view = memo.view
        if view is not None:  # the parent's view: this move is all that changed
            kept.last = (state.board, view)
            kept.step = (hill, colour, used, mover, capture)
        else:  # the last view an ancestor had, if any, to build this one's from
            kept.last = memo.last
            kept.step = None
        kept.sieges = sieges
        kept.spent = spent
        kept.vacant = vacant
        kept.lines = lines
        kept.view = None
        kept.edits = ()
        after.memo = kept
        transition: Transition[TaraState] = _new(Transition)
        if out or after.to_move == colour:
            events = [event]
            if out:
                # That was the extra turn after OUT (TA-7): the game ends.
                after = self._end_game(after, events)
            else:
                after = self._call_out(after, opponent, events)
            transition.events = tuple(events)
        else:
            transition.events = (event,)
        transition.state = after
        return transition

    def _call_out(self, state: TaraState, caller: int, events: list[Event]) -> TaraState:
        """TA-7: `caller` cannot act, so it calls OUT; the other colour gets one more turn.

        No hill is vacant (else the caller could build), so that extra turn is a
        capture if one is available, and otherwise nothing: the game ends now.
        """
        events.append({"type": "out", "seat": state.seat_of(caller), "colour": COLOUR_NAMES[caller]})
        sieges = board_sieges(state)
        spent = state.memo.spent if state.memo is not None else None
        state = replace(state, out=caller, to_move=other(caller))
        state.memo = StateMemo(sieges=sieges, spent=spent)  # the same board
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
        nxt = replace(nxt, last_move=state.last_move)
        nxt.memo = StateMemo(sieges=NO_SIEGES, spent=NO_BRIDGES)  # an empty board
        return nxt

    # -- outcome and views --------------------------------------------------------

    def outcome(self, state: TaraState) -> Outcome | None:
        if len(state.results) != state.games:  # not `finished`
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

    def view_edits(self, state: TaraState) -> tuple[ViewEdit, ...]:
        # How `view_after` made the view from the parent's (none when built otherwise)
        return state.memo.edits if state.memo is not None else ()

    def view(self, state: TaraState, seat: Seat | None) -> View:
        return game_view(state)  # perfect information: the same for everyone

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
        move = MOVES.get(text)  # the usual spelling, `D4` or `xD4`
        return move if move is not None else parse_move(text)

    def format_action(self, state: TaraState, action: Move) -> str:
        return CAPTURE_NAMES[action.hill] if action.capture else NAMES[action.hill]  # format_move

    def snapshot(self, state: TaraState) -> dict[str, Any]:
        # The spectator view already holds the whole state (nothing is hidden).
        return {"game": "tara", "schema": 1, "players": 2, "state": self.view(state, None)}

    def restore(self, data: Mapping[str, Any]) -> TaraState:
        if data.get("game") != "tara" or data.get("schema") != 1 or "state" not in data:
            raise BadSnapshotError("not a Tara snapshot (schema 1)")
        return self.state_from_view(dict(data["state"]))
