"""Hidden information (GI-28 … GI-30): no seat or spectator ever sees another seat's
screen, an unrevealed bid, a base owner it has not looked under, or the dice seed."""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest
from giants_builders import ENGINE, act, at_auction, at_place

from engines.giants.state import AUCTION, OVER, Bid, GameState, from_data
from engines.giants.views import SHARED_START


def hide_others(state: GameState, seat: int | None) -> GameState:
    """A state differing from `state` only in what `seat` may not see."""
    other = state.clone()
    for s, p in enumerate(other.seats):
        if s == seat:
            continue
        p.workers += 1
        p.markers += 2
        p.tablets += 3
        p.logs += 1
        p.bases += 1
        p.chief = not p.chief
        p.sorcerer = not p.sorcerer
        if other.phase == AUCTION and p.bid is not None:
            p.bid = Bid(7, 0, False) if p.bid != Bid(7, 0, False) else Bid(0, 1, True)
    known = set(other.seats[seat].looked) if seat is not None else set()
    for aid, a in other.ahu.items():
        if a.size and a.owner != seat and aid not in known:
            choices = [s for s in range(other.players) if s not in (seat, a.owner)]
            if choices:  # (2 players: the other base can only be the opponent's)
                a.owner = choices[0]
    return other


def without_commitment(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k != "seed_commitment"}


def check_no_leak(state: GameState) -> None:
    if state.phase == OVER:
        return
    to_act = ENGINE.to_act(state)
    for seat in [*range(state.players), None]:
        real = ENGINE.view(state, seat)
        changed = hide_others(state, seat)
        assert ENGINE.view(changed, seat) == real, f"seat {seat} sees hidden data"
        reseeded = state.clone()
        reseeded.seed += 1
        assert without_commitment(ENGINE.view(reseeded, seat)) == without_commitment(real)
        assert ENGINE.to_act(changed) == to_act


def walk(players: int, seed: int) -> int:
    rng = random.Random(seed)
    state = ENGINE.new_game(players, {}, seed)
    plies = 0
    while ENGINE.outcome(state) is None:
        check_no_leak(state)
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        action = rng.choice(ENGINE.legal_actions(state, seat))
        result = ENGINE.apply(state, seat, action)
        if state.phase == AUCTION:  # what the room broadcasts of a sealed bid
            assert ENGINE.public_action(state, seat, action) in ("bid", None)
        for event in result.events:
            assert "owner" not in event and "seed" not in event
            if event["type"] == "erect":
                assert "seat" not in event  # the base goes colour side down
        if state.phase == AUCTION and result.state.phase == AUCTION:
            # a bid that does not close the auction says no more than the empty bid
            assert result.events == ENGINE.apply(state, seat, Bid(0, 0, False)).events
        state = result.state
        plies += 1
    return plies


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_gi28_random_games_never_show_hidden_data(players: int) -> None:
    assert walk(players, 4242 + players) > 50


def test_gi28_a_seat_sees_its_own_screen_and_bid_only() -> None:
    state = at_auction(3)
    state, _ = act(state, 1, "bid 1 w1")
    own = ENGINE.view(state, 1)
    assert own["screen"]["markers"] == 2 and own["my_bid"] == [1, 1, False]
    other = ENGINE.view(state, 0)
    assert other["my_bid"] is None and "screens" not in other
    assert all("screen" not in s and "bid" not in s for s in other["seats"].values())
    spectator = ENGINE.view(state, None)
    assert "screen" not in spectator and "my_bid" not in spectator and "seed" not in spectator


def test_gi29_the_board_and_fronts_are_public() -> None:
    state = at_place(3)
    state, _ = act(state, 0, "place worker (5,3) logs 0")
    state, _ = act(state, 1, "tablet")
    for seat in (0, 2, None):
        view = ENGINE.view(state, seat)
        assert view["board"]["5,3"] == {"w0": [1, 0]}
        assert view["seats"]["1"]["front_markers"] == 1


def test_the_seats_views_of_one_state_share_its_public_part_only() -> None:
    """A change builds every seat's view of one state: the public part is built once and
    shared (memory kept once per room), each seat's own part is its own, and a view of
    another state in between changes nothing."""
    state = at_auction(3)
    state, _ = act(state, 2, "bid 1 w1 c")
    views = [ENGINE.view(state, seat) for seat in (0, 1, 2, None)]
    for key in ("board", "seats", "statues", "forests", "offer", "stock"):
        assert len({id(v[key]) for v in views}) == 1, key
    assert views[0]["screen"] is not views[1]["screen"]
    assert [v["my_bid"] for v in views[:3]] == [None, None, [1, 1, True]]
    other, _ = act(state, 0, "bid 0 w1")
    assert ENGINE.view(other, 1)["seats"]["0"]["bid_made"] is True
    again = [ENGINE.view(state, seat) for seat in (0, 1, 2, None)]
    # Equal to views of a copy (another object: built afresh), and to the first ones.
    assert again == views == [ENGINE.view(state.clone(), seat) for seat in (0, 1, 2, None)]


