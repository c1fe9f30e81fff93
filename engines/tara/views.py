"""Tara's view: one document for every seat and spectator (perfect information).

The board is keyed by hill name so a move changes one entry. A state's view is
built once and kept on it (`StateMemo.view`); a state `apply` made is handed its
parent's view (or the last one an ancestor had), and builds its own from it: the
hills map is that view's copied with the changed hills rewritten, and every other
part equal to that view's is that very object, which the room's diff passes by
identity (`protocol.patch`). Views are read, never changed.
"""

from __future__ import annotations

from typing import Any

from engines.tara.board import (
    BLACK,
    BRIDGES,
    COLOUR_NAMES,
    HILLS,
    NAMES,
    SYMBOLS,
    WHITE,
    links,
)
from engines.tara.state import StateMemo, TaraState, captures_of, memo_of


def game_view(state: TaraState) -> dict[str, Any]:
    """`state`'s view, built on first use and kept with it."""
    memo = state.memo
    if memo is None:
        memo = memo_of(state)
    view = memo.view
    if view is None:
        step, last = memo.step, memo.last
        if step is not None and last is not None:
            view = memo.view = view_after(state, memo, last[1], step)
        else:
            view = memo.view = build_view(state, last, step)
        memo.last = memo.step = None  # the ancestor's view is not needed any more
    return view


# The view's keys `view_after` may set (bridges only when the move used some), in its order
_MOVE_KEYS = ("hills", "to_move", "seat_to_move", "must_capture", "turns", "territory", "last_move")
_MOVE_KEYS_USED = ("hills", "to_move", "seat_to_move", "must_capture", "turns", "bridges", "bridges_left",
                   "territory", "last_move")
# The indexes of a two-seat list a move changes: the mover's, or both (a capture's territory)
_AT = ((0,), (1,))
_BOTH = (0, 1)


def view_after(state: TaraState, memo: StateMemo, was: dict[str, Any],
               step: tuple[int, int, int, int, bool]) -> dict[str, Any]:
    """`build_view(state, (parent's board, was), step)` for a state `apply` made that
    goes on with the same game (the only states it hands a `step`): `was` is the
    parent's view. The same game, match and OUT (none: a move after OUT ends the game,
    TA-7), so every part but the moving ones is `was`'s, key order included (a copy).
    Sets `memo.edits`: how the view was made from `was`, for the room's diff
    (`Engine.view_edits`).
    """
    hill, colour, used, seat, capture = step
    view = was.copy()
    name = NAMES[hill]
    hills_was = was["hills"]
    hills = view["hills"] = hills_was.copy()
    hills[name] = SYMBOLS[colour]
    view["to_move"] = COLOUR_NAMES[state.to_move]
    view["seat_to_move"] = state.mover
    captures = memo.sieges[state.to_move]  # type: ignore[index]  # (`apply` hands them down)
    if captures:  # TA-4 (kept as `was`'s when equal: the diff passes it by identity)
        must = [NAMES[i] for i in captures]
        if must != was["must_capture"]:
            view["must_capture"] = must
    elif was["must_capture"]:
        view["must_capture"] = []
    view["turns"] = state.turns
    # TA-8: a build adds a hill to the mover's territory, a capture takes it from the other
    land_was = was["territory"]
    lost = 1 if capture else 0
    land = view["territory"] = ([land_was[0] + 1, land_was[1] - lost] if seat == 0
                                else [land_was[0] - lost, land_was[1] + 1])
    view["last_move"] = state.last_move
    # The edits: the hills map at the move's hill, the two-seat lists at the indexes the
    # move changed (the mover's, or both: a capture's territory), the view at the keys a
    # move may change, in the view's order
    at = _AT[seat]
    if used:  # TA-6: the mover's saturated count grows by what `place` counted
        bridges_was = was["bridges"]
        bridges = view["bridges"] = ([bridges_was[0] + used, bridges_was[1]] if seat == 0
                                     else [bridges_was[0], bridges_was[1] + used])
        left = view["bridges_left"] = [BRIDGES - bridges[0], BRIDGES - bridges[1]]
        memo.edits = ((hills_was, hills, (name,)), (bridges_was, bridges, at), (was["bridges_left"], left, at),
                      (land_was, land, _BOTH if capture else at), (was, view, _MOVE_KEYS_USED))
    else:
        memo.edits = ((hills_was, hills, (name,)), (land_was, land, _BOTH if capture else at), (was, view, _MOVE_KEYS))
    return view


