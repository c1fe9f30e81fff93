"""A node's periodic work over many rooms leaves the event loop free in between.

A node renews every lease it holds each `lease_ttl / 3` and its orphan sweep reads the
lease of every live room. Done in one batch, a pass over thousands of rooms held the
event loop (and Redis) for tens of milliseconds, and every move in flight waited. These
tests check, on a real Redis, that the passes go in slices with the loop running other
work between them, and that slicing loses nothing: every lease is renewed, every lost
room is reported, every holder is read.
"""

from __future__ import annotations

import asyncio

import pytest

from server import node as node_module
from server.node import RENEW_SLICE, Node
from server.store import Store
from server.store_leases import HOLDERS_SLICE, RENEW_PER_SCRIPT

pytestmark = pytest.mark.redis

ROOMS = 3 * RENEW_SLICE + 5  # four slices, the last one short
# Leases are run down to this many ms before a pass: a renewed one reads above it
# (LEASE_TTL less the time since, however loaded the machine), one left alone at or
# below (or has lapsed already, if the machine is slow enough).
LET_RUN_DOWN = 300
LEASE_TTL = 10.0


async def rooms_owned_by(node: Node, store: Store, count: int) -> list[str]:
    """`count` rooms (bare room hashes) whose leases `node` holds and renews."""
    ids = [f"lease{i:04d}" for i in range(count)]
    for room_id in ids:
        await store.redis.hset(store.k_room(room_id), "fence", 0)
        fence = await node.acquire(room_id)
        assert fence is not None
        node.own(room_id, fence)
    return ids


def record_calls(obj: object, name: str, trace: list[object]) -> None:
    """Note in `trace` the size of each call of obj.name (the real method still runs)."""
    real = getattr(obj, name)

    async def recorded(*args: object, **kwargs: object) -> object:
        trace.append(len(args[1] if name == "renew_leases" else args[0]))  # type: ignore[arg-type]
        return await real(*args, **kwargs)

    setattr(obj, name, recorded)


async def run_beside_a_probe(work: asyncio.Future[object], trace: list[object]) -> None:
    """Run `work` while another task notes "probe" in `trace` each time it gets the loop."""
    while not work.done():
        trace.append("probe")
        await asyncio.sleep(0)
    await work


def slices(trace: list[object]) -> list[int]:
    """The sizes of the recorded calls, checking that the probe ran between each two."""
    sizes = [t for t in trace if isinstance(t, int)]
    between = "".join("c" if isinstance(t, int) else "p" for t in trace).strip("p")
    assert "cc" not in between, "two slices went in one turn of the loop: nothing else could run"
    return sizes


async def test_renewal_goes_in_slices_and_renews_every_lease(redis_url: str, key_prefix: str, monkeypatch) -> None:
    # However slow this machine, each slice gets its own turn here (a loaded loop's pass
    # sends the rest at once: next test).
    monkeypatch.setattr(node_module, "SLICE_TURNS_FOR", 60.0)
    store = Store(redis_url, key_prefix)
    node = Node(store, "node-a", lease_ttl=LEASE_TTL)
    try:
        ids = await rooms_owned_by(node, store, ROOMS)
        await node.renew()  # the first pass also loads the script into Redis
        node.renewals = 0
        for room_id in ids:  # let every lease run down a little
            await store.redis.pexpire(store.k_lease(room_id), LET_RUN_DOWN)

        trace: list[object] = []
        record_calls(store, "renew_leases", trace)
        await run_beside_a_probe(asyncio.ensure_future(node.renew()), trace)

        # One round trip per slice, and the loop served others between them.
        assert slices(trace) == [RENEW_SLICE, RENEW_SLICE, RENEW_SLICE, 5]
        assert node.renewals == ROOMS
        ttls = [await store.redis.pttl(store.k_lease(room_id)) for room_id in ids]
        assert min(ttls) > LET_RUN_DOWN, "every lease, in every slice, was renewed to the full TTL"
        assert set(node.rooms) == set(ids)
    finally:
        await store.close()


