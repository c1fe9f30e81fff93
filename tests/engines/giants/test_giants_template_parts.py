"""New and restored states start from the view parts of a template (the seed-0 new
game, `views.share_parts`): the parts equal to the template's are its very objects
(memory per new room), and every view is still exactly, msgpack byte for byte, the one
built from nothing, hidden parts included, before and after any number of moves."""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest
from giants_builders import ENGINE

from engines.giants import engine as giants_engine
from engines.giants import views
from engines.giants.state import OVER, GameState, from_data, to_data


def _afresh(state: GameState) -> GameState:
    """The same position with nothing shared: the state module's own restore, no template."""
    return from_data(to_data(state))


def _views(state: GameState) -> dict[int | None, bytes]:
    return {seat: msgpack.packb(ENGINE.view(state, seat)) for seat in (*range(state.players), None)}


def _template_bytes(players: int) -> dict[int | None, bytes]:
    return _views(giants_engine._template(players))


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_new_games_hold_the_templates_parts(players: int) -> None:
    """Two new games of other seeds: the parts every new game has alike (forests, board,
    statues, the seats' public parts, the claim order, each seat's own Ahu, screen and
    bid) are the template's objects, a seat's own parts the same seat's only; the seed's
    commitment is each game's own."""
    template = giants_engine._template(players)
    memo = template.view_memo
    assert isinstance(memo, views._Memo)
    games = [ENGINE.new_game(players, {}, seed) for seed in (101, 202)]
    for state in games:
        got = [ENGINE.view(state, seat) for seat in (*range(players), None)]
        for key in ("forests", "board", "statues", "seats", "order"):
            assert all(view[key] is memo.public[key] for view in got), key
        for seat, view in zip((*range(players), None), got, strict=True):
            ahu, screen, bid = memo.own[seat]
            assert view["ahu"] is ahu
            if seat is not None:
                assert view["screen"] is screen and view["my_bid"] is bid
                assert all(view["screen"] is not memo.own[other][1] for other in range(players) if other != seat)
        assert got[0]["seed_commitment"] != memo.public["seed_commitment"]
    assert games[0].view_memo.public["seed_commitment"] != games[1].view_memo.public["seed_commitment"]  # type: ignore[attr-defined]


def test_new_games_with_equal_offers_and_stocks_hold_one_object_each() -> None:
    """The offer and the stock follow from the turn-1 dice: new games (and restored new
    games) with equal ones hold one object each, and their views say each game's own."""
    seen: dict[str, dict[tuple[int, ...], Any]] = {"offer": {}, "stock": {}}
    for seed in range(60):
        state = ENGINE.new_game(2, {}, seed)
        for game in (state, ENGINE.restore(ENGINE.snapshot(state))):
            view = ENGINE.view(game, 0)
            assert [view["offer"][k] for k in "123"] == state.offer
            assert [view["stock"][k] for k in "123"] == state.stock
            for key in ("offer", "stock"):
                assert seen[key].setdefault(tuple(getattr(state, key)), view[key]) is view[key], (seed, key)
    assert len(seen["offer"]) < 60


@pytest.mark.parametrize(("players", "seed"), [(2, 3), (2, 11), (3, 5), (4, 9), (5, 1)])
def test_views_are_those_built_from_nothing(players: int, seed: int) -> None:
    """Every seat's and a spectator's view of every state of a random game started with
    `new_game`, and of the same state restored (`restore`, which starts from the
    template too), and of states played on from a restored one, is byte for byte the
    view of that position built with nothing shared; the template's own views never
    change (nothing writes into a shared part)."""
    before = _template_bytes(players)
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, seed)
    restored_line: GameState | None = None
    plies = 0
    while True:
        expected = _views(_afresh(state))
        assert _views(state) == expected, (state.turn, state.phase)
        restored = ENGINE.restore(ENGINE.snapshot(state))
        assert _views(restored) == expected
        if restored_line is None and plies >= 40:
            restored_line = restored  # from here on, a second line played from a restored state
        if restored_line is not None:
            assert _views(restored_line) == expected
        if ENGINE.outcome(state) is not None:
            break
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        action = rng.choice(ENGINE.legal_notation(state, seat))
        state = ENGINE.apply_text(state, seat, action).state
        if restored_line is not None:
            restored_line = ENGINE.apply_text(restored_line, seat, action).state
        plies += 1
    assert state.phase == OVER and plies > 50
    assert _template_bytes(players) == before


def test_a_restored_state_of_a_seat_count_out_of_range_is_not_shared() -> None:
    """`restore` shares only with a template of the state's own seat count (2-5 seats):
    a snapshot naming any other is restored as it says, with nothing shared."""
    data: dict[str, Any] = to_data(ENGINE.new_game(2, {}, 7))
    data["players"] = 6
    data["seats"] = data["seats"] * 3
    data["passed"] = [False] * 6
    state = ENGINE.restore(data)
    assert state.players == 6 and state.view_memo is None
