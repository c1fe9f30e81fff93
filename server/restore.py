"""Restore on start and rooms on demand: the half of the lobby that reads rooms back.

`Lobby` (server.lobby) inherits this. The server reads the live room ids before it
listens (`list_live`: each becomes a pending restore that a request for that room
waits for), then restores them a few at a time while already serving
(`restore_pending`), retrying transient Redis failures with backoff; `/healthz` stays
unavailable until every room is back. A room whose stored log cannot be replayed is
quarantined by `Lobby.take_over`: logged, counted in /metrics, left in Redis untouched,
answered with `storage_unavailable` (never `no_such_room`, which would make clients
forget it). Finished rooms are loaded on demand (read-only, evicted again when idle),
so a seat that missed the final move can resume and get the final snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from engines import registry
from server.cancellation import checkpoint
from server.errors import RequestError
from server.metrics import Metrics
from server.room import Room
from server.store import StorageUnavailable, Store, backoff_delays, is_transient

log = logging.getLogger("giants.lobby")

ROOM_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
EVICT_AFTER = 60.0  # seconds a finished room loaded on demand stays without members


def plausible_room_id(room_id: str) -> bool:
    return len(room_id) == 8 and all(c in ROOM_ID_ALPHABET for c in room_id)


class LobbyRestore:
    """Restore and on-demand loading; the attributes are the lobby's own."""

    store: Store
    metrics: Metrics
    snapshot_every: int
    rooms: dict[str, Room]
    loaded: bool
    listed: asyncio.Event
    pending: dict[str, asyncio.Future[Room | None]]
    quarantined: dict[str, str]
    restore_retries: int
    restore_concurrency: int
    max_rooms: int
    over_limit: int  # rooms not taken over because the node held max_rooms
    _loading: dict[str, asyncio.Future[Room | None]]
    _taking: dict[str, asyncio.Future[Room | None]]
    guesses: Any  # the lobby's password-guess limiter, shared with rooms loaded here
    _on_idle: Any  # the lobby's `_evict`, one bound method shared by its rooms

    async def take_over(self, room_id: str) -> Room | None:
        raise NotImplementedError

    def _spawn(self, coro: Any) -> None:
        raise NotImplementedError

    def _evict(self, room: Room) -> None:
        raise NotImplementedError

    # -- restore --------------------------------------------------------------------

    async def restore_all(self) -> int:
        """Take over every unfinished room no live node holds (restore from Redis).

        Rooms other nodes own stay theirs. Returns how many were restored (tests and
        tools; the server calls `list_live` before listening, `restore_pending` after).
        """
        await self.list_live()
        return await self.restore_pending()

    async def list_live(self) -> None:
        """Read the ids of the live rooms, retrying while Redis is away; each becomes
        a pending restore that `find` waits for."""
        delays = backoff_delays(float("inf"), first=0.1, cap=5.0)
        while True:
            checkpoint()  # a cancel lost in the last attempt (server.cancellation)
            try:
                ids = await self.store.live_room_ids()
                break
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self.restore_retries += 1
                log.warning("restore: cannot list the live rooms yet (%r); retrying", exc)
                await asyncio.sleep(next(delays))
        loop = asyncio.get_running_loop()
        for room_id in ids:
            if room_id not in self.rooms and room_id not in self.pending:
                self.pending[room_id] = loop.create_future()
        self.listed.set()

    async def restore_pending(self) -> int:
        """Take the listed rooms over a few at a time; returns how many were restored.

        A transient Redis failure is retried with backoff until it succeeds (the server
        is not healthy meanwhile); a room that cannot be replayed is quarantined.
        """
        ids = [room_id for room_id, fut in self.pending.items() if not fut.done()]
        gate = asyncio.Semaphore(self.restore_concurrency)
        restored = 0

        async def one(room_id: str) -> None:
            nonlocal restored
            room: Room | None = None
            try:
                async with gate:
                    room = await self.take_over(room_id)
            finally:
                fut = self.pending.pop(room_id, None)
                if fut is not None and not fut.done():
                    fut.set_result(room)
            if room is not None:
                restored += 1

        await asyncio.gather(*(one(room_id) for room_id in ids))
        self.loaded = True
        log.info("restored %d room(s), %d quarantined", restored, len(self.quarantined))
        if self.over_limit:
            log.warning(
                "room limit (--max-rooms %d) reached: %d unfinished room(s) left in Redis for "
                "another node, or a restart with a higher limit", self.max_rooms, self.over_limit,
            )
        return restored

    async def open(self, room_id: str) -> Room | None:
        """This node's room `room_id`: in memory, being restored (waits for it), or
        finished and loaded from Redis on demand; None if this node has no such room
        (the router then asks the relay). Raises storage_unavailable when the room
        exists but cannot be served now (quarantined, not restored yet, Redis away)."""
        room = self.rooms.get(room_id)
        if room is not None:
            return room
        wait = self.store.retry_window
        try:
            if not self.listed.is_set():
                await asyncio.wait_for(self.listed.wait(), wait)
            fut = self.pending.get(room_id) or self._taking.get(room_id) or self._loading.get(room_id)
            if fut is None and room_id not in self.quarantined and plausible_room_id(room_id):
                fut = self._loading[room_id] = asyncio.get_running_loop().create_future()
                self._spawn(self._load_finished(room_id, fut))
            if fut is not None:
                room = await asyncio.wait_for(asyncio.shield(fut), wait)
        except TimeoutError:
            raise RequestError(
                "storage_unavailable", f"room {room_id} is not restored yet (storage is slow or away); try again"
            ) from None
        if room is not None:
            return room
        if room_id in self.quarantined:
            raise RequestError(
                "storage_unavailable",
                f"room {room_id} is stored but cannot be restored; the operator has been told (see the server log)",
            )
        return None

    async def _load_finished(self, room_id: str, fut: asyncio.Future[Room | None]) -> None:
        """Load a finished room read-only (resume and watch get its final snapshot)."""
        room: Room | None = None
        try:
            record = await self.store.retrying(lambda: self.store.load_room(room_id), "load")
            if room_id in self.rooms:
                room = self.rooms[room_id]
            elif record is not None and record.status == "finished":
                engine = registry.get_engine(record.meta["game"], record.meta["rules"])
                room = Room.restore(record, engine, self.store, self.metrics, self.snapshot_every)
                room.on_idle = self._on_idle
                room.guesses = self.guesses
                self.rooms[room_id] = room
                # Evicted again once nobody is in it (checked after a grace period, so
                # the request that loaded it can take its seat first).
                asyncio.get_running_loop().call_later(EVICT_AFTER, self._evict, room)
        except StorageUnavailable as exc:
            log.warning("loading room %s: %s", room_id, exc)
            if not fut.done():
                fut.set_exception(RequestError("storage_unavailable", f"room {room_id}: storage is away; try again"))
                fut.exception()  # marked retrieved: waiters get it through their shield
        except Exception:
            log.exception("loading finished room %s failed", room_id)
        finally:
            if self._loading.get(room_id) is fut:
                del self._loading[room_id]
            if not fut.done():
                fut.set_result(room)


class RestoreCollector(Collector):
    """/metrics series of the restore: pending, quarantined, retried."""

    def __init__(self, lobby: LobbyRestore) -> None:
        self.lobby = lobby

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        lobby = self.lobby
        yield GaugeMetricFamily(
            "giants_rooms_restore_pending", "Live rooms listed in Redis and not restored yet.", value=len(lobby.pending)
        )
        yield GaugeMetricFamily(
            "giants_rooms_quarantined",
            "Rooms whose stored log cannot be replayed: left in Redis, not served (see the log).",
            value=len(lobby.quarantined),
        )
        yield CounterMetricFamily(
            "giants_restore_retries", "Transient Redis failures retried while restoring rooms.", value=lobby.restore_retries
        )
