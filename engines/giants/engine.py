"""GIANTS (Easter Island) for 2-5 players, as `shared/specs/giants.md` decides (GI-1 … GI-30).

The turn is a sequence of steps (see `state.PHASES`): the sealed auction is a
simultaneous step (every seat is in `to_act` until the last bid arrives, and may
replace its bid until then); every other step has one seat to act. Automatic work
(dice, returns without choices, cleanup, the end check) happens inside `apply`.

Legal lists are complete except in phase 4, where `legal_actions` lists one canonical
transport per reachable destination (cheapest route, default pieces) and `apply`
accepts any legal explicit path and piece assignment (`complete_action_lists=False`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

from engines.base import (
    Engine,
    Event,
    GameInfo,
    GameOverError,
    IllegalActionError,
    NotYourTurnError,
    Outcome,
    Seat,
    Transition,
    View,
)
from engines.giants import auction, cleanup, dice, flow, placement, scoring, transport, views
from engines.giants.actions import Action, Bid, Claim, Pass, format_action, parse_action
from engines.giants.state import (
    AUCTION,
    CLAIM,
    CLEANUP,
    MAX_TURNS,
    OVER,
    PLACE,
    RETURNS,
    TRANSPORT,
    GameState,
    from_data,
    new_state,
    to_data,
)

# Per seat and turn, generously: bids are unbounded in principle (a seat may replace
# its bid until the last one arrives; rooms close auctions with deadlines), the other
# steps are bounded by pieces: every placement uses a figure, marker or power, every
# transport uses at least one fresh piece, marks use markers, looks use tablets.
PLIES_PER_SEAT_TURN = 400
# `to_act` in a sequential step: one frozenset per seat, made once (it is asked several
# times a move; constants, not state).
_ONE_SEAT = tuple(frozenset((seat,)) for seat in range(5))
# Per player count: the new game with seed 0, viewed by every seat and a spectator
# (`views.viewed`). Every new or restored state starts from its view parts
# (`views.share_parts`), so rooms hold one copy of the parts new games have alike.
_TEMPLATES: dict[int, GameState] = {}


def _set_up(players: int, seed: int) -> GameState:
    """GI-2..4 and the turn-1 dice: a new game, not viewed yet."""
    state = new_state(players, seed, dice.first_player(seed, players))
    state.current = flow.PENDING
    flow.settle(state, [])
    return state


def _template(players: int) -> GameState:
    found = _TEMPLATES.get(players)
    if found is None:
        found = _TEMPLATES[players] = views.viewed(_set_up(players, 0))
    return found


class GiantsEngine(Engine[GameState, Action]):
    info = GameInfo(
        name="giants",
        title="GIANTS",
        rules="standard",
        min_players=2,
        max_players=5,
        hidden_information=True,
        chance=True,
        simultaneous=True,
        max_plies=MAX_TURNS * 5 * PLIES_PER_SEAT_TURN,
        summary="Easter Island: sealed bids for Moai, workers and logs to carry them, Ahu to erect them on.",
        complete_action_lists=False,
        spec="giants.md",
    )

    def new_game(self, players: int, options: Mapping[str, Any], seed: int) -> GameState:
        self.validate_options(players, options)
        state = _set_up(players, seed)
        views.share_parts(state, _template(players))
        return state

    def to_act(self, state: GameState) -> frozenset[Seat]:
        if state.phase == OVER:
            return frozenset()
        if state.phase == AUCTION:
            return auction.bidders(state)
        assert state.current is not None and state.current >= 0
        return _ONE_SEAT[state.current]

    def legal_actions(self, state: GameState, seat: Seat) -> list[Action]:
        if seat not in self.to_act(state):
            return []
        phase = state.phase
        out: list[Any]
        if phase == AUCTION:
            out = auction.bid_actions(state, seat)
        elif phase == CLAIM:
            out = auction.claim_actions(state, seat)
        elif phase == PLACE:
            out = placement.actions(state, seat)
        elif phase == TRANSPORT:
            out = transport.actions(state, seat)
        elif phase == RETURNS:
            out = cleanup.returns_actions(state, seat)
        else:
            out = cleanup.cleanup_actions(state, seat)
        return cast("list[Action]", out)

    def legal_notation(self, state: GameState, seat: Seat) -> list[str]:
        """Placement, bid and transport lists (the long ones) written directly as strings."""
        phase = state.phase
        # (`to_act` inlined: in a sequential step only `current` acts, in the auction every seat)
        if phase == PLACE and seat == state.current and seat >= 0:
            return placement.notation(state, seat)
        if phase == AUCTION and seat in auction.bidders(state):
            return auction.bid_notation(state, seat)
        if phase == TRANSPORT and seat == state.current and seat >= 0:
            return transport.notation(state, seat)
        return super().legal_notation(state, seat)

    def waiting_for(self, state: GameState) -> frozenset[Seat]:
        """In the auction: the seats that have not bid yet (public: `bid_made`)."""
        if state.phase == AUCTION:
            return frozenset(s for s, p in enumerate(state.seats) if p.bid is None)
        return self.to_act(state)

    def default_action(self, state: GameState, seat: Seat) -> Action:
        """Out of time: the empty bid in the auction (GI-8), otherwise pass (GI-17, GI-24).

        A seat that has already bid keeps its bid (the default re-submits it), so a
        room applying defaults to every seat in `to_act` never erases a real bid.
        """
        if seat not in self.to_act(state):
            raise NotYourTurnError(f"seat {seat} has nothing to do")
        if state.phase == AUCTION:
            bid = state.seats[seat].bid
            return bid if bid is not None else Bid(0, 0, False)
        return Pass()

    def apply(self, state: GameState, seat: Seat, action: Action) -> Transition[GameState]:
        phase = state.phase
        if phase == OVER:
            raise GameOverError("the game is over")
        # (`to_act` inlined: in a sequential step only `current` acts, in the auction every seat)
        if not (seat in auction.bidders(state) if phase == AUCTION else seat == state.current and seat >= 0):
            raise NotYourTurnError(f"seat {seat} is not to act now")
        new = state.successor()
        events: list[Event] = []
        if phase == AUCTION:
            if not isinstance(action, Bid):
                raise IllegalActionError("the auction takes only a bid, e.g. `bid 1 w1`")
            auction.apply_bid(new, seat, action, events)
        elif phase == CLAIM:
            if not isinstance(action, (Claim, Pass)):
                raise IllegalActionError("claim a Moai (`claim 2 workers`) or pass")
            auction.apply_claim(new, seat, action, events)
        elif phase == PLACE:
            placement.apply(new, seat, action, events)
        elif phase == TRANSPORT:
            transport.apply(new, seat, action, events)
        elif phase == RETURNS:
            cleanup.apply_returns(new, seat, action, events)
        elif phase == CLEANUP:
            cleanup.apply_cleanup(new, seat, action, events)
        if new.current == flow.PENDING:  # automatic steps to run (`settle`'s own test, without its call)
            flow.settle(new, events)
        return Transition(new, tuple(events))

    restated_events = frozenset({"place", "bid_made", "pass", "phase"})
    # The first entries of every view of a state are the same objects, for every seat
    # (`views.SHARED_START`): the room diffs them once (server.split_diffs, `SplitDiffs`).
    view_shared_start: ClassVar[int] = views.SHARED_START
    # Notation lists repeat no entry and hold no line break (the conformance suite checks it)
    plain_notation: ClassVar[bool] = True

    def view_keys(self) -> tuple[str, ...]:
        return views.VIEW_KEYS

    def view(self, state: GameState, seat: Seat | None) -> View:
        return views.view(state, seat)

    def outcome(self, state: GameState) -> Outcome | None:
        return scoring.outcome(state) if state.phase == OVER else None

    def parse_action(self, state: GameState, seat: Seat, text: str) -> Action:
        return parse_action(text)

    def format_action(self, state: GameState, action: Action) -> str:
        return format_action(action)

    def public_action(self, state: GameState, seat: Seat, action: Action) -> str | None:
        """A sealed bid shows only as "bid" (GI-8); replacing one shows nothing at all."""
        if state.phase == AUCTION and isinstance(action, Bid):
            return "bid" if state.seats[seat].bid is None else None
        return format_action(action)

    def snapshot(self, state: GameState) -> dict[str, Any]:
        return to_data(state)

    def restore(self, data: Mapping[str, Any]) -> GameState:
        state = from_data(data)
        if self.info.min_players <= state.players <= self.info.max_players:
            views.share_parts(state, _template(state.players))
        return state

    def players(self, state: GameState) -> int:
        return state.players
