"""Step transitions: a finished step leaves `state.current = PENDING`; `settle` enters
the step named by `state.phase` until some seat has something to decide."""

from __future__ import annotations

from engines.base import Event
from engines.giants import auction, cleanup, placement, scoring, transport
from engines.giants.state import AUCTION, CLEANUP, OVER, PLACE, RETURNS, TRANSPORT, GameState

PENDING = -1


def settle(state: GameState, events: list[Event]) -> None:
    """Run automatic steps (dice, returns, cleanup, the end check) after an action."""
    while state.current == PENDING:
        phase = state.phase
        if phase == AUCTION:
            auction.start_turn(state, events)
        elif phase == PLACE:
            placement.start(state)
            events.append({"type": "phase", "phase": PLACE, "first": state.first})
        elif phase == TRANSPORT:
            transport.start(state)
            events.append({"type": "phase", "phase": TRANSPORT, "first": state.first})
        elif phase == RETURNS:
            # GI-26: the game ends right after phase 4.
            reason = scoring.end_reason(state)
            if reason:
                state.reason = reason
                state.phase, state.current = OVER, None
                events.append({"type": "game_over", "reason": reason})
                return
            cleanup.start_returns(state, events)
        elif phase == CLEANUP:
            cleanup.start_cleanup(state, events)
        else:  # pragma: no cover - a bug, not a game situation
            raise AssertionError(f"cannot enter phase {phase!r}")
