"""`giants serve --workers 2`: a member served through the relay because it named no
room in its URL (the lobby), or because its room moved, is told `moved` (protocol 4)
and the shipped client reconnects at the room's owner; a client that ignores it, or
speaks an older protocol, goes on playing through the relay (server/moved.py)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from client_cli.client import Client, RequestFailed
from tests.conftest import start_serve
from tests.server.multinode import FAST, metric, per_node

pytestmark = pytest.mark.redis

def total(url: str, name: str) -> float:
    return sum(metric(text, name) for text in per_node(url).values())


async def settled(url: str, clients: list[Client]) -> float:
    """Until every advisory the workers sent arrived and was followed; their number."""
    for _ in range(600):
        advised = total(url, "giants_moved_advised_total")
        if advised == sum(c.advisories for c in clients) and all(c.moves == c.advisories and c.connected for c in clients):
            return advised
        await asyncio.sleep(0.05)
    raise AssertionError([(c.name, c.advisories, c.moves) for c in clients])


async def play(players: list[Client], room: str, rng: random.Random, moves: int | None = None) -> None:
    """Random moves by whoever is to act (each seen by every player before the next)
    until the game is over or `moves` were played."""
    played = 0
    while moves is None or played < moves:
        first = players[0].rooms[room]
        if first.finished:
            return
        for p in players:
            await p.rooms[room].wait_version(first.version, timeout=30)
        actors = [p for p in players if p.rooms[room].legal and p.rooms[room].version == first.version]
        if not actors:
            await first.wait_change(first.version, timeout=30)
            continue
        actor = actors[0]
        try:
            await actor.act(room, rng.choice(actor.rooms[room].legal), guard=True)
        except RequestFailed as exc:  # a seat (dis)connecting meanwhile changed the room
            assert exc.code == "stale_version", exc
            continue
        played += 1


async def duel(raw: Any, player: Client, room: str, rng: random.Random) -> None:
    """A game to its end between a raw test client (seat 0) and a shipped client."""
    while True:
        await raw.wait_version(room, player.rooms[room].version, timeout=30)
        if raw.rooms[room].view["room"]["status"] == "finished":
            return
        if raw.rooms[room].legal:
            reply = await raw.ok("act", room=room, action=rng.choice(raw.rooms[room].legal))
            await raw.wait_version(room, reply["version"])
            await player.rooms[room].wait_version(reply["version"], timeout=30)
        else:
            await play([player], room, rng, moves=1)


async def test_lobby_members_are_moved_to_their_rooms_owner(workers, client_factory, tmp_path, key_prefix) -> None:
    sp = start_serve(["--workers", "2", "--data-dir", str(tmp_path / "data"), "--key-prefix", key_prefix])
    workers.append(sp)
    games: list[tuple[str, Any, Client, Client]] = []
    clients: list[Client] = []
    try:
        for i in range(6):
            # The creator (protocol 1: never advised) owns the room: it created it where it landed.
            creator = await client_factory(sp.url, f"c{i}")
            room = (await creator.ok("create_room", game="giantslayer", options={"rounds": 1}))["room"]
            await creator.ok("join", room=room, seat=0)
            # The shipped client from the lobby: no room in its URL.
            player = Client(sp.url, name=f"p{i}")
            watcher = Client(sp.url, name=f"w{i}")
            clients += [player, watcher]
            for c in (player, watcher):
                await c.connect()
            await watcher.watch(room)
            await player.join(room, seat=1)
            games.append((room, creator, player, watcher))
        # About half of them landed on the worker not owning their room: each was told
        # once and reconnected naming the room (handed to the owner by the worker that
        # accepted it, unless that was the owner itself).
        advised = await settled(sp.url, clients)
        assert advised > 0
        assert total(sp.url, "giants_handover_failed_total") == 0
        frames = total(sp.url, "giants_relay_frames_total")
        rng = random.Random(7)
        for room, creator, player, watcher in games:
            await duel(creator, player, room, rng)
            await watcher.rooms[room].wait_version(creator.rooms[room].version, timeout=30)
            assert player.rooms[room].view == watcher.rooms[room].view == creator.rooms[room].view
            # The player moved without leaving its seat: the others never saw it go.
            assert not [e for e in creator.rooms[room].events if e.get("type") == "left"]
        # Every member is at its room's owner now: no frame of the games crossed the relay.
        assert total(sp.url, "giants_relay_frames_total") == frames
        assert total(sp.url, "giants_moved_advised_total") == advised
        assert all(c.reconnects == 0 for c in clients)
    finally:
        for c in clients:
            await c.close()


async def test_clients_that_ignore_the_advisory_play_on_through_the_relay(workers, client_factory, tmp_path, key_prefix) -> None:
    sp = start_serve(["--workers", "2", "--data-dir", str(tmp_path / "data"), "--key-prefix", key_prefix])
    workers.append(sp)
    creator = await client_factory(sp.url, "creator")
    room = (await creator.ok("create_room", game="giantslayer", options={"rounds": 1}))["room"]
    await creator.ok("join", room=room, seat=0)
    # Protocol-4 clients that do not follow it, until one is told (it landed elsewhere).
    ignoring: list[Client] = []
    try:
        for n in range(12):
            client = Client(sp.url, name=f"i{n}", follow_moves=False)
            ignoring.append(client)
            await client.connect()
            await client.watch(room)
        for _ in range(600):  # until the advisories sent arrived
            if total(sp.url, "giants_moved_advised_total") == sum(c.advisories for c in ignoring) > 0:
                break
            await asyncio.sleep(0.05)
        told = next(c for c in ignoring if c.advisories)
        assert told.advisories == 1
        # Older protocols are never told, wherever they landed (12 of them: some elsewhere).
        olds = [await client_factory(sp.url, f"old{n}") for n in range(12)]
        for old in olds:
            await old.ok("watch", room=room)
        relayed = total(sp.url, "giants_relay_frames_total")
        player = Client(sp.url, name="player", follow_moves=False, room=None)
        await player.connect()
        await player.join(room, seat=1)
        rng = random.Random(3)
        await duel(creator, player, room, rng)
        await told.rooms[room].wait_version(creator.rooms[room].version, timeout=30)
        assert told.rooms[room].view == creator.rooms[room].view
        assert told.advisories == 1 and told.moves == 0  # told once, for the one move of its room
        for old in olds:
            await old.wait_version(room, creator.rooms[room].version)
            assert not [m for m in old.pushes if m["type"] == "moved"]
        assert total(sp.url, "giants_relay_frames_total") > relayed
        await player.close()
    finally:
        for c in ignoring:
            await c.close()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["graceful", "killed"])
async def test_members_follow_their_room_when_it_moves(workers, redis_url, key_prefix, how) -> None:
    sp = start_serve(["--workers", "2", "--redis-url", redis_url, "--key-prefix", key_prefix, *FAST])
    workers.append(sp)
    redis = aioredis.from_url(redis_url)
    players = [Client(sp.url, name=f"p{n}") for n in range(2)]
    watcher = Client(sp.url, name="w")
    everyone = [*players, watcher]
    try:
        for c in everyone:
            await c.connect()
        room = (await players[0].create_room("giantslayer", options={"rounds": 1}))["room"]
        for n, p in enumerate(players):
            await p.join(room, seat=n)
        await watcher.watch(room)
        rng = random.Random(11)
        await play(players, room, rng, moves=4)
        lease = f"{key_prefix}room:{{{room}}}:lease"
        owner = (await redis.get(lease)).decode()
        pid = int(owner.rsplit("-", 2)[1])  # node ids are host-pid-random
        os.kill(pid, how)
        while Path(f"/proc/{pid}").exists():
            await asyncio.sleep(0.01)
        # The room moves to the other worker (or the restarted one); every member follows.
        await play(players, room, rng, moves=4)
        await settled(sp.url, everyone)
        frames = total(sp.url, "giants_relay_frames_total")
        await play(players, room, rng)
        assert total(sp.url, "giants_relay_frames_total") == frames
        await watcher.rooms[room].wait_version(players[0].rooms[room].version, timeout=30)
        assert players[0].rooms[room].view == players[1].rooms[room].view == watcher.rooms[room].view
        assert players[0].rooms[room].finished
    finally:
        for c in everyone:
            await c.close()
        await redis.aclose()
