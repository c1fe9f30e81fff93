"""Giant's Causeway views: parts kept from the last view are exactly what a fresh build gives."""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import permutations, product
from typing import Any

import msgpack
import pytest
from causeway_position import position as picture_position

from engines import IllegalActionError, NotationError, hexgrid
from engines.causeway import CausewayState, Drop, Leap, Place, Step, format_action, views
from engines.causeway.board import DIRECTIONS
from engines.causeway.views import NO_HISTORY, VIEW_ORDER
from engines.registry import get_engine
from protocol.compact import diff_compact, key_refs, key_table
from protocol.compact_view import diff_view


def afresh(state: CausewayState) -> CausewayState:
    """The same position in maps no view has seen."""
    return replace(state, stacks=dict(state.stacks), giants=dict(state.giants), won=dict(state.won),
                   destroyed=dict(state.destroyed))


def applies(engine: Any, state: CausewayState, seat: int, action: Any) -> bool:
    """Whether `apply` accepts `action` (it refuses an illegal one with IllegalActionError)."""
    try:
        engine.apply(state, seat, action)
    except IllegalActionError:
        return False
    return True


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_views_over_games_are_those_built_afresh(rules: str) -> None:
    """A view hands back the last view's parts for the maps a move left alone (the room's
    diff skips them by identity): every view over whole games, viewed as a room does
    after each change, is exactly (msgpack bytes) the view built with nothing kept, a
    map the move did not change is the last view's very object, and an empty history
    is one shared list."""
    engine = get_engine("causeway", rules)
    rng = random.Random(13)
    kept = 0
    for seed in range(6):
        state = engine.new_game(2, {}, seed)
        last: dict[str, Any] | None = None
        while True:
            view = engine.view(state, None)  # as a room views it, after the last state's view
            assert msgpack.packb(view) == msgpack.packb(engine.view(afresh(state), None))
            assert engine.view(state, seat=0) == view  # one document for every seat
            if not state.history:  # GC-B11 / GC-S7: no earlier position to repeat
                assert view["history"] is NO_HISTORY == []  # one list, never changed
            if last is not None:
                for key in ("stacks", "giants", "won", "destroyed"):
                    if last[key] == view[key]:
                        assert last[key] is view[key], key
                        kept += 1
            last = engine.view(state, None)  # the memo as the room's sequence leaves it
            if engine.outcome(state) is not None:
                break
            seat = state.to_move
            state = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat))).state
    assert kept


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_an_action_is_judged_alike_after_the_position_was_listed_and_viewed(rules: str) -> None:
    """What listing and viewing a position keeps (cell names, the barrier frontier, the
    view's parts on the state) never changes a judgement: every listed action applies
    exactly as on the same position never listed or viewed, and actions near the listed
    ones (other targets, drops, choices, directions) are refused with the same reason."""
    engine = get_engine("causeway", rules)
    rng = random.Random(29)
    state = engine.new_game(2, {}, 0)
    checked = 0
    while engine.outcome(state) is None:
        seat = state.to_move
        listed = engine.legal_notation(state, seat)
        engine.view(state, None)
        fresh = afresh(state)
        tries = [*listed, *(t.replace("+", "/", 1) for t in listed[:5]), *(t + "+0,0" for t in listed[:5]),
                 *(t[:-1] + "9" for t in listed[:5]), "pass", "0,0^e", "destroy@0,0"]
        for text in tries:
            try:
                action = engine.parse_action(state, seat, text)
            except NotationError:
                continue
            outcomes = []
            for position in (state, fresh):
                try:
                    transition = engine.apply(position, seat, action)
                    outcomes.append(msgpack.packb([engine.view(transition.state, None), list(transition.events)]))
                except IllegalActionError as exc:
                    outcomes.append(str(exc).encode())
            assert outcomes[0] == outcomes[1], text
            checked += 1
        state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(listed))).state
    assert checked


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_apply_takes_exactly_the_listed_leaps(rules: str) -> None:
    """`apply` checks a leap without listing every leap: over random games, a leap from
    each giant in each direction with drops on any cells it passes over or lands on (any
    order, repeated, too many, with and without a barrier/spellstone choice) is accepted
    exactly when the legal list names it."""
    engine = get_engine("causeway", rules)
    rng = random.Random(41)
    tried = accepted = 0
    for seed in range(2):
        state = engine.new_game(2, {}, seed)
        while engine.outcome(state) is None:
            seat = state.to_move
            listed = set(engine.legal_notation(state, seat))
            specials = [c for c, s in state.stacks.items() if s[-1] in "WB"][:2]
            for start, (owner, _) in state.giants.items():
                if owner != seat or state.phase != "play":
                    continue
                for direction in range(6):
                    dq, dr = DIRECTIONS[direction]
                    line = [(start[0] + dq * k, start[1] + dr * k) for k in range(1, 5)]
                    for cells in [*(c for n in range(3) for c in product(line, repeat=n)), *permutations(line, 3)]:
                        for choice in [None, *specials]:
                            drops = tuple(Drop(c, choice if i == len(cells) - 1 else None) for i, c in enumerate(cells))
                            leap = Leap(start, direction, drops)
                            ok = applies(engine, state, seat, leap)
                            assert ok == (format_action(leap) in listed), format_action(leap)
                            tried += 1
                            accepted += ok
            state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(sorted(listed)))).state
    assert tried and accepted


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_apply_takes_exactly_the_listed_placements(rules: str) -> None:
    """`apply` checks a setup placement without listing them all: every piece on every
    cell near the start, at each setup ply of a few games, is accepted exactly when the
    legal list names it."""
    engine = get_engine("causeway", rules)
    rng = random.Random(43)
    tried = accepted = 0
    for seed in range(3):
        state = engine.new_game(2, {}, seed)
        while state.phase == "setup":
            seat = state.to_move
            listed = set(engine.legal_notation(state, seat))
            for piece in ("giant", "blank", "trapper", "spikey"):
                for cell in hexgrid.disk(4):
                    place = Place(piece, cell)
                    ok = applies(engine, state, seat, place)
                    assert ok == (format_action(place) in listed), format_action(place)
                    tried += 1
                    accepted += ok
            state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(sorted(listed)))).state
    assert tried and accepted


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_the_diff_told_the_stacks_edit_is_the_whole_diff(rules: str) -> None:
    """`view_edits` (the stacks' view as a move changed it: a step's laid blank, GC-B4 /
    GC-S2; a leap's drops and the towers its choices take a barrier from or turn a
    spellstone on, GC-B6 / B7, GC-S5 / S6; a setup blank, GC-B2 / GC-S1): the room's
    diff told of it gives the ops of the whole walk, op for op, on every move of random
    games viewed as a room views them (its room part unchanged here), and the edit is
    the one `next_stacks_part` made: the cells it changed, in the stacks' order."""
    engine = get_engine("causeway", rules)
    refs = key_refs(list(key_table(engine.view_keys())))
    rng = random.Random(17)
    used = added = whole = 0
    part = {"id": "r"}
    for seed in range(6):
        state = engine.new_game(2, {}, seed)
        old = {"room": part, "game": engine.view(state, None), "outcome": None}
        while engine.outcome(state) is None:
            seat = state.to_move
            state = engine.apply(state, seat, engine.parse_action(state, seat, rng.choice(
                engine.legal_notation(state, seat)))).state
            new = {"room": part, "game": engine.view(state, None), "outcome": None}
            edits = engine.view_edits(state)
            assert diff_view(old, new, refs, part, [], edits) == diff_compact(old, new, refs)
            for base, value, at in edits:
                if value is new["game"]:  # the view itself, made from the last one (the last edit)
                    assert base is old["game"] and edits[-1][1] is value
                    assert list(base) == list(value) == list(VIEW_ORDER) and list(at) == [k for k in value if k in at]
                    assert {k for k in value if value[k] is not base[k]} <= set(at)  # every entry changed named
                    whole += 1
                    continue
                assert base is old["game"]["stacks"] and value is new["game"]["stacks"]
                changed = [k for k in value if k not in base or value[k] != base[k]]
                assert set(changed) <= set(at) and list(at) == [k for k in value if k in at]
                used += 1
                added += len(value) > len(base)
            old = new
    assert used and added and whole


