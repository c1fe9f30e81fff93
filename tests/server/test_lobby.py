"""Lobby: listing, manual start, leaving before the start, resync."""

from __future__ import annotations

import pytest

from server.room import lean_meta

pytestmark = pytest.mark.redis


async def test_list_leave_start_and_resync(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer", autostart=False, options={"rounds": 1}))["room"]
    listed = {r["room"]: r for r in (await bob.ok("list_rooms", game="giantslayer"))["rooms"]}
    assert listed[room]["status"] == "waiting" and listed[room]["rules"] == "standard"
    assert room not in {r["room"] for r in (await bob.ok("list_rooms", game="tara"))["rooms"]}

    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    assert (await alice.error("start", room="nope"))["code"] == "no_such_room"
    await bob.ok("leave", room=room)  # before the start a leave frees the seat
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["seats"][1]["name"] is None)
    assert (await alice.error("start", room=room))["code"] == "not_started"  # a seat is empty
    assert (await bob.ok("join", room=room))["seat"] == 1
    assert giants_server.lobby.rooms[room].status == "waiting"  # autostart=false: still waiting
    await bob.ok("start", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "playing")
    assert (await alice.error("start", room=room))["code"] == "already_started"

    before = len(alice.pushes)
    assert await alice.ok("resync", room=room) == {}
    await alice.wait_for(lambda: any(p["type"] == "snapshot" for p in alice.pushes[before:]))
    snapshot = next(p for p in alice.pushes[before:] if p["type"] == "snapshot")
    assert snapshot["version"] == giants_server.lobby.rooms[room].version
    assert snapshot["view"] == alice.rooms[room].view
    assert snapshot["legal"] == alice.rooms[room].legal


async def test_rooms_with_equal_options_keep_one_options_dict(giants_server, client_factory) -> None:
    """In memory, rooms of equal options share one `meta["options"]` dict (read only,
    memory per room); other options get their own, and each room plays by its own."""
    alice = await client_factory(giants_server.url, "alice")
    one = (await alice.ok("create_room", game="giantslayer", options={"rounds": 1}))["room"]
    two = (await alice.ok("create_room", game="giantslayer", options={"rounds": 1}))["room"]
    other = (await alice.ok("create_room", game="giantslayer", options={"rounds": 2}))["room"]
    rooms = giants_server.lobby.rooms
    assert rooms[one].meta["options"] is rooms[two].meta["options"]
    assert rooms[one].meta["options"] == {"rounds": 1} and rooms[other].meta["options"] == {"rounds": 2}
    assert rooms[one].state.rounds == 1 and rooms[other].state.rounds == 2
    # Equal but not the same: 1 and True (had an engine taken both) are not shared.
    assert type(lean_meta({"options": {"rounds": True}})["options"]["rounds"]) is bool
    assert type(lean_meta({"options": {"rounds": 1}})["options"]["rounds"]) is int
