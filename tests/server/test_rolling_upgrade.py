"""A rolling upgrade: nodes of this version share Redis with nodes of an earlier one.

Earlier nodes restore a room only if its log is exactly as long as its hash's
`actions`; this version writes a plain move as its log entry alone (the hash falls
behind the log). While the node list holds a live node whose heartbeat does not say
it reads that form (`writes` missing, as every earlier node's), every move writes the
hash too, so any node can take any room over; once the last such node is gone, plain
moves are log entries again. The earlier node here is what such a node leaves in
Redis: its heartbeat, written by the same call with the info it carried.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from server.store import Store
from tests.fault_checks import eventually
from tests.server.multinode import move, two_player_room

pytestmark = pytest.mark.redis


async def hash_and_log_lengths(store: Store, room: str) -> tuple[int, int]:
    """The room hash's `actions` and how many entries its log holds."""
    actions = await store.redis.hget(store.k_room(room), "actions")
    return int(actions), int(await store.redis.llen(store.k_log(room)))


EARLIER = {"id": "earlier", "address": "127.0.0.1:1", "rooms": 0}


async def earlier_node_starts(store: Store) -> None:
    """What a node of an earlier version leaves in Redis: its heartbeat, without `writes`."""
    await store.heartbeat("earlier", {**EARLIER, "started": time.time()}, 120_000)


async def log_only_game(server: Any, client_factory: Any, store: Store, seed: int, moves: int) -> Any:
    """Two players and `moves` moves on `server`, stored as log entries only (checked)."""
    alice, bob = await client_factory(server.url, "alice"), await client_factory(server.url, "bob")
    room, _ = await two_player_room(alice, bob)
    rng, acked = random.Random(seed), []
    for _ in range(moves):
        await move([alice, bob], room, rng, acked)
    actions, logged = await hash_and_log_lengths(store, room)
    assert actions < logged == len(acked), "the moves were stored as log entries only"
    return [alice, bob], room, rng, acked


async def hash_written(store: Store, room: str) -> bool:
    actions, logged = await hash_and_log_lengths(store, room)
    return actions == logged


async def test_moves_write_the_hash_while_an_earlier_node_is_live(
    server_factory: Any, client_factory: Any, redis_url: str, key_prefix: str
) -> None:
    store = Store(redis_url, key_prefix)
    try:
        await earlier_node_starts(store)
        server = await server_factory(lease_ttl=0.6)
        alice, bob = await client_factory(server.url, "alice"), await client_factory(server.url, "bob")
        room, _ = await two_player_room(alice, bob)
        rng, acked = random.Random(5), []
        for _ in range(6):
            await move([alice, bob], room, rng, acked)
            actions, logged = await hash_and_log_lengths(store, room)
            assert actions == logged, "an earlier node could not restore this room"

        await store.forget_node("earlier")  # it stopped (or its heartbeat expired and a node forgot it)
        await eventually(lambda: server.store.plain_moves, timeout=10)
        for _ in range(6):
            await move([alice, bob], room, rng, acked)
        actions, logged = await hash_and_log_lengths(store, room)
        assert logged == len(acked) and actions < logged, "plain moves are log entries only again"
    finally:
        await store.close()


async def test_a_node_of_this_version_says_so_in_its_heartbeat(
    server_factory: Any, redis_url: str, key_prefix: str
) -> None:
    """What the check above reads: without it, nodes of this version would write every
    move's hash forever once two of them share a Redis."""
    one, two = await server_factory(), await server_factory()
    store = Store(redis_url, key_prefix)
    try:
        nodes = await store.nodes()
        assert {n: info["writes"] for n, info in nodes.items() if info} == {one.node.id: 2, two.node.id: 2}
        assert one.store.plain_moves and two.store.plain_moves
    finally:
        await store.close()


async def test_rooms_stored_log_only_are_written_whole_when_an_earlier_node_appears(
    server_factory: Any, client_factory: Any, redis_url: str, key_prefix: str
) -> None:
    """A rollback: an earlier node joins while rooms' last moves are log entries only.
    Without a move, the node owning them writes their hashes up to their logs, so the
    earlier node could take any of them over; play then goes on at the same version."""
    store = Store(redis_url, key_prefix)
    try:
        server = await server_factory(lease_ttl=0.6)
        players, room, rng, acked = await log_only_game(server, client_factory, store, seed=7, moves=5)
        version = server.lobby.rooms[room].version

        await earlier_node_starts(store)
        await eventually(lambda: hash_written(store, room), timeout=10)
        stored = await store.redis.hget(store.k_room(room), "version")
        assert int(stored) == version == server.lobby.rooms[room].version, "no new version: nothing changed"
        record = await store.load_room(room)
        assert record is not None and record.version == version and record.moves_in_log == 0

        for _ in range(3):  # the room plays on from there; every move writes the hash
            await move(players, room, rng, acked)
            actions, logged = await hash_and_log_lengths(store, room)
            assert actions == logged == len(acked)
    finally:
        await store.forget_node("earlier")
        await store.close()


async def test_a_room_taken_over_while_an_earlier_node_is_live_is_written_whole(
    server_factory: Any, client_factory: Any, redis_url: str, key_prefix: str
) -> None:
    """The room's node stops renewing (paused, or killed) before it sees the earlier
    node; the node that takes the room over writes its hash up to its log."""
    store = Store(redis_url, key_prefix)
    try:
        a = await server_factory(lease_ttl=0.6)
        _, room, _, acked = await log_only_game(a, client_factory, store, seed=9, moves=4)
        await a.node.stop_renewing()  # A no longer looks at the node list

        await earlier_node_starts(store)
        b = await server_factory(lease_ttl=0.6)
        assert not b.store.plain_moves
        await store.redis.delete(store.k_lease(room))  # A's lease is gone
        taken = await b.lobby.take_over(room)
        assert taken is not None

        await eventually(lambda: hash_written(store, room), timeout=10)
        assert (await hash_and_log_lengths(store, room))[1] == len(acked)
        record = await store.load_room(room)
        assert record is not None and record.version == taken.version and record.moves_in_log == 0
    finally:
        await store.forget_node("earlier")
        await store.close()
