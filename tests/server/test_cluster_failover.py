"""A Redis Cluster with one replica per master, and a master lost mid-game.

With `--replica-acks 1` a move is acknowledged only once a replica has it (Redis
WAIT): when the master of the room's slot is killed (SIGKILL) and its replica is
promoted, every acknowledged move is in the log exactly once, the nodes follow the new
master (commits, leases, the relay), and the players get `storage_unavailable` (never
`internal_error`) while the slot has no master, then go on. A replica that does not
confirm in time makes the move's outcome unknown, never acknowledged. A graceful
`CLUSTER FAILOVER` loses nothing even with the default (no replica acks).
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster as SyncCluster

from server.store import Store
from tests.conftest import ServeProcess, start_serve
from tests.server.cluster import Cluster, start_cluster
from tests.server.multinode import metric, metrics, no_internal_errors, two_player_room

pytestmark = [pytest.mark.redis, pytest.mark.own_redis]

NODE_TIMEOUT_MS = 1000  # a dead master's replica is promoted within about 2-3 s


@pytest.fixture
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Its own cluster per test: a test kills or demotes one of its masters."""
    running = start_cluster(tmp_path_factory.mktemp("ha"), replicas=True, node_timeout_ms=NODE_TIMEOUT_MS)
    yield running
    running.stop()


Move = tuple[int, int, str]  # (version, seat, action)


async def _settled(players: list[Any], room: str) -> Any:
    for _ in range(3000):
        here = [p for p in players if room in p.rooms]
        versions = {p.rooms[room].version for p in here}
        actors = [p for p in here if p.rooms[room].legal]
        if len(here) == len(players) and len(versions) == 1 and actors:
            return actors[0]
        await asyncio.sleep(0.01)
    raise AssertionError("players did not settle")


async def play(players: list[Any], room: str, rng: random.Random, acked: list[Move], errors: list[dict[str, Any]]) -> None:
    """One move by whoever is to act, sent with its version and sent again after a
    storage fault until it is acknowledged or found applied (`stale_version`)."""
    actor = await _settled(players, room)
    copy = actor.rooms[room]
    version, seat, action = copy.version, copy.seat, rng.choice(copy.legal)
    for _ in range(200):
        reply = await actor.request("act", room=room, action=action, version=version, timeout=30)
        if reply["type"] == "ok":
            acked.append((reply["data"]["version"], seat, action))
            for p in players:
                await p.wait_version(room, reply["data"]["version"], timeout=30)
            return
        errors.append(reply)
        assert reply["code"] in ("storage_unavailable", "stale_version"), reply
        if reply["code"] == "stale_version":  # an earlier attempt was applied after all
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the move never went through: {errors[-3:]}")


def _master_of(cluster: Cluster, key: str) -> int:
    client = SyncCluster.from_url(cluster.url)
    try:
        return int(client.get_node_from_key(key).port)
    finally:
        client.close()


async def _stored(url: str, prefix: str, room: str) -> list[Move]:
    store = Store(url, prefix, cluster=True)
    try:
        return [(e["v"], e["seat"], e["action"]) for e in await store.read_log(room)]
    finally:
        await store.close()


def _check_log(log: list[Move], acked: list[Move]) -> None:
    """One entry per version, in order, and every acknowledged move among them."""
    assert [v for v, _, _ in log] == list(range(log[0][0], log[0][0] + len(log))), log
    assert set(acked) <= set(log), (acked, log)


async def _wait_promoted(replica: int, timeout: float = 30.0) -> None:
    client = redis.Redis(port=replica, socket_timeout=2)
    end = time.monotonic() + timeout
    try:
        while client.info("replication").get("role") != "master" or client.cluster("INFO").get("cluster_state") != "ok":
            if time.monotonic() > end:
                raise AssertionError("the replica was not promoted")
            await asyncio.sleep(0.1)
    finally:
        client.close()


