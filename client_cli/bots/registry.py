"""Bundled bots by name, and bots loaded from a module path.

A bot spec is `NAME` or `package.module:ClassName`, optionally followed by
comma-separated parameters: `mcts,iterations=400` or `mybots.smart:SmartBot,depth=2`.
`make_bot(spec, context)` returns a ready bot for one seat of one game.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from client_cli.bots.base import Bot, BotContext, BotError

# name -> "module:Class"; modules are imported on first use.
BUNDLED: dict[str, str] = {
    "random": "client_cli.bots.random_bot:RandomBot",
    "greedy": "client_cli.bots.greedy:GreedyBot",
    "mcts": "client_cli.bots.mcts:MctsBot",
    "islander": "client_cli.bots.islander:IslanderBot",
}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split `name,key=value,...` into the name and its parameters (values stay text)."""
    name, *pairs = [part.strip() for part in spec.split(",")]
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BotError(f"bot parameter {pair!r} must be key=value (in {spec!r})")
        params[key] = value
    if not name:
        raise BotError("empty bot name")
    return name, params


def load_bot_class(name: str) -> type[Bot]:
    """The class for a bundled name or a `package.module:ClassName` path."""
    target = BUNDLED.get(name, name)
    module_name, sep, class_name = target.partition(":")
    if not sep:
        known = ", ".join(BUNDLED)
        raise BotError(f"unknown bot {name!r}: use one of {known} or package.module:ClassName")
    if name not in BUNDLED and os.getcwd() not in sys.path:
        # The `giants` console script does not put the working directory on the path
        # (python -m does); a bot module next to the user should load either way.
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BotError(f"cannot import bot module {module_name!r}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise BotError(f"{target!r} is not a Bot subclass")
    return cls


def make_bot(spec: str, context: BotContext, extra: Mapping[str, Any] | None = None) -> Bot:
    """Build the bot named by `spec` for the seat in `context`.

    Parameters in the spec are merged over `context.params` and `extra`. Raises
    BotError if the bot is unknown or does not play this game.
    """
    name, params = parse_spec(spec)
    cls = load_bot_class(name)
    if cls.games is not None and context.game not in cls.games:
        raise BotError(f"bot {name!r} does not play {context.game} (plays {sorted(cls.games)})")
    merged = {**context.params, **(extra or {}), **params}
    return cls(replace(context, params=merged))


def bundled_names() -> list[str]:
    """Names accepted by `make_bot` without a module path."""
    return list(BUNDLED)
