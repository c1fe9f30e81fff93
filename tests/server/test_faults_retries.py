"""Issue 11 item 5: exactly one reply per request, and create/join/start retried with the
same request key are answered like the first attempt, whatever got lost."""

from __future__ import annotations

import asyncio
import secrets

import msgpack
import pytest
from websockets.asyncio.client import connect

from tests.fault_checks import one_reply_per_id, stored_room, views_agree

pytestmark = pytest.mark.redis

FAST = {"redis_timeout": 0.5, "redis_retry_window": 5.0}


def new_key() -> str:
    return secrets.token_urlsafe(16)


async def send_and_vanish(url: str, *requests: dict) -> None:
    """Send requests and close without reading a reply (a client whose connection died)."""
    async with connect(url, compression=None) as ws:
        await ws.send(msgpack.packb({"type": "hello", "id": 0, "protocol": 1, "name": "alice"}))
        for request in requests:
            await ws.send(msgpack.packb(request))


async def test_join_retried_with_its_key_gets_the_same_seat_and_token(
    giants_server, client_factory, redis_url, key_prefix
) -> None:
    """The join was stored but its reply never arrived: the retry with the same key
    gets the same seat and token (not seat_taken), and no second seat is taken."""
    host = await client_factory(giants_server.url, "host")
    room = (await host.ok("create_room", game="giantslayer", players=2))["room"]
    key = new_key()
    await send_and_vanish(giants_server.url, {"type": "join", "id": 1, "room": room, "key": key})
    alice = await client_factory(giants_server.url, "alice")
    first = await alice.ok("join", room=room, key=key)
    again = await alice.ok("join", room=room, key=key)  # and once more on the same connection
    assert first == again and first["seat"] == 0
    stored = await stored_room(redis_url, key_prefix, room)
    assert [s.taken for s in stored.seats] == [True, False] and stored.status == "waiting"
    bob = await client_factory(giants_server.url, "bob")
    assert (await bob.ok("join", room=room))["seat"] == 1  # the free seat is still free
    # The token works: resume elsewhere, after the start.
    other = await client_factory(giants_server.url, "alice-2")
    assert (await other.ok("resume", room=room, token=first["token"]))["seat"] == 0
    # A retry after the start (the join that filled the room) still answers ok.
    late = await client_factory(giants_server.url, "alice-3")
    assert (await late.ok("join", room=room, key=key))["token"] == first["token"]
    for client in (host, alice, bob, other, late):
        one_reply_per_id(client)


async def test_join_that_fills_the_room_starts_it_in_one_write_with_one_reply(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """The last join's Redis reply is lost: it is settled as applied, the joiner gets
    exactly one `ok`, the room is playing in Redis and in every view."""
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    fault_proxy.drop_reply(server.store._commit.sha.encode())
    joined = await bob.request("join", room=room, key=new_key())
    assert fault_proxy.triggered and joined["type"] == "ok", joined
    stored = await views_agree(redis_url, key_prefix, room, {0: alice, 1: bob})
    assert stored.status == "playing"
    assert any(e["type"] == "started" for e in alice.rooms[room].events)
    await asyncio.sleep(0.2)  # a second reply would have arrived by now
    for client in (alice, bob):
        one_reply_per_id(client)


async def test_create_and_start_retried_with_their_keys(giants_server, client_factory) -> None:
    """A create sent twice with one key makes one room; a start sent twice with one key
    answers ok twice, another key gets already_started."""
    key = new_key()
    await send_and_vanish(giants_server.url, {"type": "create_room", "id": 1, "game": "giantslayer",
                                              "autostart": False, "key": key})
    alice = await client_factory(giants_server.url, "alice")
    first = await alice.ok("create_room", game="giantslayer", autostart=False, key=key)
    second = await alice.ok("create_room", game="giantslayer", autostart=False, key=key)
    room = first["room"]
    assert second["room"] == room
    mine = [r for r in (await alice.ok("list_rooms"))["rooms"] if r["room"] == room]
    assert len(mine) == 1
    other = await alice.ok("create_room", game="giantslayer", autostart=False, key=new_key())
    assert other["room"] != room
    bob = await client_factory(giants_server.url, "bob")
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    start_key = new_key()
    await alice.ok("start", room=room, key=start_key)
    await alice.ok("start", room=room, key=start_key)  # the retry: ok again
    refused = await bob.error("start", room=room, key=new_key())
    assert refused["code"] == "already_started"
    for client in (alice, bob):
        one_reply_per_id(client)


async def test_request_key_is_validated(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    for bad in ("short", "x" * 65, "has spaces in it!!", 12345):
        reply = await alice.error("create_room", game="giantslayer", key=bad)
        assert reply["code"] == "bad_message"
        assert reply["detail"]["fields"][0]["field"] == "key"
