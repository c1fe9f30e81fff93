"""Simultaneous steps (GIANTS sealed bids): bots and deadlines answer each step once.

In a GIANTS bid step every seat is to act and a bid may be replaced until the last
one is in, so a seat stays in to_act after bidding. The room remembers who answered:
a bot bids once per step (not forever), and an expired deadline defaults the seats
that have not bid, never replacing a bid already made.
"""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.redis


async def bid_step(client, room: str) -> None:
    await client.wait_for(lambda: room in client.rooms and len(client.rooms[room].view["room"]["to_act"]) > 1)


async def test_bots_bid_once_per_step_while_a_human_thinks(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    room = (await alice.ok("create_room", game="giants", players=3, bots={"1": "random", "2": "random"}))["room"]
    await alice.ok("join", room=room, seat=0)
    await bid_step(alice, room)
    live = giants_server.lobby.rooms[room]
    await alice.wait_for(lambda: live.answered >= {1, 2})
    settled = live.actions
    await asyncio.sleep(0.3)
    assert live.actions == settled == 2  # each bot bid once, then waited for the human
    assert live.to_act == [0, 1, 2]
    bot_events = [e for e in alice.rooms[room].events if e["type"] == "action" and e["seat"] != 0]
    assert all(e["action"] == "bid" for e in bot_events)  # sealed: alice sees only that they bid
    await alice.ok("act", room=room, action=alice.rooms[room].legal[0])
    await alice.wait_for(lambda: live.actions >= 3)
    assert live.actions >= 3


async def test_deadline_defaults_only_the_seats_that_did_not_bid(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giants", players=2, deadline=0.4))["room"]
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    await bid_step(alice, room)
    live = giants_server.lobby.rooms[room]
    deadline = live.deadline
    my_bid = alice.rooms[room].legal[-1]
    await alice.ok("act", room=room, action=my_bid)
    assert live.deadline == deadline  # the step goes on: same deadline
    await alice.wait_for(lambda: any(e["type"] == "timeout" for e in alice.rooms[room].events), timeout=5)
    timeouts = [e["seat"] for e in alice.rooms[room].events if e["type"] == "timeout"]
    assert timeouts[0] == 1  # bob was late; alice's bid stands
    log = await giants_server.store.read_log(room)
    assert (log[0]["seat"], log[0]["action"]) == (0, my_bid)
    assert log[1]["seat"] == 1


async def test_a_replaced_bid_reaches_no_other_member(giants_server, client_factory) -> None:
    """GI-8: until the reveal nobody sees another seat's bid, or whether it changed.

    The first bid shows to the others only as "bid"; replacing it sends them nothing at
    all — no event, no patch, not even a version bump."""
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    watcher = await client_factory(giants_server.url, "watcher")
    room = (await alice.ok("create_room", game="giants", players=3, bots={"2": "random"}))["room"]
    await watcher.ok("watch", room=room)
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    await bid_step(alice, room)
    await bid_step(bob, room)
    live = giants_server.lobby.rooms[room]
    await alice.wait_for(lambda: 2 in live.answered)
    bids = [a for a in alice.rooms[room].legal if a.startswith("bid")]
    assert len(bids) >= 2
    first = await alice.ok("act", room=room, action=bids[0])
    await bob.wait_version(room, first["version"])
    await watcher.wait_version(room, first["version"])
    seen = {c: (c.rooms[room].version, len(c.rooms[room].events)) for c in (bob, watcher)}
    assert [e["action"] for e in bob.rooms[room].events if e["type"] == "action" and e["seat"] == 0][-1] == "bid"

    second = await alice.ok("act", room=room, action=bids[-1])  # replace the bid
    await alice.wait_version(room, second["version"])
    await asyncio.sleep(0.3)
    for client, (version, events) in seen.items():
        assert client.rooms[room].version == version
        assert len(client.rooms[room].events) == events
    assert alice.rooms[room].version == second["version"]
    # Bob still acts on the version he was shown: no stale_version gives the change away.
    await bob.ok("act", room=room, action=bob.rooms[room].legal[0], version=bob.rooms[room].version)
