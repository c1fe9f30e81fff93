"""Reading rooms back: restore (a room's hash, snapshot and log tail), replays, the
lobby's listing (live and finished ids, summaries), and the lifecycle's own index
(`LifecycleStore`). `Store` inherits `RoomReads`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis

from server.store_base import RoomRecord, StoreKeys, as_text, unpack


class RoomReads(StoreKeys):
    """Reads of rooms and of the lobby's indexes; `redis` is `Store`'s."""

    redis: aioredis.Redis

    if TYPE_CHECKING:  # Store's: plain commands over the store's own connection

        async def send_all(self, commands: Sequence[tuple[Any, ...]]) -> list[Any]: ...

    async def live_room_ids(self) -> list[str]:
        members = await self.redis.smembers(self.k_live)
        return sorted(as_text(m) for m in members)

    async def finished_room_ids(self, limit: int = 100, start: int = 0) -> list[str]:
        """Most recently finished first: `limit` ids from position `start`."""
        ids = await self.redis.zrevrange(self.k_finished, start, start + limit - 1)
        return [as_text(i) for i in ids]

    async def load_room(self, room_id: str) -> RoomRecord | None:
        """Read a room's hash, snapshot and log tail; None if the room does not exist.

        A move appends its log entry only (server.store's commit script), so the hash's
        `version` and `actions` are those of the room's last other write: the log's
        length is the action count, and each entry past the hash's count is one more
        version (a room stored before this layout has none past it), and in a room
        with a move deadline the last one's time plus the seconds per move is the
        deadline. The hash, the snapshot and the log's length are read in one
        transaction, the tail up to that length after it (entries are only ever
        appended).
        """
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(self.k_room(room_id))
        pipe.hgetall(self.k_snap(room_id))
        pipe.llen(self.k_log(room_id))
        raw, snap, length = await pipe.execute()
        if not raw:
            return None
        fields = {k.decode(): v for k, v in raw.items()}
        snapshot_n = int(snap[b"n"]) if snap else 0
        tail = await self.redis.lrange(self.k_log(room_id), snapshot_n, length - 1) if length > snapshot_n else []
        hash_actions = int(fields["actions"]) if fields.get("actions") else length
        log_tail = [unpack(entry) for entry in tail]
        meta = unpack(fields["meta"])
        deadline_raw = fields.get("deadline", b"")
        deadline = float(deadline_raw) if deadline_raw else None
        seconds = meta.get("deadline") if isinstance(meta, dict) else None
        if length > hash_actions and seconds and log_tail and isinstance(log_tail[-1].get("ts"), float):
            # The last write was a plain move: its deadline is its time plus the
            # seconds per move (server.store's commit), not the hash's.
            deadline = log_tail[-1]["ts"] + float(seconds)
        outcome_raw = fields.get("outcome", b"")
        return RoomRecord(
            room_id=room_id,
            meta=meta,
            version=int(fields["version"]) + length - hash_actions,
            fence=int(fields["fence"]),
            status=fields["status"].decode(),
            seats=unpack(fields["seats"]),
            deadline=deadline,
            outcome=unpack(outcome_raw) if outcome_raw else None,
            actions=length,
            snapshot_n=snapshot_n,
            snapshot_state=unpack(snap[b"state"]) if snap else None,
            log_tail=log_tail,
            answered=unpack(fields["answered"]) if fields.get("answered") else [],
            hidden=int(fields.get("hidden") or 0),
            start_key=as_text(fields.get("start_key", b"")),
            moves_in_log=length - hash_actions,
        )

    async def read_log(self, room_id: str) -> list[dict[str, Any]]:
        """Every action entry of a room, in order (for replays)."""
        return [unpack(e) for e in await self.redis.lrange(self.k_log(room_id), 0, -1)]

    async def room_summaries_raw(self, room_ids: Sequence[str]) -> list[tuple[str, dict[str, bytes]]]:
        """Hash fields of several rooms in one round trip (listing finished rooms)."""
        pipe = self.redis.pipeline(transaction=False)
        for room_id in room_ids:
            pipe.hgetall(self.k_room(room_id))
        rows = await pipe.execute()
        return [
            (room_id, {k.decode(): v for k, v in row.items()})
            for room_id, row in zip(room_ids, rows, strict=True)
            if row
        ]


class LifecycleStore:
    """Redis commands of server/lifecycle.py (kept apart from the write path).

        P room:{<id>}:life   hash  lifecycle timestamps of a live room (touched, gone, seat:N)
        P rooms:due          zset  live room ids scored by when the lifecycle looks next
    """

    def __init__(self, store: RoomReads) -> None:
        self.store = store
        self.redis = store.redis

    def k_life(self, room_id: str) -> str:
        return f"{self.store.prefix}room:{{{room_id}}}:life"

    @property
    def k_due(self) -> str:
        return f"{self.store.prefix}rooms:due"

    def room_keys(self, room_id: str) -> list[str]:
        """Every key of one room (they share its hash tag)."""
        s = self.store
        return [s.k_room(room_id), s.k_log(room_id), s.k_snap(room_id), self.k_life(room_id)]

    async def read(self, room_id: str) -> dict[str, float]:
        raw = await self.redis.hgetall(self.k_life(room_id))
        return {as_text(k): float(v) for k, v in raw.items()}

    async def write(self, entries: Sequence[tuple[str, dict[str, float], float | None]]) -> None:
        """Replace each room's timestamps and its due time (None: nothing due)."""
        pipe = self.redis.pipeline(transaction=False)
        for room_id, life, due in entries:
            pipe.delete(self.k_life(room_id))
            if life:
                pipe.hset(self.k_life(room_id), mapping={k: repr(v) for k, v in life.items()})
            if due is None:
                pipe.zrem(self.k_due, room_id)
            else:
                pipe.zadd(self.k_due, {room_id: due})
        await pipe.execute()

    async def due(self, now: float, limit: int = 500) -> list[str]:
        ids = await self.redis.zrangebyscore(self.k_due, "-inf", now, start=0, num=limit)
        return [as_text(i) for i in ids]

    async def status(self, room_id: str) -> str | None:
        raw = await self.redis.hget(self.store.k_room(room_id), "status")
        return None if raw is None else as_text(raw)

    async def forget(self, room_id: str) -> None:
        await self.redis.zrem(self.k_due, room_id)

    async def retain(self, room_id: str, seconds: float) -> None:
        """A finished room: every key of it expires after the retention period."""
        ttl = max(1, int(seconds))
        await self.store.send_all([
            ("DEL", self.k_life(room_id)),
            ("ZREM", self.k_due, room_id),
            *(("EXPIRE", key, ttl) for key in self.room_keys(room_id)),
        ])

    async def purge_finished(self, before: float, limit: int = 500) -> list[str]:
        """Rooms finished before `before` leave the finished index and are deleted
        (their keys normally expired already; older rooms had no TTL)."""
        ids = [as_text(i) for i in await self.redis.zrangebyscore(self.store.k_finished, "-inf", before, start=0, num=limit)]
        if ids:
            pipe = self.redis.pipeline(transaction=False)
            for room_id in ids:
                pipe.zrem(self.store.k_finished, room_id)
                pipe.delete(*self.room_keys(room_id))
            await pipe.execute()
        return ids
