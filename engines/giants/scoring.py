"""End of the game (GI-26) and scoring with tie-breaks (GI-27)."""

from __future__ import annotations

from engines.base import Outcome
from engines.giants.board import ISLAND
from engines.giants.state import MAX_TURNS, GameState, bases_for

REASONS = {
    "all_bases": "a player erected Moai on all their bases",
    "no_ahu": "no free or reserved-but-empty Ahu remains",
    "turn_limit": f"turn {MAX_TURNS} ended",
}


def end_reason(state: GameState) -> str:
    """GI-26, checked right after phase 4: a reason code, or "" to play on."""
    erected = erected_counts(state)
    if any(n >= bases_for(state.players) for n in erected):
        return "all_bases"
    if all(a.size for a in state.ahu.values()):
        return "no_ahu"
    if state.turn >= MAX_TURNS:
        return "turn_limit"
    return ""


def erected_counts(state: GameState) -> list[int]:
    counts = [0] * state.players
    for a in state.ahu.values():
        if a.size and a.owner is not None:
            counts[a.owner] += 1
    return counts


def scores(state: GameState) -> list[int]:
    """GI-27: transport points + size x Moai value (+ headdress value) per erected Moai."""
    totals = [p.points for p in state.seats]
    for ahu in ISLAND.ahu:
        st = state.ahu[ahu.id]
        if st.size and st.owner is not None:
            totals[st.owner] += st.size * ahu.moai_value
            if st.headdress:
                totals[st.owner] += ahu.headdress_value
    return totals


def outcome(state: GameState) -> Outcome:
    """Winners: best score, then more erected Moai, then more transport points, else shared."""
    total = scores(state)
    erected = erected_counts(state)
    keys = [(total[s], erected[s], state.seats[s].points) for s in range(state.players)]
    best = max(keys)
    winners = tuple(s for s in range(state.players) if keys[s] == best)
    return Outcome(
        scores=tuple(float(x) for x in total),
        winners=winners,
        reason=state.reason,
        detail=REASONS.get(state.reason, ""),
        extra={
            "erected": erected,
            "transport_points": [p.points for p in state.seats],
            "turn": state.turn,
        },
    )
