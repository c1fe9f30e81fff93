"""Password and private rooms stay closed, also after the end (issue 10 item 7):
replays of password rooms need the password, private rooms are never listed,
passwords are stored as scrypt hashes (old sha256 hashes still verify), and wrong
guesses are limited per room and per address."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from server.store import pack, unpack

pytestmark = pytest.mark.redis

SECRET = "open sesame"


async def finished_room(server, client, **extra) -> str:
    room = (await client.ok("create_room", game="giantslayer", options={"rounds": 1},
                            bots={"0": "random", "1": "random"}, **extra))["room"]
    live = server.lobby.rooms[room]
    async with asyncio.timeout(60):
        while live.status != "finished":
            await asyncio.sleep(0.05)
    return room


async def test_the_replay_of_a_password_room_needs_the_password(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    room = await finished_room(giants_server, alice, password=SECRET)
    for attempt in ({}, {"password": "wrong"}):
        refused = await alice.error("replay", room=room, **attempt)
        assert refused["code"] == "bad_password"
        assert "seed" not in str(refused)
    assert (await alice.ok("replay", room=room, password=SECRET))["outcome"] is not None
    # Also once the room has left memory and is read from Redis.
    giants_server.lobby.rooms.pop(room, None)
    assert (await alice.error("replay", room=room))["code"] == "bad_password"
    assert (await alice.error("replay", room=room, positions=True))["code"] == "bad_password"
    replay = await alice.ok("replay", room=room, password=SECRET, positions=True)
    assert replay["actions"] and replay["positions"]


async def test_private_rooms_are_never_listed(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    waiting = (await alice.ok("create_room", game="giantslayer", private=True))["room"]
    done = await finished_room(giants_server, alice, private=True)
    giants_server.lobby.rooms.pop(done, None)  # listed from Redis, not memory
    public = await finished_room(giants_server, alice)
    for include_finished in (False, True):
        for game in (None, "giantslayer"):
            listed = {r["room"] for r in (await alice.ok("list_rooms", include_finished=include_finished,
                                                         **({"game": game} if game else {})))["rooms"]}
            assert waiting not in listed and done not in listed
    assert public in {r["room"] for r in (await alice.ok("list_rooms", include_finished=True))["rooms"]}


async def test_passwords_are_stored_with_scrypt(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", password=SECRET))["room"]
    meta = unpack(await giants_server.store.redis.hget(giants_server.store.k_room(room), "meta"))
    stored = meta["password"]
    assert stored.startswith("scrypt$") and SECRET not in stored
    _, n, r, p, salt, digest = stored.split("$")
    assert int(n) >= 2**14 and len(bytes.fromhex(salt)) == 16
    assert hashlib.scrypt(SECRET.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p)).hex() == digest
    other = (await alice.ok("create_room", game="giantslayer", password=SECRET))["room"]
    other_meta = unpack(await giants_server.store.redis.hget(giants_server.store.k_room(other), "meta"))
    assert other_meta["password"] != stored  # a salt per room


async def test_a_room_stored_with_the_old_sha256_hash_still_opens(server_factory, client_factory) -> None:
    first = await server_factory()
    alice = await client_factory(first.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", password=SECRET))["room"]
    store = first.store
    meta = unpack(await store.redis.hget(store.k_room(room), "meta"))
    meta["password"] = hashlib.sha256((meta["salt"] + SECRET).encode()).hexdigest()
    await store.redis.hset(store.k_room(room), "meta", pack(meta))
    await first.stop()
    second = await server_factory()
    bob = await client_factory(second.url, "bob")
    assert (await bob.error("join", room=room, password="wrong"))["code"] == "bad_password"
    assert (await bob.ok("join", room=room, password=SECRET))["seat"] == 0


async def test_wrong_guesses_are_limited_per_room(server_factory, client_factory) -> None:
    server = await server_factory(password_guesses_per_room=3, password_guesses_per_address=100)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", password=SECRET))["room"]
    guessers = [await client_factory(server.url, f"g{i}") for i in range(3)]
    for client in guessers:  # three clients, one room
        assert (await client.error("watch", room=room, password="nope"))["code"] == "bad_password"
    blocked = await alice.error("join", room=room, password=SECRET)
    assert blocked["code"] == "too_many_guesses"
    assert 0 < blocked["detail"]["retry_after"] <= 60
    assert not server.lobby.rooms[room].members  # nobody got in
    other = (await alice.ok("create_room", game="giantslayer", password=SECRET))["room"]
    assert (await alice.ok("join", room=other, password=SECRET))["seat"] == 0  # other rooms unaffected


async def test_wrong_guesses_are_limited_per_address(server_factory, client_factory) -> None:
    server = await server_factory(password_guesses_per_room=100, password_guesses_per_address=2)
    owner = await client_factory(server.url, "owner")
    rooms = [(await owner.ok("create_room", game="giantslayer", password=SECRET))["room"] for _ in range(3)]
    mallory = await client_factory(server.url, "mallory")
    assert (await mallory.error("join", room=rooms[0], password="a"))["code"] == "bad_password"
    assert (await mallory.error("watch", room=rooms[1], password="b"))["code"] == "bad_password"
    # A third room, a fresh connection, even the right password: this address waits.
    again = await client_factory(server.url, "mallory")
    assert (await again.error("join", room=rooms[2], password=SECRET))["code"] == "too_many_guesses"
    assert (await again.error("replay", room=rooms[2], password="c"))["code"] == "too_many_guesses"
