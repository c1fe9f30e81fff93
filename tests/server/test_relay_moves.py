"""A request relayed to a room's owner while another node takes the room over.

Found by test_nodes' paused-owner test on a loaded machine: the owner stalled past its
lease while a client of another node was joining through the relay; that node took the
room over and re-attached the members it knew of, the join's answer came back from the
old owner afterwards, and the new member was attached nowhere: it never got another
frame. A join that reached the old owner after the take-over got `internal_error`
although nothing of it was stored.

Two server instances in this process on one Redis. The owner is kept busy with the
room (the test holds the room's lock) while the request is in flight, and the lease
lapses the way it does when an owner stalls (the key is deleted) before the other node
takes the room over, exactly as its sweep for orphans does.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tests.server.multinode import move, two_player_room

pytestmark = pytest.mark.redis


@asynccontextmanager
async def owner_busy(owner: Any, room: str) -> AsyncIterator[None]:
    """The owner holds the room's lock: relayed requests for it wait there."""
    lock = owner.lobby.rooms[room].lock
    await lock.acquire()
    try:
        yield
    finally:
        lock.release()


async def arrived(owner: Any) -> None:
    """Wait until a relayed request reached the owner (it made a peer for its sender)."""
    while not owner.relay.peers:
        await asyncio.sleep(0.01)


async def take_over(server: Any, room: str) -> None:
    """The owner's lease lapses and `server` takes the room over (fence bump, restore)."""
    await server.store.redis.delete(server.store.k_lease(room))
    assert await server.lobby.take_over(room) is not None


async def test_a_watch_in_flight_during_a_take_over_gets_the_game_from_the_new_owner(
    server_factory, client_factory
) -> None:
    one = await server_factory(lease_ttl=30)  # no renewal finds the loss first
    two = await server_factory(lease_ttl=30)
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(one.url, "bob")
    room, tokens = await two_player_room(alice, bob)
    carol = await client_factory(two.url, "carol")
    async with owner_busy(one, room):
        watching = asyncio.create_task(carol.request("watch", room=room))
        await arrived(one)
        await take_over(two, room)
    assert (await watching)["type"] == "ok"
    # The players come back at the new owner; every move there reaches Carol.
    alice2 = await client_factory(two.url, "alice")
    bob2 = await client_factory(two.url, "bob")
    await alice2.ok("resume", room=room, token=tokens[0])
    await bob2.ok("resume", room=room, token=tokens[1])
    rng, acked = random.Random(3), []
    for _ in range(2):
        await move([alice2, bob2], room, rng, acked)

    def seen() -> list[tuple[int, str]]:
        return [(e["seat"], e["action"]) for e in carol.rooms[room].events if e["type"] == "action"]

    await carol.wait_for(lambda: len(seen()) >= len(acked))
    assert seen() == acked
    assert carol.rooms[room].gaps == 0


async def test_a_join_refused_by_the_fence_is_sent_on_to_the_new_owner(server_factory, client_factory) -> None:
    one = await server_factory(lease_ttl=30)
    two = await server_factory(lease_ttl=30)
    alice = await client_factory(one.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    bob = await client_factory(two.url, "bob")
    async with owner_busy(one, room):
        joining = asyncio.create_task(bob.request("join", room=room))
        await arrived(one)
        await take_over(two, room)
    # The old owner's write was refused (fence): nothing of the join was stored there,
    # so it is run again at the new owner instead of failing.
    reply = await joining
    assert reply["type"] == "ok", reply
    assert reply["data"]["seat"] == 1
    await bob.wait_for(lambda: room in bob.rooms and bob.rooms[room].view["room"]["status"] == "playing")
    assert two.lobby.rooms[room].seats[1].taken


async def test_a_members_request_that_reaches_the_new_owner_before_its_reattachment_is_run(
    server_factory, client_factory
) -> None:
    """Found by deploy/smoke.py (a graceful stop while the players moved): Bob plays
    through node two; node three takes the room over, and Bob's move, sent back to two
    as moved by the old owner, reached three before two's re-attachment of Bob did
    (its "att" message: two learns of the new owner from three's broadcast). Three did
    not know Bob and answered `not_in_room`. The request says its sender is a member
    (two vouches for it, as for a re-attachment): three attaches Bob first."""
    one = await server_factory(lease_ttl=30)
    two = await server_factory(lease_ttl=30)
    three = await server_factory(lease_ttl=30)
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")
    room, _ = await two_player_room(alice, bob)
    rng, acked = random.Random(4), []
    await move([alice, bob], room, rng, acked)  # White (Alice) first: now Bob is to act
    assert bob.rooms[room].legal

    late = asyncio.Event()
    reattach_at = two.relay.reattach_at

    async def reattach_late(room_id: str, owner: str | None) -> None:
        await late.wait()  # two hears of the new owner only after Bob's move got there
        await reattach_at(room_id, owner)

    two.relay.reattach_at = reattach_late
    await take_over(three, room)
    reply = await bob.request("act", room=room, action=rng.choice(bob.rooms[room].legal))
    assert reply["type"] == "ok", reply
    late.set()
    await asyncio.sleep(0.2)  # the late re-attachment changes nothing: Bob is there once
    assert sum(1 for m in three.lobby.rooms[room].members if m.seat == 1) == 1
