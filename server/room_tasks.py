"""A room's own tasks: the move deadline's timer, server-run bots, autostart and
eviction after a change, and stopping it all at shutdown (`RoomTasks`, a mixin of
`server.room.Room`).

Everything here runs under the room's lock like any other change: a deadline plays
the engine's default action for each late seat through the same write path as a
move (`apply_action`), and bots play through `server.seat_bots`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from engines.base import Engine, Seat
from server import seat_bots
from server.cancellation import cancel_and_wait
from server.errors import RequestError
from server.seats import Member, SeatState

if TYPE_CHECKING:
    pass

log = logging.getLogger("giants.room")


class RoomTasks:
    """Mixin for Room: deadlines, bots and the room's tasks. Room supplies the
    attributes declared here."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    id: str
    engine: Engine
    meta: dict[str, Any]
    state: Any
    status: str
    seats: list[SeatState]
    members: list[Member]
    deadline: float | None
    lock: asyncio.Lock
    closing: bool
    bot_running: bool
    bot_service: seat_bots.SeatBots
    on_idle: Callable[[Any], None] | None
    _timer: asyncio.TimerHandle | None  # pending, or None (a fired timer sets it None)
    _timer_for: float  # the deadline `_timer` was armed for (it goes off then, or before)
    _tasks: set[asyncio.Task[None]] | None

    if TYPE_CHECKING:  # provided by Room, RoomViews, RoomPublish and RoomMembership
        def pending(self) -> list[Seat]: ...
        async def apply_action(
            self, seat: Seat, action: Any, extra: list[dict[str, Any]]
        ) -> list[dict[str, Any]]: ...
        def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None: ...
        async def _autostart_quietly(self) -> None: ...

    def _after_change(self) -> None:
        """Let bots move, start a full autostart room whose start was not stored yet
        (restore, recovery), and evict an idle finished room."""
        status = self.status  # one of the three (nothing below changes it): read once, after every move
        if status == "playing":
            if not self.bot_running:
                for seat_state in self.seats:  # most rooms have no bot: then `pending` need not be asked
                    if seat_state.bot:
                        if any(self.seats[s].bot for s in self.pending()):
                            self.bot_running = True
                            self._spawn(self._play_bots())
                        break
        elif status == "waiting":
            if not self.closing and self.meta.get("autostart", True) and all(s.taken for s in self.seats):
                self._spawn(self._autostart_quietly())
        elif status == "finished" and not self.members and self.on_idle is not None:
            self.on_idle(self)

    async def _play_bots(self) -> None:
        try:
            # The Room this mixin is part of is the BotTable (its other mixins add the rest).
            await seat_bots.play_bot_seats(cast(seat_bots.BotTable, self), self.bot_service)
        finally:
            self.bot_running = False
            if self.status == "finished" and not self.members and self.on_idle is not None:
                self.on_idle(self)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        tasks = self._tasks
        if tasks is None:
            tasks = self._tasks = set()
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _arm_timer(self) -> None:
        """Make sure a timer goes off at the room's deadline, or before it (`_expire`
        then finds nothing due and arms it again).

        A pending timer armed for this deadline or an earlier one is kept: each move of
        a room with a move deadline moves the deadline later, and cancelling and making
        a timer every move cost ~19,000 instructions on asyncio's loop (~8,000 on
        uvloop's); now that is paid about once a deadline period, by an early `_expire`."""
        timer, deadline = self._timer, self.deadline
        if deadline is None or self.closing:
            if timer is not None:
                timer.cancel()
                self._timer = None
            return
        if timer is not None:
            if self._timer_for <= deadline:
                return
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer_for = deadline
        self._timer = loop.call_later(max(0.0, deadline - time.time()), self._deadline_timer_fired)

    def _deadline_timer_fired(self) -> None:
        self._timer = None  # used up: the next `_arm_timer` makes a new one
        self._spawn(self._expire())

    def start_timers(self) -> None:
        """Arm the deadline and bot turns after a restore (the loop must be running)."""
        self._arm_timer()
        self._after_change()

    async def _expire(self) -> None:
        """The move deadline passed: apply the engine's default action for each late seat."""
        async with self.lock:
            while (
                self.deadline is not None
                and time.time() >= self.deadline
                and self.status == "playing"
                and not self.closing
            ):
                seat = self.pending()[0]
                try:
                    action = self.engine.default_action(self.state, seat)
                    events = await self.apply_action(seat, action, [{"type": "timeout", "seat": seat}])
                except RequestError as exc:
                    # A failed write schedules the room's recovery, which re-arms this
                    # timer once Redis answers (the deadline stays due until then).
                    log.error("room %s: default action for seat %s failed: %s", self.id, seat, exc.message)
                    return
                self.publish(events)
            self._after_change()
            # Re-arm whenever a deadline remains, due or not: a timer may fire a little
            # before the deadline by the wall clock (uvloop rounds delays to whole
            # milliseconds), and the deadline can pass between the loop's check above and
            # this one — re-arming only a deadline still ahead left the room with no timer
            # at all, and its game stopped for good. A due one fires at once and plays.
            if self.deadline is not None and self.status == "playing" and not self.closing:
                self._arm_timer()

    async def close(self) -> None:
        """Stop timers and bots (shutdown); waits for an in-flight change to finish."""
        async with self.lock:
            self.closing = True
            if self._timer is not None:
                self._timer.cancel()
        for task in list(self._tasks or ()):
            task.cancel()

    async def stop_tasks(self) -> None:
        """Shutdown, when `close` could not wait any longer: end the room's own tasks
        (a deadline or bot move stuck on an unreachable Redis; the room's next owner
        reads what was stored) and return once they have ended."""
        self.closing = True
        if self._timer is not None:
            self._timer.cancel()
        await cancel_and_wait(list(self._tasks or ()))
