"""Bursts of connections: a node keeps renewing its leases while hundreds of clients
connect at once; a burst handed to a sibling worker lands there, however long the
sibling takes to read it, and a connection a sibling stalled on is counted and served
where it landed.

Real processes, real Redis, real WebSockets; nothing here asserts on timing (how late
renewals run in a storm is measured by bench/storm.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.handover_link import DEPTH
from tests.server.multinode import metric, metrics
from tests.server.test_worker_handover import per_node, serve_workers, total

pytestmark = pytest.mark.redis

NO_LIMITS = ("--max-connections-per-address", "0", "--max-rooms-per-address", "0", "--rate", "1000",
             "--burst", "1000")


async def holders(redis: Any, key_prefix: str, rooms: list[str]) -> list[str | None]:
    values = await redis.mget([f"{key_prefix}room:{{{room}}}:lease" for room in rooms])
    return [None if v is None else v.decode() for v in values]


async def test_a_node_keeps_its_rooms_through_a_burst_of_connections(
    serve_process, client_factory, redis_url, key_prefix
) -> None:
    """A node dies; the survivors sweep for its rooms while 400 clients connect to one
    of them at once and watch its rooms. The other survivor would take any room whose
    lease lapsed: none does, and the node lost none."""
    node, peer = serve_process(*NO_LIMITS), serve_process(*NO_LIMITS)
    victim = serve_process(*NO_LIMITS, "--node-id", f"victim-{os.urandom(3).hex()}")
    creator = await client_factory(node.url, "creator")
    rooms = [(await creator.ok("create_room", game="giantslayer"))["room"] for _ in range(60)]
    redis = aioredis.from_url(redis_url)
    try:
        owners = await holders(redis, key_prefix, rooms)
        assert len(set(owners)) == 1 and owners[0] is not None
        renewed = metric(metrics(node.url), "giants_lease_renewal_gap_seconds_count")

        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        victim_id = victim.args[victim.args.index("--node-id") + 1]
        while await redis.exists(f"{key_prefix}node:{victim_id}"):  # then both survivors sweep
            await asyncio.sleep(0.02)

        async def watcher(n: int) -> None:
            room = rooms[n % len(rooms)]
            client = await client_factory(f"{node.url}/?room={room}", f"w{n}")
            await client.ok("watch", room=room)
            await client.wait_for(lambda: room in client.rooms)

        await asyncio.gather(*(watcher(n) for n in range(400)))
        # A few more renewal passes of the node and sweeps of the peer after the burst.
        text = metrics(node.url)
        while metric(text, "giants_lease_renewal_gap_seconds_count") < renewed + 8:
            await asyncio.sleep(0.1)
            text = metrics(node.url)
        assert await holders(redis, key_prefix, rooms) == owners
        assert metric(text, "giants_rooms_lost_total") == 0
        assert metric(text, "giants_leases_owned") == len(rooms)
        assert metric(metrics(peer.url), "giants_leases_owned") == 0
        assert metric(text, "giants_admission_waited_total") >= 0  # exposed (how many waited varies)
    finally:
        await redis.aclose()


async def owner_pid(redis: Any, key_prefix: str, rooms: list[str]) -> int:
    """The pid of the worker holding every one of `rooms` (node ids are host-pid-random)."""
    owners = await holders(redis, key_prefix, rooms)
    assert len(set(owners)) == 1 and owners[0] is not None
    return int(owners[0].rsplit("-", 2)[1])


async def test_a_burst_handed_to_a_busy_sibling_lands_at_the_owner(
    workers, client_factory, redis_url, key_prefix
) -> None:
    """200 clients connect at once naming rooms one worker owns while that worker is
    stopped (SIGSTOP: as busy as a worker gets, it reads nothing). About half land on the
    other worker, which hands each of them over: more than a queue of 10 datagrams
    held, and for longer than the second a sender used to wait. Resumed, the owner takes
    every one of them: none is served through the relay, none counts as failed."""
    # Long leases: the stopped owner still holds its rooms meanwhile.
    sp = serve_workers(workers, "--redis-url", redis_url, "--key-prefix", key_prefix, "--lease-ttl", "6", *NO_LIMITS)
    redis = aioredis.from_url(redis_url)
    try:
        creator = await client_factory(sp.url, "creator")
        rooms = [(await creator.ok("create_room", game="giantslayer"))["room"] for _ in range(4)]
        pid = await owner_pid(redis, key_prefix, rooms)
        os.kill(pid, signal.SIGSTOP)
        try:
            pending = [asyncio.ensure_future(client_factory(f"{sp.url}/?room={rooms[n % 4]}", f"m{n}"))
                       for n in range(200)]
            await asyncio.sleep(1.5)  # the owner stays stopped a while (this asserts nothing on time)
        finally:
            os.kill(pid, signal.SIGCONT)
        clients = await asyncio.gather(*pending)
        for n, client in enumerate(clients):
            room = rooms[n % 4]
            await client.ok("watch", room=room)
            assert client.rooms[room].view["room"]["status"] == "waiting"
        seen = per_node(sp.url)
        assert total(seen, "giants_handover_sent_total") == total(seen, "giants_handover_received_total") > 0
        assert total(seen, "giants_handover_failed_total") == 0
        assert total(seen, "giants_relay_requests_total") == 0
    finally:
        await redis.aclose()


async def test_a_hand_over_the_owner_does_not_take_in_time_is_counted(
    workers, client_factory, redis_url, key_prefix
) -> None:
    """The worker owning the room is stopped (SIGSTOP): it reads no connection handed to
    it. Once its queue is full (DEPTH connections not acknowledged), the other worker's
    senders wait until the owner has taken nothing for STALL seconds, then serve their
    connections themselves and count them in giants_handover_failed_total; the clients
    notice nothing but the wait. Resumed, the owner takes the connections it was sent."""
    # Long leases: the stopped owner still holds the room meanwhile, even when 768
    # handshakes on a loaded machine take longer than a short lease would last (the
    # live worker would then take the room over and no hand-over would fail).
    sp = serve_workers(workers, "--redis-url", redis_url, "--key-prefix", key_prefix, "--lease-ttl", "30", *NO_LIMITS)
    redis = aioredis.from_url(redis_url)
    try:
        creator = await client_factory(sp.url, "creator")
        room = (await creator.ok("create_room", game="giantslayer"))["room"]
        pid = await owner_pid(redis, key_prefix, [room])
        os.kill(pid, signal.SIGSTOP)
        try:
            # About half land on the stopped owner (they wait for it), the others on
            # the live worker: more than the owner's queue takes (3 x DEPTH in all, so
            # some 1.5 x DEPTH land there; fewer than DEPTH is 9 standard deviations off).
            # A long handshake timeout: the clients' wait is the behaviour under test, and
            # on a loaded machine 768 handshakes can outlast websockets' default 10 s.
            pending = [asyncio.ensure_future(client_factory(f"{sp.url}/?room={room}", f"m{n}", open_timeout=60))
                       for n in range(3 * DEPTH)]
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        finally:
            os.kill(pid, signal.SIGCONT)
        clients = await asyncio.gather(*pending)
        for client in clients:  # wherever each one was served, it follows the room
            await client.ok("watch", room=room)
            assert client.rooms[room].view["room"]["status"] == "waiting"
        seen = per_node(sp.url)
        assert total(seen, "giants_handover_failed_total") >= len(done) >= 1
        assert total(seen, "giants_handover_received_total") == total(seen, "giants_handover_sent_total") >= DEPTH
    finally:
        await redis.aclose()