async def _wait_replicated(master: int, timeout: float = 30.0) -> None:
    client = redis.Redis(port=master, socket_timeout=2)
    end = time.monotonic() + timeout
    try:
        while not any(
            isinstance(v, dict) and v.get("state") == "online" for v in client.info("replication").values()
        ):
            if time.monotonic() > end:
                raise AssertionError("no replica came back online")
            await asyncio.sleep(0.1)
    finally:
        client.close()


async def _stop(*nodes: ServeProcess) -> None:
    for sp in nodes:
        if sp.proc.poll() is None:
            sp.proc.terminate()
            await asyncio.to_thread(sp.proc.wait, 30)
    for n, sp in enumerate(nodes, 1):  # shown by pytest when the test failed
        print(f"--- giants serve #{n}\n{''.join(sp.output[-300:])}")


def _tracebacks(*nodes: ServeProcess) -> list[str]:
    return [line for sp in nodes for line in sp.output if "Traceback" in line or "internal_error" in line]


def _inbox(prefix: str, node_id: str) -> str:
    return f"{prefix}relay:{{{node_id}}}"  # the node id is the hash tag (server.relay_channels)


def _node_ids_at_one_master(cluster: Cluster, prefix: str) -> tuple[list[str], int]:
    """Two node ids whose relay inboxes live on the same master, and its port."""
    client = SyncCluster.from_url(cluster.url)
    try:
        seen: dict[int, str] = {}
        for i in range(1000):
            node_id = f"ha{i}"
            port = int(client.get_node_from_key(_inbox(prefix, node_id)).port)
            if port in seen:
                return [seen[port], node_id], port
            seen[port] = node_id
    finally:
        client.close()
    raise AssertionError("unreachable")


async def _room_placed(cluster: Cluster, prefix: str, alice: Any, bob: Any, inboxes: int, together: bool) -> str:
    """A started two-player room (created at alice's node) whose slot's master is the
    inboxes' master (`together`) or another one."""
    for _ in range(20):
        room, _tokens = await two_player_room(alice, bob)
        if (_master_of(cluster, f"{prefix}room:{{{room}}}") == inboxes) == together:
            return room
        await alice.ok("leave", room=room)
        await bob.ok("leave", room=room)
    raise AssertionError("every room landed on the same master")


async def _two_nodes(cluster: Cluster, prefix: str, client_factory: Any, *extra: str, together: bool = False) -> Any:
    """Nodes one (alice, the room's owner) and two (bob, relayed), both inboxes on one
    master, and a game between alice and bob in a room on another master (on the same
    one if `together`)."""
    ids, inboxes_at = _node_ids_at_one_master(cluster, prefix)
    args = ["--redis-url", cluster.url, "--key-prefix", prefix, "--lease-ttl", "6", "--redis-retry-window", "20",
            *extra]
    one = start_serve([*args, "--node-id", ids[0]])
    two = start_serve([*args, "--node-id", ids[1]])
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")  # bob's requests are relayed to one
    room = await _room_placed(cluster, prefix, alice, bob, inboxes_at, together)
    return (one, two), [alice, bob], room


@pytest.mark.parametrize("together", [False, True], ids=["room-alone", "room-with-the-relay-inboxes"])
async def test_acknowledged_moves_survive_a_killed_master_with_replica_acks(
    replicated: Cluster, client_factory: Any, together: bool
) -> None:
    """`together`: the killed master also holds both nodes' relay inboxes (their
    subscriptions break, frames and requests to them find nobody until the promotion)."""
    prefix = "giants-ha1:"
    nodes, players, room = await _two_nodes(replicated, prefix, client_factory, "--replica-acks", "1",
                                            together=together)
    try:
        rng, acked, errors = random.Random(7), [], []
        for _ in range(6):
            await play(players, room, rng, acked, errors)
        assert not errors
        master = _master_of(replicated, f"{prefix}room:{{{room}}}")
        replica = replicated.replicas[master]
        # A move in flight while the master dies: acknowledged or not, never both.
        racing = asyncio.ensure_future(play(players, room, rng, acked, errors))
        await asyncio.sleep(0.005)
        replicated.by_port[master].send_signal(signal.SIGKILL)
        replicated.by_port[master].wait(10)
        await racing
        for _ in range(3):  # while the slot has no master, and after the promotion
            await play(players, room, rng, acked, errors)
        await _wait_promoted(replica)
        # The promoted replica has no replica of its own until the old master is back
        # (as its replica): until then moves are applied but not acknowledged.
        replicated.restart(master)
        await _wait_replicated(replica)
        before = len(errors)
        for _ in range(4):
            await play(players, room, rng, acked, errors)
        assert len(errors) == before, errors[before:]
        log = await _stored(f"redis://127.0.0.1:{replica}", prefix, room)
        _check_log(log, acked)
        assert players[0].rooms[room].version == players[1].rooms[room].version == log[-1][0]
        assert all(p.rooms[room].gaps == 0 for p in players)
        no_internal_errors(*players)
        assert not _tracebacks(*nodes), _tracebacks(*nodes)
    finally:
        await _stop(*nodes)


