"""Seats the server plays itself, with the bundled bots of `engines.bots`.

A room created with `bots: {"1": "mcts,iterations=200"}` plays seat 1 itself. The bot
sees exactly what a remote bot would: `engine.view(state, seat)` and the seat's legal
list, never the state. The server, not the room's creator, decides how much a bot may
think (`BotLimits`, set in config):

- only bundled bot names, and only the parameters a bot documents, are accepted;
  numbers are clamped to the configured maxima (`clamp_spec`) when the room is
  created *and* again whenever a bot is built, so a room restored from Redis obeys
  today's limits too;
- every move runs under a time budget: the bot's `should_stop` turns true at the
  deadline (its search loops check it and answer with the best action so far), and if
  no answer arrives by the deadline plus a grace period the server plays a random
  legal action for it and forgets that bot object;
- bots think in daemon threads that nothing ever joins (`ThinkPool`), so shutdown and
  SIGTERM never wait for a search;
- each bot's randomness comes from a fresh secret (`secrets`), never from the room's
  dice seed, so a bot's choices reveal nothing about future chance (GI-6, GI-28).

The room drives this through the `BotTable` protocol; this module never imports the
room (the room imports it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import queue
import random
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import Counter, Gauge

from engines.base import Engine, Seat, View
from engines.bots.base import Bot, BotContext, BotError
from engines.bots.registry import BUNDLED, make_bot, parse_spec
from server.cancellation import checkpoint
from server.errors import RequestError
from server.metrics import Metrics
from server.seats import SeatState

log = logging.getLogger("giants.bots")


@dataclass(frozen=True)
class BotLimits:
    """How much a server-run bot may think; from config (`--bot-*` flags)."""

    move_seconds: float = 2.0  # wall-time budget of one move
    grace_seconds: float = 0.5  # after the budget: stop waiting, play a random legal action
    max_iterations: int = 2_000  # mcts iterations per move
    max_rollout: int = 400  # mcts playout depth
    threads: int = 2  # bots thinking at once in this process


# The parameters each bundled bot accepts from a room creator: name -> kind.
# "count" values are clamped to a maximum; "ms" to the move budget.
_PARAMS: dict[str, dict[str, str]] = {
    "random": {},
    "greedy": {},
    "islander": {},
    "mcts": {
        "iterations": "iterations", "ms": "ms", "rollout": "rollout",
        "c": "real", "alpha": "unit", "order": "flag", "order_all": "flag",
    },
}


def clamp_spec(spec: str, limits: BotLimits) -> str:
    """The spec in canonical form with every number within the server's limits.

    Raises RequestError(bad_options) for anything but a bundled name with its
    documented parameters.
    """
    try:
        name, params = parse_spec(spec)
    except BotError as exc:
        raise RequestError("bad_options", f"bots: {exc}") from None
    if name not in BUNDLED:
        # Only bundled bots: a room creator must not make the server import modules.
        raise RequestError("bad_options", f"bots: {name[:40]!r} is not a bundled bot ({', '.join(BUNDLED)})")
    allowed = _PARAMS.get(name, {})
    parts = [name]
    for key, raw in params.items():
        kind = allowed.get(key)
        if kind is None:
            raise RequestError("bad_options", f"bots: {name} takes no parameter {key[:40]!r}")
        parts.append(f"{key}={_clamp(name, key, kind, raw, limits)}")
    return ",".join(parts)


def _clamp(name: str, key: str, kind: str, raw: str, limits: BotLimits) -> str:
    if kind == "flag":
        if raw.lower() not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
            raise RequestError("bad_options", f"bots: {name} {key} must be 0 or 1")
        return "1" if raw.lower() in ("1", "true", "yes", "on") else "0"
    try:
        value = float(raw)
    except ValueError:
        raise RequestError("bad_options", f"bots: {name} {key} must be a number") from None
    if not math.isfinite(value) or value < 0:
        raise RequestError("bad_options", f"bots: {name} {key} must be a finite number >= 0")
    if kind == "iterations":
        return str(max(1, min(int(value), limits.max_iterations)))
    if kind == "rollout":
        return str(min(int(value), limits.max_rollout))
    if kind == "ms":
        return repr(min(value, limits.move_seconds * 1000.0))
    if kind == "unit":
        return repr(min(value, 1.0))
    return repr(min(value, 100.0))  # "real": an exploration constant


def build(spec: str, game: str, rules: str, seat: int, players: int, options: dict[str, Any],
          limits: BotLimits) -> Bot:
    """A bot for one seat, its spec clamped to `limits` and its randomness secret.

    Raises RequestError(bad_options) if the bot cannot play here.
    """
    clamped = clamp_spec(spec, limits)
    context = BotContext(
        game=game, rules=rules, seat=seat, players=players, options=dict(options),
        seed=secrets.randbits(64),  # never the room's dice seed (GI-6, GI-28)
    )
    try:
        return make_bot(clamped, context)
    except BotError as exc:
        raise RequestError("bad_options", f"bots: {exc}") from None


def check_spec(spec: str, game: str, rules: str, seat: int, players: int, options: dict[str, Any],
               limits: BotLimits) -> str:
    """The clamped spec to store for a seat; RequestError(bad_options) if unusable."""
    build(spec, game, rules, seat, players, options, limits)
    return clamp_spec(spec, limits)


# -- thinking off the event loop -----------------------------------------------------


class _Job:
    __slots__ = ("bot", "done", "legal", "loop", "result", "view")

    def __init__(self, bot: Bot, view: View, legal: list[str], loop: asyncio.AbstractEventLoop) -> None:
        self.bot, self.view, self.legal, self.loop = bot, view, legal, loop
        self.done: asyncio.Future[str | None] = loop.create_future()
        self.result: str | None = None


class ThinkPool:
    """A few daemon threads that run bots' `choose`; nothing ever waits for them.

    `asyncio.to_thread` would use the loop's default executor, which `asyncio.run`
    joins on exit and which Python joins at interpreter shutdown: a search that
    ignores its deadline would then hold SIGTERM hostage. Daemon threads are simply
    abandoned when the process exits.
    """

    def __init__(self, threads: int) -> None:
        self.threads = max(1, threads)
        self._queue: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._started = 0
        self._lock = threading.Lock()
        self.busy = 0

    def submit(self, bot: Bot, view: View, legal: list[str]) -> asyncio.Future[str | None]:
        """Queue a `choose` call; the future gets its text (None if it failed)."""
        job = _Job(bot, view, legal, asyncio.get_running_loop())
        with self._lock:
            if self._started < self.threads:
                self._started += 1
                threading.Thread(target=self._work, name=f"giants-bot-{self._started}", daemon=True).start()
        self._queue.put(job)
        return job.done

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            with self._lock:
                self.busy += 1
            result: str | None = None
            try:
                if not job.bot.stopped():  # its budget ran out while it queued: skip
                    choice = job.bot.choose(job.view, job.legal)
                    result = choice if isinstance(choice, str) else None
            except Exception:  # a bundled bot's bug must not stop the game
                log.exception("bot %s failed to choose", job.bot.name)
            finally:
                with self._lock:
                    self.busy -= 1
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                job.loop.call_soon_threadsafe(_resolve, job.done, result)


def _resolve(future: asyncio.Future[str | None], result: str | None) -> None:
    if not future.done():
        future.set_result(result)


class SeatBots:
    """This server's bot service: limits, the thread pool and the bot metrics."""

    def __init__(self, limits: BotLimits | None = None, metrics: Metrics | None = None) -> None:
        self.limits = limits or BotLimits()
        self.pool = ThinkPool(self.limits.threads)
        registry = metrics.registry if metrics is not None else None
        self.timeouts = Counter(
            "giants_bot_timeouts", "Bot moves that missed the time budget (a random legal action was played).",
            registry=registry,
        )
        self.thinking = Gauge("giants_bots_thinking", "Server-run bots thinking right now.", registry=registry)
        self.thinking.set_function(lambda: self.pool.busy)

    async def think(self, bot: Bot, view: View, legal: list[str], fallback: random.Random) -> tuple[str, bool]:
        """The bot's action within the move budget, or a random legal one; and whether
        the bot overran (it may still be running: the caller must not reuse it).

        Cancelling the caller stops the search too (cooperatively).
        """
        cancelled = threading.Event()
        deadline = time.monotonic() + self.limits.move_seconds

        def should_stop() -> bool:
            return cancelled.is_set() or time.monotonic() >= deadline

        bot.should_stop = should_stop
        future = self.pool.submit(bot, view, legal)
        try:
            choice = await asyncio.wait_for(
                asyncio.shield(future), self.limits.move_seconds + self.limits.grace_seconds
            )
        except TimeoutError:
            self.timeouts.inc()
            log.warning("bot %s missed its %.1f s budget; playing a random legal action",
                        bot.name, self.limits.move_seconds)
            cancelled.set()
            return fallback.choice(legal), True
        finally:
            cancelled.set()  # whatever happened, this search is over
        return (choice if choice is not None else fallback.choice(legal)), False


