"""Tara's view as the room's diff is told of it (`Tara.view_edits`, engines/tara/views.py)."""

from __future__ import annotations

import random
from typing import Any

from engines import get_engine
from engines.tara import NAMES
from engines.tara.views import build_view
from protocol.compact import diff_compact, key_refs, key_table
from protocol.compact_view import diff_view

ENGINE = get_engine("tara")


def test_the_diff_told_the_views_edits_is_the_whole_diff() -> None:
    """TA-4/TA-5/TA-6/TA-8/TA-7/TA-10: the view a move makes from the last one is told to
    the room's diff as edits (the hills map at the move's hill, TA-11's name; the
    territory and, when the move used bridges, the bridges and what is left, at the
    indexes it changed; the view at the keys a move may change), and the
    diff told of them gives the whole walk's ops, op for op, on every move of random
    matches viewed as a room views them (OUT, game ends and the next game's start
    included: no edits there). Every entry the move changed is named, in the view's
    order."""
    refs = key_refs(list(key_table(ENGINE.view_keys())))
    rng = random.Random(23)
    part = {"id": "r"}
    told = bridged = unbridged = untold = 0
    for seed in range(40):
        state = ENGINE.new_game(2, {"games": 1 + seed % 2}, seed)
        old: dict[str, Any] = {"room": part, "game": ENGINE.view(state, None), "outcome": None}
        while ENGINE.outcome(state) is None:
            seat = state.mover
            move = ENGINE.parse_action(state, seat, rng.choice(ENGINE.legal_notation(state, seat)))
            state = ENGINE.apply(state, seat, move).state
            view = ENGINE.view(state, None)
            new = {"room": part, "game": view, "outcome": ENGINE.outcome(state)}
            edits = ENGINE.view_edits(state)
            assert diff_view(old, new, refs, part, [], edits) == diff_compact(old, new, refs)
            assert view == build_view(state)
            if not edits:
                untold += 1
                old = new
                continue
            (hills_was, hills, at), *lists, (was, whole, keys) = edits
            assert was is old["game"] and whole is view and hills_was is was["hills"] and hills is view["hills"]
            assert at == (NAMES[move.hill],)
            assert [k for k in hills if hills[k] != hills_was[k]] == [NAMES[move.hill]]
            assert list(whole) == list(was) and list(keys) == [k for k in whole if k in keys]
            assert {k for k in whole if whole[k] is not was[k]} <= set(keys)
            # the two-seat lists a move rewrites, each at the indexes it changed (TA-6/TA-8)
            named = [k for k in keys if k in ("bridges", "bridges_left", "territory")]
            assert len(lists) == len(named)
            for key, (base, value, indexes) in zip(named, lists, strict=True):
                assert base is was[key] and value is whole[key] and len(base) == len(value) == 2
                assert [i for i in (0, 1) if value[i] != base[i]] == list(indexes)
            if "bridges" in keys:
                bridged += 1
            else:
                assert whole["bridges"] is was["bridges"]
                unbridged += 1
            told += 1
            old = new
    assert told and bridged and unbridged and untold