@pytest.mark.parametrize("players", [2, 3, 5])
def test_views_over_a_game_are_those_built_afresh(players: int) -> None:
    """Views hand back the unchanged parts of the last viewed state's (the room's diff
    skips them by identity): every seat's and a spectator's view of every state of a
    game, viewed as a room does after each change, is exactly (msgpack bytes) the view
    of the same state restored from its snapshot (nothing kept), and a seat's own parts
    are never another seat's objects."""
    rng = random.Random(77 + players)
    state = ENGINE.new_game(players, {}, 31_000 + players)
    seats: list[int | None] = [*range(players), None]
    plies = 0
    while True:
        views = {seat: ENGINE.view(state, seat) for seat in seats}
        restored = from_data(ENGINE.snapshot(state))  # (not `restore`: nothing shared, views.share_parts)
        for seat in seats:
            afresh = ENGINE.view(restored, seat)
            assert msgpack.packb(views[seat]) == msgpack.packb(afresh), (state.turn, state.phase, seat)
        if state.phase != OVER:
            for key in ("ahu", "screen", "my_bid"):
                ids = [id(views[s][key]) for s in seats if views[s].get(key) is not None]
                assert len(ids) == len(set(ids)), key
        if ENGINE.outcome(state) is not None:
            break
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        state = ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat))).state
        plies += 1
    assert plies > 50


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}/{k}"))
        return out or {prefix: {}}
    return {prefix: data}


def test_views_are_msgpack_plain_and_diff_friendly() -> None:
    state = at_place(4)
    before = flatten(ENGINE.view(state, 2))
    state, _ = act(state, 0, "place worker (5,3) logs 0")
    after = flatten(ENGINE.view(state, 2))
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert len(changed) <= 4, changed  # the new piece, the current seat, to_act
    msgpack.unpackb(msgpack.packb(ENGINE.view(state, 2)), raw=False)


def test_snapshot_round_trips_hidden_parts_exactly() -> None:
    state = at_auction(3)
    state, _ = act(state, 2, "bid 1 w1 c")
    state.ahu["A07"].size, state.ahu["A07"].owner = 2, 1
    state.seats[0].looked.append("A07")
    data = msgpack.unpackb(msgpack.packb(ENGINE.snapshot(state)), raw=False)
    restored = ENGINE.restore(data)
    assert restored == state


VIEW_ORDER = ["game", "players", "turn", "phase", "first", "seed_commitment", "dice", "offer", "stock",
              "tablets", "headdresses", "neutrals", "order", "forests", "board", "statues", "seats", "you", "ahu"]


@pytest.mark.parametrize("players", [2, 4])
def test_each_view_is_its_viewers_own_map_in_one_key_order(players: int) -> None:
    """GI-28: the views of one state are built from what every seat sees, each its own map
    with the viewer's `you`, Ahu owners and screen (a view built for another seat later
    leaves it as it was); every view lists its keys in one order (the diff walks maps
    with the same keys in the same order by identity), the viewer's own ones last and
    those before them the same objects in every view."""
    rng = random.Random(5 + players)
    state = ENGINE.new_game(players, {}, 900 + players)
    viewers: list[int | None] = [None, *range(players)]
    while ENGINE.outcome(state) is None:
        views = {seat: ENGINE.view(state, seat) for seat in viewers}
        for seat, view in views.items():
            own = ["screen", "my_bid"] if seat is not None else []
            assert list(view) == VIEW_ORDER + own
            assert view["you"] == seat and view["turn"] == state.turn and view["phase"] == state.phase
            afresh = ENGINE.view(ENGINE.restore(ENGINE.snapshot(state)), seat)
            assert msgpack.packb(view) == msgpack.packb(afresh)
        assert len({id(v) for v in views.values()}) == len(viewers)
        # Every entry before the viewer's own (`you` and after) is one object in all the
        # views of the state: the room diffs that start once (server.views).
        assert VIEW_ORDER[SHARED_START] == "you"
        for key in VIEW_ORDER[:SHARED_START]:
            assert len({id(view[key]) for view in views.values()}) == 1, key
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        state = ENGINE.apply_text(state, seat, rng.choice(ENGINE.legal_notation(state, seat))).state
    over = {seat: ENGINE.view(state, seat) for seat in viewers}
    assert list(over[0]) == [*VIEW_ORDER, "seed", "screens"] and over[0]["you"] == 0
    for key in VIEW_ORDER[:SHARED_START]:
        assert len({id(view[key]) for view in over.values()}) == 1, key


@pytest.mark.parametrize("players", [2, 4])
def test_a_seats_public_part_is_kept_exactly_while_it_is_unchanged(players: int) -> None:
    """GI-29: each seat's public part (points, front, reserves, passed, the bid once
    revealed) in the views of consecutive states is the ancestor's very object exactly
    when its content is unchanged (the room's diff passes it by identity), and the
    `seats` map itself is the ancestor's when no seat's changed; the content is the
    part built afresh (`_sources`' loop and `_seats`, tests above for the whole view)."""
    rng = random.Random(5 + players)
    state = ENGINE.new_game(players, {}, 41_000 + players)
    last = ENGINE.view(state, None)["seats"]
    kept = rebuilt = 0
    while ENGINE.outcome(state) is None:
        seat = rng.choice(sorted(ENGINE.to_act(state)))
        state = ENGINE.apply(state, seat, rng.choice(ENGINE.legal_actions(state, seat))).state
        if state.phase == OVER:
            break
        seats = ENGINE.view(state, None)["seats"]
        afresh = ENGINE.view(ENGINE.restore(ENGINE.snapshot(state)), None)["seats"]
        assert msgpack.packb(seats) == msgpack.packb(afresh)
        same = [msgpack.packb(last[key]) == msgpack.packb(seats[key]) for key in seats]
        for key, equal in zip(seats, same, strict=True):
            assert (seats[key] is last[key]) == equal, (state.turn, state.phase, key)
            kept += equal
            rebuilt += not equal
        assert (seats is last) == all(same)
        last = seats
    assert kept > 100 and rebuilt > 20
