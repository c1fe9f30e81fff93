"""Rooms that end: idle waiting rooms, abandoned games, retention of finished rooms.

What an operator of a public server expects, each with a setting (docs/operations.md):

- a waiting room with no change for `waiting_ttl` seconds ends with reason "expired";
- a seat taken by someone who disconnects before the start is freed again after
  `seat_grace` seconds (unless they came back meanwhile);
- a playing room without a move deadline whose human seats have all been
  disconnected for `abandon_after` seconds ends with reason "abandoned";
- a finished room's keys (room hash, log, snapshot) expire `retention` seconds after
  the end, and the room leaves the finished index then, so Redis does not grow
  forever.

The timestamps behind these rules live in Redis (`P room:{<id>}:life`) and every
room with something due is in `P rooms:due` scored by when to look next, so all of it
survives a restart: a restored room gets its stored timestamps back and the sweeper,
which runs on every node for the rooms that node owns, finds it due as before.
Games end through `Room.end_game` (server/endings.py), the one way to finish a room
for a reason other than its rules.

The room tells this module about each stored change (`Room.on_change`); this module
never imports the room (the `LifeRoom` protocol says what it uses).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import Counter, Gauge

from engines.base import Seat
from server.cancellation import cancel_and_wait, checkpoint
from server.endings import ABANDONED, EXPIRED
from server.errors import RequestError
from server.metrics import Metrics
from server.seats import Candidate, Member, SeatState
from server.store import LifecycleStore, Store

log = logging.getLogger("giants.lifecycle")



@dataclass(frozen=True)
class LifecycleSettings:
    """From config: `--waiting-ttl`, `--seat-grace`, `--abandon-after`, `--retention`."""

    waiting_ttl: float = 3600.0
    seat_grace: float = 120.0
    abandon_after: float = 1800.0
    retention: float = 30 * 86400.0
    interval: float = 5.0  # seconds between sweeps


class LifeRoom(Protocol):
    """What the lifecycle needs from a room (server.room.Room provides it)."""

    id: str
    meta: dict[str, Any]
    status: str
    seats: list[SeatState]
    members: list[Member]
    closing: bool
    lock: asyncio.Lock
    life: dict[str, float]

    def _candidate(self, **changes: Any) -> Candidate: ...

    async def _commit(self, cand: Candidate) -> None: ...

    async def end_game(
        self,
        reason: str,
        *,
        scores: Sequence[float],
        winners: Sequence[Seat],
        detail: str,
        seat: Seat | None = None,
        events: Sequence[dict[str, Any]] = (),
    ) -> list[dict[str, Any]]: ...

    def publish(self, events: list[dict[str, Any]], skip: Any = None) -> None: ...

    def _after_change(self) -> None: ...


def _human_seats(room: LifeRoom) -> list[int]:
    return [i for i, s in enumerate(room.seats) if s.bot is None and s.token_hash is not None]


def _connected(room: LifeRoom) -> set[int]:
    return {m.seat for m in room.members if m.seat is not None}


def _someone_there(room: LifeRoom) -> bool:
    """A human seat has a member connected (`_human_seats` & `_connected`, without
    building either: this runs after every move)."""
    seats = room.seats
    for member in room.members:
        seat = member.seat
        if seat is not None:
            state = seats[seat]
            if state.bot is None and state.token_hash is not None:
                return True
    return False


class Lifecycle:
    """One per server: keeps each local room's timestamps and ends rooms when due."""

    def __init__(self, store: Store, rooms: Mapping[str, Any], settings: LifecycleSettings,
                 metrics: Metrics | None = None) -> None:
        self.db = LifecycleStore(store)
        self.rooms = rooms  # the lobby's live rooms of this node, by id
        self.settings = settings
        self._dirty: dict[str, LifeRoom] = {}
        self._flushing = False
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        registry = metrics.registry if metrics is not None else None
        self.seats_freed = Counter(
            "giants_seats_freed", "Seats freed because their player left a waiting room.", registry=registry
        )
        self.purged = Counter(
            "giants_rooms_purged", "Finished rooms deleted after the retention period.", registry=registry
        )
        self.retained = Counter(
            "giants_rooms_retained", "Finished rooms given the retention TTL.", registry=registry
        )
        self.due_gauge = Gauge(
            "giants_rooms_timed", "Live rooms of this node with a lifecycle timer running.", registry=registry
        )
        self.due_gauge.set_function(
            lambda: sum(1 for r in list(self.rooms.values()) if r.life and r.status != "finished")
        )

    # -- timestamps ---------------------------------------------------------------------

    def adopted(self, room: LifeRoom) -> None:
        """A room came to this node (created, restored, taken over): reload its stored
        timestamps, then bring them up to date."""
        self._spawn(self._adopt(room))

    async def _adopt(self, room: LifeRoom) -> None:
        try:
            stored = await self.db.read(room.id)
        except Exception as exc:
            log.warning("room %s: lifecycle timestamps not read (%r)", room.id, exc)
            stored = {}
        # The earlier of stored and in-memory times wins: a restart never extends them.
        for key, value in stored.items():
            room.life[key] = min(value, room.life.get(key, value))
        self.observe(room, touch=False)

    def changed(self, room: LifeRoom) -> None:
        """After each stored change: update the room's timestamps (and Redis if they moved)."""
        if not room.life and room.status == "playing" and _someone_there(room):
            # `observe`'s first test, made here: this runs after every move, and a game
            # in progress with someone there has nothing to keep.
            return
        self.observe(room, touch=True)

    def observe(self, room: LifeRoom, touch: bool) -> None:
        """Bring the timestamps up to date with the room; `touch` = a change happened
        (a waiting room's idle time starts again)."""
        life = room.life
        if not life and room.status == "playing" and _someone_there(room):
            return  # a game in progress with someone there: nothing to keep (every move)
        now = time.time()
        before = dict(life)
        if room.status == "finished":
            if life.get("finished"):
                return  # already given its retention TTL (a resume must not extend it)
            life.clear()
            life["finished"] = now
            self._dirty[room.id] = room
            self._flush_soon()
            return
        if room.status == "waiting":
            if touch:
                life["touched"] = now
            else:
                life.setdefault("touched", now)
            life.pop("gone", None)
            connected = _connected(room)
            for seat in range(len(room.seats)):
                key = f"seat:{seat}"
                if seat in _human_seats(room) and seat not in connected:
                    life.setdefault(key, now)
                else:
                    life.pop(key, None)
        else:
            humans = _human_seats(room)
            gone = bool(humans) and not room.meta.get("deadline") and not (set(humans) & _connected(room))
            if not gone and not life:
                return  # a game in progress with someone there: nothing to keep (every move)
            for key in [k for k in life if k != "gone"]:
                del life[key]
            if not life:
                life.clear()  # an emptied dict keeps its table (184 B); clear() frees it
            if gone:
                life.setdefault("gone", now)
            else:
                life.pop("gone", None)
        if life != before:
            self._dirty[room.id] = room
            self._flush_soon()

    def due_at(self, room: LifeRoom) -> float | None:
        """When the lifecycle must look at `room` next (None: nothing pending)."""
        s, life = self.settings, room.life
        times = [life["touched"] + s.waiting_ttl] if "touched" in life else []
        times += [t + s.seat_grace for k, t in life.items() if k.startswith("seat:")]
        if "gone" in life:
            times.append(life["gone"] + s.abandon_after)
        return min(times) if times else None

    def _flush_soon(self) -> None:
        if not self._flushing:
            self._flushing = True
            self._spawn(self._flush())

    async def _flush(self) -> None:
        try:
            await asyncio.sleep(0)  # gather the changes of this turn of the loop
            while self._dirty:
                batch, self._dirty = self._dirty, {}
                finished = [r for r in batch.values() if r.status == "finished"]
                live = [(r.id, dict(r.life), self.due_at(r)) for r in batch.values() if r.status != "finished"]
                try:
                    if live:
                        await self.db.write(live)
                    for room in finished:
                        await self.db.retain(room.id, self.settings.retention)
                        self.retained.inc()
                except Exception as exc:
                    # Retried on the next change or sweep; the stored times stay older,
                    # which only makes a timer fire earlier than this node believes.
                    log.warning("lifecycle timestamps not written (%r)", exc)
                    for room in batch.values():
                        self._dirty.setdefault(room.id, room)
                    await asyncio.sleep(1.0)
        finally:
            self._flushing = False

    # -- the sweeper --------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="lifecycle")

    async def stop(self) -> None:
        await cancel_and_wait([t for t in (self._task, *self._tasks) if t is not None])

    async def _run(self) -> None:
        while True:
            checkpoint()  # a cancel lost in the last sweep's Redis calls (server.cancellation)
            await asyncio.sleep(self.settings.interval)
            try:
                await self.sweep()
            except Exception as exc:  # Redis away: the next sweep tries again
                log.warning("lifecycle sweep failed (%r)", exc)

    async def sweep(self) -> None:
        """End or free what is due among this node's rooms; purge old finished rooms."""
        now = time.time()
        for room_id in await self.db.due(now):
            room = self.rooms.get(room_id)
            if room is None:
                # Another node's room, or one that no longer lives: drop it from the
                # index only if it is gone or over (its owner keeps it otherwise).
                status = await self.db.status(room_id)
                if status is None or status == "finished":
                    await self.db.forget(room_id)
                continue
            await self.check(room, now)
        purged = await self.db.purge_finished(now - self.settings.retention)
        if purged:
            self.purged.inc(len(purged))
            log.info("deleted %d finished room(s) past their retention", len(purged))

    async def check(self, room: LifeRoom, now: float) -> None:
        """Apply whatever is due in `room` (under its lock)."""
        s = self.settings
        async with room.lock:
            if room.closing or room.status == "finished":
                return
            self.observe(room, touch=False)  # membership may have moved without a stored change
            life = room.life
            try:
                if room.status == "waiting" and life.get("touched", now) + s.waiting_ttl <= now:
                    await self._end(room, EXPIRED, f"nobody started the game within {s.waiting_ttl:g} s")
                    return
                if room.status == "playing" and life.get("gone", now) + s.abandon_after <= now:
                    await self._end(room, ABANDONED, f"every player was away for {s.abandon_after:g} s")
                    return
                late = [
                    int(key.split(":")[1]) for key, t in life.items()
                    if key.startswith("seat:") and t + s.seat_grace <= now
                ]
                if room.status == "waiting" and late:
                    await self._free(room, late)
            except RequestError as exc:  # storage away: the next sweep tries again
                log.warning("room %s: lifecycle change not stored: %s", room.id, exc.message)
                return
        if self.due_at(room) is not None and room.status != "finished":
            self._dirty[room.id] = room
            self._flush_soon()

    async def _end(self, room: LifeRoom, reason: str, detail: str) -> None:
        players = len(room.seats)
        events = await room.end_game(reason, scores=[0.0] * players, winners=[], detail=detail)
        room.publish(events)
        room._after_change()
        log.info("room %s ended: %s", room.id, reason)

    async def _free(self, room: LifeRoom, seats: list[int]) -> None:
        connected = _connected(room)
        seats = [s for s in seats if s not in connected and room.seats[s].bot is None]
        if not seats:
            return
        cand = room._candidate()
        for seat in seats:
            cand.seats[seat] = SeatState()
        await room._commit(cand)
        self.seats_freed.inc(len(seats))
        room.publish([{"type": "left", "seat": seat} for seat in seats])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
