"""Seats the server fills with bundled bots (the bot SDK in client_cli.bots).

A room created with `bots: {"1": "mcts,iterations=200"}` plays seat 1 itself. The bot
sees exactly what a remote bot would: `engine.view(state, seat)` and the seat's legal
list, never the state. Synchronous bots think in a worker thread so a slow search
never stalls the event loop; a bot that fails or answers nonsense is replaced, for
that move, by a random legal action.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from typing import Any

from server.errors import RequestError


def check_spec(spec: str, game: str, rules: str, seat: int, players: int, options: dict[str, Any]) -> None:
    """Raise RequestError(bad_options) if `spec` names no bundled bot for this game."""
    make(spec, game, rules, seat, players, options, seed=0)


def make(spec: str, game: str, rules: str, seat: int, players: int, options: dict[str, Any], seed: int) -> Any:
    """Build the bot for one seat; RequestError(bad_options) if it cannot play here."""
    from client_cli.bots.base import BotContext, BotError
    from client_cli.bots.registry import make_bot

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
