"""Bundled bots: pure policies over an engine, shared by the server and the clients.

A bot sees one seat's view and its legal actions and returns one action (see
`engines.bots.base` and docs/bots.md). The server fills seats with these
(`server/seat_bots.py`); the bot SDK in `client_cli.bots` runs them (or bots users
write) over the protocol and in the local arena.
"""

from engines.bots.base import Bot, BotContext, BotError, StepTracker
from engines.bots.registry import BUNDLED, bundled_class, bundled_names, make_bot, parse_spec

__all__ = [
    "BUNDLED",
    "Bot",
    "BotContext",
    "BotError",
    "StepTracker",
    "bundled_class",
    "bundled_names",
    "make_bot",
    "parse_spec",
]
