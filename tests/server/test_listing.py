"""list_rooms pages (server.listing): every public room exactly once across pages,
live rooms in id order then finished rooms, private rooms never, a bounded page."""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.redis


async def read_all_pages(client, limit: int, **fields) -> tuple[list[dict], int]:
    rooms, pages, cursor = [], 0, None
    while True:
        request = {"limit": limit, **fields}
        if cursor is not None:
            request["cursor"] = cursor
        data = await client.ok("list_rooms", **request)
        assert len(data["rooms"]) <= limit
        rooms += data["rooms"]
        pages += 1
        cursor = data["next"]
        if cursor is None:
            return rooms, pages
        assert pages < 50


async def test_pages_list_every_public_room_once(server_factory, client_factory) -> None:
    server = await server_factory(max_rooms_per_address=0)
    alice = await client_factory(server.url, "alice")
    public = [(await alice.ok("create_room", game="giantslayer"))["room"] for _ in range(7)]
    public += [(await alice.ok("create_room", game="tara"))["room"] for _ in range(3)]
    private = [(await alice.ok("create_room", game="tara", private=True))["room"] for _ in range(2)]
    # Two bot-only games that play to the end: finished rooms, listed after the live ones.
    finished = [(await alice.ok("create_room", game="tara", bots={"0": "random", "1": "random"}))["room"]
                for _ in range(2)]
    finished_private = (await alice.ok(
        "create_room", game="tara", private=True, bots={"0": "random", "1": "random"}))["room"]
    for room_id in [*finished, finished_private]:
        while room_id in server.lobby.rooms and server.lobby.rooms[room_id].status != "finished":
            await asyncio.sleep(0.05)

    rooms, pages = await read_all_pages(alice, 3)
    ids = [r["room"] for r in rooms]
    assert ids == sorted(public)  # live rooms only, in id order, each once
    assert pages >= 4

    rooms, _ = await read_all_pages(alice, 4, include_finished=True)
    ids = [r["room"] for r in rooms]
    assert ids[: len(public)] == sorted(public)
    assert sorted(ids[len(public):]) == sorted(finished)  # then the finished ones
    assert all(r["status"] == "finished" for r in rooms[len(public):])
    assert not set(ids) & {*private, finished_private}

    tara, _ = await read_all_pages(alice, 2, game="tara")
    assert [r["room"] for r in tara] == sorted(public[7:])

    first = await alice.ok("list_rooms")
    assert len(first["rooms"]) == 10 and first["next"] is None  # default page: 50
    bad = await alice.error("list_rooms", cursor="live")
    assert bad["code"] == "bad_message"
    assert bad["detail"]["fields"][0]["field"] == "cursor"
    assert (await alice.error("list_rooms", limit=500))["code"] == "bad_message"


async def test_a_room_created_between_pages_is_not_skipped_or_repeated(server_factory, client_factory) -> None:
    server = await server_factory(max_rooms_per_address=0)
    alice = await client_factory(server.url, "alice")
    created = [(await alice.ok("create_room", game="tara"))["room"] for _ in range(6)]
    page = await alice.ok("list_rooms", limit=3)
    seen = [r["room"] for r in page["rooms"]]
    created.append((await alice.ok("create_room", game="tara"))["room"])
    while page["next"] is not None:
        page = await alice.ok("list_rooms", limit=3, cursor=page["next"])
        seen += [r["room"] for r in page["rooms"]]
    assert len(seen) == len(set(seen))  # nothing repeated
    # Every room that existed throughout is listed; the new one appears exactly when
    # it sorts after the first page's last id.
    last_of_first = sorted(created[:6])[2]
    assert (created[-1] in seen) == (created[-1] > last_of_first)
    assert set(created[:6]) <= set(seen)
