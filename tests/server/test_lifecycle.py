"""Rooms end (issue 10 item 5): idle waiting rooms expire, seats of players who left
before the start are freed, abandoned games end with a stated reason, finished rooms
are kept for the retention period (a TTL on every key) and then leave every index.
All of it survives a restart and shows in /metrics."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from typing import Any

import pytest
import redis.asyncio as aioredis

pytestmark = pytest.mark.redis

FAST = {"lifecycle_interval": 0.1}


def metric(url: str, pattern: str) -> float:
    http = url.replace("ws://", "http://") + "/metrics"
    with urllib.request.urlopen(http, timeout=10) as reply:
        text = reply.read().decode()
    match = re.search("^" + pattern + r" (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


async def scrape(url: str, pattern: str) -> float:
    return await asyncio.get_running_loop().run_in_executor(None, metric, url, pattern)


async def eventually(predicate: Any, timeout: float = 20.0) -> None:
    """Poll `predicate` (sync or async) until true; fail after `timeout` (a hang guard)."""
    async with asyncio.timeout(timeout):
        while True:
            result = predicate()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(0.05)


async def stored_status(server: Any, room: str) -> str | None:
    raw = await server.store.redis.hget(server.store.k_room(room), "status")
    return None if raw is None else raw.decode()


async def test_an_idle_waiting_room_expires(server_factory, client_factory) -> None:
    server = await server_factory(waiting_ttl=0.5, **FAST)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", autostart=False))["room"]
    await alice.ok("watch", room=room)
    await eventually(lambda: alice.rooms[room].view["room"]["status"] == "finished")
    outcome = alice.rooms[room].view["outcome"]
    assert outcome["reason"] == "expired" and outcome["winners"] == []
    assert room not in {r["room"] for r in (await alice.ok("list_rooms"))["rooms"]}
    assert await scrape(server.url, r'giants_rooms_finished_total\{game="giantslayer",reason="expired"\}') == 1


async def test_a_waiting_room_in_use_does_not_expire_early(server_factory, client_factory) -> None:
    """Each change restarts the idle time: the room expires only after it sat still."""
    server = await server_factory(waiting_ttl=1.0, **FAST)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", autostart=False, players=2))["room"]
    live = server.lobby.rooms[room]
    for _ in range(3):
        await alice.ok("join", room=room)
        await alice.ok("leave", room=room)
        await asyncio.sleep(0.4)
    assert live.status == "waiting"  # 1.2 s old, but never idle for 1 s
    await eventually(lambda: live.status == "finished")
    assert live.outcome is not None and live.outcome["reason"] == "expired"


async def test_a_seat_left_by_a_disconnect_before_the_start_is_freed(server_factory, client_factory) -> None:
    server = await server_factory(seat_grace=0.3, **FAST)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await bob.ok("create_room", game="giantslayer", players=2))["room"]
    await alice.ok("join", room=room, seat=0)
    await alice.close()  # gone before the start
    live = server.lobby.rooms[room]
    await eventually(lambda: not live.seats[0].taken)
    joined = await bob.ok("join", room=room, seat=0)
    assert joined["seat"] == 0
    assert await scrape(server.url, "giants_seats_freed_total") == 1


async def test_a_seat_whose_player_comes_back_in_time_is_kept(server_factory, client_factory) -> None:
    server = await server_factory(seat_grace=1.0, **FAST)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", players=2))["room"]
    token = (await alice.ok("join", room=room, seat=0))["token"]
    await alice.close()
    again = await client_factory(server.url, "alice")
    await again.ok("resume", room=room, token=token)
    await asyncio.sleep(1.5)
    assert server.lobby.rooms[room].seats[0].taken


async def test_a_game_every_human_left_ends_as_abandoned(server_factory, client_factory) -> None:
    server = await server_factory(abandon_after=0.4, **FAST)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    watcher = await client_factory(server.url, "watcher")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await watcher.ok("watch", room=room)
    await watcher.wait_for(lambda: watcher.rooms[room].view["room"]["status"] == "playing")
    await alice.close()
    await asyncio.sleep(0.8)
    assert server.lobby.rooms[room].status == "playing"  # bob is still there
    await bob.close()
    await eventually(lambda: watcher.rooms[room].view["room"]["status"] == "finished")
    assert watcher.rooms[room].view["outcome"]["reason"] == "abandoned"
    replay = await watcher.ok("replay", room=room)
    assert replay["outcome"]["reason"] == "abandoned"


async def test_a_game_with_a_deadline_is_not_abandoned(server_factory, client_factory) -> None:
    """With a move deadline the game plays itself out by default actions instead."""
    server = await server_factory(abandon_after=0.2, **FAST)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", deadline=3600, bots={"1": "random"}))["room"]
    await alice.ok("join", room=room)
    await alice.close()
    await asyncio.sleep(0.8)
    assert server.lobby.rooms[room].status == "playing"


async def test_every_key_of_a_finished_room_gets_the_retention_ttl(server_factory, client_factory) -> None:
    server = await server_factory(retention=3600, **FAST)
    watcher = await client_factory(server.url, "watcher")
    room = (await watcher.ok("create_room", game="giantslayer", options={"rounds": 1},
                             bots={"0": "random", "1": "random"}))["room"]
    await watcher.ok("watch", room=room)
    await watcher.wait_for(lambda: watcher.rooms[room].view["room"]["status"] == "finished", timeout=30)
    store = server.store
    keys = [store.k_room(room), store.k_log(room), store.k_snap(room)]
    redis = store.redis

    async def all_expiring() -> bool:
        ttls = [await redis.ttl(k) for k in keys if await redis.exists(k)]
        return len(ttls) >= 2 and all(0 < t <= 3600 for t in ttls)

    await eventually(all_expiring)
    assert not await redis.exists(server.lifecycle.db.k_life(room))
    assert await redis.zscore(server.lifecycle.db.k_due, room) is None
    assert (await watcher.ok("replay", room=room))["outcome"] is not None  # kept meanwhile


async def test_past_retention_a_room_leaves_the_finished_index(server_factory, client_factory) -> None:
    server = await server_factory(retention=1, **FAST)
    watcher = await client_factory(server.url, "watcher")
    room = (await watcher.ok("create_room", game="giantslayer", options={"rounds": 1},
                             bots={"0": "random", "1": "random"}))["room"]
    await watcher.ok("watch", room=room)
    await watcher.wait_for(lambda: watcher.rooms[room].view["room"]["status"] == "finished", timeout=30)
    await watcher.ok("leave", room=room)
    redis = server.store.redis
    await eventually(lambda: redis.zscore(server.store.k_finished, room), 5)
    await eventually(lambda: _gone(redis, server, room))
    listed = (await watcher.ok("list_rooms", include_finished=True))["rooms"]
    assert room not in {r["room"] for r in listed}
    assert await scrape(server.url, "giants_rooms_purged_total") >= 1


async def _gone(redis: aioredis.Redis, server: Any, room: str) -> bool:
    return (await redis.zscore(server.store.k_finished, room) is None
            and not await redis.exists(server.store.k_room(room)))


async def test_timers_survive_a_restart(server_factory, client_factory) -> None:
    """The abandonment clock started before a restart keeps running after it: the
    restored room ends as abandoned (and an idle waiting room expires)."""
    first = await server_factory(abandon_after=1.0, waiting_ttl=1.0, **FAST)
    alice = await client_factory(first.url, "alice")
    bob = await client_factory(first.url, "bob")
    game = (await alice.ok("create_room", game="giantslayer"))["room"]
    waiting = (await alice.ok("create_room", game="tara", autostart=False))["room"]
    await alice.ok("join", room=game)
    await bob.ok("join", room=game)
    await bob.wait_for(lambda: bob.rooms[game].view["room"]["status"] == "playing")
    await alice.close()
    await bob.close()
    life = first.lifecycle.db
    await eventually(lambda: first.store.redis.zscore(life.k_due, game))
    stored = await life.read(game)
    assert "gone" in stored
    await first.stop()
    second = await server_factory(abandon_after=1.0, waiting_ttl=1.0, **FAST)
    await eventually(lambda: stored_status(second, game), 10)
    restored = second.lobby.rooms.get(game)
    if restored is not None:
        await eventually(lambda: restored.life.get("gone") is not None)
        assert restored.life["gone"] == stored["gone"]  # the clock was not restarted
    await eventually(lambda: _status_is(second, game, "finished"))
    await eventually(lambda: _status_is(second, waiting, "finished"))
    record = await second.store.load_room(game)
    assert record is not None and record.outcome is not None and record.outcome["reason"] == "abandoned"


async def _status_is(server: Any, room: str, status: str) -> bool:
    return await stored_status(server, room) == status
