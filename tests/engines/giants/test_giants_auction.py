"""Phases 1-2: Moai draw, sealed auction, choice order, claims (GI-7 … GI-11)."""

from __future__ import annotations

import pytest
from giants_builders import ENGINE, act, at_auction, at_place, fresh, legal_texts

from engines import IllegalActionError
from engines.giants import dice
from engines.giants.actions import parse_action
from engines.giants.state import AUCTION, CLAIM, PLACE, Bid, GameState


def test_gi7_first_turn_offer_comes_from_the_seeded_dice() -> None:
    state = ENGINE.new_game(4, {}, 2024)
    faces = dice.roll(2024, 1, 4)
    assert state.faces == faces
    sizes = dice.moai_sizes(faces, 1)
    assert sum(state.offer) == len(sizes) and state.offer[2] == 0  # no size 3 in turn 1
    assert state.first == dice.first_player(2024, 4)


def test_gi8_every_seat_acts_and_may_replace_until_the_last_bid() -> None:
    state = at_auction(3)
    assert ENGINE.to_act(state) == frozenset({0, 1, 2})
    state, events = act(state, 0, "bid 1 w1")
    assert events == ({"type": "bid_made", "seat": 0},)
    assert ENGINE.to_act(state) == frozenset({0, 1, 2})
    state, events = act(state, 0, "bid 0 c")  # replacement: invisible to the others
    assert events == ()
    assert state.seats[0].bid == Bid(0, 0, True)
    state, _ = act(state, 1, "bid 0")
    state, events = act(state, 2, "bid 2")
    assert state.phase != AUCTION
    reveal = next(e for e in events if e["type"] == "bids_revealed")
    assert reveal["bids"]["0"] == [0, 0, True]


def test_gi8_a_bid_beyond_the_screen_is_illegal() -> None:
    state = at_auction(3)
    with pytest.raises(IllegalActionError):
        act(state, 0, "bid 5")
    with pytest.raises(IllegalActionError):
        act(state, 0, "bid 0 w4")


def test_gi8_others_views_do_not_depend_on_a_sealed_bid() -> None:
    base = at_auction(4)
    views = []
    for text in ("bid 0", "bid 2 w1 c", "bid 1"):
        state, _ = act(base, 2, text)
        views.append([ENGINE.view(state, s) for s in (0, 1, 3, None)])
    assert views[0] == views[1] == views[2]
    state, _ = act(base, 2, "bid 2 w1 c")
    assert ENGINE.view(state, 2)["my_bid"] == [2, 1, True]
    assert ENGINE.view(state, 0)["seats"]["2"]["bid_made"] is True


def test_gi8_default_action_is_the_empty_bid_and_keeps_a_real_one() -> None:
    state = at_auction(3)
    assert ENGINE.default_action(state, 1) == Bid(0, 0, False)
    state, _ = act(state, 0, "bid 1 w1")
    assert ENGINE.default_action(state, 0) == Bid(1, 1, False)
    assert ENGINE.waiting_for(state) == frozenset({1, 2})  # deadlines apply to these
    assert ENGINE.to_act(state) == frozenset({0, 1, 2})  # seat 0 may still replace
    for seat in sorted(ENGINE.waiting_for(state)):
        state = ENGINE.apply(state, seat, ENGINE.default_action(state, seat)).state
    assert state.phase != AUCTION and state.seats[0].front_markers == 1


def _reveal(players: int, bids: list[str], tablets: list[int] | None = None,
            offer: tuple[int, int, int] = (1, 1, 1), first: int = 0) -> GameState:
    state = at_auction(players, offer)
    state.first = first
    for seat, p in enumerate(state.seats):
        p.markers, p.workers = 4, 4
        p.tablets = (tablets or [0] * players)[seat]
    for seat, text in enumerate(bids):
        state, _ = act(state, seat, text)
    return state


def test_gi9_choice_order_most_markers_first() -> None:
    state = _reveal(3, ["bid 1 w1", "bid 3 w1", "bid 2 w1"])
    assert state.order == [1, 2, 0]
    assert state.phase == CLAIM and state.current == 1


