"""Random playouts: self-play, benchmarks and the conformance suite all use these.

`random_playout` plays one game with uniformly random legal actions chosen by a
seeded `random.Random` (the engine itself stays deterministic; the randomness here is
the players'). In a simultaneous step the acting seat is drawn at random each time,
which exercises "replace your bid" paths as well as the in-any-order arrival.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.base import Engine, Outcome, Seat


@dataclass
class PlayoutResult:
    """A finished playout: the action log replays it from (players, options, seed)."""

    players: int
    options: dict[str, Any]
    seed: int
    log: list[tuple[Seat, Any]] = field(default_factory=list)
    outcome: Outcome | None = None
    final_state: Any = None
    decisions: int = 0  # sum over plies of the number of legal actions offered


StepHook = Callable[[Any, Seat, Any, Any], None]


def random_playout(
    engine: Engine,
    players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    rng: random.Random | None = None,
    max_plies: int | None = None,
    on_step: StepHook | None = None,
) -> PlayoutResult:
    """Play one game to the end with random legal actions.

    `on_step(state_before, seat, action, transition)` is called after every applied
    action (the conformance suite hangs its checks there). Raises RuntimeError if the
    game runs past `max_plies` (default: the engine's declared bound).
    """
    rng = rng or random.Random(seed)
    resolved = engine.validate_options(players, options or {})
    state = engine.new_game(players, resolved, seed)
    result = PlayoutResult(players=players, options=resolved, seed=seed)
    limit = max_plies if max_plies is not None else engine.info.max_plies
    while engine.outcome(state) is None:
        if len(result.log) >= limit:
            raise RuntimeError(
                f"{engine.info.name}/{engine.info.rules} exceeded {limit} plies (seed {seed})"
            )
        seats = sorted(engine.to_act(state))
        if not seats:
            raise RuntimeError("no seat may act but the game has no outcome")
        seat = rng.choice(seats)
        actions = engine.legal_actions(state, seat)
        if not actions:
            raise RuntimeError(f"seat {seat} is to act but has no legal action")
        result.decisions += len(actions)
        action = rng.choice(actions)
        transition = engine.apply(state, seat, action)
        if on_step is not None:
            on_step(state, seat, action, transition)
        result.log.append((seat, action))
        state = transition.state
    result.outcome = engine.outcome(state)
    result.final_state = state
    return result


def replay(
    engine: Engine,
    players: int,
    options: Mapping[str, Any],
    seed: int,
    log: list[tuple[Seat, Any]],
) -> Any:
    """Rebuild the state reached by applying `log` to a new game."""
    state = engine.new_game(players, engine.validate_options(players, options), seed)
    for seat, action in log:
        state = engine.apply(state, seat, action).state
    return state
