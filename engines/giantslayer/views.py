"""Giantslayer's view: one document for every seat and spectator (perfect information),
made once a state; what the room's diff is told of it (`Engine.view_edits`) and the
diff itself, which the engine writes for the room (`Engine.view_ops`). The engine's
view methods, a mixin of `Giantslayer`.

A move within a round makes its view as the last view's copy with the entries it
changed new (`_play` names them: the state's `view_from`), so every other entry is that
view's very object; the same knowledge writes the diff's ops without walking the views.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engines.base import OP_PUSH, OP_SET, OP_TRUNC, Seat, View, ViewEdit
from engines.giantslayer.board import CELL_NAMES, format_move
from engines.giantslayer.state import GiantslayerState

# The keys of the view entries a move changes within a round (`_play`, `view_edits`), in
# the view's order: a quiet move's, and one that captured (the stones left too).
MOVED_KEYS = ("board", "to_move", "quiet_plies", "quiet_moves", "last_move")
COUNTED_KEYS = ("board", "to_move", "black_left", "white_left", "quiet_plies", "quiet_moves", "last_move")
# Every map key of a view (protocol 2's key table), those a move changes first.
VIEW_KEYS = ("board", "to_move", "quiet_plies", "quiet_moves", "last_move", "white_left", "black_left",
             "round", "totals", "results", "white", "black", "rounds", "cells", "reason", "white_points",
             "black_points")


class GiantslayerViews:
    """The Giantslayer engine's view methods (`engines.base.Engine`'s)."""

    # The engine writes its view's diff (`view_ops`) for a move within a round
    writes_view_ops: ClassVar[bool] = True

    def view_keys(self) -> tuple[str, ...]:
        return VIEW_KEYS

    def view(self, state: GiantslayerState, seat: Seat | None) -> View:
        # Perfect information: every seat and spectator sees the same document, made once
        # a state and kept with it (`view_made`). The state's properties are inlined (a
        # view is made after every move).
        view = state.view_made
        if view is not None:
            return view
        symbols, black_left, white_left, results, totals = state.view_parts
        made = state.view_from
        if made is not None:  # the last view's copy, the entries `_play` changed new
            last, keys = made
            view = last.copy()
            view["board"] = symbols
            view["to_move"] = "white" if state.white_to_move else "black"  # (not finished: `_play` made it)
            if keys is COUNTED_KEYS:
                view["black_left"], view["white_left"] = black_left, white_left
            view["quiet_plies"] = state.quiet_plies
            view["quiet_moves"] = state.quiet_texts
            view["last_move"] = state.last_move
            object.__setattr__(state, "view_made", view)
            return view
        white = state.round_index % 2
        texts = state.quiet_texts
        view = {
            "cells": CELL_NAMES,
            "board": symbols,
            "round": state.round_index + 1,
            "rounds": state.rounds,
            "white": white,
            "black": 1 - white,
            "to_move": None if len(results) == state.rounds else ("white" if state.white_to_move else "black"),
            "black_left": black_left,
            "white_left": white_left,
            "quiet_plies": state.quiet_plies,
            "quiet_moves": texts if texts is not None else [format_move(m) for m in state.quiet_moves],
            "results": results,
            "totals": totals,
            "last_move": state.last_move,
        }
        object.__setattr__(state, "view_made", view)
        return view

    def view_edits(self, state: GiantslayerState) -> tuple[ViewEdit, ...]:
        # The board, as `_play` wrote it (a new round's or a restored state's: none), and
        # the view itself when it was made from the last one's (`view`)
        made, view = state.view_from, state.view_made
        if made is None or view is None:
            return state.edits
        return (*state.edits, (made[0], view, made[1]))

    def view_ops(self, state: GiantslayerState, refs: Mapping[str, int],
                 key: Any) -> tuple[View, list[list[Any]]] | None:
        # What the diff finds at the entries `_play` changed (`view_from`'s keys; every
        # other entry is the last view's very object): the board at the cells written,
        # the scalars where they differ, a quiet move's text pushed or a capture's
        # emptied list cut. A round's first position, the match's last or a restored
        # state (no `view_from`): the room diffs.
        made = state.view_from
        if made is None:
            return None
        base, keys = made
        view = state.view_made
        if view is None:
            view = self.view(state, None)
        ops: list[list[Any]] = []
        old, new = base["board"], view["board"]
        ref = refs["board"]
        for i in state.edits[0][2]:  # the cells written, ascending (every other one old's)
            v = new[i]
            if v != old[i]:  # one-character strs
                ops.append([OP_SET, key, ref, i, v])
        if len(ops) >= 4 and 2 * len(ops) >= len(new):
            return None  # the diff would weigh one `set` of the whole board
        # The view's own entries: at most 6 of its 14 set, pushed to or cut, never the
        # half from which the diff weighs one `set` of the whole view. The turn passes
        # on every move within a round.
        ops.append([OP_SET, key, refs["to_move"], view["to_move"]])
        if keys is COUNTED_KEYS:
            v = view["black_left"]
            if v != base["black_left"]:  # ints
                ops.append([OP_SET, key, refs["black_left"], v])
            v = view["white_left"]
            if v != base["white_left"]:
                ops.append([OP_SET, key, refs["white_left"], v])
        v = view["quiet_plies"]
        if v != base["quiet_plies"]:
            ops.append([OP_SET, key, refs["quiet_plies"], v])
        texts = view["quiet_moves"]
        if texts:  # a quiet move: the last list's texts (or equal ones) and its own pushed
            ops.append([OP_PUSH, key, refs["quiet_moves"], texts[-1]])
        elif base["quiet_moves"]:  # a capture: the list emptied
            ops.append([OP_TRUNC, key, refs["quiet_moves"], 0])
        v, w = view["last_move"], base["last_move"]
        if type(w) is not type(v) or w != v:  # (None before a round's first move)
            ops.append([OP_SET, key, refs["last_move"], v])
        return base, ops
