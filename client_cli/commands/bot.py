"""`giants bot URL --room R --bot NAME`: run a bot in a room on a server.

    giants bot ws://127.0.0.1:8765 --room abc123 --bot mcts            # first free seat
    giants bot ws://127.0.0.1:8765 --room abc123 --seat 1 --bot greedy
    giants bot ws://127.0.0.1:8765 --room abc123 --token TOKEN --bot random   # resume
    giants bot ws://127.0.0.1:8765 --create tara --bot mcts --fill random     # new room
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys

from client_cli.bots.runner import run_bot
from client_cli.bots.sdk import load_bot_class
from client_cli.client import Client, ClientError, RequestFailed, SeatStore, TrackedRoom
from client_cli.commands.selfplay import parse_options
from engines.bots.base import BotError
from engines.bots.registry import BUNDLED, parse_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="server address, e.g. ws://127.0.0.1:8765")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--room", help="room id to play in")
    where.add_argument("--create", metavar="GAME", help="create a room of this game first")
    parser.add_argument(
        "--bot", default="random",
        help=f"bot spec: {', '.join(BUNDLED)} or package.module:Class, with ,key=value parameters",
    )
    parser.add_argument("--seat", type=int, default=None, help="seat to take (default: first free)")
    parser.add_argument("--token", default=None, help="resume a seat held with this token")
    parser.add_argument("--password", default=None, help="room password")
    parser.add_argument("--name", default=None, help="player name shown to the table")
    parser.add_argument("--seed", type=int, default=None, help="seed for the bot's own randomness")
    parser.add_argument("--rules", default=None, help="with --create: rule set")
    parser.add_argument("--players", type=int, default=None, help="with --create: number of seats")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=JSON",
                        help="with --create: a game option")
    parser.add_argument("--fill", default=None, metavar="BOT",
                        help="with --create: the server fills the other seats with this bundled bot")
    parser.add_argument("--quiet", action="store_true", help="print only the outcome")
    parser.add_argument("--no-store", action="store_true",
                        help="keep the seat token in memory only (default: saved in the per-user seat file, "
                             "so running the bot again on the room resumes its seat)")


async def _create(args: argparse.Namespace) -> str:
    async with Client(args.url, name=args.name or "bot launcher", reconnect=False) as client:
        players = args.players
        if players is None:
            for info in client.games:
                if info.get("name") == args.create and (args.rules is None or info.get("rules") == args.rules):
                    players = int(info["players"][0])
                    break
        bots = None
        if args.fill:
            mine = args.seat if args.seat is not None else 0
            bots = {str(s): args.fill for s in range(players or 2) if s != mine}
        data = await client.create_room(
            args.create, rules=args.rules, players=players, options=parse_options(args.option) or None,
            password=args.password, bots=bots,
        )
        return str(data["room"])


def check_bot(spec: str, game: str | None) -> None:
    """Load the bot now (BotError if it cannot be): never create a room for a bot that
    then fails to load, or that does not play the game."""
    name, _params = parse_spec(spec)
    cls = load_bot_class(name)
    if game is not None and cls.games is not None and game not in cls.games:
        raise BotError(f"bot {name!r} does not play {game} (plays {', '.join(sorted(cls.games))})")


async def _main(args: argparse.Namespace) -> int:
    check_bot(args.bot, args.create)
    room = args.room or await _create(args)
    if args.create and not args.quiet:
        print(f"created room {room}", flush=True)

    def seated(tracked: TrackedRoom) -> None:
        if not args.quiet:
            print(f"playing seat {tracked.seat} of room {room} ({tracked.info.get('game')}) "
                  f"with {args.bot}; token {tracked.token}", flush=True)

    def moved(action: str) -> None:
        if not args.quiet:
            print(f"  {action}", flush=True)

    outcome = await run_bot(
        args.url, room, args.bot, seat=args.seat, token=args.token, password=args.password,
        name=args.name, seed=args.seed, on_move=moved, on_seated=seated,
        seats=None if args.no_store else SeatStore.default(),
    )
    if outcome is None:
        print("the room was lost before the game ended", file=sys.stderr)
        return 1
    print(json.dumps({"room": room, "outcome": outcome}), flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(_main(args))
    except BotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RequestFailed as exc:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 2
    except (OSError, ClientError) as exc:
        print(f"error: cannot reach {args.url}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