@pytest.mark.parametrize(("rules", "picture"), [
    ("barrier", "-1,0:@w 0,0:bb 1,0:bb 0,-1:@b 1,-1:bbW 2,-1:bbW 2,-2:bbW"),
    ("spellstone", "-1,0:@wt 0,0:bb 1,0:bb 0,-1:@bs 1,-1:bbW 2,-1:bbW 2,-2:bbW -2,0:@ws 1,1:@bt"),
])
def test_the_stacks_edit_of_a_fourth_special_names_every_cell_in_order(rules: str, picture: str) -> None:
    """GC-B7 / GC-S6: a drop completing a tower on two opponent stones with three
    barriers / spellstones out changes a cell further on, the one chosen (before or
    after the drops in the stacks' order): the edit names each changed cell once, in
    the stacks' order, and the diff told of it is the whole walk's, after every legal
    move."""
    engine = get_engine("causeway", rules)
    refs = key_refs(list(key_table(engine.view_keys())))
    state = picture_position(rules, picture)
    part = {"id": "r"}
    old = {"room": part, "game": engine.view(state, None), "outcome": None}
    several = 0
    for text in engine.legal_notation(state, 0):
        after = engine.apply_text(state, 0, text).state
        new = {"room": part, "game": engine.view(after, None), "outcome": None}
        edits = engine.view_edits(after)
        assert edits[-1][0] is old["game"] and edits[-1][1] is new["game"]  # the view itself, from the last one
        if len(edits) == 1:  # a leap dropping nothing (GC-S5): the stacks' view is the last one
            assert new["game"]["stacks"] is old["game"]["stacks"]
            continue
        (base, value, at), _ = edits
        assert base is old["game"]["stacks"] and value is new["game"]["stacks"]
        assert list(at) == [k for k in value if k in at] and len(set(at)) == len(at)
        assert diff_view(old, new, refs, part, [], edits) == diff_compact(old, new, refs)
        several += len(at) > 2
    assert several


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
def test_a_view_written_over_the_last_names_the_entries_its_move_can_change(rules: str) -> None:
    """A position's view is the last view's copy with the entries a move can change
    written over: after a step (GC-B4 / GC-S2) or a leap (GC-B5..B7 / GC-S4..S6) its
    edit names only MOVED_BY's keys for the move (the stacks, giants, supply and ply;
    a leap's towers and specials; the phase and end, the passes and the history when
    they changed), every other entry is the last view's very object, the view packs to
    the bytes of one built with nothing kept (keys in VIEW_ORDER), and the diff told of
    the edits is the whole diff; the setup pieces' view in play survives its table's
    emptying."""
    engine = get_engine("causeway", rules)
    refs = key_refs(list(key_table(engine.view_keys())))
    rng = random.Random(23)
    part = {"id": "r"}
    narrowed = ended = 0
    for seed in range(40):
        state = engine.new_game(2, {}, seed)
        old = engine.view(state, None)
        while engine.outcome(state) is None:
            seat = state.to_move
            action = engine.parse_action(state, seat, rng.choice(engine.legal_notation(state, seat)))
            after = engine.apply(state, seat, action).state
            view = engine.view(after, None)
            assert list(view) == list(VIEW_ORDER)
            assert msgpack.packb(view) == msgpack.packb(engine.view(afresh(after), None))
            *_, (base, value, at) = engine.view_edits(after)
            assert base is old and value is view
            assert {k for k in view if view[k] is not old[k]} <= set(at)
            if type(action) in (Step, Leap):
                assert at is views.MOVED_BY[
                    (type(action) is Leap) | (after.phase != state.phase or after.end != state.end) << 1
                    | (after.passes != state.passes) << 2 | (after.history != state.history) << 3]
                assert {"setup_left", "destroyed"}.isdisjoint(at)
                narrowed += 1
                ended += "phase" in at
            else:
                assert at is views.MOVED
            assert (diff_view({"room": part, "game": old, "outcome": None}, {"room": part, "game": view, "outcome": None},
                              refs, part, [], engine.view_edits(after))
                    == diff_compact({"room": part, "game": old}, {"room": part, "game": view}, refs))
            state, old = after, view
    assert narrowed > 1000 and ended
    probe: tuple[tuple[str, ...], tuple[str, ...]] = (("probe",), ())
    views._SETUPS.pop(probe, None)
    for i in range(views._PARTS_MAX - len(views._SETUPS)):  # the table full: emptied by the next new one
        views._SETUPS[((f"x{i}",), ())] = {}
    views._setup_view(probe)
    assert len(views._SETUPS) == 2 and views._setup_view(((), ())) is views.SETUP_DONE  # play's one view kept