async def test_every_lost_room_is_reported_and_only_those(redis_url: str, key_prefix: str) -> None:
    """On one Redis a script call renews RENEW_PER_SCRIPT rooms and answers one bit per
    room: rooms lost at either end of a call, in a later call or slice, by another
    node's lease (it took the room once ours expired: a paused owner) or by a fence that
    moved on (a take-over whose lease then lapsed) are each reported; a lease that
    merely expired is taken back, and every other lease is renewed."""
    store = Store(redis_url, key_prefix)
    node = Node(store, "node-a", lease_ttl=LEASE_TTL)
    other = Node(store, "node-b", lease_ttl=LEASE_TTL)
    lost: list[str] = []

    async def on_lost(room_id: str) -> None:
        lost.append(room_id)

    node.on_lost = on_lost
    try:
        ids = await rooms_owned_by(node, store, ROOMS)
        taken = [ids[0], ids[RENEW_PER_SCRIPT - 1], ids[-1], ids[RENEW_PER_SCRIPT]]
        for room_id in taken[:3]:
            await store.redis.delete(store.k_lease(room_id))
            assert await other.acquire(room_id) is not None
        await store.redis.hincrby(store.k_room(taken[3]), "fence", 1)  # our lease, an old fence
        expired = ids[5]
        await store.redis.delete(store.k_lease(expired))
        for room_id in ids:
            if room_id not in taken[:3] and room_id != expired:
                await store.redis.pexpire(store.k_lease(room_id), LET_RUN_DOWN)

        await node.renew()

        assert sorted(lost) == sorted(taken)
        assert set(node.rooms) == set(ids) - set(taken)
        for room_id in ids:
            holder = await store.lease_holder(room_id)
            if room_id in taken[:3]:
                assert holder == "node-b"
            elif room_id == taken[3]:
                # Not renewed: it lapses (maybe already has), and the fence refuses node-a's writes.
                assert holder in ("node-a", None)
                assert await store.redis.pttl(store.k_lease(room_id)) <= LET_RUN_DOWN
            else:
                assert holder == "node-a" and await store.redis.pttl(store.k_lease(room_id)) > LET_RUN_DOWN
    finally:
        await store.close()


async def test_lease_holders_reads_every_room_across_slices(redis_url: str, key_prefix: str) -> None:
    store = Store(redis_url, key_prefix)
    node = Node(store, "node-a", lease_ttl=LEASE_TTL)
    try:
        held = await rooms_owned_by(node, store, HOLDERS_SLICE + 10)
        free = [f"free{i:04d}" for i in range(HOLDERS_SLICE)]
        asked = [room for pair in zip(held, free, strict=False) for room in pair] + held[len(free) :]

        trace: list[object] = []
        record_calls(store.redis, "mget", trace)
        work = asyncio.ensure_future(store.lease_holders(asked))
        await run_beside_a_probe(work, trace)

        holders = work.result()
        assert holders == ["node-a" if room in set(held) else None for room in asked]
        assert slices(trace) == [HOLDERS_SLICE, HOLDERS_SLICE, 10]
    finally:
        await store.close()


async def test_a_late_renewal_pass_sends_the_rest_of_its_slices_at_once(redis_url: str, key_prefix: str,
                                                                        monkeypatch) -> None:
    """Once a pass is SLICE_TURNS_FOR old (the loop's turns are long: a burst of
    connections), the slices left go in the same turn, and every lease is renewed."""
    monkeypatch.setattr(node_module, "SLICE_TURNS_FOR", 0.0)
    store = Store(redis_url, key_prefix)
    node = Node(store, "node-a", lease_ttl=LEASE_TTL)
    try:
        ids = await rooms_owned_by(node, store, ROOMS)
        await node.renew()
        node.renewals = 0
        for room_id in ids:
            await store.redis.pexpire(store.k_lease(room_id), LET_RUN_DOWN)
        trace: list[object] = []
        record_calls(store, "renew_leases", trace)
        await run_beside_a_probe(asyncio.ensure_future(node.renew()), trace)
        sizes = [t for t in trace if isinstance(t, int)]
        assert sizes == [RENEW_SLICE, RENEW_SLICE, RENEW_SLICE, 5]
        assert "cccc" in "".join("c" if isinstance(t, int) else "p" for t in trace)  # one turn
        assert node.renewals == ROOMS
        ttls = [await store.redis.pttl(store.k_lease(room_id)) for room_id in ids]
        assert min(ttls) > LET_RUN_DOWN
        assert node.renewal_gaps.n == 1  # the second complete pass: one gap observed
    finally:
        await store.close()


async def test_owner_lookups_of_one_turn_are_answered_together_and_right(redis_url: str, key_prefix: str) -> None:
    """Hundreds of lookups at once (a burst of hinted connections under --workers): each
    gets its own room's holder, None for a room nobody holds, in one MGET per turn."""
    store = Store(redis_url, key_prefix)
    a, b = Node(store, "node-a", lease_ttl=5.0), Node(store, "node-b", lease_ttl=5.0)
    try:
        held_a = await rooms_owned_by(a, store, 150)
        held_b = [f"other{i:04d}" for i in range(150)]
        for room_id in held_b:
            await store.redis.hset(store.k_room(room_id), "fence", 0)
            assert await b.acquire(room_id) is not None
        nobody = [f"nobody{i:04d}" for i in range(20)]
        trace: list[object] = []
        record_calls(store, "lease_holders", trace)
        asked = [*held_a, *held_b, *nobody, *held_a[:10]]  # some rooms asked twice
        answers = await asyncio.gather(*(a.owner(room_id) for room_id in asked))
        assert answers == ["node-a"] * 150 + ["node-b"] * 150 + [None] * 20 + ["node-a"] * 10
        assert trace == [320]  # every distinct room of the turn in one batch
    finally:
        await store.close()
