"""Bundled bots by name.

A bot spec is `NAME` optionally followed by comma-separated parameters:
`mcts,iterations=400`. `make_bot(spec, context)` returns a ready bot for one seat of
one game. Only the bundled names resolve here, so a server that builds bots from
specs a client sent can never be made to import a module; the bot SDK
(`client_cli.bots.sdk`) adds `package.module:ClassName` specs for bots users write.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from engines.bots.base import Bot, BotContext, BotError

# name -> "module:Class"; modules are imported on first use.
BUNDLED: dict[str, str] = {
    "random": "engines.bots.random_bot:RandomBot",
    "greedy": "engines.bots.greedy:GreedyBot",
    "mcts": "engines.bots.mcts:MctsBot",
    "islander": "engines.bots.islander:IslanderBot",
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


def bundled_class(name: str) -> type[Bot]:
    """The class of the bundled bot `name`; BotError for any other name."""
    target = BUNDLED.get(name)
    if target is None:
        raise BotError(f"unknown bot {name!r}: use one of {', '.join(BUNDLED)}")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    assert isinstance(cls, type) and issubclass(cls, Bot)
    return cls


def build_bot(cls: type[Bot], name: str, params: Mapping[str, Any], context: BotContext) -> Bot:
    """Instantiate `cls` for the seat in `context` with `params` merged over its own.

    Raises BotError if the bot does not play this game or a parameter is unusable.
    """
    if cls.games is not None and context.game not in cls.games:
        raise BotError(f"bot {name!r} does not play {context.game} (plays {sorted(cls.games)})")
    return cls(replace(context, params={**context.params, **params}))


def make_bot(spec: str, context: BotContext, extra: Mapping[str, Any] | None = None) -> Bot:
    """Build the bundled bot named by `spec` for the seat in `context`.

    Parameters in the spec are merged over `context.params` and `extra`. Raises
    BotError if the name is not bundled or the bot does not play this game.
    """
    name, params = parse_spec(spec)
    return build_bot(bundled_class(name), name, {**(extra or {}), **params}, context)


def bundled_names() -> list[str]:
    """Names accepted by `make_bot`."""
    return list(BUNDLED)
