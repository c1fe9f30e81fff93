"""Hostile client, quotas (issue 10 item 4): per-address connections, per-address
rooms, a deadline for hello, and a room limit that concurrent creates cannot pass
and that holds after a restart. An honest client from another address is served
throughout."""

from __future__ import annotations

import asyncio

import pytest
from raw_ws import RawWs, stored

pytestmark = pytest.mark.redis

HONEST = "127.0.0.2"


async def test_connections_per_address_are_bounded(server_factory, client_factory) -> None:
    server = await server_factory(max_connections_per_address=3)
    mine = [await client_factory(server.url, f"m{i}") for i in range(3)]
    extra = await RawWs.open(server.url)
    got = await extra.read_all()
    assert got.close_code == 1008
    assert "too many connections" in got.close_reason
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    await honest.ok("ping")
    for client in mine:
        await client.ok("ping")  # the first three are unaffected
    await mine[0].close()
    await asyncio.wait_for(_until(lambda: server.quotas.connections.get("127.0.0.1") == 2), 10)
    again = await client_factory(server.url, "again")  # a freed slot is usable again
    await again.ok("ping")


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


async def test_a_connection_that_never_says_hello_is_closed(server_factory, client_factory) -> None:
    server = await server_factory(hello_timeout=0.5)
    silent = await RawWs.open(server.url)
    got = await silent.read_all()
    assert got.close_code == 1008
    assert "no hello" in got.close_reason
    honest = await client_factory(server.url, "honest")
    await asyncio.sleep(0.7)  # past the hello deadline: a client that said hello stays
    await honest.ok("ping")


async def test_rooms_per_address_are_bounded_also_when_created_at_once(
    server_factory, client_factory, redis_url, key_prefix
) -> None:
    """Waiting rooms and all-bot rooms both count; ten creates sent at once get
    exactly the quota; another address is not affected."""
    server = await server_factory(max_rooms_per_address=3)
    mallory = await client_factory(server.url, "mallory")
    # An all-bot room (held at the start so it cannot finish during the test).
    await mallory.ok("create_room", game="giantslayer", bots={"0": "random", "1": "random"}, autostart=False)
    replies = await asyncio.gather(*(mallory.request("create_room", game="tara") for _ in range(10)))
    codes = sorted(r.get("code", "ok") for r in replies)
    assert codes == ["ok", "ok"] + ["quota_exceeded"] * 8
    refused = next(r for r in replies if r["type"] == "error")
    assert refused["detail"] == {"limit": 3}
    before = await stored(redis_url, key_prefix)
    assert (await mallory.error("create_room", game="tara"))["code"] == "quota_exceeded"
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    room = (await honest.ok("create_room", game="tara"))["room"]
    await honest.ok("join", room=room)
    after = await stored(redis_url, key_prefix)
    assert {k for k in after if room not in k} == set(before)  # only the honest room is new


async def test_the_room_limit_holds_under_concurrent_creates_and_says_server_full(
    server_factory, client_factory, redis_url, key_prefix
) -> None:
    server = await server_factory(max_rooms=5, max_rooms_per_address=0)
    clients = [await client_factory(server.url, f"c{i}") for i in range(4)]
    replies = await asyncio.gather(
        *(clients[i % 4].request("create_room", game="tara") for i in range(20))
    )
    codes = sorted(r.get("code", "ok") for r in replies)
    assert codes == ["ok"] * 5 + ["server_full"] * 15
    assert len(server.lobby.rooms) == 5
    assert len(await server.store.live_room_ids()) == 5
    await clients[0].ok("ping")


async def test_the_room_limit_holds_after_a_restart(server_factory, client_factory) -> None:
    """Restoring more unfinished rooms than --max-rooms allows serves only that many;
    the rest stay in Redis untouched (a warning says so), and create_room says
    server_full."""
    first = await server_factory(max_rooms_per_address=0)
    client = await client_factory(first.url, "alice")
    for _ in range(5):
        await client.ok("create_room", game="tara")
    await client.close()
    await first.stop()
    second = await server_factory(max_rooms=3)
    assert len(second.lobby.rooms) == 3
    assert second.lobby.over_limit >= 2  # counted (and logged as a warning)
    assert len(await second.store.live_room_ids()) == 5  # nothing dropped from Redis
    again = await client_factory(second.url, "alice")
    assert (await again.error("create_room", game="tara"))["code"] == "server_full"
