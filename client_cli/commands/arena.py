"""`giants arena GAME BOT BOT ...`: pit bots against each other locally and print win rates."""

from __future__ import annotations

import argparse

from client_cli.bots.arena import GameRecord, play_match
from client_cli.commands.selfplay import parse_options
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
    parser.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    parser.add_argument("--rules", default=None, help="rule set (default: the game's default)")
    parser.add_argument("--players", type=int, default=None, help="seats (default: the minimum)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=JSON",
        help="game option, e.g. --option rounds=1",
    )
    parser.add_argument("--verbose", action="store_true", help="print every game")


def run(args: argparse.Namespace) -> int:
    try:
        engine = get_engine(args.game, args.rules)
        players = args.players or engine.info.min_players
        options = engine.validate_options(players, parse_options(args.option))
    except GameError as exc:
        print(f"error [{exc.code}]: {exc.message}")
        return 2

    def show(index: int, record: GameRecord) -> None:
        if args.verbose:
            o = record.outcome
            winners = ", ".join(record.seats[s] for s in o.winners)
            print(f"game {index + 1} seed {record.seed}: seats {record.seats} -> "
                  f"{'draw' if o.is_draw else 'winner'} {winners}; scores {list(o.scores)}; "
                  f"{o.reason}; {record.plies} plies", flush=True)

    try:
        result = play_match(
            engine, args.bots, args.games, players=players, options=options,
            seed=args.seed, on_game=show,
        )
    except BotError as exc:
        print(f"error: {exc}")
        return 2
    print(f"{result.game}/{result.rules}, {players} players, {args.games} games "
          f"in {result.seconds:.1f}s (seats rotate every game)")
    width = max(len(label) for label in result.records)
    print(f"  {'bot':<{width}}  wins  draws  losses  win rate  points  avg score")
    for rec in result.records.values():
        print(f"  {rec.spec:<{width}}  {rec.wins:>4}  {rec.draws:>5}  {rec.losses:>6}  "
              f"{100 * rec.win_rate:>7.0f}%  {100 * rec.points:>5.0f}%  "
              f"{rec.score / max(rec.games, 1):>9.2f}")
    return 0
