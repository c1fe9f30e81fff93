"""A room's write path: persist a change, then adopt it; settle a write whose outcome
stayed unknown; reload the room from Redis when memory may lag it (`RoomStorage`, a
mixin of `server.room.Room`).

Every change reaches Redis through `_commit`, and only through it: the room builds a
`Candidate` (`_candidate`), `_commit` stores it with the version and fence guards of
the commit script and adopts it only once Redis has it (a move hands the same fields
to `_commit_fields`, `_commit`'s body, without building the object). When that is not known the
room is marked unsure, a recovery task waits for Redis, reloads the room if needed and
re-arms its deadline and bots (docs/architecture.md, "How a write's outcome is known").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engines.base import Engine, Seat
from server.cancellation import checkpoint
from server.errors import RequestError, RoomMoved
from server.seats import Candidate, Member, SeatState
from server.store import (
    OutcomeUnknown,
    RoomRecord,
    StaleWriteError,
    StorageUnavailable,
    Store,
    backoff_delays,
    is_transient,
)

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from server.metrics import Metrics

log = logging.getLogger("giants.room")

NOT_APPLIED = "storage is unreachable: the change was not applied and the room is unchanged; try again shortly"
UNKNOWN = (
    "storage is unreachable and did not say whether the change was applied; "
    "resync (or resume) when it is back, then decide"
)


def _same_seats(a: list[SeatState], b: list[SeatState]) -> bool:
    """Whether a candidate kept every seat object of the room (nothing to store)."""
    if a is b:  # a move's candidate holds the room's own list
        return True
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class RoomStorage:
    """Mixin for Room: the write path. Room supplies the attributes declared here."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    id: str
    engine: Engine
    meta: dict[str, Any]
    store: Store
    metrics: Metrics
    snapshot_every: int
    state: Any
    _state: Any  # what `state` reads (Room: packed while idle)
    _timer: asyncio.TimerHandle | None  # the move deadline's (server.room_tasks)
    version: int
    fence: int
    status: str
    seats: list[SeatState]
    outcome: dict[str, Any] | None
    actions: int
    deadline: float | None
    answered: frozenset[Seat]
    start_key: str
    hidden: int
    logged: int
    members: list[Member]
    lock: asyncio.Lock
    closing: bool
    unsure: bool
    _recovering: bool
    _failures: int
    on_change: Callable[[Any], None] | None
    on_lost: Callable[[Any], None] | None

    if TYPE_CHECKING:  # provided by Room, RoomTasks, RoomViews and RoomPublish; no import of server.room here
        @classmethod
        def restore(
            cls, record: RoomRecord, engine: Engine, store: Store, metrics: Metrics, snapshot_every: int
        ) -> RoomStorage: ...
        def _arm_timer(self) -> None: ...
        def _after_change(self) -> None: ...
        def _spawn(self, coro: Coroutine[Any, Any, None]) -> None: ...
        def expand_views(self) -> None: ...
        def _views(self, state: Any = None, seat_sets: frozenset[Seat] | None = None,
                   changed: list[Any] | None = None) -> Callable[[Seat | None], Any]: ...
        def send_snapshot(self, member: Member) -> None: ...

    # -- the one write path ---------------------------------------------------------

    def _candidate(self, **changes: Any) -> Candidate:
        """The room as it is, with `changes`; its seat list a copy the caller may change
        (SeatStates are replaced, never changed in place)."""
        base = Candidate(self.state, self.status, list(self.seats), self.outcome, self.actions, self.deadline,
                         None, None, self.answered, self.hidden, self.start_key)
        for key, value in changes.items():
            setattr(base, key, value)
        return base

    async def _commit(self, cand: Candidate) -> None:
        """Persist the candidate, then adopt it (caller holds the lock).

        Raises RequestError and leaves the room as it was when the change is not known
        to be in Redis: `storage_unavailable` (detail.outcome "not_applied": it is not
        and never will be; "unknown": Redis stayed away, the room reloads before its
        next write) or `internal_error`. A lost or late reply never gets here: the
        store settles it first (docs/architecture.md, "How a write's outcome is known").
        """
        await self._commit_fields(cand.state, cand.status, cand.seats, cand.outcome, cand.actions, cand.deadline,
                                  cand.log_entry, cand.snapshot, cand.answered, cand.hidden, cand.start_key)

    async def _commit_fields(
        self,
        state: Any,
        status: str,
        seats: list[SeatState],
        outcome: dict[str, Any] | None,
        actions: int,
        deadline: float | None,
        log_entry: dict[str, Any] | None,
        snapshot: Any,
        answered: frozenset[Seat],
        hidden: int,
        start_key: str,
    ) -> None:
        """`_commit` of a `Candidate` with these fields, without building one: a move's
        path (`apply_action`), where the object and the reads of its fields cost ~4,000
        instructions a move. Everything else builds a Candidate and calls `_commit`.
        `seats` may be the room's own list (a move: nothing to store)."""
        if self.unsure:
            before = self.version
            await self._heal()
            if self.version != before:
                # The write in doubt was in after all: this candidate was computed from
                # the state before it, so it must not be stored. Members got snapshots.
                raise RequestError(
                    "storage_unavailable",
                    "the room was reloaded from storage (an earlier change was applied); look at it and try again",
                    {"outcome": "not_applied"},
                )
        same = seats is self.seats or _same_seats(seats, self.seats)  # a move: the room's own list
        try:
            # By position, in Store.commit's order (by keyword: ~1,350 instructions more a move)
            move = await self.store.commit(
                self.id,
                self.version,  # expected
                self.version + 1,  # version
                self.fence,  # fence
                status,
                None if same else [s.to_store() for s in seats],  # seats
                deadline,
                outcome,
                actions,
                log_entry,
                snapshot,
                0.0,  # now: the store reads the clock if the room finished
                answered,
                start_key,
                hidden,
                self,  # before: as stored at self.version: unchanged fields are not sent
                float(self.meta.get("deadline") or 0),  # move_seconds
            )
        except StaleWriteError as exc:
            try:
                reloaded = await self._reload()
            except StorageUnavailable:
                self._failed(unsure=True)
                raise RequestError("storage_unavailable", NOT_APPLIED, {"outcome": "not_applied"}) from exc
            if reloaded:
                raise RequestError(
                    "internal_error", "the room was reloaded from storage and everyone resynced; try again"
                ) from exc
            log.error("%s; this node no longer owns the room", exc)
            self.closing = True
            if self.on_lost is not None:
                self.on_lost(self)  # the lobby drops it; the relay moves its members
            raise RoomMoved() from exc
        except StorageUnavailable as exc:
            log.warning("room %s: %s", self.id, exc)
            self._failed(unsure=False)
            raise RequestError("storage_unavailable", NOT_APPLIED, {"outcome": "not_applied"}) from exc
        except OutcomeUnknown as exc:
            log.error("room %s: %s", self.id, exc)
            self._failed(unsure=True)
            raise RequestError("storage_unavailable", UNKNOWN, {"outcome": "unknown"}) from exc
        except Exception as exc:
            log.exception("persisting room %s failed", self.id)
            self._failed(unsure=is_transient(exc))
            raise RequestError("internal_error", "the change could not be saved; try again") from exc
        self._failures = 0
        self.version += 1
        self.logged = self.logged + 1 if move else 0
        self._state, self.status = state, status  # `state`'s setter, without its call
        if not same:
            self.seats = seats
        self.outcome, self.actions, self.deadline = outcome, actions, deadline
        self.answered, self.start_key, self.hidden = answered, start_key, hidden
        if self._timer is not None or self.deadline is not None:  # else `_arm_timer` has nothing to do
            self._arm_timer()
        if self.on_change is not None:
            self.on_change(self)  # server.lifecycle: idle, abandoned and retention timers

    async def write_hash(self) -> None:
        """Store the room's hash as of its version, with no change (its last moves were
        log entries only, which nodes of an earlier version cannot restore).

        Called by the lobby when such a node is live (`Node.on_earlier`); nothing to
        do when the last write stored the hash. A failed write is logged and left: the
        room's next move writes the hash anyway while that node is live."""
        async with self.lock:
            if self.closing or not self.logged or self.unsure:
                return
            try:
                await self.store.commit(
                    self.id,
                    expected=self.version,
                    version=self.version,  # nothing changed: members see no new version
                    fence=self.fence,
                    status=self.status,
                    seats=None,
                    deadline=self.deadline,
                    outcome=self.outcome,
                    actions=self.actions,
                    now=time.time(),
                    answered=self.answered,
                    start_key=self.start_key,
                    hidden=self.hidden,
                    before=self,
                    move_seconds=float(self.meta.get("deadline") or 0),
                )
            except Exception as exc:
                log.warning("room %s: its hash could not be brought up to its log (%r); its next move will",
                            self.id, exc)
                return
            self.logged = 0

    def _failed(self, unsure: bool) -> None:
        """A write failed: make sure the room's bots and deadline resume once Redis
        answers again (and that it reloads first if its memory may lag Redis)."""
        self._failures += 1
        self.unsure = self.unsure or unsure
        if self._recovering or self.closing:
            return
        self._recovering = True
        self._spawn(self._recover())

    async def _recover(self) -> None:
        """Wait for Redis, reload if unsure, then re-arm the deadline and the bots."""
        try:
            # Later attempts wait longer: a write that keeps failing for another reason
            # must not turn into a busy loop of retries.
            first = min(5.0, 0.05 * 2 ** min(self._failures, 8))
            for delay in backoff_delays(float("inf"), first=first, cap=5.0):
                checkpoint()  # a cancel lost in the last ping (server.cancellation)
                await asyncio.sleep(delay)
                if self.closing:
                    return
                if not await self.store.ping():
                    continue
                async with self.lock:
                    if self.closing:
                        return
                    try:
                        if self.unsure:
                            await self._heal()
                    except RequestError:
                        continue
                    self._recovering = False
                    log.info("room %s: storage answers again; deadline and bots resume", self.id)
                    self._arm_timer()
                    self._after_change()
                    return
        finally:
            self._recovering = False

    async def _heal(self) -> None:
        """Reload an unsure room from Redis (caller holds the lock), or raise
        storage_unavailable (not applied) if Redis is still away."""
        try:
            reloaded = await self._reload()
        except StorageUnavailable as exc:
            raise RequestError("storage_unavailable", NOT_APPLIED, {"outcome": "not_applied"}) from exc
        if not reloaded:
            self.closing = True
            if self.on_lost is not None:
                self.on_lost(self)  # the lobby drops it; the relay moves its members
            raise RoomMoved()

    async def _reload(self) -> bool:
        """Re-read the room from Redis (caller holds the lock).

        Happens when a write was refused (the stored version is ahead of ours) or its
        outcome stayed unknown. If we still hold the fence, adopt the stored room, send
        every member a fresh snapshot and restart deadline and bots; False if another
        node owns the room now. Raises StorageUnavailable if Redis does not answer.
        """
        try:
            record = await self.store.retrying(lambda: self.store.load_room(self.id), "reload")
        except StorageUnavailable:
            raise
        except Exception:
            log.exception("room %s: reload failed", self.id)
            return False
        if record is None or record.fence != self.fence:
            return False
        try:
            fresh = self.restore(record, self.engine, self.store, self.metrics, self.snapshot_every)
        except Exception:
            log.exception("room %s: reload failed", self.id)
            return False
        changed = fresh.version != self.version
        log.warning("room %s: reloaded from Redis at version %s (was %s)", self.id, fresh.version, self.version)
        # Members' own sequences move on by the public changes they missed (GI-8).
        missed = max(0, (fresh.version - fresh.hidden) - (self.version - self.hidden))
        for member in self.members:
            if member.version >= 0:
                member.version += missed
        self.state, self.version, self.status, self.seats = fresh.state, fresh.version, fresh.status, fresh.seats
        self.outcome, self.actions, self.deadline = fresh.outcome, fresh.actions, fresh.deadline
        self.answered, self.start_key, self.hidden = fresh.answered, fresh.start_key, fresh.hidden
        self.logged = fresh.logged
        self.unsure = False
        self._arm_timer()
        if changed:
            # Only members with something new to see get a snapshot: after a hidden
            # change (a replaced sealed bid) the others must not even learn that the
            # room reloaded (GI-8).
            self.expand_views()
            views = self._views()
            for member in self.members:
                if missed or views(member.seat) != member.view:
                    self.send_snapshot(member)
        self._after_change()
        return True
