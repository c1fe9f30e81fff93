"""Issue 11 items 2 and 6: restore retries what Redis failed to serve, never says
healthy before every room is back, quarantines what cannot be replayed, listens
first (a request for a room not restored yet waits for it), and a finished room
can still be resumed to its final snapshot."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from server.app import GiantsServer
from server.config import Config
from server.store import Store
from tests.fault_checks import one_reply_per_id
from tests.server.test_persistence import play

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]


async def rooms_with_moves(server, client_factory, n: int) -> dict[str, str]:
    """`n` playing rooms with two moves each; returns room id -> seat 0's token."""
    tokens = {}
    for i in range(n):
        alice = await client_factory(server.url, "alice")
        bob = await client_factory(server.url, "bob")
        room = (await alice.ok("create_room", game="giantslayer"))["room"]
        tokens[room] = (await alice.ok("join", room=room))["token"]
        await bob.ok("join", room=room)
        await play({0: alice, 1: bob}, room, 2, random.Random(i))
        await alice.close()
        await bob.close()
    return tokens


async def test_restore_retries_until_redis_serves_and_is_unhealthy_meanwhile(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """Every room read fails at first: the server listens, says unavailable with the
    rooms pending, a resume waits for its room instead of answering no_such_room, and
    once Redis serves again every room is restored and the server is healthy."""
    first = await server_factory()
    tokens = await rooms_with_moves(first, client_factory, 3)
    await first.stop()  # hands over: the leases are free for the next node

    fault_proxy.drop_command(b"HGETALL", count=10_000)
    config = Config(host="127.0.0.1", port=0, redis_url=fault_proxy.url, key_prefix=key_prefix,
                    redis_timeout=0.5, redis_retry_window=30.0)
    server = GiantsServer(config)
    await server.start(wait_restored=False)
    try:
        healthy, body = await server.health()
        assert not healthy and body["rooms_pending"] == 3 and not body["rooms_loaded"]
        await fault_proxy.wait_triggered(2)
        alice = await client_factory(server.url, "alice")
        room = next(iter(tokens))
        waiting = asyncio.ensure_future(alice.request("resume", room=room, token=tokens[room], timeout=60))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # not no_such_room: it waits for its room
        healthy, body = await server.health()
        assert not healthy and body["rooms_pending"] >= 1
        fault_proxy.clear()
        reply = await waiting
        assert reply["type"] == "ok" and reply["data"]["seat"] == 0, reply
        await asyncio.wait_for(asyncio.shield(server.restore_task), 60)  # type: ignore[arg-type]
        healthy, body = await server.health()
        assert healthy and body["rooms_pending"] == 0 and body["rooms_quarantined"] == 0
        assert set(tokens) <= set(server.lobby.rooms)
        metrics = server.render_metrics("")[0].decode()
        retries = next(line for line in metrics.splitlines() if line.startswith("giants_restore_retries_total"))
        assert float(retries.split()[-1]) >= 2
        one_reply_per_id(alice)
    finally:
        await server.stop()


async def test_room_whose_log_cannot_be_replayed_is_quarantined_not_dropped(
    server_factory, client_factory, redis_url, key_prefix, caplog
) -> None:
    """A room whose stored log no longer replays is quarantined: logged, counted in
    /metrics, left in Redis as it was, answered with storage_unavailable (a client
    keeps it) — and it does not keep the other rooms or /healthz down."""
    first = await server_factory()
    tokens = await rooms_with_moves(first, client_factory, 2)
    await first.stop()
    broken, fine = list(tokens)
    store = Store(redis_url, key_prefix)
    try:
        bad = msgpack.packb({"v": 99, "seat": 0, "action": "no such move", "ts": 0.0})
        await store.redis.rpush(store.k_log(broken), bad)
        await store.redis.hincrby(store.k_room(broken), "actions", 1)
        log_before = await store.redis.lrange(store.k_log(broken), 0, -1)
        server = await server_factory()
        assert broken in server.lobby.quarantined and fine in server.lobby.rooms
        healthy, body = await server.health()
        assert healthy and body["rooms_quarantined"] == 1
        metrics = server.render_metrics("")[0].decode()
        assert "giants_rooms_quarantined 1.0" in metrics
        assert any("quarantined" in r.getMessage() and broken in r.getMessage() for r in caplog.records)
        alice = await client_factory(server.url, "alice")
        refused = await alice.error("resume", room=broken, token=tokens[broken])
        assert refused["code"] == "storage_unavailable"
        assert (await alice.ok("resume", room=fine, token=tokens[fine]))["seat"] == 0
        assert await store.redis.lrange(store.k_log(broken), 0, -1) == log_before  # untouched
    finally:
        await store.close()


async def test_seat_that_missed_the_end_resumes_to_the_final_snapshot(server_factory, client_factory) -> None:
    """Bob is away when Alice resigns; after a restart his token still opens the room:
    the final view with the outcome, not no_such_room."""
    first = await server_factory()
    alice = await client_factory(first.url, "alice")
    bob = await client_factory(first.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    token = (await bob.ok("join", room=room))["token"]
    await play({0: alice, 1: bob}, room, 2, random.Random(7))
    await bob.close()
    await alice.ok("resign", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "finished")
    outcome = alice.rooms[room].view["outcome"]
    await first.stop()
    second = await server_factory()
    bob2 = await client_factory(second.url, "bob")
    assert (await bob2.ok("resume", room=room, token=token))["seat"] == 1
    await bob2.wait_for(lambda: room in bob2.rooms)
    view = bob2.rooms[room].view
    assert view["room"]["status"] == "finished" and view["outcome"] == outcome
    assert (await bob2.error("act", room=room, action="x"))["code"] == "game_over"
    refused = await bob2.error("resume", room=room, token="not-the-token")
    assert refused["code"] == "bad_token"
    one_reply_per_id(bob2)


def test_engine_registry_first_lookups_from_threads_are_safe() -> None:
    """Two threads asking for an engine first, at the same moment, both get it (a
    fresh interpreter each time: the registry loads lazily on first use)."""
    script = (
        "import threading\n"
        "from engines import registry\n"
        "barrier = threading.Barrier(4); errors = []\n"
        "def look(name):\n"
        "    barrier.wait()\n"
        "    try:\n"
        "        registry.get_engine(name)\n"
        "    except Exception as exc:\n"
        "        errors.append(repr(exc))\n"
        "threads = [threading.Thread(target=look, args=(g,)) for g in ('giants', 'tara', 'causeway', 'giantslayer')]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(errors); raise SystemExit(1 if errors else 0)\n"
    )
    for _ in range(5):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
