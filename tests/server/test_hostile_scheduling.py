"""Hostile client, scheduling (issue 10 item 2): one connection's pipelined frames and
unread replies never starve the others, and what is queued to it stays bounded."""

from __future__ import annotations

import asyncio

import pytest
from raw_ws import RawWs, request, stored

pytestmark = pytest.mark.redis

HONEST = "127.0.0.2"  # another client address than the attacker's 127.0.0.1


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.05)


async def make_rooms(client, n: int) -> None:
    for start in range(0, n, 20):
        await asyncio.gather(*(client.ok("create_room", game="giantslayer") for _ in range(min(20, n - start))))


async def test_pipelined_listing_that_is_never_read_is_closed_and_starves_nobody(
    server_factory, client_factory, redis_url, key_prefix
) -> None:
    """400 `list_rooms` of 100 rooms each (~10 MB of replies) in one TCP write from a
    client that never reads: an honest client's pings are answered, in order, while
    the attacker's frames are being handled; the attacker is closed with 1008 once
    its unread replies pass the output budget, and it is not read any further."""
    server = await server_factory(
        rate=10_000.0, burst=10_000, max_write_buffer=256 * 1024, max_rooms_per_address=0
    )
    owner = await client_factory(server.url, "owner", local_addr=(HONEST, 0))
    await make_rooms(owner, 100)
    before = await stored(redis_url, key_prefix)

    attacker = await RawWs.open(server.url, rcvbuf=4096)
    frames = [request("hello", 0, protocol=1, name="mallory")]
    frames += [request("list_rooms", i, limit=100) for i in range(1, 401)]
    await attacker.write(frames)

    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    replies = [await honest.request("ping") for _ in range(30)]
    assert [r["type"] for r in replies] == ["ok"] * 30
    listing = await honest.ok("list_rooms", limit=10)
    assert len(listing["rooms"]) == 10 and listing["next"]

    # The attacker is still being served meanwhile; wait (reading nothing) until the
    # server gives up on it.
    conn = next(c for c in server.connections if c.address == "127.0.0.1")
    await asyncio.wait_for(_until(lambda: conn.dropped is not None or not server.connections), 60)
    assert conn.dropped == "slow"
    await honest.ok("ping")

    got = await attacker.read_all()
    assert got.close_code == 1008, got.close_reason
    assert "too slow" in got.close_reason
    ids = [m["id"] for m in got.messages if m["type"] == "ok"]
    assert ids == sorted(ids)  # replies in request order
    assert len(ids) < 400  # it stopped being served once over budget
    await honest.ok("ping")  # still served afterwards
    assert await stored(redis_url, key_prefix) == before  # a listing changes nothing


async def test_pipelined_frames_take_turns_with_other_connections(server_factory, client_factory) -> None:
    """Frames that arrive in one read are not handled back to back: while 2,000
    pipelined requests of one connection are being served, another connection's
    ping waits for only a few of them (the server counts the frames it handled)."""
    server = await server_factory(rate=10_000.0, burst=10_000, max_rooms_per_address=0)
    owner = await client_factory(server.url, "owner", local_addr=(HONEST, 0))
    await make_rooms(owner, 30)
    attacker = await RawWs.open(server.url)
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    await attacker.write(
        [request("hello", 0, protocol=1)] + [request("list_rooms", i, limit=30) for i in range(1, 2001)]
    )
    reader = asyncio.get_running_loop().create_task(attacker.read_all(timeout=120))
    waited = []
    for _ in range(20):
        before = server.metrics.frames_in
        await honest.ok("ping")
        waited.append(server.metrics.frames_in - before - 1)
    start = server.metrics.frames_in
    assert start < 2000  # the attacker was still being served throughout
    print("frames handled while a ping waited:", waited)
    assert max(waited) <= 24
    attacker.close()
    reader.cancel()
