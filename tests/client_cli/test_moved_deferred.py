"""A `moved` advisory that reaches the client while it is reconnecting (or following
an earlier one) is followed once that is over: the server advises a connection once per
owner, so one dropped then would leave the client relayed for good (seen in
tests/server/test_worker_moved.py under load: a member killed over to a restarted
worker got its advisory during its own reconnect and never moved)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest

from client_cli.client import Client

pytestmark = pytest.mark.redis


def moved(room: str) -> bytes:
    return msgpack.packb({"type": "moved", "room": room})


async def wait_for(check: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_an_advisory_during_a_reconnect_is_followed_after_it(giants_server: Any) -> None:
    async with Client(giants_server.url, name="alice") as alice:
        room = (await alice.create_room("giantslayer"))["room"]
        await alice.join(room, seat=0)
        ws = alice._ws
        alice._reconnecting = True  # as during `_reconnect_loop` or `_follow`
        alice._dispatch(moved(room), ws)
        assert alice.advisories == 1 and alice.moves == 0
        alice._reconnecting = False
        alice._follow_deferred()  # what the reconnect's end calls
        await wait_for(lambda: alice.moves == 1 and alice.connected)
        assert alice._ws is not ws  # a new socket, naming the room
        assert alice.rooms[room].seat == 0  # the seat taken back there
        summary = next(r for r in await alice.list_rooms() if r["room"] == room)
        assert summary["seats"][0]["name"] == "alice" and summary["seats"][0]["connected"]


async def test_an_advisory_on_a_socket_since_replaced_is_dropped(giants_server: Any) -> None:
    async with Client(giants_server.url, name="bob") as bob:
        room = (await bob.create_room("giantslayer"))["room"]
        await bob.join(room, seat=0)
        ws = bob._ws
        bob._reconnecting = True
        bob._dispatch(moved(room), ws)
        await bob._drop_ws()
        await bob._open()  # another socket is the one in use now
        await bob._restore()
        bob._connected.set()
        bob._reconnecting = False
        bob._follow_deferred()
        await asyncio.sleep(0.3)
        assert bob.moves == 0 and bob.advisories == 1
