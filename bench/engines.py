"""Random-playout speed of every registered engine, rule set and player count.

    python bench/engines.py [--seconds 3] [--game NAME]

For each engine it plays random games (engines.playout.random_playout) for about
`--seconds` and prints a Markdown table: applied actions per second (legal-move
generation + apply, the work a search bot repeats), games per second, the average
number of legal actions offered per decision, and plies per game. The figures in
docs/performance.md come from this script.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines import Engine, all_engines
from engines.playout import random_playout


def measure(engine: Engine, players: int, seconds: float) -> dict[str, float]:
    plies = decisions = games = 0
    started = time.perf_counter()
    seed = 0
    while time.perf_counter() - started < seconds or games < 2:
        result = random_playout(engine, players, seed)
        plies += len(result.log)
        decisions += result.decisions
        games += 1
        seed += 1
    elapsed = time.perf_counter() - started
    return {
        "plies_per_s": plies / elapsed,
        "games_per_s": games / elapsed,
        "choices": decisions / max(plies, 1),
        "plies_per_game": plies / games,
        "games": games,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per engine and player count")
    parser.add_argument("--game", default=None, help="only this game")
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}, "
          f"{args.seconds:g} s per row\n")
    print("| game | rules | players | actions/s | games/s | legal actions per decision | plies per game |")
    print("|---|---|---|---:|---:|---:|---:|")
    for engine in all_engines():
        info = engine.info
        if args.game and info.name != args.game:
            continue
        for players in range(info.min_players, info.max_players + 1):
            m = measure(engine, players, args.seconds)
            print(f"| {info.name} | {info.rules} | {players} | {m['plies_per_s']:,.0f} | "
                  f"{m['games_per_s']:,.1f} | {m['choices']:.1f} | {m['plies_per_game']:.0f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
