"""Joining and resuming a room that another node took over in the meantime.

Found behind HAProxy (tests/deploy/test_haproxy.py): a player resumed on the node that
had just been handed the room while another node took it over (fence bump); the
resume's write was refused, the room handed its members to the new owner, and the
undo of the resume then failed on the member already gone: a traceback and the
generic "it was logged" internal_error. The client must get the room-moved error and
no traceback.
"""

from __future__ import annotations

import logging

import pytest

from tests.server.multinode import two_player_room

pytestmark = pytest.mark.redis


async def taken_over_elsewhere(server, room: str) -> None:
    """What another node's acquire does: its lease on the room and a fence bump."""
    store = server.store
    await store.redis.set(store.k_lease(room), "another-node", px=60_000)
    await store.redis.hincrby(store.k_room(room), "fence", 1)


def tracebacks(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("giants") and r.exc_info]


async def test_resume_on_a_room_just_taken_over_elsewhere(server_factory, client_factory, caplog) -> None:
    server = await server_factory(lease_ttl=30)  # no renewal finds the loss first
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room, tokens = await two_player_room(alice, bob)
    await alice.close()
    await bob.wait_for(lambda: not bob.rooms[room].view["room"]["seats"][0]["connected"])
    await taken_over_elsewhere(server, room)
    alice2 = await client_factory(server.url, "alice")
    with caplog.at_level(logging.ERROR, logger="giants"):
        reply = await alice2.request("resume", room=room, token=tokens[0])
    assert reply["type"] == "error" and reply["code"] == "internal_error"
    assert "moved to another server" in reply["message"]
    assert tracebacks(caplog) == []


async def test_join_on_a_room_just_taken_over_elsewhere(server_factory, client_factory, caplog) -> None:
    server = await server_factory(lease_ttl=30)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await taken_over_elsewhere(server, room)
    bob = await client_factory(server.url, "bob")
    with caplog.at_level(logging.ERROR, logger="giants"):
        reply = await bob.request("join", room=room)
    assert reply["type"] == "error" and reply["code"] == "internal_error"
    assert "moved to another server" in reply["message"]
    assert tracebacks(caplog) == []
