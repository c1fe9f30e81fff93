"""Redis is the source of truth: kills, restarts, deadlines and stale writers."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from typing import Any

import pytest

from server.embedded_redis import SOCKET_NAME, ping_socket
from server.store import StaleWriteError, Store

pytestmark = pytest.mark.redis


async def settle(clients: list, room: str, timeout: float = 10.0) -> None:
    """Wait until every client holds the room at the same version and one must act."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        copies = [c.rooms.get(room) for c in clients]
        if all(copies) and len({c.version for c in copies}) == 1 and any(c.legal for c in copies):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("clients did not settle")


async def play(actors: dict[int, Any], room: str, moves: int, rng: random.Random) -> None:
    """Play `moves` random legal moves, each acknowledged and seen by every client."""
    clients = list(actors.values())
    for _ in range(moves):
        await settle(clients, room)
        actor = next(c for c in clients if c.rooms[room].legal)
        version = (await actor.ok("act", room=room, action=rng.choice(actor.rooms[room].legal)))["version"]
        for client in clients:
            await client.wait_version(room, version)


async def test_sigkill_mid_game_loses_no_acknowledged_move(serve_process, client_factory) -> None:
    """The server process is SIGKILLed mid-game; started again it restores the room and
    the players resume with their tokens at the last acknowledged move."""
    first = serve_process()
    alice = await client_factory(first.url, "alice")
    bob = await client_factory(first.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    tokens = {0: (await alice.ok("join", room=room))["token"], 1: (await bob.ok("join", room=room))["token"]}
    await play({0: alice, 1: bob}, room, 7, random.Random(11))
    before = alice.rooms[room].view
    acked = alice.rooms[room].version

    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)

    second = serve_process()
    alice2 = await client_factory(second.url, "alice")
    bob2 = await client_factory(second.url, "bob")
    assert (await alice2.ok("resume", room=room, token=tokens[0]))["seat"] == 0
    assert (await bob2.ok("resume", room=room, token=tokens[1]))["seat"] == 1
    await alice2.wait_for(lambda: alice2.rooms[room].view["room"]["seats"][1]["connected"])
    after = alice2.rooms[room].view
    assert after["game"] == before["game"]  # the same position: nothing lost
    assert after["room"]["to_act"] == before["room"]["to_act"]
    assert alice2.rooms[room].version > acked  # resumes add versions; none went back
    await play({0: alice2, 1: bob2}, room, 3, random.Random(12))
    actions = [e for e in alice2.rooms[room].events if e["type"] == "action"]
    assert len(actions) == 3


