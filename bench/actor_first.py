"""How much sooner a move's actor gets its `ok` and patch since `publish` writes the
members who need no legal list before working out the next actor's list
(server/publish.py, `flush_before`): in-process, no sockets and no Redis.

    python bench/actor_first.py             # every game and rule set, 30 random games each

For each move of random games (fixed seeds), the time from the actor's connection being
written (its `flush`) to the end of `Room.act`, where the server's `flush_now` wrote every
member's frames before. Wall-clock time on a shared machine: compare games with each
other, and runs with each other, not with another machine's figures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.loop import run_main
from engines.registry import get_engine
from protocol.codec import encode
from server.metrics import Metrics
from server.room import Room

GAMES = [("giantslayer", None, 2), ("tara", None, 2), ("causeway", "barrier", 2), ("causeway", "spellstone", 2),
         ("causeway", "quick", 2), ("giants", None, 3)]


class AcceptingStore:
    """Every write is accepted at once."""

    async def commit(self, room_id: str, *args: Any, **fields: Any) -> bool:
        return False


class TimedPeer:
    """A connection that notes when it was first written since `written_at` was cleared."""

    def __init__(self, name: str) -> None:
        self.name, self.protocol = name, 3
        self.written_at: float | None = None

    def push(self, frame: bytes) -> None:
        pass

    def flush(self) -> None:
        if self.written_at is None:
            self.written_at = time.perf_counter()

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.push(encode({"type": "ok", "id": req_id, "data": data}))

    def send_ok_version(self, req_id: Any, version: int) -> None:
        self.send_ok(req_id, {"version": version})


async def sooner(game: str, rules: str | None, players: int, games: int) -> list[float]:
    """Seconds between the actor's write and the end of `act`, one per move the actor's
    frames were written in (not those where the actor is to act again)."""
    engine = get_engine(game, rules)
    found: list[float] = []
    for seed in range(games):
        meta = {"game": engine.info.name, "rules": engine.info.rules, "players": players, "options": {},
                "seed": seed, "private": False, "password": None, "created": 0.0, "deadline": None}
        room = Room(f"room{seed}", engine, meta, engine.new_game(players, {}, seed), AcceptingStore(),  # type: ignore[arg-type]
                    Metrics())
        seats = [TimedPeer(f"seat{i}") for i in range(players)]
        ids = iter(range(1, 1_000_000))
        await room.watch(TimedPeer("spectator"), next(ids), None)
        for seat, peer in enumerate(seats):
            await room.join(peer, next(ids), seat, None, key=f"key{seed}-{seat}")
        rng = random.Random(seed)
        while room.status == "playing":
            seat = rng.choice(sorted(engine.to_act(room.state)))
            actor = seats[seat]
            action = rng.choice(room.legal_for(seat))
            actor.written_at = None
            await room.act(actor, next(ids), action, None)
            end = time.perf_counter()
            if actor.written_at is not None:
                found.append(end - actor.written_at)
    return found


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="random games per game and rule set")
    args = parser.parse_args()
    for game, rules, players in GAMES:
        found = await sooner(game, rules, players, args.games)
        print(f"{game + ('/' + rules if rules else ''):22} actor written {1e6 * statistics.median(found):6.1f} µs "
              f"sooner (median; mean {1e6 * statistics.fmean(found):.1f}) over {len(found)} moves", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main()))
