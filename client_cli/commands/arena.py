"""`giants arena GAME BOT BOT ...`: pit bots against each other locally and print win rates."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from client_cli.bots.arena import GameRecord, play_match
from client_cli.commands.common import error, positive_int, progress
from client_cli.commands.selfplay import OptionError, parse_options
from engines import GameError, get_engine
from engines.bots.base import BotError
from engines.bots.registry import BUNDLED


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="game name (see `giants games`)")
    parser.add_argument(
        "bots", nargs="+", metavar="BOT",
        help=f"bot specs: a bundled name ({', '.join(BUNDLED)}) or package.module:Class, "
        "with optional parameters, e.g. mcts,iterations=200",
    )
    parser.add_argument("--games", type=positive_int, default=10, help="games to play (default 10)")
    parser.add_argument("--rules", default=None, help="rule set (default: the game's default)")
    parser.add_argument("--players", type=int, default=None, help="seats (default: the minimum)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=JSON",
        help="game option, e.g. --option rounds=1",
    )
    parser.add_argument("--verbose", action="store_true", help="print every game")
    parser.add_argument("--json", action="store_true", help="print one JSON object with the results")


def run(args: argparse.Namespace) -> int:
    if len(args.bots) < 2:
        error("an arena needs at least two bots (name the same one twice to play it against itself)")
        return 2
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
    advance: Callable[[], None] = lambda: None  # noqa: E731 - replaced by the progress bar

    def show(index: int, record: GameRecord) -> None:
        advance()
        if args.verbose and not args.json:
            o = record.outcome
            winners = ", ".join(record.seats[s] for s in o.winners)
            print(f"game {index + 1} seed {record.seed}: seats {record.seats} -> "
                  f"{'draw' if o.is_draw else 'winner'} {winners}; scores {list(o.scores)}; "
                  f"{o.reason}; {record.plies} plies", flush=True)

    try:
        with progress(args.games, f"{engine.info.name} arena", not args.json) as advance:
            result = play_match(
                engine, args.bots, args.games, players=players, options=options,
                seed=args.seed, on_game=show,
            )
    except BotError as exc:
        error(str(exc))
        return 2
    if args.json:
        print(json.dumps({
            "game": result.game, "rules": result.rules, "players": players, "games": args.games,
            "seconds": round(result.seconds, 3),
            "bots": [{"bot": r.spec, "games": r.games, "wins": r.wins, "draws": r.draws, "losses": r.losses,
                      "win_rate": r.win_rate, "points": r.points, "average_score": r.score / max(r.games, 1)}
                     for r in result.records.values()],
        }))
        return 0
    print(f"{result.game}/{result.rules}, {players} players, {args.games} games "
          f"in {result.seconds:.1f}s (seats rotate every game)")
    width = max(len(label) for label in result.records)
    print(f"  {'bot':<{width}}  wins  draws  losses  win rate  points  avg score")
    for rec in result.records.values():
        print(f"  {rec.spec:<{width}}  {rec.wins:>4}  {rec.draws:>5}  {rec.losses:>6}  "
              f"{100 * rec.win_rate:>7.0f}%  {100 * rec.points:>5.0f}%  "
              f"{rec.score / max(rec.games, 1):>9.2f}")
    return 0
