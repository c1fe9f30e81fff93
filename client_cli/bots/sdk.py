"""The bot SDK's side of running bots: loading a bot by spec and asking it for a move.

The bots themselves (the `Bot` base class and the bundled policies) live in
`engines.bots`, which the server imports too. This module adds what only a client
does: loading a bot users wrote from a `package.module:ClassName` spec (from the
working directory), and awaiting a bot's answer, in a worker thread if it is slow.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from collections.abc import Mapping
from typing import Any

from engines.base import View
from engines.bots.base import Bot, BotContext, BotError
from engines.bots.registry import BUNDLED, build_bot, bundled_class, parse_spec


def load_bot_class(name: str) -> type[Bot]:
    """The class for a bundled name or a `package.module:ClassName` path."""
    if name in BUNDLED:
        return bundled_class(name)
    module_name, sep, class_name = name.partition(":")
    if not sep:
        known = ", ".join(BUNDLED)
        raise BotError(f"unknown bot {name!r}: use one of {known} or package.module:ClassName")
    if os.getcwd() not in sys.path:
        # The `giants` console script does not put the working directory on the path
        # (python -m does); a bot module next to the user should load either way.
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BotError(f"cannot import bot module {module_name!r}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise BotError(f"{name!r} is not a Bot subclass")
    return cls


def make_bot(spec: str, context: BotContext, extra: Mapping[str, Any] | None = None) -> Bot:
    """Build the bot named by `spec` (bundled name or module path) for `context`'s seat.

    Parameters in the spec are merged over `context.params` and `extra`. Raises
    BotError if the bot is unknown or does not play this game.
    """
    name, params = parse_spec(spec)
    return build_bot(load_bot_class(name), name, {**(extra or {}), **params}, context)


async def decide(bot: Bot, view: View, legal: list[str], *, threaded: bool = False) -> str:
    """Ask `bot` for an action, awaiting it if `choose` is async; check the result type.

    With `threaded`, a synchronous `choose` runs in a worker thread so a slow search
    does not stall the event loop it shares (a client serving a connection meanwhile).
    """
    if threaded and not inspect.iscoroutinefunction(bot.choose):
        choice = await asyncio.to_thread(bot.choose, view, legal)
    else:
        choice = bot.choose(view, legal)
    if inspect.isawaitable(choice):
        choice = await choice
    if not isinstance(choice, str):
        raise BotError(f"{type(bot).__name__}.choose returned {type(choice).__name__}, not str")
    return choice