_DEFAULT: SeatBots | None = None


def default_service() -> SeatBots:
    """The service of rooms built without a lobby (tests, tools): default limits."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = SeatBots()
    return _DEFAULT


# -- the room side ---------------------------------------------------------------------


class BotTable(Protocol):
    """What the bot driver needs from a room (`server.room.Room` provides it)."""

    id: str
    engine: Engine
    meta: dict[str, Any]
    state: Any
    status: str
    version: int
    seats: list[SeatState]
    closing: bool
    lock: asyncio.Lock
    metrics: Metrics
    bot_players: dict[Seat, Bot] | None  # None until a bot seat first plays (memory per room)

    @property
    def rng(self) -> random.Random: ...

    def pending(self) -> list[Seat]: ...

    def legal_for(self, seat: Seat | None) -> list[str]: ...

    async def apply_action(self, seat: Seat, action: Any, extra: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def publish(self, events: list[dict[str, Any]], skip: Any = None) -> None: ...


async def play_bot_seats(room: BotTable, service: SeatBots) -> None:
    """Play `room`'s bot seats while any is to act (one task per room at a time).

    A bot thinks without the room lock (humans in a simultaneous step keep acting);
    its answer is applied only if the room did not change meanwhile. Returns when no
    bot seat is to act; the caller re-runs it after the next change.
    """
    try:
        while not room.closing and room.status == "playing":
            checkpoint()  # a cancel lost in the last move's commit (server.cancellation)
            await asyncio.sleep(0)  # the last change's replies and patches go out first
            seats = [s for s in room.pending() if room.seats[s].bot]
            if not seats:
                return
            seat = seats[0]
            version, state = room.version, room.state
            players = room.bot_players
            if players is None:
                players = room.bot_players = {}
            bot = players.get(seat)
            if bot is None:
                meta = room.meta
                bot = players[seat] = build(
                    room.seats[seat].bot or "random", meta["game"], meta["rules"], seat,
                    meta["players"], meta["options"], service.limits,
                )
            legal = room.legal_for(seat)
            choice, overran = await service.think(bot, room.engine.view(state, seat), legal, room.rng)
            if overran:
                players.pop(seat, None)  # it may still be running: never reuse it
            async with room.lock:
                if room.version != version or room.closing:
                    continue  # the room moved on while the bot thought: look again
                try:
                    action = room.engine.parse_action(state, seat, choice)
                    events = await room.apply_action(seat, action, [])
                except RequestError as exc:
                    if exc.code in ("internal_error", "storage_unavailable"):
                        # The room's recovery restarts its bots once Redis answers.
                        log.error("room %s: bot move not saved: %s", room.id, exc.message)
                        return
                    action = room.engine.parse_action(state, seat, room.rng.choice(legal))
                    events = await room.apply_action(seat, action, [])
                room.metrics.bot_moves[room.meta["game"]] += 1
                room.publish(events)
    except RequestError as exc:
        log.error("room %s: bot move failed: %s", room.id, exc.message)
