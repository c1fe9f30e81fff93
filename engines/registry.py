"""The registry of games and rule sets.

Engines register themselves with `@register` when their module is imported; the
built-in modules are imported lazily on first use, so `import engines` stays cheap.
Look an engine up with `get_engine(name, rules)`; a missing name or rule set raises
UnknownGameError / UnknownRulesError with the valid choices in the message.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass

from engines.base import Engine, GameInfo, UnknownGameError, UnknownRulesError

# Modules whose import registers the built-in games, in listing order.
BUILTIN_MODULES: tuple[str, ...] = (
    "engines.giantslayer",
    "engines.causeway",
    "engines.tara",
    "engines.giants",
)


@dataclass
class GameEntry:
    """One game: its rule sets in registration order; the first is the default."""

    name: str
    engines: dict[str, Engine]

    @property
    def default_rules(self) -> str:
        return next(iter(self.engines))

    @property
    def infos(self) -> list[GameInfo]:
        return [engine.info for engine in self.engines.values()]


_games: dict[str, GameEntry] = {}
_loaded = False
_load_lock = threading.RLock()  # re-entrant: an engine module may look others up on import


def register(cls: type[Engine]) -> type[Engine]:
    """Class decorator: register one rule set of a game (the first registered is default)."""
    info = cls.info
    entry = _games.setdefault(info.name, GameEntry(info.name, {}))
    if info.rules in entry.engines:
        raise ValueError(f"{info.name}/{info.rules} registered twice")
    entry.engines[info.rules] = cls()
    return cls


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    # Two threads asking first (bots think in worker threads) must not see a half-filled
    # registry: the second waits until the first has imported every module.
    with _load_lock:
        if _loaded:
            return
        for module in BUILTIN_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                # A game still being written is simply absent; any other import error is a bug.
                if exc.name != module:
                    raise
        _loaded = True


def all_games() -> list[GameEntry]:
    """Every registered game, built-ins first."""
    _load_builtins()
    return list(_games.values())


def all_engines() -> list[Engine]:
    """Every (game, rule set) engine: what the conformance suite runs over."""
    return [engine for entry in all_games() for engine in entry.engines.values()]


def get_engine(name: str, rules: str | None = None) -> Engine:
    """The engine for `name` under `rules` (None = the game's default rule set)."""
    _load_builtins()
    entry = _games.get(name)
    if entry is None:
        known = ", ".join(sorted(_games)) or "none"
        raise UnknownGameError(f"unknown game {name!r}; known games: {known}")
    if rules is None:
        rules = entry.default_rules
    engine = entry.engines.get(rules)
    if engine is None:
        known = ", ".join(entry.engines)
        raise UnknownRulesError(f"{name} has no rule set {rules!r}; choose one of: {known}")
    return engine
