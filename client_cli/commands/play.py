"""`giants play [URL] [GAME]`: join rooms on a server from the terminal.

Interactive (a Textual app) when standard input is a terminal; with --script, or when
input is piped, lines of commands and moves are read from stdin (see
client_cli.tui.script), so the client can be scripted:

    giants play                                                  # the lobby of the local server
    giants play tara                                             # a game of Tara: join a waiting one or create it
    giants play ws://127.0.0.1:8765                              # lobby, /help for commands
    giants play ws://127.0.0.1:8765 --create tara --bots 1=mcts  # new room, seat 0, vs mcts
    giants play 127.0.0.1:8765 --resume abc123                   # your seat back after quitting
    echo "e6-e7" | giants play ws://127.0.0.1:8765 --room abc123 --seat 1 --script
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from client_cli.seat_store import SeatStore
from client_cli.tui.script import run_script, stdin_lines
from engines import registry

DEFAULT_URL = "ws://127.0.0.1:8765"  # where `giants serve` listens by default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", nargs="?", default=None,
                        help=f"server address, e.g. 127.0.0.1:8765 (default: $GIANTS_URL, else {DEFAULT_URL})")
    parser.add_argument("game", nargs="?", default=None,
                        help="a game to play at once: join a waiting room of it with a free seat, else create one")
    parser.add_argument("--name", default=None, help="your name at the table")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--room", default=None, help="join this room at once")
    where.add_argument("--create", metavar="GAME", default=None, help="create a room of this game and join it")
    where.add_argument("--resume", metavar="ROOM", default=None,
                       help="take back your seat in ROOM (its token is in the per-user seat file)")
    parser.add_argument("--seat", type=int, default=None, help="seat to take (default: first free)")
    parser.add_argument("--password", default=None, help="room password")
    parser.add_argument("--rules", default=None, help="with --create: rule set")
    parser.add_argument("--players", type=int, default=None, help="with --create: number of seats")
    parser.add_argument("--bots", default=None, metavar="SEAT=BOT,...",
                        help="with --create: seats the server fills with bundled bots, e.g. 1=mcts")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="with --create: a game option")
    parser.add_argument("--script", action="store_true",
                        help="read commands and moves from stdin instead of the interactive screen")
    parser.add_argument("--show-board", action="store_true", help="script mode: print the board before each move")


def resolve_target(args: argparse.Namespace) -> None:
    """Fill in `args.url` and `args.game`: `giants play tara` names a game, not a server
    (the server is then $GIANTS_URL or the local default)."""
    games = set([g.name for g in registry.all_games()])
    if args.url is not None and args.game is None and args.url in games:
        args.url, args.game = None, args.url
    if args.url is None:
        args.url = os.environ.get("GIANTS_URL") or DEFAULT_URL


def start_commands(args: argparse.Namespace) -> list[str]:
    """The commands that bring the client into the room the flags name (none: the lobby)."""
    password = f" password={args.password}" if args.password else ""
    seat = f" {args.seat}" if args.seat is not None else ""
    if args.resume:
        return [f"/resume {args.resume}"]
    if args.room:
        return [f"/join {args.room}{seat}{password}"]
    if args.create:
        parts = [f"/create {args.create}"]
        if args.rules:
            parts.append(f"rules={args.rules}")
        if args.players:
            parts.append(f"players={args.players}")
        if args.bots:
            parts.append("bots=" + args.bots.replace("=", ":"))
        if args.password:
            parts.append(f"password={args.password}")
        if args.seat is not None:
            parts.append(f"seat={args.seat}")
        parts.extend(args.option)
        return [" ".join(parts)]  # /create sits you down too
    if args.game:
        return [f"/play {args.game}" + (f" rules={args.rules}" if args.rules else "")]
    return []


def run(args: argparse.Namespace) -> int:
    resolve_target(args)
    if args.game is not None and args.game not in [g.name for g in registry.all_games()]:
        from client_cli.commands.common import error

        error(f"no game {args.game!r}; choose one of: {', '.join([g.name for g in registry.all_games()])}")
        return 2
    start = start_commands(args)
    if args.script or not sys.stdin.isatty():
        return asyncio.run(run_script(
            args.url, stdin_lines(), sys.stdout, name=args.name, start=start, show_board=args.show_board,
            seats=SeatStore.default(), hint=args.room,
        ))
    from client_cli.tui.app import PlayApp

    PlayApp(args.url, name=args.name, start=start, seats=SeatStore.default(), room=args.room).run()
    return 0
