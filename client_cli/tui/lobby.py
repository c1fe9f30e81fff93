"""The lobby screen of the terminal client and what its numbers open.

What `giants play` shows before you are in a room: your games (seats kept in the seat
file, to resume), the public rooms of the server (names, age, result) and the games
you can start. Every game and room has a number; typing it opens it the way a click
would in a web lobby: your game is resumed, a room with a free seat is joined, a full
or running one watched, a finished one replayed. `quick_pick` chooses the room
`/play GAME` joins (a waiting public room with a free seat) before it creates one.
Pure functions over the server's RoomSummary maps and the seat store's entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from client_cli.client import result_text
from client_cli.seat_store import SeatEntry


@dataclass(frozen=True)
class Choice:
    """A numbered lobby line: the command that typing its number runs."""

    command: str
    line: str


def age_text(seconds: float) -> str:
    """A short age: "now", "5m", "3h", "2d"."""
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


def free_seats(summary: dict[str, Any]) -> list[int]:
    """The seats of a room summary nobody (and no bot) holds."""
    return [int(s.get("seat", i)) for i, s in enumerate(summary.get("seats") or [])
            if not s.get("name") and not s.get("bot")]


def room_command(summary: dict[str, Any], mine: set[str]) -> str:
    """What opening a listed room does: resume your seat, join a free one, watch, replay."""
    room = str(summary.get("room"))
    if room in mine:
        return f"/resume {room}"
    if summary.get("status") == "finished":
        return f"/replay {room}"
    if summary.get("status") == "waiting" and free_seats(summary):
        return f"/join {room}"
    return f"/watch {room}"


def choices(
    mine: Sequence[SeatEntry], rooms: Sequence[dict[str, Any]], games: Sequence[dict[str, Any]], now: float
) -> tuple[list[Choice], list[Choice], list[Choice]]:
    """The numbered lines of the lobby: (your games, open rooms, new games), numbered
    on from 1 in that order."""
    held = {e.room for e in mine}
    mine_lines = [
        Choice(f"/resume {e.room}",
               f"{e.room:<10} {e.game + '/' + e.rules:<22} seat {e.seat}  {e.result or e.status or '?':<18} "
               f"{age_text(now - e.saved)}")
        for e in mine[:20]
    ]
    room_lines = []
    for summary in rooms:
        seats = summary.get("seats") or []
        names = ", ".join(str(x.get("name")) if x.get("name") else "-" for x in seats)
        watchers = summary.get("spectators", 0)
        result = result_text(summary.get("outcome"), None)
        command = room_command(summary, held)
        kind = f"{summary.get('game')}/{summary.get('rules')}"
        age = age_text(now - float(summary.get("created") or now))
        room_lines.append(Choice(command, (
            f"{summary.get('room')!s:<10} {kind:<22} {summary.get('status')!s:<9} {age:>4}  [{names}]"
            + (f"  {watchers} watching" if watchers else "")
            + (" password" if summary.get("password") else "")
            + (f"  {result}" if result else "")
            + f"  -> {command.split()[0].lstrip('/')}"
        )))
    by_name: dict[str, list[dict[str, Any]]] = {}
    for info in games:
        by_name.setdefault(str(info.get("name")), []).append(info)
    game_lines = []
    for name, infos in by_name.items():
        low, high = infos[0].get("players") or ["?", "?"]
        players = f"{low}" if low == high else f"{low}-{high}"
        rules = ", ".join(str(i.get("rules")) for i in infos)
        title = infos[0].get("title") or infos[0].get("summary") or ""
        game_lines.append(Choice(f"/play {name}", f"{name:<12} {players} players  rules: {rules}  {title}".rstrip()))
    return mine_lines, room_lines, game_lines


def lobby_text(
    mine: Sequence[SeatEntry], rooms: Sequence[dict[str, Any]], games: Sequence[dict[str, Any]], now: float
) -> tuple[str, list[str]]:
    """The lobby as text, and the command each number runs (number N is entry N - 1)."""
    mine_lines, room_lines, game_lines = choices(mine, rooms, games, now)
    commands: list[str] = []
    lines = ["Lobby - type a number to open it; /rooms refreshes, /help lists every command", ""]

    def section(title: str, entries: list[Choice], empty: str | None) -> None:
        if not entries and empty is None:
            return
        lines.append(title)
        if not entries and empty is not None:
            lines.append(f"  {empty}")
        for entry in entries:
            commands.append(entry.command)
            lines.append(f"{len(commands):>3}  {entry.line}")
        lines.append("")

    section("Your games (number: resume your seat):", mine_lines, None)
    section("Rooms (number: join a free seat, watch, or replay a finished one):", room_lines, "(no open rooms)")
    section("New game (number: join a waiting room of it or create one; /create GAME for options):",
            game_lines, None)
    return "\n".join(lines).rstrip(), commands


def quick_pick(rooms: Sequence[dict[str, Any]], game: str, rules: str | None, mine: set[str]) -> str | None:
    """The room `/play GAME` joins: the oldest waiting public room of that game (and rule
    set, when given) without a password that has a free seat and is not already yours."""
    fits = [
        r for r in rooms
        if r.get("game") == game and r.get("status") == "waiting" and not r.get("password")
        and (rules is None or r.get("rules") == rules) and free_seats(r) and str(r.get("room")) not in mine
    ]
    fits.sort(key=lambda r: float(r.get("created") or 0))
    return str(fits[0]["room"]) if fits else None
