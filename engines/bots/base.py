"""The bot SDK: a bot sees one seat's view and its legal actions, and chooses one.

A bot is a class with one method:

    class MyBot(Bot):
        def choose(self, view, legal):          # or: async def choose(...)
            return legal[0]

`view` is exactly what the seat may see: the engine's `view(state, seat)` (the
"game" part of the room view the server sends), as plain msgpack-able data. `legal`
lists the seat's legal actions in the game's notation (strings). The bot returns one
of those strings; for games whose lists are a canonical subset
(`GameInfo.complete_action_lists` is False, i.e. GIANTS) any well-formed legal action
in the notation is accepted.

The same bot object runs in the local arena (`giants arena`), over the protocol
(`giants bot`, `client_cli.bots.runner.run_bot`) and in seats the server fills with
bundled bots (`server/seat_bots.py`). Bots never receive snapshots, other seats' views
or hidden state; a search bot that needs a rules model rebuilds one from its own view
with `engine.state_from_view(view)` (perfect-information games only).

Bots are pure policies: no I/O, no global random (each bot owns `self.rng`). A caller
that must bound a bot's thinking sets `bot.should_stop` to a predicate; long loops call
`self.stopped()` and answer with the best action found so far.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from engines.base import Engine, View
from engines.registry import get_engine


class BotError(Exception):
    """A bot could not be loaded, was misconfigured, or chose something unusable."""


@dataclass(frozen=True)
class BotContext:
    """What a bot knows about its table besides the view: set once per game.

    `params` holds bot-specific settings from the command line or the lobby
    (e.g. `iterations` for mcts); `seed` makes a bot's own randomness repeatable.
    """

    game: str
    rules: str
    seat: int
    players: int
    options: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def engine(self) -> Engine:
        """The local rules engine for this game (pure rules; never the server's state)."""
        return get_engine(self.game, self.rules)


class Bot:
    """Base class of every bot. Subclasses implement `choose` (sync or async).

    `self.context` and a seeded `self.rng` are ready in `__init__`; override
    `setup()` for work to do once per game (called at the end of `__init__`).
    `should_stop` is the caller's cancellation predicate (never true by default).
    """

    #: The registry name of a bundled bot ("random", "mcts", ...).
    name: ClassVar[str] = "bot"
    #: One line for `giants arena --list` and docs.
    description: ClassVar[str] = ""
    #: Games this bot plays (None = every game).
    games: ClassVar[frozenset[str] | None] = None

    def __init__(self, context: BotContext) -> None:
        self.context = context
        self.rng = random.Random(context.seed)
        self.should_stop: Callable[[], bool] = _never
        self.setup()

    def stopped(self) -> bool:
        """Whether the caller wants an answer now: search loops check this and return
        the best action found so far (cooperative cancellation; see seat_bots)."""
        return self.should_stop()

    def setup(self) -> None:
        """Per-game initialisation hook; the default does nothing."""

    def param(self, key: str, default: Any) -> Any:
        """A bot parameter converted to the type of `default` (params come as text)."""
        raw = self.context.params.get(key, default)
        if isinstance(default, bool) and isinstance(raw, str):
            return raw.lower() in ("1", "true", "yes", "on")
        try:
            return type(default)(raw) if default is not None else raw
        except (TypeError, ValueError) as exc:
            raise BotError(f"{self.name}: parameter {key}={raw!r}: {exc}") from None

    def choose(self, view: View, legal: list[str]) -> str | Awaitable[str]:
        """Return one action from `legal` (the seat's legal actions, in notation).

        Called only when the seat must act (`legal` is never empty). May be a
        coroutine function. Raise nothing for ordinary play; an exception is reported
        and the runner falls back to a random legal action.
        """
        raise NotImplementedError


class StepTracker:
    """Who still has to answer in a simultaneous step (two or more seats to act).

    In such a step a seat may act and still be listed (GIANTS lets a bid be replaced
    until the last one arrives), so asking "the first seat to act" again and again
    would loop. A referee asks `next_seat(to_act)`; a seat's own runner asks
    `should_act(seat, to_act)`; both report each accepted action with `acted`.
    """

    def __init__(self) -> None:
        self.answered: set[int] = set()

    def next_seat(self, to_act: frozenset[int] | set[int] | list[int]) -> int:
        """The lowest seat to act that has not answered in this step."""
        seats = set(to_act)
        pending = sorted(seats - self.answered)
        if not pending:  # everyone answered and the step is still open: go round again
            self.answered.clear()
            pending = sorted(seats)
        return pending[0]

    def should_act(self, seat: int, to_act: frozenset[int] | set[int] | list[int]) -> bool:
        """Whether `seat` should act now (False after it already answered this step)."""
        seats = set(to_act)
        if seat not in seats or len(seats) <= 1:
            self.answered.discard(seat)
            return seat in seats
        return seat not in self.answered

    def acted(self, seat: int, to_act_before: frozenset[int] | set[int] | list[int],
              to_act_after: frozenset[int] | set[int] | list[int]) -> None:
        if len(set(to_act_before)) > 1 and len(set(to_act_after)) > 1:
            self.answered.add(seat)
        else:
            self.answered.clear()


def _never() -> bool:
    return False
