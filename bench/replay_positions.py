"""What a replay viewer's `replay` with positions costs the server (server/replays.py).

Plays one random game per game/rule set (seeded), then times the computation of
every position (apply + spectator view + diff per move) and the packed size.

    .venv/bin/python -m bench.replay_positions
"""

from __future__ import annotations

import random
import time

import msgpack

from engines import registry
from server.replays import _compute

CASES = [("giantslayer", "standard", 2), ("causeway", "barrier", 2), ("tara", "singles", 2),
         ("giants", "standard", 3), ("giants", "standard", 5)]


def random_game(game: str, rules: str, players: int, seed: int = 7) -> dict[str, object]:
    engine = registry.get_engine(game, rules)
    rng = random.Random(seed)
    options = engine.validate_options(players, {})
    state = engine.new_game(players, options, seed)
    actions = []
    while engine.outcome(state) is None:
        seat = min(engine.waiting_for(state))
        action = rng.choice(engine.legal_actions(state, seat))
        actions.append({"seat": seat, "action": engine.format_action(state, action)})
        state = engine.apply(state, seat, action).state
    return {"game": game, "rules": rules, "players": players, "options": options, "seed": seed, "actions": actions}


def main() -> None:
    for game, rules, players in CASES:
        data = random_game(game, rules, players)
        moves = len(data["actions"])  # type: ignore[arg-type]
        start = time.perf_counter()
        result = _compute(data)
        elapsed = time.perf_counter() - start
        size = len(msgpack.packb(result))
        print(f"{game}/{rules} {players}p: {moves} moves, positions in {elapsed * 1000:.0f} ms "
              f"({elapsed / moves * 1e6:.0f} us/move), {size / 1024:.1f} KiB packed ({size / moves:.0f} B/move)")


if __name__ == "__main__":
    main()
