"""Seats the server fills with bundled bots (pure policies in engines.bots).

A room created with `bots: {"1": "mcts,iterations=200"}` plays seat 1 itself. The bot
sees exactly what a remote bot would: `engine.view(state, seat)` and the seat's legal
list, never the state. Synchronous bots think in a worker thread so a slow search
never stalls the event loop; a bot that fails or answers nonsense is replaced, for
that move, by a random legal action.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import Callable
from typing import Any, Protocol

from engines.bots.base import BotContext, BotError
from engines.bots.registry import make_bot
from server.errors import RequestError


class Room(Protocol):
    """What bot play needs from a room (server.room.Room): no import back up to it."""

    id: str
    engine: Any
    meta: dict[str, Any]
    state: Any
    status: str
    version: int
    seats: list[Any]
    members: list[Any]
    closing: bool
    bot_running: bool
    bot_players: dict[int, Any]
    rng: random.Random
    lock: asyncio.Lock
    metrics: Any
    on_idle: Callable[[Any], None] | None

    def pending(self) -> list[int]: ...

    def legal_for(self, seat: int | None) -> list[str]: ...

    async def apply_action(self, seat: int, action: Any, extra: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def publish(self, events: list[dict[str, Any]], skip: Any = None) -> None: ...

log = logging.getLogger("giants.bots")


def check_spec(spec: str, game: str, rules: str, seat: int, players: int, options: dict[str, Any]) -> None:
    """Raise RequestError(bad_options) if `spec` names no bundled bot for this game."""
    make(spec, game, rules, seat, players, options, seed=0)


def make(spec: str, game: str, rules: str, seat: int, players: int, options: dict[str, Any], seed: int) -> Any:
    """Build the bot for one seat; RequestError(bad_options) if it cannot play here."""
    if ":" in spec:
        # Only bundled bots: a room creator must not make the server import modules.
        raise RequestError("bad_options", f"bots: {spec!r} is not a bundled bot name")
    context = BotContext(game=game, rules=rules, seat=seat, players=players, options=dict(options), seed=seed)
    try:
        return make_bot(spec, context)
    except BotError as exc:
        raise RequestError("bad_options", f"bots: {exc}") from None


async def choose(bot: Any, view: dict[str, Any], legal: list[str], rng: random.Random) -> str:
    """The bot's action in notation; a random legal one if the bot fails."""
    try:
        if inspect.iscoroutinefunction(bot.choose):
            choice = await bot.choose(view, legal)
        else:
            choice = await asyncio.to_thread(bot.choose, view, legal)
        if isinstance(choice, str):
            return choice
    except Exception:  # a bundled bot's bug must not stop the game
        pass
    return rng.choice(legal)


async def play_bot_seats(room: Room) -> None:
    """Play `room`'s bot seats while any is to act (one task per room at a time).

    A bot thinks without the room lock (humans in a simultaneous step keep
    acting); its answer is applied only if the room did not change meanwhile.
    """
    try:
        while not room.closing and room.status == "playing":
            await asyncio.sleep(0)  # the last change's replies and patches go out first
            seats = [s for s in room.pending() if room.seats[s].bot]
            if not seats:
                return
            seat = seats[0]
            version, state = room.version, room.state
            bot = room.bot_players.get(seat)
            if bot is None:
                meta = room.meta
                bot = room.bot_players[seat] = make(
                    room.seats[seat].bot or "random", meta["game"], meta["rules"], seat,
                    meta["players"], meta["options"], seed=meta["seed"] + seat,
                )
            legal = room.legal_for(seat)
            choice = await choose(bot, room.engine.view(state, seat), legal, room.rng)
            async with room.lock:
                if room.version != version or room.closing:
                    continue  # the room moved on while the bot thought: look again
                try:
                    action = room.engine.parse_action(state, seat, choice)
                    events = await room.apply_action(seat, action, [])
                except RequestError as exc:
                    if exc.code == "internal_error":
                        log.error("room %s: bot move not saved: %s", room.id, exc.message)
                        return
                    action = room.engine.parse_action(state, seat, room.rng.choice(legal))
                    events = await room.apply_action(seat, action, [])
                room.metrics.bot_moves[room.meta["game"]] += 1
                room.publish(events)
    except RequestError as exc:
        log.error("room %s: bot move failed: %s", room.id, exc.message)
    finally:
        room.bot_running = False
        if room.status == "finished" and not room.members and room.on_idle is not None:
            room.on_idle(room)
