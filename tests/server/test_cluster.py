"""The same server on a real 3-master Redis Cluster: room keys in one slot each,
scripts routed per room, the lobby index across slots, a game through two nodes and
a failover."""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import Iterator

import pytest
from redis.asyncio.cluster import RedisCluster

from server.store import Store
from tests.server.cluster import Cluster, start_cluster
from tests.server.multinode import FAST, move, no_internal_errors, two_player_room

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = start_cluster(tmp_path_factory.mktemp("cluster"))
    yield running
    running.stop()


async def test_store_on_a_cluster_spreads_rooms_over_masters(cluster: Cluster) -> None:
    store = Store(cluster.url, "giants-c1:", cluster=True)
    try:
        ids = [f"room{i}" for i in range(30)]
        for room_id in ids:
            assert await store.create_room(room_id, {"game": "x"}, [{}], "node-a", 5000)
        common = {"seats": [{}], "deadline": None, "outcome": None, "actions": 1}
        for room_id in ids:  # the commit script runs on the master holding the room's slot
            await store.commit(room_id, expected=0, version=1, fence=1, status="playing",
                               log_entry={"v": 1, "seat": 0, "action": "a1", "ts": 0.0}, **common)
        assert sorted(await store.live_room_ids()) == sorted(ids)
        await store.commit(ids[0], expected=1, version=2, fence=1, status="finished", now=1.0, **common)
        assert ids[0] not in await store.live_room_ids()
        assert await store.finished_room_ids() == [ids[0]]
        assert [e["action"] for e in await store.read_log(ids[1])] == ["a1"]
        raw = store.redis
        assert isinstance(raw, RedisCluster)
        owners = {raw.get_node_from_key(store.k_room(i)).port for i in ids}
        assert len(owners) == 3  # rooms spread over the three masters
        for room_id in ids:  # and each room's keys sit together
            slots = {raw.keyslot(k) for k in (store.k_room(room_id), store.k_log(room_id), store.k_lease(room_id))}
            assert len(slots) == 1
        assert await store.acquire_lease(ids[1], "node-b", 5000) is None  # node-a holds it
        assert await store.renew_leases("node-a", [(ids[1], 1), (ids[2], 7)], 5000) == [True, False]
    finally:
        await store.delete_all()
        await store.close()


async def test_a_game_through_two_nodes_and_a_failover_on_a_cluster(cluster: Cluster, serve_process, client_factory) -> None:
    prefix = "giants-c2:"
    args = ("--redis-url", cluster.url, "--key-prefix", prefix, *FAST)
    from tests.conftest import start_serve

    one, two = start_serve(list(args)), start_serve(list(args))
    try:
        alice = await client_factory(one.url, "alice")
        bob = await client_factory(two.url, "bob")
        room, tokens = await two_player_room(alice, bob)
        assert [r["room"] for r in (await bob.ok("list_rooms"))["rooms"]] == [room]
        rng, acked = random.Random(4), []
        for _ in range(5):
            await move([alice, bob], room, rng, acked)
        one.proc.send_signal(signal.SIGKILL)
        one.proc.wait(10)
        alice2 = await client_factory(two.url, "alice")
        assert (await alice2.ok("resume", room=room, token=tokens[0]))["seat"] == 0
        await alice2.wait_for(lambda: room in alice2.rooms)
        for _ in range(3):
            await move([alice2, bob], room, rng, acked)
        store = Store(cluster.url, prefix, cluster=True)
        try:
            log = await store.read_log(room)
            assert [(e["seat"], e["action"]) for e in log] == acked
        finally:
            await store.delete_all()
            await store.close()
        no_internal_errors(alice2, bob)
    finally:
        for sp in (one, two):
            if sp.proc.poll() is None:
                sp.proc.terminate()
                await asyncio.to_thread(sp.proc.wait, 30)