def _colours(white: int) -> list[str]:
    return ["white", "black"] if white == 0 else ["black", "white"]


def build_view(
    state: TaraState,
    last: tuple[bytes, dict[str, Any]] | None = None,
    step: tuple[int, int, int, int, bool] | None = None,
) -> dict[str, Any]:
    """The view, from nothing or from `last`: (an earlier board of the same game,
    the view of a state holding it), and `step` if that is the parent's (`StateMemo`:
    the move's hill, colour and the bridges it used). The result is equal either way."""
    board = state.board
    white = state.white_seat
    playing = len(state.results) != state.games
    if step is not None and last is not None:
        # TA-6: a move adds `used` to its colour's saturated count (`place`) and nothing
        # to the other's (a captured ringfort was isolated, so it took no link away).
        bridges = last[1]["bridges"]
        if step[2]:
            bridges = bridges.copy()
            bridges[white if step[1] == WHITE else 1 - white] += step[2]
    else:
        wb, bb = links(board, WHITE), links(board, BLACK)
        if wb > BRIDGES or bb > BRIDGES:  # TA-6: the count saturates at the supply
            wb, bb = min(wb, BRIDGES), min(bb, BRIDGES)
        bridges = [wb, bb] if white == 0 else [bb, wb]
    wl, bl = board.count(WHITE), board.count(BLACK)
    land = [wl, bl] if white == 0 else [bl, wl]
    captures = captures_of(state) if playing else None
    must = [NAMES[i] for i in captures] if captures else []
    if last is None:
        hills = {name: SYMBOLS[cell] for name, cell in zip(NAMES, board, strict=True)}
        left = [BRIDGES - b for b in bridges]
        results = [r.to_data() for r in state.results]
        totals = list(state.totals())
        colours = _colours(white) if playing else None
    else:
        board0, was = last
        hills = was["hills"]
        if step is not None:  # the parent's board: the move's hill alone changed
            hills = hills.copy()
            hills[NAMES[step[0]]] = SYMBOLS[board[step[0]]]
        elif board != board0:
            hills = hills.copy()
            # The hills whose bytes differ, highest bit first (lowest index first).
            changed = int.from_bytes(board, "big") ^ int.from_bytes(board0, "big")
            while changed:
                byte = (changed.bit_length() - 1) >> 3
                i = HILLS - 1 - byte
                hills[NAMES[i]] = SYMBOLS[board[i]]
                changed &= (1 << (byte << 3)) - 1
        if bridges == was["bridges"]:
            bridges, left = was["bridges"], was["bridges_left"]
        else:
            left = [BRIDGES - b for b in bridges]
        if land == was["territory"]:
            land = was["territory"]
        if playing and was["starter"] == white:  # the same seat plays white
            colours = was["colours"]
        else:
            colours = _colours(white) if playing else None
        if must == was["must_capture"]:
            must = was["must_capture"]
        if len(was["results"]) == len(state.results):  # results only grow within a match
            results, totals = was["results"], was["totals"]
        else:
            results = [r.to_data() for r in state.results]
            totals = list(state.totals())
    return {
        "hills": hills,
        "game": min(state.game_index + 1, state.games),
        "games": state.games,
        "lots": state.lots,
        "starter": white if playing else None,
        "colours": colours,
        "to_move": COLOUR_NAMES[state.to_move] if playing else None,
        "seat_to_move": (white if state.to_move == WHITE else 1 - white) if playing else None,
        "must_capture": must,
        "out": COLOUR_NAMES[state.out] or None,
        "turns": state.turns,
        "bridges": bridges,
        "bridges_left": left,
        "territory": land,
        "results": results,
        "totals": totals,
        "last_move": state.last_move,
    }
