"""Several `giants serve` processes on one Redis: relay, failover, hand-over.

Real processes, real Redis, real WebSockets. Leases are short (--lease-ttl) so a dead
owner's rooms move within about a second; nothing here asserts on timing.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import urllib.request
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.store import Store
from tests.server.multinode import (
    FAST,
    metric,
    metrics,
    move,
    no_internal_errors,
    stored_log,
    two_player_room,
)

pytestmark = pytest.mark.redis


async def test_a_game_played_through_two_nodes(serve_process, client_factory) -> None:
    """Alice is connected to the owner, Bob to another node: Bob's requests and his
    frames go through the relay, and both see the same game move by move."""
    one, two = serve_process(*FAST), serve_process(*FAST)
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")
    room, _ = await two_player_room(alice, bob)
    listed = (await bob.ok("list_rooms"))["rooms"]  # node two lists node one's room
    assert [r["room"] for r in listed] == [room]
    rng, acked = random.Random(5), []
    for _ in range(8):
        await move([alice, bob], room, rng, acked)
    assert alice.rooms[room].view["room"] == bob.rooms[room].view["room"]
    assert alice.rooms[room].gaps == bob.rooms[room].gaps == 0
    # The game's own events reached Bob through the relay, in order.
    assert [e for e in bob.rooms[room].events if e["type"] == "action"] == [
        e for e in alice.rooms[room].events if e["type"] == "action"
    ]
    assert metric(metrics(one.url), "giants_relay_frames_total") > 0  # the owner relayed Bob's frames
    bob_moves = sum(1 for seat, _ in acked if seat == 1)
    assert metric(metrics(two.url), "giants_relay_requests_total") >= 1 + bob_moves  # join + acts
    no_internal_errors(alice, bob)


async def test_owner_killed_mid_game_room_continues_elsewhere(serve_process, client_factory, redis_url, key_prefix) -> None:
    """kill -9 the owner: its lease expires, the other node takes the room over from
    Redis, Bob (connected there) gets a snapshot, Alice resumes there with her token,
    and every acknowledged move is in the log exactly once."""
    one, two = serve_process(*FAST), serve_process(*FAST)
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")
    room, tokens = await two_player_room(alice, bob)
    rng, acked = random.Random(7), []
    for _ in range(5):
        await move([alice, bob], room, rng, acked)
    before = bob.rooms[room].version
    snapshots = sum(1 for m in bob.pushes if m["type"] == "snapshot")

    one.proc.send_signal(signal.SIGKILL)
    one.proc.wait(10)
    # Bob stays connected: the new owner re-attaches him with a fresh snapshot.
    await bob.wait_for(lambda: sum(1 for m in bob.pushes if m["type"] == "snapshot") > snapshots)
    alice2 = await client_factory(two.url, "alice")
    assert (await alice2.ok("resume", room=room, token=tokens[0]))["seat"] == 0
    await alice2.wait_for(lambda: room in alice2.rooms)
    assert bob.rooms[room].version >= before
    for _ in range(4):
        await move([alice2, bob], room, rng, acked)
    log = await stored_log(redis_url, key_prefix, room)
    assert [(e["seat"], e["action"]) for e in log] == acked  # each acknowledged move once, in order
    versions = [e["v"] for e in log]
    assert versions == sorted(set(versions))
    no_internal_errors(alice2, bob)


async def test_paused_owner_loses_the_room_and_cannot_write(serve_process, client_factory, redis_url, key_prefix) -> None:
    """SIGSTOP the owner past its lease: the other node takes over (fence bump) and the
    game goes on, deadlines included. SIGCONT: the old owner's next write (its overdue
    deadline) is refused, and no client ever sees two histories."""
    one, two = serve_process(*FAST), serve_process(*FAST)
    creator = await client_factory(one.url, "creator")
    room = (await creator.ok("create_room", game="giantslayer", deadline=1.0))["room"]
    alice = await client_factory(two.url, "alice")
    bob = await client_factory(two.url, "bob")
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await bob.wait_for(lambda: room in bob.rooms and bob.rooms[room].view["room"]["status"] == "playing")
    await creator.close()

    one.proc.send_signal(signal.SIGSTOP)
    try:
        # Node two takes the room over; its deadline timer now plays the late seats.
        await alice.wait_for(lambda: any(e["type"] == "timeout" for e in alice.rooms[room].events), timeout=20)
        played = alice.rooms[room].version
    finally:
        one.proc.send_signal(signal.SIGCONT)
    # The old owner wakes up with an overdue deadline: its write must be refused.
    for _ in range(200):
        if metric(metrics(one.url), "giants_rooms_lost_total") >= 1:
            break
        await asyncio.sleep(0.05)
    assert metric(metrics(one.url), "giants_rooms_lost_total") >= 1
    await alice.wait_version(room, played + 1, timeout=20)  # the game goes on at node two
    log = await stored_log(redis_url, key_prefix, room)
    assert [e["v"] for e in log] == sorted({e["v"] for e in log})  # one history, no fork
    stored = [(e["seat"], e["action"]) for e in log]
    for client in (alice, bob):
        # The actions this client saw since its last snapshot (a take-over sends one) are
        # a run of the stored history, in order: nothing from a second history.
        seen = [(e["seat"], e["action"]) for e in client.rooms[room].events if e["type"] == "action"]
        assert any(stored[i : i + len(seen)] == seen for i in range(len(stored) - len(seen) + 1)), (seen, stored)
        assert client.rooms[room].gaps == 0


async def test_graceful_shutdown_hands_rooms_over(serve_process, client_factory, redis_url, key_prefix) -> None:
    """SIGTERM the owner while Bob keeps playing through another node: the room moves
    at once, Bob's requests are re-sent to the new owner, Alice resumes there, and no
    client ever gets internal_error."""
    one, two = serve_process(*FAST), serve_process(*FAST)
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")
    room, tokens = await two_player_room(alice, bob)
    rng, acked = random.Random(9), []
    for _ in range(3):
        await move([alice, bob], room, rng, acked)

    one.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(one.proc.wait, 20) == 0
    await asyncio.wait_for(alice.closed, 10)
    alice2 = await client_factory(two.url, "alice")
    assert (await alice2.ok("resume", room=room, token=tokens[0]))["seat"] == 0
    await alice2.wait_for(lambda: room in alice2.rooms)
    for _ in range(4):
        await move([alice2, bob], room, rng, acked)
    log = await stored_log(redis_url, key_prefix, room)
    assert [(e["seat"], e["action"]) for e in log] == acked
    no_internal_errors(alice, alice2, bob)
    assert not any(m.get("code") == "internal_error" for m in alice.pushes)


async def test_server_run_bot_plays_on_at_the_new_owner(serve_process, client_factory) -> None:
    """A room with a server-run bot seat: its owner is killed; on the new owner the bot
    still answers the human's moves."""
    one, two = serve_process(*FAST), serve_process(*FAST)
    creator = await client_factory(one.url, "creator")
    room = (await creator.ok("create_room", game="giantslayer", bots={"1": "random"}))["room"]
    human = await client_factory(two.url, "human")
    await human.ok("join", room=room, seat=0)
    await human.wait_for(lambda: room in human.rooms and human.rooms[room].view["room"]["status"] == "playing")
    rng, acked = random.Random(2), []
    await move([human], room, rng, acked)
    one.proc.send_signal(signal.SIGKILL)
    one.proc.wait(10)
    for _ in range(3):  # each human move is answered by the bot, now run by node two
        before = human.rooms[room].version
        await move([human], room, rng, acked)
        # The human's turn comes back only after the bot (seat 1) moved: two changes
        # past `before`, whether they arrive as patches or in a re-attach snapshot.
        await human.wait_for(
            lambda b=before: (human.rooms[room].version >= b + 2 and bool(human.rooms[room].legal))
            or human.rooms[room].view["room"]["status"] != "playing"
        )


