"""The relay on one Redis server: frames for a node's members published while that
node's subscription is down (here: killed by CLIENT KILL) are sent again once it has
subscribed again, in order, so its clients' views stay whole. The Redis is a private
redis-server (CLIENT KILL TYPE pubsub would cut other users of a shared one)."""

from __future__ import annotations

import asyncio
import random
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.conftest import start_serve
from tests.server.cluster import _cluster_ports, _wait_ping, redis_server_binary
from tests.server.multinode import FAST, move, no_internal_errors, stored_log, two_player_room

pytestmark = [pytest.mark.redis, pytest.mark.own_redis]


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[int]:
    (port,) = _cluster_ports(1)
    proc = subprocess.Popen(
        [redis_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path),
         "--save", "", "--appendonly", "no", "--logfile", str(tmp_path / "redis.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    _wait_ping([client], time.monotonic() + 20)
    client.close()
    yield port
    proc.terminate()
    proc.wait(10)


async def both_subscribed(admin: redis.Redis) -> None:
    """Wait (up to 20 s) until the two nodes hold a pub/sub connection each."""
    deadline = time.monotonic() + 20
    while len(admin.client_list(_type="pubsub")) < 2:
        assert time.monotonic() < deadline, "a node did not subscribe again within 20 s"
        await asyncio.sleep(0.02)


async def test_frames_sent_while_a_node_resubscribes_reach_its_clients(private_redis: int, client_factory: Any) -> None:
    url = f"redis://127.0.0.1:{private_redis}"
    args = ["--redis-url", url, "--key-prefix", "giants-rr:", *FAST]
    one, two = start_serve(list(args)), start_serve(list(args))
    admin = redis.Redis(port=private_redis)
    try:
        alice = await client_factory(one.url, "alice")
        bob = await client_factory(two.url, "bob")
        room, _tokens = await two_player_room(alice, bob)  # owned by one: bob is relayed
        direct = await client_factory(one.url, "direct")
        relayed = await client_factory(two.url, "relayed")
        for spectator in (direct, relayed):
            await spectator.ok("watch", room=room)
        everyone = [alice, bob, direct, relayed]
        rng, acked = random.Random(12), []
        await move(everyone, room, rng, acked)
        for _ in range(4):
            # Both nodes' subscriptions are cut; the next move's frames for bob and the
            # relayed spectator find nobody subscribed at two at first (alice's move,
            # every other time: bob's request waits until one has subscribed again).
            # Each node has subscribed again since the last cut (a move can complete
            # through one node's subscription while the other's is still coming back).
            await both_subscribed(admin)
            assert int(admin.execute_command("CLIENT KILL", "TYPE", "pubsub")) == 2
            await move(everyone, room, rng, acked)
        assert all(c.rooms[room].gaps == 0 for c in everyone), [c.rooms[room].gaps for c in everyone]
        assert relayed.rooms[room].view == direct.rooms[room].view
        assert relayed.rooms[room].version == direct.rooms[room].version
        assert [(e["seat"], e["action"]) for e in await stored_log(url, "giants-rr:", room)] == acked
        no_internal_errors(*everyone)
    finally:
        admin.close()
        for sp in (one, two):
            if sp.proc.poll() is None:
                sp.proc.terminate()
                sp.proc.wait(30)
