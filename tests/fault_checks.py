"""Checks shared by the fault-injection suite (tests/server/test_faults_*.py).

Each compares what the clients saw with what Redis holds, read back by a fresh store
and replayed from the stored log by the engine: nothing else is trusted.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engines import registry
from server.room import Room
from server.store import Store


def plain(data: Any) -> Any:
    """Tuples as lists, as msgpack returns them to a client."""
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [plain(v) for v in data]
    return data


class StoredRoom(Room):
    """A room restored from Redis, with its stored action log (Room has __slots__)."""

    __slots__ = ("log",)


async def stored_room(redis_url: str, prefix: str, room_id: str) -> Room:
    """The room as Redis has it: hash, snapshot and log replayed by the engine."""
    store = Store(redis_url, prefix)
    try:
        record = await store.load_room(room_id)
        assert record is not None, f"room {room_id} is not stored"
        engine = registry.get_engine(record.meta["game"], record.meta["rules"])
        room = StoredRoom.restore(record, engine, store, _NoMetrics(), 50)  # type: ignore[arg-type]
        room.log = await store.read_log(room_id)  # type: ignore[attr-defined]
        return room
    finally:
        await store.close()


class _NoMetrics:
    """Room.restore only keeps a reference; nothing is counted on a read-back."""


def one_reply_per_id(client: Any) -> None:
    """No request got a second reply: a reply to an id already answered would land in
    `pushes` (the test client pops an id's future at its first reply)."""
    extra = [m for m in client.pushes if m["type"] in ("ok", "error")]
    assert not extra, f"replies nobody was waiting for: {extra}"


async def views_agree(redis_url: str, prefix: str, room_id: str, clients: dict[int | None, Any]) -> Room:
    """Every client's view of the game equals the engine's view of the stored room
    for its seat, at the stored version; returns the stored room."""
    stored = await stored_room(redis_url, prefix, room_id)
    for seat, client in clients.items():
        copy = await client.wait_version(room_id, stored.version)
        assert copy.version == stored.version, (seat, copy.version, stored.version)
        assert copy.gaps == 0
        assert copy.view["game"] == plain(stored.engine.view(stored.state, seat)), seat
        assert copy.view["room"]["status"] == stored.status
    return stored


async def eventually(predicate: Any, timeout: float = 20.0, step: float = 0.05) -> None:
    """Poll an async or plain predicate until it holds (Redis-side conditions)."""
    end = time.monotonic() + timeout
    while True:
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if time.monotonic() > end:
            raise AssertionError("condition did not hold in time")
        await asyncio.sleep(step)


__all__ = ["eventually", "one_reply_per_id", "plain", "stored_room", "views_agree"]
