"""The bot SDK: run bots over the protocol (`runner`) and against each other (`arena`).

Bots themselves are pure policies in `engines.bots` (re-exported here so a bot
author needs one import): `from client_cli.bots import Bot`. See docs/bots.md.
"""

from client_cli.bots.sdk import decide, load_bot_class, make_bot
from engines.bots.base import Bot, BotContext, BotError, StepTracker
from engines.bots.registry import BUNDLED, bundled_names, parse_spec

__all__ = [
    "BUNDLED",
    "Bot",
    "BotContext",
    "BotError",
    "StepTracker",
    "bundled_names",
    "decide",
    "load_bot_class",
    "make_bot",
    "parse_spec",
]
