"""`giants selfplay GAME`: play random games locally and print the results."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from client_cli.commands.common import error, positive_int, progress
from engines import GameError, get_engine
from engines.playout import random_playout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="game name (see `giants games`)")
    parser.add_argument("--rules", default=None, help="rule set (default: the game's default)")
    parser.add_argument("--players", type=int, default=None, help="number of seats")
    parser.add_argument("--games", type=positive_int, default=10, help="how many games (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="first seed; game i uses seed+i")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=JSON",
        help="game option, e.g. --option rounds=1 (value parsed as JSON)",
    )
    parser.add_argument("--verbose", action="store_true", help="print every game")
    parser.add_argument("--json", action="store_true", help="print one JSON object with the results")


class OptionError(ValueError):
    """An --option that is not NAME=VALUE."""


def parse_options(pairs: list[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise OptionError(f"--option wants NAME=VALUE, got {pair!r}")
        try:
            options[name] = json.loads(raw)
        except json.JSONDecodeError:
            options[name] = raw
    return options


def run(args: argparse.Namespace) -> int:
    try:
        engine = get_engine(args.game, args.rules)
        players = args.players or engine.info.min_players
        options = engine.validate_options(players, parse_options(args.option))
    except GameError as exc:
        error(f"error [{exc.code}]: {exc.message}")
        return 2
    except OptionError as exc:
        error(str(exc))
        return 2
    info = engine.info
    wins: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    totals = [0.0] * players
    plies = 0
    started = time.perf_counter()
    games: list[dict[str, object]] = []
    with progress(args.games, f"{info.name} self-play", not args.json) as advance:
        for i in range(args.games):
            result = random_playout(engine, players, args.seed + i, options)
            advance()
            outcome = result.outcome
            assert outcome is not None
            plies += len(result.log)
            reasons[outcome.reason] += 1
            for seat, score in enumerate(outcome.scores):
                totals[seat] += score
            key = "draw" if outcome.is_draw else f"seat {outcome.winners[0]}"
            wins[key] += 1
            games.append({"seed": args.seed + i, "winners": list(outcome.winners),
                          "scores": list(outcome.scores), "reason": outcome.reason, "plies": len(result.log)})
            if args.verbose and not args.json:
                print(f"game {i} (seed {args.seed + i}): {key}, scores {list(outcome.scores)}, "
                      f"{outcome.reason}, {len(result.log)} plies")
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps({
            "game": info.name, "rules": info.rules, "players": players, "games": args.games,
            "seed": args.seed, "plies": plies, "seconds": round(elapsed, 3),
            "wins": dict(sorted(wins.items())), "average_scores": [t / args.games for t in totals],
            "endings": dict(reasons.most_common()), **({"per_game": games} if args.verbose else {}),
        }))
        return 0
    print(f"{info.name}/{info.rules}, {players} players, {args.games} games, "
          f"{plies} plies in {elapsed:.2f}s ({plies / max(elapsed, 1e-9):,.0f} plies/s)")
    for key in sorted(wins):
        print(f"  {key}: {wins[key]} ({100 * wins[key] / args.games:.0f}%)")
    print("  average scores: " + ", ".join(
        f"seat {s} {t / args.games:.2f}" for s, t in enumerate(totals)))
    print("  endings: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()))
    return 0
