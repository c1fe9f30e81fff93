"""The same server on a real 3-master Redis Cluster: room keys in one slot each,
scripts routed per room, the lobby index across slots, a game through two nodes and
a failover; the relay on sharded pub/sub (inboxes on their slots' masters, no classic
PUBLISH per relayed move), its subscriptions recovering from a killed connection and
from their slots moving to another master."""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from redis.cluster import RedisCluster as SyncCluster

from server.store import Store
from tests.conftest import start_serve
from tests.server.cluster import Cluster, start_cluster
from tests.server.multinode import FAST, move, no_internal_errors, two_player_room

pytestmark = [pytest.mark.redis, pytest.mark.own_redis]


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


def _inbox(prefix: str, node_id: str) -> str:
    return f"{prefix}relay:{{{node_id}}}"  # the node id is the hash tag (server.relay_channels)


def _node_ids_on_different_masters(cluster: Cluster, prefix: str) -> tuple[list[str], dict[str, int]]:
    """Two node ids whose inboxes hash to slots of different masters; id -> master port."""
    client = SyncCluster.from_url(cluster.url)
    try:
        owners: dict[str, int] = {}
        for i in itertools.count():
            node_id = f"relay{i}"
            port = client.get_node_from_key(_inbox(prefix, node_id)).port
            if port not in owners.values():
                owners[node_id] = port
            if len(owners) == 2:
                return list(owners), owners
    finally:
        client.close()
    raise AssertionError("unreachable")


def _shard_subscribers(master: redis.Redis, channel: str) -> int:
    return int(master.execute_command("PUBSUB SHARDNUMSUB", channel)[0][1])


def _classic_subscribers(master: redis.Redis, channel: str) -> int:
    return int(master.execute_command("PUBSUB NUMSUB", channel)[0][1])


