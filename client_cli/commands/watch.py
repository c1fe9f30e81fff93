"""`giants watch URL ROOM`: spectate a room.

Interactive (the Textual client, already watching the room) on a terminal; with
--plain it prints the screen after every change until the game ends, and with --once
it prints the current screen and exits (both scriptable). A room that is no longer
live (finished) is shown as its replay: final position, outcome and moves.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from client_cli.client import Client, ClientError, RequestFailed
from client_cli.render.safe import printable
from client_cli.seat_store import SeatStore
from client_cli.tui.session import PlaySession, replay_screen


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="server address, e.g. ws://127.0.0.1:8765")
    parser.add_argument("room", help="room id")
    parser.add_argument("--password", default=None, help="room password")
    parser.add_argument("--name", default=None, help="your name (shown to no one but the server)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--plain", action="store_true", help="print each new screen until the game ends")
    mode.add_argument("--once", action="store_true", help="print the current screen and exit")


async def watch_plain(url: str, room_id: str, out: TextIO, *, once: bool, password: str | None = None,
                      name: str | None = None) -> int:
    """Print the room's screen now (and after every change unless `once`) until it ends."""
    async with Client(url, name=name, room=room_id) as client:
        session = PlaySession(client)
        try:
            room = await client.watch(room_id, password)
        except RequestFailed as exc:
            if str(exc.code) != "no_such_room":
                raise
            # Not live any more: a finished room is still readable as a replay.
            print(printable(replay_screen(await client.replay(room_id))), file=out, flush=True)
            return 0
        session.room = room
        print(session.screen(), file=out, flush=True)
        while not once and not room.finished:
            await room.wait_change()
            print("\n" + "-" * 60 + "\n" + session.screen(), file=out, flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.plain or args.once or not sys.stdout.isatty():
        try:
            return asyncio.run(watch_plain(args.url, args.room, sys.stdout, once=args.once,
                                           password=args.password, name=args.name))
        except RequestFailed as exc:
            print(printable(f"error [{exc.code}]: {exc.message}"), file=sys.stderr)
            return 2
        except (OSError, ClientError) as exc:
            print(f"error: cannot reach {args.url}: {exc}", file=sys.stderr)
            return 2
    from client_cli.tui.app import PlayApp

    password = f" password={args.password}" if args.password else ""
    PlayApp(args.url, name=args.name, start=[f"/watch {args.room}{password}"], seats=SeatStore.default()).run()
    return 0