def read_url(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read()


async def bob_on_a_killed_node(one: Any, two: Any, client_factory: Any, seen_by: Any = None) -> tuple[Any, str]:
    """Alice (node one) and Bob (node two) seated in a room of node two's; then node
    two is killed (once `seen_by`, if given, has seen it in the node list: a survivor
    looks once a period, and this can all happen within one). Alice and the room."""
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(two.url, "bob")
    room, _ = await two_player_room(alice, bob)
    assert alice.rooms[room].view["room"]["seats"][1]["connected"]
    if seen_by is not None:
        url = f"http://127.0.0.1:{seen_by.url.rsplit(':', 1)[1]}/healthz"
        deadline = asyncio.get_running_loop().time() + 10
        while json.loads(await asyncio.to_thread(read_url, url))["peers"] < 1:
            assert asyncio.get_running_loop().time() < deadline, "the survivor never saw node two"
            await asyncio.sleep(0.05)
    two.proc.send_signal(signal.SIGKILL)
    two.proc.wait(10)
    return alice, room


async def bob_shows_left(alice: Any, room: str) -> None:
    """Alice's view shows Bob's seat disconnected, after a `left` event."""
    await alice.wait_for(lambda: not alice.rooms[room].view["room"]["seats"][1]["connected"], timeout=20)
    assert any(e["type"] == "left" and e["seat"] == 1 for e in alice.rooms[room].events)


async def test_members_of_a_dead_node_stop_showing_connected(serve_process, client_factory) -> None:
    """Bob plays through node two; node two is killed. The owner notices the node's
    heartbeat is gone and drops its members: Alice sees Bob's seat disconnected."""
    alice, room = await bob_on_a_killed_node(serve_process(*FAST), serve_process(*FAST), client_factory)
    await bob_shows_left(alice, room)


async def test_a_dead_node_another_survivor_forgot_first_still_loses_its_members(
    serve_process, client_factory, redis_url, key_prefix
) -> None:
    """As above, but another survivor saw the dead node's heartbeat expire first and
    took it off the node list (done here by the test, at once, as that survivor
    would): the owner never sees it expired, only gone, and drops its members too."""
    victim = f"victim-{os.urandom(3).hex()}"
    one = serve_process(*FAST)
    alice, room = await bob_on_a_killed_node(
        one, serve_process(*FAST, "--node-id", victim), client_factory, seen_by=one
    )
    redis = aioredis.from_url(redis_url)
    try:
        await redis.hdel(f"{key_prefix}nodes", victim)
        await redis.delete(f"{key_prefix}node:{victim}")
    finally:
        await redis.aclose()
    await bob_shows_left(alice, room)


async def test_many_relayed_requests_at_once_all_get_answers(serve_process, client_factory) -> None:
    """150 spectators on one node ask to watch a room of another node in the same
    instant: every request crosses the relay and every one is answered ok (a pool
    connection per request in flight ran out at 100 and answered internal_error)."""
    limits = ("--max-connections-per-address", "0", "--rate", "1000", "--burst", "1000")
    one, two = serve_process(*FAST, *limits), serve_process(*FAST, *limits)
    alice = await client_factory(one.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    watchers = [await client_factory(two.url, f"w{i}") for i in range(150)]
    replies = await asyncio.gather(*(w.request("watch", room=room) for w in watchers))
    assert [r["type"] for r in replies] == ["ok"] * len(watchers), [r for r in replies if r["type"] != "ok"][:3]
    for w in watchers:
        await w.wait_for(lambda w=w: room in w.rooms)
    no_internal_errors(alice, *watchers)


async def test_a_node_that_took_rooms_over_hands_them_on_at_shutdown(
    serve_process, client_factory, redis_url, key_prefix
) -> None:
    """Three nodes: the owner shuts down and hands its rooms over; then the node that
    received them is told to stop too. It exits cleanly well within its shutdown timeout,
    every room ends up owned by the last node, both players play on there, and no
    client ever gets internal_error."""
    # A long shutdown timeout: a node whose shutdown waits on something stuck (its
    # lease loop once swallowed a cancellation and ran on) would take all of it.
    one, two, three = (serve_process(*FAST, "--shutdown-timeout", "60") for _ in range(3))
    nodes = {one.proc.pid: one, two.proc.pid: two, three.proc.pid: three}
    alice = await client_factory(one.url, "alice")
    bob = await client_factory(one.url, "bob")
    rooms = [await two_player_room(alice, bob) for _ in range(4)]
    rng, acked = random.Random(5), {room: [] for room, _ in rooms}
    for room, _ in rooms:
        await move([alice, bob], room, rng, acked[room])

    one.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(one.proc.wait, 20) == 0
    store = Store(redis_url, key_prefix)
    try:
        async def holders() -> list[str | None]:
            return await store.lease_holders([room for room, _ in rooms])

        for _ in range(200):  # the hand-over is one message: each room is taken at once
            owners = await holders()
            if None not in owners:
                break
            await asyncio.sleep(0.05)
        heirs = {int(node.split("-")[-2]) for node in owners if node is not None}
        assert heirs <= {two.proc.pid, three.proc.pid} and heirs, owners
        # Stop a node that received rooms (the one with most of them if both did).
        taker = nodes[max(heirs, key=lambda pid: sum(1 for o in owners if o and f"-{pid}-" in o))]
        last = three if taker is two else two
        taker.proc.send_signal(signal.SIGTERM)
        # A generous bound, a third of its shutdown timeout: a clean exit takes far less.
        assert await asyncio.to_thread(taker.proc.wait, 20) == 0
        for _ in range(200):
            owners = await holders()
            if all(o is not None and f"-{last.proc.pid}-" in o for o in owners):
                break
            await asyncio.sleep(0.05)
        assert all(o is not None and f"-{last.proc.pid}-" in o for o in owners), owners
    finally:
        await store.close()

    alice2 = await client_factory(last.url, "alice")
    bob2 = await client_factory(last.url, "bob")
    for room, tokens in rooms:
        await alice2.ok("resume", room=room, token=tokens[0])
        await bob2.ok("resume", room=room, token=tokens[1])
        await alice2.wait_for(lambda room=room: room in alice2.rooms)
        await bob2.wait_for(lambda room=room: room in bob2.rooms)
        await move([alice2, bob2], room, rng, acked[room])
        log = await stored_log(redis_url, key_prefix, room)
        assert [(e["seat"], e["action"]) for e in log] == acked[room]
    no_internal_errors(alice, bob, alice2, bob2)
