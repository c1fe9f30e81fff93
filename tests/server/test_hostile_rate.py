"""Hostile client, rate limiting (issue 10 item 3): every frame is charged before it is
decoded, a sustained flood ends in the documented 1008 close, and an oversized
request is refused before validation. An honest client on the same server is served
throughout and nothing stored changes."""

from __future__ import annotations

import asyncio
import os

import msgpack
import pytest
from raw_ws import RawWs, frame, request, stored

pytestmark = pytest.mark.redis

HONEST = "127.0.0.2"


async def test_undecodable_frames_are_charged_and_a_garbage_flood_is_closed(
    server_factory, client_factory, redis_url, key_prefix
) -> None:
    """1,500 garbage frames in one write, no hello: the first `burst` get `bad_frame`,
    then `rate_limited`, then the connection is closed with 1008: far fewer than
    1,500 replies."""
    server = await server_factory()
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    room = (await honest.ok("create_room", game="giantslayer"))["room"]
    before = await stored(redis_url, key_prefix)

    attacker = await RawWs.open(server.url)
    await attacker.write(frame(os.urandom(24) + b"\xc1") for _ in range(1500))
    got = await attacker.read_all()

    assert got.close_code == 1008
    assert "flooding" in got.close_reason
    codes = [m["code"] for m in got.messages]
    burst = server.config.burst
    assert codes[:burst] == ["bad_frame"] * burst
    assert set(codes[burst:]) <= {"rate_limited", "bad_frame"}  # a token may refill meanwhile
    # Closed well before all 1,500 were answered (a slow machine refills some tokens
    # meanwhile, so the exact count varies).
    assert len(codes) < 1000
    await honest.ok("ping")
    assert (await honest.ok("list_rooms"))["rooms"][0]["room"] == room
    assert await stored(redis_url, key_prefix) == before


async def test_a_sustained_ping_flood_ends_in_1008(server_factory, client_factory) -> None:
    """1,000 pings a second for 3 s, in bursts of 100: tokens refill between bursts
    (so some pings are served all along), yet the refusals add up and the connection
    is closed with 1008 before the flood is over."""
    server = await server_factory()
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    attacker = await RawWs.open(server.url)
    await attacker.write([request("hello", 0, protocol=1)])
    reader = asyncio.get_running_loop().create_task(attacker.read_all())
    sent = 0
    for _ in range(30):
        if reader.done():
            break
        try:
            await attacker.write(request("ping", sent + i) for i in range(1, 101))
        except ConnectionError:
            break
        sent += 100
        await asyncio.sleep(0.1)
    got = await reader
    assert got.close_code == 1008
    assert "flooding" in got.close_reason
    served = [m for m in got.messages if m["type"] == "ok"]
    refused = [m for m in got.messages if m.get("code") == "rate_limited"]
    assert len(refused) > server.config.flood_refusals  # the counter never reset
    assert all(m["id"] is not None for m in refused)  # each refusal answers its request
    assert len(served) + len(refused) < 3000
    assert (await honest.request("ping"))["type"] == "ok"


async def test_a_create_room_with_thousands_of_options_is_refused_before_validation(
    server_factory, client_factory, redis_url, key_prefix
) -> None:
    """A 60 KB create_room with 7,633 option values, a deeply nested one and one with
    nested lists are refused with `bad_message` naming the field, carrying the request
    id; no room is created."""
    server = await server_factory()
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    attacker = await client_factory(server.url, "mallory")
    before = await stored(redis_url, key_prefix)

    many = {str(i): i for i in range(7633)}
    big = msgpack.packb({"type": "create_room", "id": 5, "game": "giants", "options": many})
    assert len(big) < server.config.max_frame
    await attacker.send_raw(big)
    await attacker.wait_for(lambda: any(p["type"] == "error" for p in attacker.pushes))
    reply = next(p for p in attacker.pushes if p["type"] == "error")
    # Beyond the unpacker's own limit (256 entries): not even unpacked, so no id.
    assert reply["code"] == "bad_frame" and reply["id"] is None
    assert "max_map_len" in reply["message"]

    wide = await attacker.error("create_room", game="giants", options={f"o{i}": i for i in range(200)})
    assert wide["code"] == "bad_message"
    assert wide["detail"]["fields"][0] == {
        "field": "options", "error": "too_long", "message": "has more than 64 entries",
    }
    nested = await attacker.error("create_room", game="giants", options={"a": [[[[1]]]]})
    assert nested["code"] == "bad_message"
    assert nested["detail"]["fields"][0]["error"] == "too_deep"
    assert nested["detail"]["fields"][0]["field"].startswith("options.a")
    listy = await attacker.error("create_room", game="giants", bots={str(i): ["random"] * 40 for i in range(5)})
    assert listy["code"] == "bad_message"
    await honest.ok("ping")
    assert await stored(redis_url, key_prefix) == before
    assert server.lobby.rooms == {}


async def test_expensive_requests_spend_more_of_the_rate(server_factory, client_factory) -> None:
    """A listing page of 200 rooms costs 21 tokens: 60 of them pipelined get a
    handful of pages (the burst of 100 buys 4), the rest `rate_limited`."""
    server = await server_factory()
    honest = await client_factory(server.url, "honest", local_addr=(HONEST, 0))
    await honest.ok("create_room", game="tara")
    attacker = await RawWs.open(server.url)
    await attacker.write([request("hello", 0, protocol=1)] + [request("list_rooms", i, limit=200) for i in range(1, 61)])
    await attacker.write([frame(b"\xc1" * 10000)])  # flood on, until the server closes it
    for _ in range(5):
        await attacker.write([request("ping", 1000 + i) for i in range(100)])
    got = await attacker.read_all()
    pages = [m for m in got.messages if m["type"] == "ok" and 1 <= m["id"] <= 60]
    refused = [m for m in got.messages if m.get("code") == "rate_limited" and m["id"] is not None and m["id"] <= 60]
    assert 4 <= len(pages) < 20  # 99 tokens after hello, 21 a page; a few refill meanwhile
    assert len(pages) + len(refused) == 60
    assert got.close_code == 1008
    await honest.ok("list_rooms")
