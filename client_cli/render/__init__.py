"""Text renderers: one per game, plus the room frame around them.

Every renderer is a pure function `render(view, seat) -> str` over the engine's view
(the "game" part of a room view), so it can be snapshot-tested from engine views and
shows exactly what the seat may see. `render_game` picks the game's renderer;
`render_room` adds the room header, whose turn it is, recent moves and the legal moves.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from typing import Any

RENDERERS: dict[str, str] = {
    "giantslayer": "client_cli.render.giantslayer",
    "causeway": "client_cli.render.causeway",
    "tara": "client_cli.render.tara",
    "giants": "client_cli.render.giants",
}


def render_game(game: str, view: dict[str, Any], seat: int | None = None) -> str:
    """The board of `game` drawn from `view`; unknown games fall back to indented JSON."""
    module_name = RENDERERS.get(game)
    if module_name is not None:
        module = importlib.import_module(module_name)
        text: str = module.render(view, seat)
        return text
    return json.dumps(view, indent=1, sort_keys=True, default=str)


def describe_seat(entry: dict[str, Any], me: int | None) -> str:
    name = entry.get("name") or "(free)"
    marks = []
    if entry.get("bot"):
        marks.append(f"bot {entry['bot']}")
    if entry.get("name") and not entry.get("connected", True):
        marks.append("away")
    if entry.get("seat") == me:
        marks.append("you")
    return f"seat {entry.get('seat')}: {name}" + (f" ({', '.join(marks)})" if marks else "")


def format_legal(legal: Sequence[str], limit: int = 80, width: int = 100) -> str:
    """The legal moves wrapped to `width` columns; long lists are cut with a count."""
    if not legal:
        return "Legal moves: none (not your turn)"
    # Moves with spaces (GIANTS: "bid 1 w1 c") are kept whole and set apart with " | ".
    sep = " | " if any(" " in move for move in legal) else " "
    items = list(legal[:limit])
    if len(legal) > limit:
        items.append(f"... and {len(legal) - limit} more")
    return wrap_items(f"Legal moves ({len(legal)}):", items, sep, width)


def wrap_items(title: str, items: Sequence[str], sep: str, width: int = 100) -> str:
    """`title item sep item ...` wrapped to `width` columns without splitting an item."""
    lines = [title]
    for item in items:
        joiner = " " if lines[-1] == title else sep
        if len(lines[-1]) + len(joiner) + len(item) > width and lines[-1].strip():
            lines.append("  " + item)
        else:
            lines[-1] += joiner + item
    return "\n".join(lines)


def render_room(
    room_view: dict[str, Any],
    seat: int | None,
    legal: Sequence[str] = (),
    recent: Sequence[str] = (),
    legal_limit: int = 80,
    now: float | None = None,
    width: int = 100,
) -> str:
    """The whole screen for one room: header, seats, board, outcome, recent and legal moves.

    With `now` (unix time) a running move deadline is shown as seconds left; the lists
    of recent and legal moves are wrapped to `width` columns.
    """
    room = room_view.get("room", {})
    game = room.get("game", "?")
    lines = [
        f"Room {room.get('id', '?')} - {game}/{room.get('rules', '?')} - {room.get('status', '?')}"
        + (" - you are spectating" if seat is None else f" - you are seat {seat}"),
        "Seats: " + "; ".join(describe_seat(s, seat) for s in room.get("seats", [])),
    ]
    to_act = room.get("to_act") or []
    if room.get("status") == "playing":
        waiting = ", ".join(f"seat {s}" + (" (you)" if s == seat else "") for s in to_act)
        deadline = room.get("deadline")
        left = f" - {max(0, round(deadline - now))} s left to move" if deadline and now else ""
        answered = room.get("answered") or []
        if answered:
            waiting += "; answered: " + ", ".join(f"seat {x}" + (" (you)" if x == seat else "") for x in answered)
        lines.append(f"To act: {waiting or '-'}{left}")
        offer = room.get("draw_offer")
        if offer is not None:
            lines.append(
                "You offered a draw (/decline withdraws it)" if offer == seat
                else f"Seat {offer} offers a draw" + (": /draw accepts, /decline declines" if seat is not None else "")
            )
    lines.append("")
    game_view = room_view.get("game")
    if game_view:
        lines.append(render_game(game, game_view, seat))
    else:
        lines.append("(the game has not started)")
    outcome = room_view.get("outcome")
    if outcome and outcome.get("reason") == "aborted":
        lines += ["", "Game aborted: no result" + (f" - {outcome['detail']}" if outcome.get("detail") else "")]
    elif outcome:
        winners = ", ".join(f"seat {w}" for w in outcome.get("winners", []))
        lines.append("")
        lines.append(
            f"Game over: {'draw between ' if len(outcome.get('winners', [])) != 1 else 'winner '}"
            f"{winners}; scores {outcome.get('scores')}; {outcome.get('reason')}"
            + (f" - {outcome['detail']}" if outcome.get("detail") else "")
        )
    if recent:
        lines.append("")
        lines.append(wrap_items("Recent:", recent, " | ", width))
    if seat is not None and room.get("status") == "playing":
        lines.append("")
        lines.append(format_legal(legal, legal_limit, width))
    return "\n".join(lines)
