"""Phases 1-2: the Moai draw (GI-7), the sealed auction (GI-8, GI-9) and claims (GI-10, GI-11).

Every function here mutates a state the engine has already cloned. A step that is
finished sets `state.phase` to the next step and `state.current = PENDING`; the
engine's `flow.settle` then enters that step.
"""

from __future__ import annotations

from engines.base import Event, IllegalActionError
from engines.giants import dice
from engines.giants.actions import Claim, Pass, format_action
from engines.giants.board import ISLAND
from engines.giants.state import AUCTION, CLAIM, PLACE, Bid, GameState

PENDING = -1  # "enter the step named by state.phase"


def start_turn(state: GameState, events: list[Event]) -> None:
    """Phase 1 (GI-7): roll, fill the offer; then open the sealed auction (GI-8)."""
    state.faces = dice.roll(state.seed, state.turn, dice.dice_count(state.players))
    state.offer = [0, 0, 0]
    for size in dice.moai_sizes(state.faces, state.turn):
        if state.stock[size - 1] > 0:
            state.stock[size - 1] -= 1
            state.offer[size - 1] += 1
    events.append({
        "type": "moai_draw", "turn": state.turn, "first": state.first,
        "faces": list(state.faces), "offer": list(state.offer),
    })
    for p in state.seats:
        p.bid = None
    state.passed = [False] * state.players  # nobody has passed in a new turn yet
    if sum(state.offer) == 0:
        # DECIDED: with nothing to win there is no auction; go straight to placement.
        events.append({"type": "no_auction", "reason": "empty offer"})
        state.phase, state.current = PLACE, PENDING
        return
    state.phase, state.current = AUCTION, None


# ----------------------------------------------------------------------------- bids


# The seats of a game of n players (constants, not state: one object per n).
_ALL_SEATS = tuple(frozenset(range(n)) for n in range(6))


def bidders(state: GameState) -> frozenset[int]:
    """GI-8: every seat may submit or replace its bid until the last one arrives."""
    return _ALL_SEATS[state.players]


def bid_actions(state: GameState, seat: int) -> list[Bid]:
    """Every bid the seat can afford from behind its screen (markers x workers x chief)."""
    p = state.seats[seat]
    chiefs = (False, True) if p.chief else (False,)
    return [
        Bid(m, w, c) for m in range(p.markers + 1) for w in range(p.workers + 1) for c in chiefs
    ]


# `bid_actions` in notation by what the seat has behind its screen (a few dozen kinds).
_BID_TEXT: dict[tuple[int, int, bool], tuple[str, ...]] = {}


def bid_notation(state: GameState, seat: int) -> list[str]:
    """`bid_actions` in notation, in the same order, written once per kind of screen."""
    p = state.seats[seat]
    key = (p.markers, p.workers, p.chief)
    text = _BID_TEXT.get(key)
    if text is None:
        if len(_BID_TEXT) >= 1024:
            _BID_TEXT.clear()
        text = _BID_TEXT[key] = tuple(map(format_action, bid_actions(state, seat)))
    return list(text)


def apply_bid(state: GameState, seat: int, bid: Bid, events: list[Event]) -> None:
    """Store (or replace) a sealed bid; reveal all once every seat has one.

    Only the first submission makes a public event: a replacement is invisible to the
    other seats (GI-8 "or whether it changed").
    """
    p = state.seats[seat]
    if not (0 <= bid.markers <= p.markers and 0 <= bid.workers <= p.workers):
        raise IllegalActionError("a bid can only use markers and workers behind your screen")
    if bid.chief and not p.chief:
        raise IllegalActionError("your chief is not behind your screen")
    first_time = p.bid is None
    p.bid = bid
    if first_time:
        events.append({"type": "bid_made", "seat": seat})
    if all(q.bid is not None for q in state.seats):
        reveal(state, events)


