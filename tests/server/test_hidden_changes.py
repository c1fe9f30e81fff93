"""GI-8: a replaced sealed bid is seen by its bidder only, through every channel.

The strongest form of the check: two identical GIANTS rooms, in one of which alice
replaces her bid several times. Everything anyone else observes — a spectator's patch
versions, another seat's `ok` version, resync and new-spectator snapshots,
`stale_version` detail and message, and the public /metrics counter — must be the
same in both rooms. Then: the replacements a seat may make in one step are bounded.
"""

from __future__ import annotations

import asyncio
import re
import urllib.request
from typing import Any

import pytest

pytestmark = pytest.mark.redis


def actions_applied(url: str) -> float:
    http = url.replace("ws://", "http://") + "/metrics"
    with urllib.request.urlopen(http, timeout=10) as reply:
        text = reply.read().decode()
    match = re.search(r'^giants_actions_applied_total\{game="giants"\} (\S+)$', text, re.M)
    return float(match.group(1)) if match else 0.0


async def bid_step(client: Any, room: str) -> None:
    await client.wait_for(lambda: room in client.rooms and len(client.rooms[room].view["room"]["to_act"]) > 1)


async def observe(server: Any, client_factory: Any, replacements: int) -> dict[str, Any]:
    """Play one room to the point where alice and bob bid (carol not yet), alice
    replacing her bid `replacements` times; return what everyone but alice saw."""
    loop = asyncio.get_running_loop()
    url = server.url
    alice, bob, carol, watcher = [await client_factory(url, n) for n in ("alice", "bob", "carol", "watcher")]
    room = (await alice.ok("create_room", game="giants", players=3))["room"]
    await watcher.ok("watch", room=room)
    for seat, client in enumerate((alice, bob, carol)):
        await client.ok("join", room=room, seat=seat)
    for client in (alice, bob, carol, watcher):
        await bid_step(client, room)
    metric_before = await loop.run_in_executor(None, actions_applied, url)
    bids = [a for a in alice.rooms[room].legal if a.startswith("bid")]
    bob_before = bob.rooms[room].version
    first = await alice.ok("act", room=room, action=bids[0])
    await bob.wait_version(room, bob_before + 1)
    for i in range(replacements):
        again = await alice.ok("act", room=room, action=bids[-1] if i % 2 == 0 else bids[0])
        await alice.wait_version(room, again["version"])
    stale = await bob.error("act", room=room, action=bob.rooms[room].legal[0], version=bob.rooms[room].version - 1)
    bob_ok = await bob.ok("act", room=room, action=bob.rooms[room].legal[0], version=bob.rooms[room].version)
    await watcher.wait_version(room, bob_ok["version"])
    await carol.wait_version(room, bob_ok["version"])
    before = len(bob.pushes)
    await bob.ok("resync", room=room)
    await bob.wait_for(lambda: any(p["type"] == "snapshot" for p in bob.pushes[before:]))
    resync = next(p for p in bob.pushes[before:] if p["type"] == "snapshot")
    late = await client_factory(url, "late")
    await late.ok("watch", room=room)
    late_snapshot = next(p for p in late.pushes if p["type"] == "snapshot")
    metric_after = await loop.run_in_executor(None, actions_applied, url)
    return {
        "first_ok_version": first["version"],  # alice's own: fine to differ later, not here
        "watcher_versions": [(p["from"], p["to"]) for p in watcher.pushes if p["type"] == "patch"],
        "carol_versions": [(p["from"], p["to"]) for p in carol.pushes if p["type"] == "patch"],
        "watcher_events": watcher.rooms[room].events,
        "bob_ok_version": bob_ok["version"],
        "stale": (stale["code"], stale["message"], stale.get("detail")),
        "resync_version": resync["version"],
        "late_spectator_version": late_snapshot["version"],
        "metric_delta": metric_after - metric_before,
        "alice_version": alice.rooms[room].version,
        "gaps": [c.rooms[room].gaps for c in (bob, carol, watcher, late)],
    }


async def test_nothing_public_counts_a_replaced_bid(giants_server, client_factory) -> None:
    plain = await observe(giants_server, client_factory, replacements=0)
    replaced = await observe(giants_server, client_factory, replacements=3)
    assert replaced["alice_version"] == plain["alice_version"] + 3  # she saw her own changes
    for key in ("watcher_versions", "carol_versions", "bob_ok_version", "stale", "resync_version",
                "late_spectator_version", "metric_delta", "gaps"):
        assert replaced[key] == plain[key], key
    assert replaced["watcher_events"] == plain["watcher_events"]
    assert plain["metric_delta"] == 2  # alice's first bid and bob's: never the replacements
    assert plain["gaps"] == [0, 0, 0, 0]
    assert "room is at" not in plain["stale"][1]


async def test_replacements_in_one_step_are_bounded(server_factory, client_factory) -> None:
    server = await server_factory(max_replacements=2)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giants", players=2))["room"]
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    await bid_step(alice, room)
    bids = [a for a in alice.rooms[room].legal if a.startswith("bid")]
    await alice.ok("act", room=room, action=bids[0])
    await alice.ok("act", room=room, action=bids[-1])
    await alice.ok("act", room=room, action=bids[0])
    refused = await alice.error("act", room=room, action=bids[-1])
    assert refused["code"] == "too_many_changes"
    assert refused["detail"] == {"limit": 2}
    log = await server.store.read_log(room)
    assert [e["action"] for e in log] == [bids[0], bids[-1], bids[0]]  # the refused one is not stored
    # The step still ends normally when bob bids; the next step starts with a fresh allowance.
    await bob.wait_for(lambda: bool(bob.rooms[room].legal))
    await bob.ok("act", room=room, action=bob.rooms[room].legal[0])
    live = server.lobby.rooms[room]
    await alice.wait_for(lambda: live.actions >= 4)
    assert live.replacements == {}


async def test_a_replaced_bid_leaves_a_draw_offer_standing(giants_server, client_factory) -> None:
    """A move answers a draw offer, but a replaced sealed bid is no move anyone else
    may notice: the offer stays, and the offering seat is sent nothing."""
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giants", players=2))["room"]
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    await bid_step(alice, room)
    await bid_step(bob, room)
    bids = [a for a in bob.rooms[room].legal if a.startswith("bid")]
    alice_before = alice.rooms[room].version
    await bob.ok("act", room=room, action=bids[0])
    await alice.wait_version(room, alice_before + 1)
    offered = await alice.ok("offer_draw", room=room)
    await alice.wait_version(room, offered["version"])
    await bob.wait_for(lambda: bob.rooms[room].view["room"].get("draw_offer") == 0)
    seen = (alice.rooms[room].version, len(alice.pushes))
    again = await bob.ok("act", room=room, action=bids[-1])  # replace the bid
    await bob.wait_version(room, again["version"])
    await asyncio.sleep(0.3)
    assert (alice.rooms[room].version, len(alice.pushes)) == seen
    assert giants_server.lobby.rooms[room].draw_offer == 0
