"""Giantslayer writes its view's diff itself (`Engine.view_ops`): the room sends those
ops instead of diffing the game part, so they must be the diff's, op for op, on every
move of many random matches (shared/specs/giantslayer.md: slides and steps GS-5/GS-6,
trample chains GS-6, flank captures GS-7, forced passes GS-12, the quiet moves GS-11,
a round's end GS-10/GS-13)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from engines import get_engine
from engines.giantslayer import Giantslayer, GiantslayerState
from protocol import diff_compact, diff_view, key_refs, key_table
from protocol.compact import SET
from tests.engines.giantslayer.test_giantslayer import position
from tests.protocol.test_compact import exact

ENGINE: Giantslayer = get_engine("giantslayer")  # type: ignore[assignment]
REFS = key_refs(key_table(ENGINE.view_keys()))
GAME = REFS["game"]


def room_views(part: dict[str, Any], game: Any, mover: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A room's view holding `game` and its room part after a move (`_room_part`'s copy,
    only `to_act` new)."""
    after = part.copy()
    after["to_act"] = [mover]
    return after, {"room": after, "game": game, "outcome": None}


def test_written_ops_are_the_diffs_on_every_move_of_random_matches() -> None:
    kinds = {"quiet": 0, "pass": 0, "trample": 0, "flank": 0, "round": 0, "unchanged": 0}
    for seed in range(150):
        rng = random.Random(seed)
        state = ENGINE.new_game(2, {"rounds": 1 if seed % 4 == 0 else 2}, seed)
        part: dict[str, Any] = {"id": "r", "to_act": [state.mover]}
        old = {"room": part, "game": ENGINE.view(state, None), "outcome": None}  # as a room's members hold it
        while ENGINE.outcome(state) is None:
            parent, seat = state, state.mover
            text = rng.choice(ENGINE.legal_notation(state, seat))
            state = ENGINE.apply(state, seat, ENGINE.parse_action(state, seat, text)).state
            game = ENGINE.view(state, None)
            part, new = room_views(part, game, state.mover if not state.finished else seat)
            want = diff_compact(old, new, REFS)
            written = ENGINE.view_ops(state, REFS, GAME)
            if state.results is not parent.results:  # a round's (or the match's) end: the diff's
                assert written is None
                kinds["round"] += 1
            else:
                assert written is not None
                base, ops = written
                assert base is old["game"]
                assert exact([[SET, -1, REFS["to_act"], 0, state.mover], *ops], want)
                # the room's diff takes them (the room part walked as it is told)
                assert exact(diff_view(old, new, REFS, old["room"], ("to_act",), (), written), want)
                # a member whose last view holds another game map: diffed whole
                other = {**old, "game": dict(old["game"])}
                assert exact(diff_view(other, new, REFS, old["room"], ("to_act",), (), written),
                             diff_compact(other, new, REFS))
                kinds["pass" if text == "pass" else "trample" if "x" in text else
                      "flank" if game["black_left"] != base["black_left"] else "quiet"] += 1
                kinds["unchanged"] += not ops
            old = new
    assert kinds["quiet"] > 5000 and kinds["trample"] > 100 and kinds["flank"] > 100, kinds
    assert kinds["round"] > 200, kinds


def test_no_ops_without_the_last_view() -> None:
    # A state whose parent's view was never made, or made afresh (a restore, the
    # constructor): the room diffs (with the engine's edits, if any).
    state = ENGINE.new_game(2, {}, 1)
    text = ENGINE.legal_notation(state, state.mover)[0]
    moved = ENGINE.apply(state, state.mover, ENGINE.parse_action(state, state.mover, text)).state
    assert ENGINE.view_ops(moved, REFS, GAME) is None  # `state`'s view never made
    ENGINE.view(state, None)
    moved = ENGINE.apply(state, state.mover, ENGINE.parse_action(state, state.mover, text)).state
    assert ENGINE.view_ops(moved, REFS, GAME) is not None
    fresh: GiantslayerState = replace(moved)
    assert ENGINE.view_ops(fresh, REFS, GAME) is None
    assert ENGINE.view_ops(ENGINE.restore(ENGINE.snapshot(moved)), REFS, GAME) is None


def test_a_forced_pass_is_written_as_the_diff() -> None:
    # GS-12 (random matches seldom pass): nothing written on the board, the turn, the
    # quiet plies and moves and the last move as the diff finds them
    state = position(white="a5", black="b5 b6 a4")
    for text in ("pass", "b5-c5"):
        before = ENGINE.view(state, None)
        state = ENGINE.apply_text(state, state.mover, text).state
        written = ENGINE.view_ops(state, REFS, GAME)
        assert written is not None and written[0] is before
        room: dict[str, Any] = {}
        want = diff_compact({"room": room, "game": before, "outcome": None},
                            {"room": room, "game": ENGINE.view(state, None), "outcome": None}, REFS)
        assert want and exact(written[1], want)