async def test_a_move_no_replica_confirmed_is_not_acknowledged(replicated: Cluster, client_factory: Any) -> None:
    """The replica of the room's master is paused: WAIT times out, the mover is told
    the outcome is unknown; once the replica is back the room reloads (the move was
    applied at the master) and every player sees it, acknowledged moves go on."""
    prefix = "giants-ha2:"
    nodes, players, room = await _two_nodes(replicated, prefix, client_factory,
                                            "--replica-acks", "1", "--replica-ack-timeout", "0.3")
    try:
        rng, acked, errors = random.Random(8), [], []
        for _ in range(3):
            await play(players, room, rng, acked, errors)
        master = _master_of(replicated, f"{prefix}room:{{{room}}}")
        paused = replicated.by_port[replicated.replicas[master]]
        actor = await _settled(players, room)
        copy = actor.rooms[room]
        paused.send_signal(signal.SIGSTOP)
        try:
            reply = await actor.request("act", room=room, action=rng.choice(copy.legal), version=copy.version)
        finally:
            paused.send_signal(signal.SIGCONT)
        assert reply["type"] == "error" and reply["code"] == "storage_unavailable", reply
        assert reply["detail"] == {"outcome": "unknown"}
        assert metric(metrics(nodes[0].url), "giants_replica_ack_shortfalls_total") >= 1  # the owner counted it
        # Applied at the master: the room reloads and every player gets a snapshot with it.
        for p in players:
            await p.wait_version(room, copy.version + 1, timeout=30)
        await _wait_replicated(master)
        for _ in range(3):
            await play(players, room, rng, acked, errors)
        assert not errors
        log = await _stored(replicated.url, prefix, room)
        _check_log(log, acked)
        assert len(log) == len(acked) + 1
        no_internal_errors(*players)
        assert not _tracebacks(*nodes), _tracebacks(*nodes)
    finally:
        await _stop(*nodes)


async def test_a_graceful_failover_loses_nothing_with_the_default(replicated: Cluster, client_factory: Any) -> None:
    """`CLUSTER FAILOVER` on the replica (an operator's planned switch): the master stops
    taking writes until the replica caught up, so even without replica acks no
    acknowledged move is lost; the nodes follow the new master (MOVED)."""
    prefix = "giants-ha3:"
    nodes, players, room = await _two_nodes(replicated, prefix, client_factory)
    try:
        rng, acked, errors = random.Random(9), [], []
        for _ in range(4):
            await play(players, room, rng, acked, errors)
        master = _master_of(replicated, f"{prefix}room:{{{room}}}")
        replica = replicated.replicas[master]
        racing = asyncio.ensure_future(play(players, room, rng, acked, errors))
        client = redis.Redis(port=replica)
        try:
            client.execute_command("CLUSTER FAILOVER")
        finally:
            client.close()
        await racing
        await _wait_promoted(replica)
        for _ in range(5):
            await play(players, room, rng, acked, errors)
        log = await _stored(f"redis://127.0.0.1:{replica}", prefix, room)
        _check_log(log, acked)
        assert players[0].rooms[room].version == players[1].rooms[room].version == log[-1][0]
        no_internal_errors(*players)
        assert not _tracebacks(*nodes), _tracebacks(*nodes)
    finally:
        await _stop(*nodes)