def _calls(master: redis.Redis, command: str) -> int:
    """How many times `command` ran on this master without an error (NOSCRIPT included)."""
    stats = master.info("commandstats").get(f"cmdstat_{command}", {})
    return int(stats.get("calls", 0)) - int(stats.get("failed_calls", 0))


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Poll until `condition()` holds (a generous bound so a stuck relay fails the test)."""
    for _ in range(600):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


async def _game_through_two_cluster_nodes(cluster: Cluster, prefix: str, client_factory: Any) -> Any:
    """Nodes one (alice, the room's owner) and two (bob, relayed) with inboxes on two
    different masters; yields what the test needs, then stops the nodes."""
    ids, owners = _node_ids_on_different_masters(cluster, prefix)
    args = ["--redis-url", cluster.url, "--key-prefix", prefix, *FAST]
    one = start_serve([*args, "--node-id", ids[0]])
    two = start_serve([*args, "--node-id", ids[1]])
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")
    room, _tokens = await two_player_room(alice, bob)  # created at one: bob's requests are relayed
    return ids, owners, (one, two), (alice, bob), room


async def _stop(*nodes: Any) -> None:
    for sp in nodes:
        if sp.proc.poll() is None:
            sp.proc.terminate()
            await asyncio.to_thread(sp.proc.wait, 30)


async def _stored_moves(cluster: Cluster, prefix: str, room: str) -> list[tuple[int, str]]:
    store = Store(cluster.url, prefix, cluster=True)
    try:
        return [(e["seat"], e["action"]) for e in await store.read_log(room)]
    finally:
        await store.delete_all()
        await store.close()


async def test_the_relay_uses_sharded_pubsub_at_each_inbox_master(cluster: Cluster, client_factory) -> None:
    prefix = "giants-c3:"
    ids, owners, nodes, players, room = await _game_through_two_cluster_nodes(cluster, prefix, client_factory)
    masters = {port: redis.Redis(port=port) for port in cluster.ports}
    try:
        assert owners[ids[0]] != owners[ids[1]]  # the two inboxes live on different shards
        for node_id in ids:
            inbox = _inbox(prefix, node_id)
            for port, master in masters.items():
                # one shard subscriber (the node itself) at its slot's master, nowhere else
                assert _shard_subscribers(master, inbox) == (1 if port == owners[node_id] else 0)
                assert _classic_subscribers(master, inbox) == 0
        for port, master in masters.items():
            # The only classic channel is the broadcast, subscribed on each node's one connection.
            classic = sorted(c.decode() for c in master.pubsub_channels(f"{prefix}*"))
            assert classic == ([f"{prefix}relay:all"] if port in owners.values() else [])
        publish0 = {port: _calls(m, "publish") for port, m in masters.items()}
        spublish0 = {port: _calls(m, "spublish") for port, m in masters.items()}
        rng, acked = random.Random(5), []
        for _ in range(6):
            await move(list(players), room, rng, acked)
        publish = {port: _calls(m, "publish") - publish0[port] for port, m in masters.items()}
        spublish = {port: _calls(m, "spublish") - spublish0[port] for port, m in masters.items()}
        assert sum(publish.values()) == 0, publish  # no classic PUBLISH for relayed moves
        # bob's three moves went to one's inbox master; every move's frames to two's
        assert spublish[owners[ids[0]]] >= 3, spublish
        assert spublish[owners[ids[1]]] >= 6, spublish
        third = [port for port in cluster.ports if port not in owners.values()]
        assert all(spublish[port] == 0 for port in third), spublish
        assert await _stored_moves(cluster, prefix, room) == acked
        no_internal_errors(*players)
    finally:
        for master in masters.values():
            master.close()
        await _stop(*nodes)


async def test_the_relay_resubscribes_after_a_killed_connection_and_a_moved_slot(
    cluster: Cluster, client_factory
) -> None:
    prefix = "giants-c4:"
    ids, owners, nodes, players, room = await _game_through_two_cluster_nodes(cluster, prefix, client_factory)
    masters = {port: redis.Redis(port=port) for port in cluster.ports}
    inboxes = [_inbox(prefix, node_id) for node_id in ids]
    try:
        rng, acked = random.Random(6), []
        for _ in range(2):
            await move(list(players), room, rng, acked)

        # 1. Each node's subscribed connection is killed at its inbox's master. The
        # owner's first, with moves played at once: bob's requests that find nobody
        # subscribed are sent again until the owner has subscribed again.
        def subscribed(i: int) -> bool:
            return _shard_subscribers(masters[owners[ids[i]]], inboxes[i]) == 1

        assert int(masters[owners[ids[0]]].execute_command("CLIENT KILL", "TYPE", "pubsub")) >= 1
        for _ in range(2):
            await move(list(players), room, rng, acked)
        await _until(lambda: subscribed(0), "the owner subscribed again")
        assert int(masters[owners[ids[1]]].execute_command("CLIENT KILL", "TYPE", "pubsub")) >= 1
        await _until(lambda: subscribed(1), "bob's node subscribed again")
        for _ in range(3):
            await move(list(players), room, rng, acked)

        # 2. Each inbox's slot moves to another master (no keys live in those slots):
        # Redis drops the subscriptions (sunsubscribe); the nodes subscribe at the new
        # owners, and senders follow the MOVED answers.
        names = {port: m.execute_command("CLUSTER MYID") for port, m in masters.items()}
        order = list(cluster.ports)
        moved_to = {}
        for node_id, inbox in zip(ids, inboxes, strict=True):
            source = owners[node_id]
            target = order[(order.index(source) + 1) % len(order)]
            slot = int(masters[source].execute_command("CLUSTER KEYSLOT", inbox))
            assert int(masters[source].execute_command("CLUSTER COUNTKEYSINSLOT", slot)) == 0
            target_id = names[target].decode() if isinstance(names[target], bytes) else names[target]
            for port in [target, source, *[p for p in order if p not in (source, target)]]:
                masters[port].execute_command("CLUSTER SETSLOT", slot, "NODE", target_id)
            moved_to[inbox] = (source, target)
        await _until(lambda: all(_shard_subscribers(masters[t], i) == 1 and _shard_subscribers(masters[s], i) == 0
                                 for i, (s, t) in moved_to.items()),
                     "both nodes subscribed at their inboxes' new masters")
        for _ in range(4):
            await move(list(players), room, rng, acked)
        assert await _stored_moves(cluster, prefix, room) == acked
        no_internal_errors(*players)
    finally:
        for master in masters.values():
            master.close()
        await _stop(*nodes)


def _moved_errors(masters: dict[int, redis.Redis]) -> int:
    return sum(int(m.info("errorstats").get("errorstat_MOVED", {}).get("count", 0)) for m in masters.values())


async def test_commits_go_to_each_rooms_master_and_follow_a_moved_slot(cluster: Cluster) -> None:
    store = Store(cluster.url, "giants-c5:", cluster=True)
    masters = {port: redis.Redis(port=port) for port in cluster.ports}
    common = {"seats": [{}], "deadline": None, "outcome": None, "status": "playing"}

    def entry(v: int) -> dict[str, Any]:
        return {"v": v, "seat": 0, "action": f"a{v}", "ts": 0.0}

    try:
        ids = [f"shard{i}" for i in range(12)]
        for room_id in ids:
            assert await store.create_room(room_id, {"game": "x"}, [{}], "node-a", 5000)
        evalsha0 = {port: _calls(m, "evalsha") for port, m in masters.items()}
        moved0 = _moved_errors(masters)
        for room_id in ids:
            await store.commit(room_id, expected=0, version=1, fence=1, actions=1, log_entry=entry(1), **common)
        # Each commit ran once, at its room's master, sent there directly (no MOVED).
        raw = store.redis
        assert isinstance(raw, RedisCluster)
        per_master = {port: _calls(m, "evalsha") - evalsha0[port] for port, m in masters.items()}
        expected = {port: sum(1 for i in ids if raw.get_node_from_key(store.k_room(i)).port == port)
                    for port in cluster.ports}
        assert per_master == expected and all(expected.values())
        assert _moved_errors(masters) == moved0

        # Move one room's slot, keys and all, to another master (as redis-cli --cluster
        # reshard does): its next commit is answered MOVED by the old master and runs
        # at the new one.
        room = ids[0]
        slot = raw.keyslot(store.k_room(room))
        source = raw.get_node_from_key(store.k_room(room)).port
        target = next(port for port in cluster.ports if port != source)
        name = {port: m.execute_command("CLUSTER MYID") for port, m in masters.items()}
        text = {port: n.decode() if isinstance(n, bytes) else n for port, n in name.items()}
        masters[target].execute_command("CLUSTER SETSLOT", slot, "IMPORTING", text[source])
        masters[source].execute_command("CLUSTER SETSLOT", slot, "MIGRATING", text[target])
        keys = masters[source].execute_command("CLUSTER GETKEYSINSLOT", slot, 100)
        assert len(keys) >= 2
        masters[source].execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)
        for port in [target, source, *[p for p in cluster.ports if p not in (source, target)]]:
            masters[port].execute_command("CLUSTER SETSLOT", slot, "NODE", text[target])
        moved1 = _moved_errors(masters)
        await store.commit(room, expected=1, version=2, fence=1, actions=2, log_entry=entry(2), **common)
        assert _moved_errors(masters) > moved1  # the old master refused it: nothing ran there
        await store.commit(room, expected=2, version=3, fence=1, actions=3, log_entry=entry(3), **common)
        assert [e["action"] for e in await store.read_log(room)] == ["a1", "a2", "a3"]
        assert raw.get_node_from_key(store.k_room(room)).port == target

        # Lease renewals go the same way: one batch per master, each renewal at its
        # room's master; the moved room's at its new master.
        evalsha1 = {port: _calls(m, "evalsha") for port, m in masters.items()}
        assert await store.renew_leases("node-a", [(i, 1) for i in ids], 5000) == [True] * len(ids)
        per_master = {port: _calls(m, "evalsha") - evalsha1[port] for port, m in masters.items()}
        expected = {port: sum(1 for i in ids if raw.get_node_from_key(store.k_room(i)).port == port)
                    for port in cluster.ports}
        assert per_master == expected
        assert await store.renew_leases("node-b", [(ids[1], 1)], 5000) == [False]  # node-a holds it
    finally:
        for master in masters.values():
            master.close()
        await store.delete_all()
        await store.close()


async def test_frames_sent_while_the_relay_resubscribes_are_not_lost(cluster: Cluster, client_factory) -> None:
    """The relay node's subscription is killed while moves go on: the owner's frames
    for its members, published while nobody was subscribed, are sent again once it is
    back, in order, so its clients' views stay whole (no gap) and end equal to those of
    the owner's own clients."""
    prefix = "giants-c6:"
    ids, owners, nodes, players, room = await _game_through_two_cluster_nodes(cluster, prefix, client_factory)
    one, two = nodes
    masters = {port: redis.Redis(port=port) for port in cluster.ports}
    try:
        direct = await client_factory(one.url, "direct")
        relayed = await client_factory(two.url, "relayed")
        for spectator in (direct, relayed):
            await spectator.ok("watch", room=room)
        everyone = [*players, direct, relayed]
        rng, acked = random.Random(11), []
        await move(everyone, room, rng, acked)
        for _ in range(3):
            # Kill node two's subscription, then move at once: the frames for bob and
            # the relayed spectator find nobody subscribed at first.
            assert int(masters[owners[ids[1]]].execute_command("CLIENT KILL", "TYPE", "pubsub")) >= 1
            for _ in range(2):
                await move(everyone, room, rng, acked)
        assert all(c.rooms[room].gaps == 0 for c in everyone), [c.rooms[room].gaps for c in everyone]
        assert relayed.rooms[room].view == direct.rooms[room].view
        assert relayed.rooms[room].version == direct.rooms[room].version
        assert await _stored_moves(cluster, prefix, room) == acked
        no_internal_errors(*everyone)
    finally:
        for master in masters.values():
            master.close()
        await _stop(*nodes)