async def test_deadline_fires_across_a_restart(serve_process, client_factory, redis_url, key_prefix) -> None:
    """A move deadline stored in Redis survives the process: the server is killed before
    it fires; the restarted server applies the engine's default action when it is due."""
    first = serve_process()
    alice = await client_factory(first.url, "alice")
    bob = await client_factory(first.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer", deadline=1.5))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "playing")
    view = alice.rooms[room].view["room"]
    deadline = view["deadline"]
    assert deadline is not None and deadline > time.time()
    late_seat = view["to_act"][0]
    late_client = alice if late_seat == 0 else bob
    await late_client.wait_version(room, alice.rooms[room].version)
    expected_default = late_client.rooms[room].legal[0]
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    await asyncio.sleep(max(0.0, deadline - time.time()) + 0.2)  # the deadline passes while down

    serve_process()
    store = Store(redis_url, key_prefix)
    try:
        for _ in range(100):
            log = await store.read_log(room)
            if log:
                break
            await asyncio.sleep(0.05)
        assert log, "the restarted server did not apply the overdue default action"
        assert (log[0]["seat"], log[0]["action"]) == (late_seat, expected_default)
    finally:
        await store.close()


async def test_deadline_applies_default_action_and_says_so(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer", deadline=0.3))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: any(e["type"] == "timeout" for e in alice.rooms[room].events), timeout=5)
    timeout = next(e for e in alice.rooms[room].events if e["type"] == "timeout")
    action = next(e for e in alice.rooms[room].events if e["type"] == "action")
    assert action["seat"] == timeout["seat"]


async def test_stale_writer_cannot_overwrite_newer_state(redis_url, key_prefix) -> None:
    """Version-guarded writes: an old version or an old fence token is refused."""
    store = Store(redis_url, key_prefix)
    try:
        assert await store.create_room("r1", {"game": "x"}, [{}])
        common = {"status": "waiting", "seats": [{}], "deadline": None, "outcome": None, "actions": 0}
        await store.commit("r1", expected=0, version=1, fence=1, **common)
        with pytest.raises(StaleWriteError):
            await store.commit("r1", expected=0, version=1, fence=1, **common)
        fence = await store.acquire("r1")  # another node takes the room over
        with pytest.raises(StaleWriteError):
            await store.commit("r1", expected=1, version=2, fence=1, **common)
        await store.commit("r1", expected=1, version=2, fence=fence, **common)
        assert not await store.create_room("r1", {"game": "x"}, [{}])  # ids are never reused
    finally:
        await store.close()


async def test_node_that_lost_the_room_cannot_write(server_factory, client_factory) -> None:
    """Server B restores the room (taking its fence); server A's next move is refused
    with internal_error and nothing it says reaches Redis."""
    a = await server_factory()
    alice = await client_factory(a.url, "alice")
    bob = await client_factory(a.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await bob.wait_for(lambda: bob.rooms[room].view["room"]["status"] == "playing")  # autostart
    live = a.lobby.rooms[room]
    b = await server_factory()  # B leaves A's rooms alone while A holds their leases...
    assert room not in b.lobby.rooms
    await a.store.redis.delete(a.store.k_lease(room))  # ...until A's lease is gone (A paused)
    assert await b.lobby.take_over(room) is not None  # B takes it over: fence bump
    actor = alice if live.to_act == [0] else bob
    await actor.wait_version(room, live.version)
    refused = await actor.error("act", room=room, action=actor.rooms[room].legal[0])
    assert refused["code"] == "internal_error"
    assert await a.store.read_log(room) == []
    assert room not in a.lobby.rooms  # A dropped the room...
    # ...and its members were moved: B sends them a fresh snapshot, and they play on
    # through A, which relays their requests to B.
    await actor.wait_for(lambda: actor.rooms[room].version > live.version)
    moved = actor.rooms[room]
    assert moved.legal and moved.view["room"]["status"] == "playing"
    version = (await actor.ok("act", room=room, action=moved.legal[0]))["version"]
    other = bob if actor is alice else alice
    await other.wait_version(room, version)
    assert len(await b.store.read_log(room)) == 1


async def test_graceful_shutdown_sends_closing_and_1001(server_factory, client_factory) -> None:
    server = await server_factory()
    client = await client_factory(server.url)
    await server.stop()
    await asyncio.wait_for(client.closed, 5)
    assert client.pushes[-1] == {"type": "closing", "reason": "server shutting down"}
    assert client.ws.close_code == 1001


async def test_embedded_redis_keeps_rooms_across_restarts_and_kills(serve_process, client_factory, tmp_path) -> None:
    """`giants serve` with no Redis URL: rooms survive a clean restart (SIGTERM stops
    Redis too) and a SIGKILL (the orphaned Redis is adopted, data intact)."""
    data = tmp_path / "data"
    first = serve_process(embedded_dir=data)
    alice = await client_factory(first.url, "alice")
    bob = await client_factory(first.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    token = (await alice.ok("join", room=room))["token"]
    await bob.ok("join", room=room)
    await play({0: alice, 1: bob}, room, 3, random.Random(3))
    game = alice.rooms[room].view["game"]

    first.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(first.proc.wait, 20) == 0
    assert not ping_socket(data / SOCKET_NAME)  # its Redis went down with it
    assert (data / "appendonly.aof").exists() or (data / "appendonlydir").exists()

    second = serve_process(embedded_dir=data)
    again = await client_factory(second.url, "alice")
    await again.ok("resume", room=room, token=token)
    await again.wait_for(lambda: room in again.rooms)
    assert again.rooms[room].view["game"] == game

    pid = int((data / "redis.pid").read_text())
    second.proc.send_signal(signal.SIGKILL)
    second.proc.wait(10)
    assert ping_socket(data / SOCKET_NAME)  # the orphan still serves the data
    third = serve_process(embedded_dir=data)
    once_more = await client_factory(third.url, "alice")
    await once_more.ok("resume", room=room, token=token)
    await once_more.wait_for(lambda: room in once_more.rooms)
    assert once_more.rooms[room].view["game"] == game
    third.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(third.proc.wait, 20) == 0
    for _ in range(100):  # the adopted Redis is stopped with the server
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the adopted embedded Redis kept running")


async def test_restore_from_snapshot_plus_log_tail(server_factory, client_factory) -> None:
    """With a snapshot every 3 actions, 8 moves restore as snapshot (6) + 2 replayed."""
    a = await server_factory(snapshot_every=3)
    alice = await client_factory(a.url, "alice")
    bob = await client_factory(a.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await play({0: alice, 1: bob}, room, 8, random.Random(8))
    record = await a.store.load_room(room)
    assert record is not None
    assert (record.snapshot_n, len(record.log_tail), record.actions) == (6, 2, 8)
    b = await server_factory(snapshot_every=3)
    original = a.lobby.rooms[room]
    await a.store.redis.delete(a.store.k_lease(room))  # as if A's lease expired
    restored = await b.lobby.take_over(room)  # restores it from Redis (fence bump)
    assert restored is not None
    assert restored.actions == 8 and restored.version == original.version
    for seat in (0, 1, None):
        assert restored.engine.view(restored.state, seat) == original.engine.view(original.state, seat)


async def test_room_reloads_when_storage_is_ahead_of_it(giants_server, client_factory) -> None:
    """If a write landed but its reply was lost, Redis is ahead of the room: the next
    write is refused, the room reloads from Redis, every member gets a fresh snapshot,
    and play goes on."""
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await bob.wait_for(lambda: bob.rooms[room].view["room"]["status"] == "playing")
    live = giants_server.lobby.rooms[room]
    await giants_server.store.redis.hincrby(giants_server.store.k_room(room), "version", 1)
    stored = live.version + 1
    actor = alice if live.to_act == [0] else bob
    await actor.wait_version(room, live.version)
    refused = await actor.error("act", room=room, action=actor.rooms[room].legal[0])
    assert refused["code"] == "internal_error"
    assert live.version == stored and not live.closing
    for client in (alice, bob):
        await client.wait_version(room, stored)
    assert (await actor.ok("act", room=room, action=actor.rooms[room].legal[0]))["version"] == stored + 1