def choice_order(state: GameState) -> list[int]:
    """GI-9: most markers first; ties to more half-tablets, then turn order."""
    position = {seat: i for i, seat in enumerate(state.seat_order())}

    def key(seat: int) -> tuple[int, int, int]:
        p = state.seats[seat]
        assert p.bid is not None
        return (-p.bid.markers, -p.tablets, position[seat])

    return sorted(range(state.players), key=key)


def reveal(state: GameState, events: list[Event]) -> None:
    """All bids go in front of the screens (GI-11) and claims begin in choice order."""
    for p in state.seats:
        bid = p.bid
        assert bid is not None
        p.markers -= bid.markers
        p.workers -= bid.workers
        p.front_markers += bid.markers
        p.front_workers += bid.workers
        if bid.chief:
            p.chief = False
            p.front_chief = True
        p.spent_workers, p.spent_chief = 0, False
    state.order = choice_order(state)
    events.append({
        "type": "bids_revealed",
        "bids": {str(s): _bid_data(state.seats[s].bid) for s in range(state.players)},
        "order": list(state.order),
    })
    state.phase = CLAIM
    state.claimed_in_round = False
    _advance(state, -1, events)


def _bid_data(bid: Bid | None) -> list[int | bool]:
    assert bid is not None
    return [bid.markers, bid.workers, bid.chief]


# ----------------------------------------------------------------------------- claims


def _free_workers(state: GameState, seat: int) -> int:
    p = state.seats[seat]
    return p.front_workers - p.spent_workers


def _chief_free(state: GameState, seat: int) -> bool:
    p = state.seats[seat]
    return p.front_chief and not p.spent_chief


def claim_actions(state: GameState, seat: int) -> list[Claim | Pass]:
    """GI-10: one Moai of a size in the offer, paid by n bid workers or the bid chief."""
    actions: list[Claim | Pass] = []
    for size in (1, 2, 3):
        if state.offer[size - 1] == 0:
            continue
        if _free_workers(state, seat) >= size:
            actions.append(Claim(size, False))
        if _chief_free(state, seat):
            actions.append(Claim(size, True))
    actions.append(Pass())
    return actions


def _can_claim(state: GameState, seat: int) -> bool:
    return len(claim_actions(state, seat)) > 1


def apply_claim(state: GameState, seat: int, action: Claim | Pass, events: list[Event]) -> None:
    if isinstance(action, Claim):
        size = action.size
        if size not in (1, 2, 3) or state.offer[size - 1] == 0:
            raise IllegalActionError(f"no Moai of size {size} in the offer")
        p = state.seats[seat]
        if action.chief:
            if not _chief_free(state, seat):
                raise IllegalActionError("your chief is not in your bid or already sculpted")
            p.spent_chief = True  # GI-10: the chief sculpts one Moai per auction
        else:
            if _free_workers(state, seat) < size:
                raise IllegalActionError(f"a size-{size} Moai needs {size} unused bid workers")
            p.spent_workers += size
        state.offer[size - 1] -= 1
        sid = state.new_statue("M", size, ISLAND.quarry, seat)
        state.claimed_in_round = True
        events.append({
            "type": "claim", "seat": seat, "statue": sid, "size": size, "chief": action.chief,
        })
    else:
        events.append({"type": "claim_pass", "seat": seat})
    _advance(state, state.order.index(seat), events)


def _advance(state: GameState, pos: int, events: list[Event]) -> None:
    """Next claimer in choice order; a new round only if someone claimed (GI-10)."""
    n = len(state.order)
    while True:
        pos += 1
        if pos >= n:
            if not state.claimed_in_round:
                break
            state.claimed_in_round = False
            pos = 0
        if sum(state.offer) == 0:
            break
        seat = state.order[pos]
        if _can_claim(state, seat):
            state.current = seat
            return
    # Unclaimed Moai go back to the stock (GI-10).
    for i in range(3):
        state.stock[i] += state.offer[i]
    if sum(state.offer):
        events.append({"type": "offer_returned", "offer": list(state.offer)})
    state.offer = [0, 0, 0]
    state.phase, state.current = PLACE, PENDING
