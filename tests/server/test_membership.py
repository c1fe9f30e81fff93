"""Joining and resuming a room that another node took over in the meantime.

Found behind HAProxy (tests/deploy/test_haproxy.py): a player resumed on the node that
had just been handed the room while another node took it over (fence bump); the
resume's write was refused, the room handed its members to the new owner, and the
undo of the resume then failed on the member already gone: a traceback and the
generic "it was logged" internal_error. Nothing of such a request is stored, so the
node runs it again where the room is now: the client gets its seat, and no traceback.
"""

from __future__ import annotations

import logging

import pytest

from tests.server.multinode import two_player_room

pytestmark = pytest.mark.redis


async def taken_over_elsewhere(other, room: str) -> None:
    """The room's lease lapses (its owner stalled) and `other` takes it over (fence bump)."""
    store = other.store
    await store.redis.delete(store.k_lease(room))
    assert await other.lobby.take_over(room) is not None


def tracebacks(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("giants") and r.exc_info]


async def test_resume_on_a_room_just_taken_over_elsewhere(server_factory, client_factory, caplog) -> None:
    server = await server_factory(lease_ttl=30)  # no renewal finds the loss first
    other = await server_factory(lease_ttl=30)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room, tokens = await two_player_room(alice, bob)
    await alice.close()
    await bob.wait_for(lambda: not bob.rooms[room].view["room"]["seats"][0]["connected"])
    await taken_over_elsewhere(other, room)
    alice2 = await client_factory(server.url, "alice")
    with caplog.at_level(logging.ERROR, logger="giants"):
        data = await alice2.ok("resume", room=room, token=tokens[0])
    assert data["seat"] == 0
    await alice2.wait_for(lambda: room in alice2.rooms)
    assert other.lobby.rooms[room].seats[0].taken  # served by the new owner
    assert room not in server.lobby.rooms
    assert tracebacks(caplog) == []


async def test_join_on_a_room_just_taken_over_elsewhere(server_factory, client_factory, caplog) -> None:
    server = await server_factory(lease_ttl=30)
    other = await server_factory(lease_ttl=30)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await taken_over_elsewhere(other, room)
    bob = await client_factory(server.url, "bob")
    with caplog.at_level(logging.ERROR, logger="giants"):
        data = await bob.ok("join", room=room)
    assert data["seat"] == 1
    await bob.wait_for(lambda: room in bob.rooms and bob.rooms[room].view["room"]["status"] == "playing")
    assert other.lobby.rooms[room].seats[1].taken
    assert tracebacks(caplog) == []
