"""The non-interactive client: commands and moves from a file or stdin, text out.

    printf '/join abc123 0\\ne6-e7\\n' | giants play ws://127.0.0.1:8765 --script

Each line is a /command or a move. Before a move the script waits until it is this
seat's turn (or the game is over), then plays it and prints `> MOVE` followed by `ok`
or the server's error with its code. The rendered screen is printed at the end (and
before each move with --show-board), once the game is over or it is this seat's
turn again. Exit status: 0 if every line succeeded, 1 if
some were refused, 2 if the server could not be reached.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Iterable
from typing import TextIO

from client_cli.client import Client, ClientError, RoomLost, SeatStore
from client_cli.tui.session import PlaySession


async def stdin_lines() -> AsyncIterator[str]:
    """Lines of standard input as they arrive (so a pipe can feed moves over time)."""
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        yield line


async def _iterate(lines: Iterable[str] | AsyncIterator[str]) -> AsyncIterator[str]:
    if isinstance(lines, AsyncIterator):
        async for line in lines:
            yield line
    else:
        for line in lines:
            yield line


async def run_script(
    url: str,
    lines: Iterable[str] | AsyncIterator[str],
    out: TextIO,
    *,
    name: str | None = None,
    start: Iterable[str] = (),
    show_board: bool = False,
    turn_timeout: float | None = 300.0,
    settle_timeout: float = 10.0,
    seats: SeatStore | None = None,
    hint: str | None = None,
) -> int:
    """Play `start` commands then `lines`; write replies and the final screen to `out`.
    `hint`: the room the start commands join, if any (the connection's routing hint)."""
    failures = 0
    try:
        client = Client(url, name=name, seats=seats, room=hint)
        await client.connect()
    except (OSError, ClientError) as exc:
        print(f"error: cannot reach {url}: {exc}", file=sys.stderr)
        return 2
    async with client:
        session = PlaySession(client)

        async def one(line: str) -> bool:
            text = line.strip()
            if not text or text.startswith("#"):
                return True
            room = session.room
            is_move = not text.startswith("/") and room is not None and room.seat is not None
            if is_move and room is not None:
                try:
                    await room.wait_turn(turn_timeout)
                except (TimeoutError, RoomLost) as exc:
                    print(f"> {text}\nerror: no turn came ({exc or 'timeout'})", file=out)
                    return False
                if room.finished:
                    print(f"> {text}\nerror: the game is over", file=out)
                    return False
                if show_board:
                    print(session.screen() + "\n", file=out)
            reply = await session.handle(text)
            print(f"> {text}", file=out)
            if reply.error:
                print(reply.text if reply.text.startswith("error") else f"error: {reply.text}", file=out)
            elif reply.text:
                print(f"ok: {reply.text}" if is_move else reply.text, file=out)
            if text.lstrip("/").startswith("rooms"):
                print(session.lobby_text(), file=out)
            out.flush()
            return not reply.error

        for line in start:
            failures += not await one(line)
        async for line in _iterate(lines):
            if not await one(line):
                failures += 1
            if session.room is not None and session.room.finished and session.room.seat is not None:
                break
        room = session.room
        if room is not None and room.seat is not None and not room.finished:
            # Out of input: settle on a stable screen, the end or our next turn.
            with contextlib.suppress(TimeoutError, RoomLost):
                await room.wait_turn(settle_timeout)
        print("\n" + session.screen(), file=out)
    return 1 if failures else 0
