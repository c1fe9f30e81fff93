"""Giantslayer: 24 halogai (White) against 6 giants (Black) on a radius-4 hex board.

Rules as `shared/specs/giantslayer.md` decides them (GS-1 … GS-14); docs/rules/
giantslayer.md tells them in the project's words. A game is a match of `rounds`
rounds (default 2, GS-13); the seats swap colours after each round, so seat 0 is
White in even rounds (0-based) and Black in odd ones.

Notation (GS-14): a cell is a column letter a–i (q = -4 … 4) and a rank 1–9
(rank = 5 - r), so the impassable centre is `e5`. A white slide or a black step is
`from-to` (`a5-b5`), a trample chain `from x landing x landing …` (`e6xe8xc8`), and
a forced pass (GS-12) is `pass`.

The board, notation and move rules are in `engines.giantslayer.board`, the state and a
round's start in `engines.giantslayer.state`, the view and its diff in
`engines.giantslayer.views`; this module holds the match (GS-10 … GS-13) and the engine.

"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise
from typing import Any, ClassVar

from engines import hexgrid
from engines.base import (
    BadOptionsError,
    BadSnapshotError,
    Engine,
    Event,
    GameInfo,
    GameOverError,
    IllegalActionError,
    NotationError,
    NotYourTurnError,
    OptionSpec,
    Outcome,
    Seat,
    Transition,
    View,
    ViewEdit,
    winners_by_score,
)
from engines.giantslayer.board import (
    BLACK,
    CELLS,
    CENTRE,
    EDGE,
    EMPTY,
    INITIAL_BOARD,
    JUMPED,
    MAX_ROUNDS,
    NAMES,
    PATH_TEXTS,
    PLIES_PER_ROUND_BOUND,
    QUIET_PLY_LIMIT,
    SLIDE_WIDTH,
    STONES_PER_SIDE,
    SYMBOLS,
    WHITE,
    WHITE_NEIGHBOURS,
    Move,
    black_notation,
    format_move,
    is_legal,
    moves_for,
    parse_move,
    white_lines,
    white_notation,
)
from engines.giantslayer.state import (
    _ACTING,
    GiantslayerState,
    RoundResult,
    _become,
    _Blank,
    _from_bytes,
    _made,
    _new,
    _results_parts,
    new_round,
    position_key,
)
from engines.giantslayer.views import COUNTED_KEYS, MOVED_KEYS, GiantslayerViews
from engines.registry import register


def explain_illegal(state: GiantslayerState, move: Move) -> str:
    """A sentence saying why `move` is not legal now (for the error reply)."""
    board = state.board
    side = "White" if state.white_to_move else "Black"
    own = WHITE if state.white_to_move else BLACK
    if not move.path:
        return f"{side} has legal moves and may not pass (GS-12)"
    start = move.path[0]
    if board[start] != own:
        return f"{NAMES[start]} holds no {side.lower()} stone"
    if CENTRE in move.path:
        return "the centre e5 is impassable (GS-2)"
    if state.white_to_move:
        if move.trample:
            return "White cannot trample; it slides (GS-5)"
        if hexgrid.direction_between(CELLS[start], CELLS[move.path[1]]) is None:
            return "White slides along one of the six straight lines (GS-5)"
        return "the line is blocked: a slide may not pass over or stop on a stone or the centre (GS-5)"
    if not move.trample:
        return "Black steps one cell to a vacant neighbour (GS-6)"
    return "each trample jumps an adjacent white stone to the vacant cell just beyond it (GS-6)"


# ----------------------------------------------------------------------------- engine

# White's list in a round's first position (GS-4), as `legal_lines` gives it
_INITIAL_LINES = (white_lines(INITIAL_BOARD), SLIDE_WIDTH)


@register
class Giantslayer(GiantslayerViews, Engine[GiantslayerState, Move]):
    info = GameInfo(
        name="giantslayer",
        title="Giantslayer",
        rules="standard",
        min_players=2,
        max_players=2,
        hidden_information=False,
        chance=False,
        simultaneous=False,
        max_plies=MAX_ROUNDS * PLIES_PER_ROUND_BOUND,
        summary="24 halogai ambush 6 giants on a hex board; a match of rounds with sides swapped",
        options=(
            OptionSpec(
                "rounds", int, 2, "rounds in the match: 1 or an even number (GS-13)",
                minimum=1, maximum=MAX_ROUNDS,
            ),
        ),
        spec="shared/specs/giantslayer.md",
    )

    # Notation lists repeat no entry and hold no line break (the conformance suite checks
    # it): the room keeps and edits a long white list without checking either.
    plain_notation: ClassVar[bool] = True
    # White's lists are written as one str for a room to pack (`legal_lines`)
    lines_notation: ClassVar[bool] = True

    def check_options(self, players: int, options: Mapping[str, Any]) -> None:
        rounds = options["rounds"]
        if rounds != 1 and rounds % 2:
            raise BadOptionsError("option 'rounds' must be 1 or an even number (GS-13)")

    def new_game(self, players: int, options: Mapping[str, Any], seed: int) -> GiantslayerState:
        resolved = self.validate_options(players, options)
        return new_round(resolved["rounds"], 0, ())

    def players(self, state: GiantslayerState) -> int:
        return 2

    # -- turn structure -----------------------------------------------------------

    def to_act(self, state: GiantslayerState) -> frozenset[Seat]:
        # The server asks this several times a move: worked out when the state was made.
        return state.acting

    def legal_actions(self, state: GiantslayerState, seat: Seat) -> list[Move]:
        if state.finished or seat != state.mover:
            return []
        return moves_for(state.board, state.white_to_move)

    def legal_notation(self, state: GiantslayerState, seat: Seat) -> list[str]:
        if seat not in state.acting:  # finished, or not the mover's turn
            return []
        texts = white_notation(state.board) if state.white_to_move else black_notation(state.board, state.blacks)
        return texts or ["pass"]  # GS-12

    def legal_lines(self, state: GiantslayerState, seat: Seat) -> tuple[str, int] | None:
        # White's slides (SLIDE_WIDTH characters each) written as one str; Black's
        # lists and a forced pass (GS-12) go as lists
        if not state.white_to_move or seat not in state.acting:
            return None
        board = state.board
        if board is INITIAL_BOARD:  # every round's first list (GS-4): written once
            return _INITIAL_LINES
        text = white_lines(board)
        return (text, SLIDE_WIDTH) if text else None

    def apply(self, state: GiantslayerState, seat: Seat, action: Move) -> Transition[GiantslayerState]:
        if len(state.results) == state.rounds:  # `finished`, inlined (every move)
            raise GameOverError("the match is over")
        if seat not in state.acting:
            side = "White" if state.white_to_move else "Black"
            raise NotYourTurnError(f"it is {side}'s turn (seat {state.mover})")
        if not isinstance(action, Move) or not is_legal(state.board, state.white_to_move, action):
            raise IllegalActionError(f"{format_move(action)}: {explain_illegal(state, action)}")
        return self._play(state, action)

    def _play(self, state: GiantslayerState, move: Move) -> Transition[GiantslayerState]:
        board = bytearray(state.board)
        parts = state.view_parts
        symbols = parts[0].copy()  # the view's board: every cell written on `board` is written here
        black_left, white_left = parts[1], parts[2]
        # The move itself reaches the table as the room's "action" event; the engine
        # reports only its consequences (captures, round ends).
        events: list[Event] = []
        captured = False
        written: tuple[int, ...] = ()  # the cells written on `symbols`, ascending
        if move.path:
            start, end = move.path[0], move.path[-1]
            written = (start, end) if start < end else (end, start)
            piece = board[start]
            board[start] = EMPTY  # first: a trample chain may end on its own start cell
            board[end] = piece
            symbols[start] = "."
            symbols[end] = SYMBOLS[piece]
            if move.trample:
                trampled = [JUMPED[a, b] for a, b in pairwise(move.path)]
                for cell in trampled:
                    board[cell] = EMPTY
                    symbols[cell] = "."
                written = (*written, *trampled)
                white_left -= len(trampled)
                events.append({"type": "trample", "captured": [NAMES[c] for c in trampled]})
                captured = True
        end_reason: str | None = None
        blacks = state.blacks
        if not state.white_to_move:
            if move.path:  # the moved stone's cell replaced, the list kept in cell order
                moved = [*blacks]
                moved[moved.index(start)] = end
                moved.sort()
                blacks = tuple(moved)
            if EDGE.issuperset(blacks):
                end_reason = "escape"  # GS-8: before any flank capture
            else:
                # GS-7: a black stone's white neighbours, counted on the board read as one
                # int (a byte a cell, WHITE = 1 the only odd piece): its neighbour mask
                # keeps the low bit of each neighbour's byte.
                pieces = _from_bytes(board, "little")
                victims: list[int] = []  # a loop, not a comprehension: no frame of its own
                for i in blacks:
                    if (pieces & WHITE_NEIGHBOURS[i]).bit_count() >= 2:
                        victims.append(i)
                if victims:
                    for cell in victims:
                        board[cell] = EMPTY
                        symbols[cell] = "."
                    written = (*written, *victims)
                    black_left -= len(victims)
                    events.append({"type": "flank", "captured": [NAMES[c] for c in victims]})
                    captured = True
                    blacks = tuple([i for i in blacks if i not in victims])
                    if not blacks:
                        end_reason = "all_killed"  # GS-9
                    elif EDGE.issuperset(blacks):
                        end_reason = "escape"  # GS-9
                # no victims: the black stones are those GS-8 found not all on the edge
        new_board = bytes(board)
        white_next = not state.white_to_move
        key = new_board + (b"W" if white_next else b"B")  # `position_key`, inlined
        history: tuple[bytes, ...]
        quiet_moves: tuple[Move, ...]
        quiet_texts: list[str]
        edits: tuple[ViewEdit, ...]
        text = None if move.trample else PATH_TEXTS.get(move.path)  # `format_move`, inlined
        if text is None:
            text = format_move(move)
        if captured:
            quiet_plies, history, quiet_moves, quiet_texts = 0, (key,), (), []
            edits = ((parts[0], symbols, tuple(sorted(set(written)))),)  # more cells, maybe some twice
        else:
            quiet_plies = state.quiet_plies + 1
            # `a + (b,)`: one new tuple (`(*a, b)` builds a list first, then the tuple)
            history = state.history + (key,)  # noqa: RUF005
            quiet_moves = state.quiet_moves + (move,)  # noqa: RUF005
            known = state.quiet_texts
            if known is None:
                known = [format_move(m) for m in state.quiet_moves]
            quiet_texts = known + [text]  # noqa: RUF005
            edits = ((parts[0], symbols, written), (known, quiet_texts, ()))
        if end_reason is None:
            if quiet_plies >= QUIET_PLY_LIMIT:
                end_reason = "no_capture_limit"  # GS-11
            elif history.count(key) >= 3:
                end_reason = "repetition"  # GS-11
        # `GiantslayerState(...)` with every field given, `acting` included, through
        # `_Blank` (the same state: tests/engines/giantslayer/test_giantslayer_fast_paths.py).
        after: Any = _new(_Blank)
        after.rounds = state.rounds
        after.round_index = round_index = state.round_index
        after.board = new_board
        after.white_to_move = white_next
        after.quiet_plies = quiet_plies
        after.history = history
        after.quiet_moves = quiet_moves
        after.results = state.results
        after.last_move = text
        after.quiet_texts = quiet_texts
        after.acting = _ACTING[round_index % 2 ^ (not white_next)]
        after.view_parts = (symbols, black_left, white_left, parts[3], parts[4])
        after.blacks = blacks
        after.edits = edits
        made = state.view_made
        after.view_made = None
        after.view_from = None if made is None else (made, COUNTED_KEYS if captured else MOVED_KEYS)
        _become(after, "__class__", GiantslayerState)
        if end_reason is not None:
            after = self._end_round(after, end_reason, events)
        # `Transition(after, tuple(events))` without its __init__'s frame (a plain class
        # with slots: the same object, tests/engines/giantslayer/test_giantslayer_fast_paths.py)
        transition: Transition[GiantslayerState] = _new(Transition)
        transition.state = after
        transition.events = tuple(events)
        return transition

    def _end_round(self, state: GiantslayerState, reason: str, events: list[Event]) -> GiantslayerState:
        """GS-10/GS-11 scoring, then the next round with sides switched (GS-13)."""
        symbols, black_left, white_left = state.view_parts[:3]
        white_points = STONES_PER_SIDE[BLACK] - black_left
        black_points = black_left if reason == "escape" else 0
        result = RoundResult(state.round_index % 2, white_points, black_points, reason)
        results = (*state.results, result)
        events.append({"type": "round_end", "round": state.round_index + 1, **result.to_data()})
        if len(results) == state.rounds:
            listed, totals = _results_parts(results)
            events.append({"type": "match_end", "totals": list(totals)})
            # `replace(state, results=results)`: nobody to act, the view's results lists new
            return _made(state.rounds, state.round_index, state.board, state.white_to_move, state.quiet_plies,
                         state.history, state.quiet_moves, results, state.last_move, state.quiet_texts,
                         (symbols, black_left, white_left, listed, totals), state.blacks, state.edits)
        nxt = new_round(state.rounds, state.round_index + 1, results, state.last_move)
        events.append({"type": "round_start", "round": nxt.round_index + 1, "white": nxt.round_index % 2})
        return nxt

    # -- outcome and views --------------------------------------------------------

    def outcome(self, state: GiantslayerState) -> Outcome | None:
        if len(state.results) != state.rounds:  # `finished`, inlined (asked after every move)
            return None
        totals = state.totals()
        winners = winners_by_score(totals)
        if len(winners) == 1:
            detail = f"seat {winners[0]} wins {max(totals)}-{min(totals)} over {state.rounds} round(s)"
        else:
            detail = f"drawn {totals[0]}-{totals[1]} over {state.rounds} round(s)"
        return Outcome(
            scores=(float(totals[0]), float(totals[1])),
            winners=winners,
            reason="points",
            detail=detail,
            extra={"rounds": [r.to_data() for r in state.results]},
        )

    def state_from_view(self, view: View) -> GiantslayerState:
        try:
            board = bytes(SYMBOLS.index(s) for s in view["board"])
            white_to_move = view["to_move"] != "black"
            quiet_moves = tuple(parse_move(m) for m in view["quiet_moves"])
            results = tuple(RoundResult(**r) for r in view["results"])
            history = _rebuild_history(board, white_to_move, quiet_moves)
            return GiantslayerState(
                rounds=int(view["rounds"]),
                round_index=int(view["round"]) - 1,
                board=board,
                white_to_move=white_to_move,
                quiet_plies=int(view["quiet_plies"]),
                history=history,
                quiet_moves=quiet_moves,
                results=results,
                last_move=view.get("last_move"),
            )
        except (KeyError, ValueError, TypeError, NotationError) as exc:
            raise BadSnapshotError(f"not a Giantslayer view: {exc}") from exc

    # -- notation and persistence -------------------------------------------------

    def parse_action(self, state: GiantslayerState, seat: Seat, text: str) -> Move:
        return parse_move(text)

    def format_action(self, state: GiantslayerState, action: Move) -> str:
        return format_move(action)

    def snapshot(self, state: GiantslayerState) -> dict[str, Any]:
        data = {"game": "giantslayer", "schema": 1, "players": 2, **self.view(state, None)}
        del data["cells"]  # (of the copy: the view is kept)
        return data

    def restore(self, data: Mapping[str, Any]) -> GiantslayerState:
        if data.get("game") != "giantslayer" or data.get("schema") != 1:
            raise BadSnapshotError("not a Giantslayer snapshot (schema 1)")
        return self.state_from_view(dict(data))


def _rebuild_history(
    board: bytes, white_to_move: bool, quiet_moves: Iterable[Move]
) -> tuple[bytes, ...]:
    """Undo the quiet moves since the last capture to recover the repetition history.

    Quiet moves are slides, steps and passes, all reversible, so the positions since
    the last capture follow from the current board alone.
    """
    keys = [position_key(board, white_to_move)]
    work = bytearray(board)
    side = white_to_move
    for move in reversed(tuple(quiet_moves)):
        side = not side
        if move.path:
            start, end = move.path
            work[start], work[end] = work[end], EMPTY
        keys.append(position_key(bytes(work), side))
    return tuple(reversed(keys))