def test_gi9_tie_broken_by_half_tablets_then_turn_order() -> None:
    state = _reveal(3, ["bid 2 w1", "bid 2 w1", "bid 2 w1"], tablets=[0, 3, 1])
    assert state.order == [1, 2, 0]
    state = _reveal(3, ["bid 2 w1", "bid 2 w1", "bid 2 w1"], tablets=[1, 1, 1], first=2)
    assert state.order == [2, 0, 1]  # turn order starts at the first player


def test_gi10_chief_claims_a_size_3_moai_then_nothing_else() -> None:
    state = _reveal(2, ["bid 1 c", "bid 0"], offer=(1, 1, 1))
    assert state.current == 0
    assert "claim 3 chief" in legal_texts(state, 0)
    state, events = act(state, 0, "claim 3 chief")
    assert events[0]["type"] == "claim" and events[0]["size"] == 3
    # Seat 1 bid no sculptor, seat 0's chief is spent: nobody can claim, claims end.
    assert state.phase == PLACE
    assert state.stock == [11, 11, 5]  # the unclaimed size 1 and 2 went back


def test_gi10_workers_pay_the_size_and_rounds_repeat_while_someone_claims() -> None:
    state = _reveal(2, ["bid 1 w3", "bid 0 w1"], offer=(2, 1, 0))
    assert state.current == 0
    assert legal_texts(state, 0) == ["claim 1 workers", "claim 2 workers", "pass"]
    state, _ = act(state, 0, "claim 2 workers")
    assert state.current == 1
    state, _ = act(state, 1, "claim 1 workers")
    assert state.current == 0  # a second round: someone claimed in the first
    state, _ = act(state, 0, "claim 1 workers")
    assert state.phase == PLACE
    moai = sorted((s.front, s.size, s.hex) for s in state.statues.values())
    assert moai == [(0, 1, (12, 4)), (0, 2, (12, 4)), (1, 1, (12, 4))]


def test_gi10_a_claim_without_enough_sculptors_is_illegal() -> None:
    state = _reveal(2, ["bid 1 w1", "bid 0 w1"], offer=(1, 1, 0))
    with pytest.raises(IllegalActionError):
        act(state, 0, "claim 2 workers")
    with pytest.raises(IllegalActionError):
        act(state, 0, "claim 1 chief")


def test_gi11_bid_pieces_stay_in_front_used_or_not() -> None:
    state = _reveal(2, ["bid 2 w3 c", "bid 1"], offer=(1, 0, 0))
    state, _ = act(state, 0, "claim 1 workers")
    p = state.seats[0]
    assert (p.markers, p.workers, p.chief) == (2, 1, False)
    assert (p.front_markers, p.front_workers, p.front_chief) == (2, 3, True)
    texts = legal_texts(state, 0)
    assert not any(t.startswith("place chief") for t in texts)
    public = ENGINE.view(state, 1)["seats"]["0"]
    assert public["bid"] == [2, 3, True] and public["front_workers"] == 3


def test_no_auction_when_the_offer_is_empty() -> None:
    for seed in range(400):
        if not dice.moai_sizes(dice.roll(seed, 2, 3), 2):
            break
    state = fresh(3, seed)
    state.turn = 2
    state.stock = [17, 12, 6]
    from engines.giants import auction

    events: list[dict[str, object]] = []
    auction.start_turn(state, events)
    assert events[-1]["type"] == "no_auction" and state.phase == PLACE


def test_gi8_the_table_sees_a_bid_but_not_its_content_nor_a_replacement() -> None:
    state = at_auction(3)
    assert ENGINE.public_action(state, 0, Bid(2, 1, True)) == "bid"
    state, _ = act(state, 0, "bid 2 w1 c")
    assert ENGINE.public_action(state, 0, Bid(0, 0, False)) is None
    placing = at_place(3)
    assert ENGINE.public_action(placing, 0, parse_action("tablet")) == "tablet"
