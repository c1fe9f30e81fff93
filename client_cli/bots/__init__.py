"""Bot SDK and bundled bots: see `client_cli.bots.base` and docs/bots.md."""

from client_cli.bots.base import Bot, BotContext, BotError, decide
from client_cli.bots.registry import BUNDLED, bundled_names, load_bot_class, make_bot, parse_spec

__all__ = [
    "BUNDLED",
    "Bot",
    "BotContext",
    "BotError",
    "bundled_names",
    "decide",
    "load_bot_class",
    "make_bot",
    "parse_spec",
]
