"""The key layout: one hash slot per room, lobby indexes outside the script, migration."""

from __future__ import annotations

import time

import msgpack
import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from server.store import Store

pytestmark = pytest.mark.redis

COMMON = {"seats": [{}], "deadline": None, "outcome": None, "actions": 0}


async def test_every_key_of_a_room_shares_one_hash_slot(redis_url: str, key_prefix: str) -> None:
    store = Store(redis_url, key_prefix)
    try:
        keys = [store.k_room("abc"), store.k_log("abc"), store.k_snap("abc"), store.k_lease("abc")]
        assert len({key_slot(k.encode()) for k in keys}) == 1
        assert all("{abc}" in k for k in keys)
        # Different rooms spread over slots (a cluster shares them out).
        slots = {key_slot(store.k_room(f"room{i}").encode()) for i in range(50)}
        assert len(slots) > 40
    finally:
        await store.close()


def test_a_prefix_with_braces_is_refused() -> None:
    with pytest.raises(ValueError, match="braces"):
        Store("redis://127.0.0.1:1/0", "giants:{x}:")


async def test_finishing_commit_moves_the_room_between_lobby_indexes(redis_url: str, key_prefix: str) -> None:
    store = Store(redis_url, key_prefix)
    try:
        assert await store.create_room("r1", {"game": "x"}, [{}])
        assert await store.live_room_ids() == ["r1"]
        await store.commit("r1", expected=0, version=1, fence=1, status="playing", **COMMON)
        assert await store.live_room_ids() == ["r1"]
        await store.commit("r1", expected=1, version=2, fence=1, status="finished", now=time.time(), **COMMON)
        assert await store.live_room_ids() == []
        assert await store.finished_room_ids() == ["r1"]
        await store.mark_finished("r1", time.time())  # idempotent
        assert await store.finished_room_ids() == ["r1"]
    finally:
        await store.close()


async def test_restore_finishes_an_interrupted_index_move(server_factory, redis_url: str, key_prefix: str) -> None:
    """A node died between the finishing commit and the index update: the room is
    finished in its hash but still in rooms:live. The next start moves it."""
    store = Store(redis_url, key_prefix)
    try:
        assert await store.create_room("r2", {"game": "giantslayer"}, [{}])
        await store.redis.hset(store.k_room("r2"), "status", "finished")
        server = await server_factory()
        assert "r2" not in server.lobby.rooms
        assert await store.live_room_ids() == []
        assert await store.finished_room_ids() == ["r2"]
    finally:
        await store.close()


async def test_keys_of_the_first_layout_are_migrated_on_start(
    server_factory, client_factory, redis_url: str, key_prefix: str
) -> None:
    """A room stored by an earlier version (`P room:<id>`, no hash tag) is moved to the
    new keys before restore and plays on."""
    server = await server_factory()
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    token = (await alice.ok("join", room=room))["token"]
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "playing")
    await server.stop()

    raw = aioredis.Redis.from_url(redis_url)
    try:
        # Rewrite the room's keys the way the first layout named them.
        for new in (server.store.k_room(room), server.store.k_log(room), server.store.k_snap(room)):
            if await raw.exists(new):
                await raw.rename(new, new.replace("{", "").replace("}", ""))
        await raw.delete(key_prefix + "layout")
        assert not await raw.exists(server.store.k_room(room))

        again = await server_factory()
        assert room in again.lobby.rooms
        assert await raw.exists(again.store.k_room(room))
        assert not await raw.exists(f"{key_prefix}room:{room}")
        assert await raw.get(key_prefix + "layout") == b"2"
        alice2 = await client_factory(again.url, "alice")
        assert (await alice2.ok("resume", room=room, token=token))["seat"] == 0
        meta = msgpack.unpackb(await raw.hget(again.store.k_room(room), "meta"))
        assert meta["game"] == "giantslayer"
    finally:
        await raw.aclose()


def test_write_ids_are_unique_and_a_forked_child_makes_its_own() -> None:
    """A write id names one write of a room (retries, settling a lost reply): two
    writers must never make the same one, not even a process forked from this one."""
    import os

    from server.store import next_write_id

    ours = {next_write_id() for _ in range(1000)}
    assert len(ours) == 1000
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its first ids and leave at once
        os.write(write, " ".join(next_write_id() for _ in range(1000)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        theirs = set(pipe.read().split())
    os.waitpid(pid, 0)
    assert len(theirs) == 1000
    assert not theirs & ours and not theirs & {next_write_id() for _ in range(1000)}
