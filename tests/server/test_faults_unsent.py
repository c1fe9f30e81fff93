"""A move's patches go out only once Redis confirmed its write: a write refused, lost
or left in doubt sends nobody anything built from the move, and what every member was
last sent (its view, version and protocol 3's legal base) stays what it really
received. (Session 9 built the patches while the write was in flight and measured it;
this is what any such scheme must keep: docs/performance-history.md.)

A 2-player GIANTS room (hidden screens, one view per seat, long legal lists sent as
`legal_edit`) with a spectator, played by raw protocol-3 clients over real
WebSockets; Redis sits behind a TCP proxy that drops the commit. After each failed
write the next move must patch every member's copy into exactly the engine's view of
the stored game, and each seat's rebuilt legal list must be exactly its legal
actions: a view or base advanced by a move that was never stored would break both.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect

from protocol import apply_legal_edit, apply_patch, expand_ops
from tests.fault_checks import eventually, plain, stored_room

pytestmark = pytest.mark.redis

FAST = {"redis_timeout": 0.5, "redis_retry_window": 5.0}


class Member:
    """A raw protocol-3 client: its copy of the room from snapshots and patches only."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.view: dict[str, Any] | None = None
        self.keys: list[str] = []
        self.seat: int | None = None
        self.version = -1
        self.legal: list[str] = []
        self.base: list[str] = []
        self.frames: list[dict[str, Any]] = []  # every snapshot and patch, in order
        self.gaps = 0
        self.changed = asyncio.Condition()
        self.reader = asyncio.ensure_future(self.read())

    async def read(self) -> None:
        async for frame in self.ws:
            msg = msgpack.unpackb(frame, strict_map_key=False)
            if msg["type"] in ("ok", "error"):
                self.replies.pop(msg["id"]).set_result(msg)
                continue
            self.frames.append(msg)
            if msg["type"] == "snapshot":
                self.view, self.keys, self.seat = msg["view"], msg["keys"], msg["seat"]
                self.version, self.legal = msg["version"], msg["legal"]
                self.base = self.legal
            elif msg["type"] == "patch":
                if self.view is None or msg["from"] != self.version:
                    self.gaps += 1  # a patch from a version this member never had
                    continue
                self.view = apply_patch(self.view, expand_ops(msg["ops"], self.keys))
                self.version += 1
                if "legal_edit" in msg:
                    self.legal = apply_legal_edit(self.base, msg["legal_edit"])
                elif "legal" in msg:
                    self.legal = msg["legal"]
                if self.legal:
                    self.base = self.legal
            async with self.changed:
                self.changed.notify_all()

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.ids] = fut
        await self.ws.send(msgpack.packb({"type": kind, "id": self.ids, **fields}))
        return await asyncio.wait_for(fut, 20)

    async def wait_version(self, version: int) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: self.version >= version), 10)


async def member(url: str, name: str) -> Member:
    m = Member(await connect(url))
    assert (await m.request("hello", protocol=3, name=name))["type"] == "ok"
    return m


async def agree(redis_url: str, prefix: str, room: str, members: list[Member]) -> int:
    """Every member's copy equals the stored game: its view (the engine's view for its
    seat) at its own version, and a seat's legal list the engine's. The stored version."""
    stored = await stored_room(redis_url, prefix, room)
    public = stored.version - stored.hidden
    for m in members:
        await m.wait_version(public)
        assert m.version == public and m.gaps == 0, (m.seat, m.version, public, m.gaps)
        assert m.view is not None
        assert m.view["game"] == plain(stored.engine.view(stored.state, m.seat)), m.seat
        assert m.view["room"]["to_act"] == stored.to_act
        legal = stored.legal_for(m.seat) if m.seat is not None else []
        assert m.legal == legal, m.seat
    return stored.version


async def test_a_move_whose_write_fails_sends_nothing_built_from_it(
    fault_proxy: Any, server_factory: Any, redis_url: str, key_prefix: str
) -> None:
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    sha = server.store._commit.sha.encode()
    seats = [await member(server.url, "ann"), await member(server.url, "bob")]
    watcher = await member(server.url, "sam")
    everyone = [*seats, watcher]
    room = (await seats[0].request("create_room", game="giants", players=2))["data"]["room"]
    assert (await watcher.request("watch", room=room))["type"] == "ok"
    for i, m in enumerate(seats):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    version = await agree(redis_url, key_prefix, room, everyone)
    rng = random.Random(7)
    failed = 0
    for turn in range(30):
        actor = next(m for m in seats if m.legal and m.seat not in m.view["room"]["answered"])  # type: ignore[index]
        action = rng.choice(actor.legal)
        if turn % 5 == 1:
            # The write leaves for Redis and is lost on the way: refused as not
            # applied, and nobody is sent anything of it.
            frames = [len(m.frames) for m in everyone]
            fault_proxy.drop_command(sha)
            refused = await actor.request("act", room=room, action=action)
            assert refused["type"] == "error" and refused["code"] == "storage_unavailable", refused
            assert refused["detail"] == {"outcome": "not_applied"}
            for m in everyone:  # each connection's frames come in order: a ping's reply
                assert (await m.request("ping"))["type"] == "ok"  # follows any frame queued before it
            assert [len(m.frames) for m in everyone] == frames
            assert await agree(redis_url, key_prefix, room, everyone) == version
            failed += 1
        assert (await actor.request("act", room=room, action=action))["type"] == "ok"
        version = await agree(redis_url, key_prefix, room, everyone)
    assert failed == 6
    assert any("legal_edit" in f for m in seats for f in m.frames), "legal bases were used"
    for m in everyone:
        await m.ws.close()


async def test_a_move_left_in_doubt_sends_nothing_until_the_room_reloads(
    fault_proxy: Any, server_factory: Any, redis_url: str, key_prefix: str
) -> None:
    """The write leaves, then Redis stays away past the retry window: the actor learns
    the outcome is unknown and nobody gets a patch built from the move; once Redis is
    back the room reloads the stored game (here without the move) and play goes on
    from what every member really has."""
    server = await server_factory(redis_url=fault_proxy.url, redis_timeout=0.5, redis_retry_window=1.0)
    sha = server.store._commit.sha.encode()
    seats = [await member(server.url, "ann"), await member(server.url, "bob")]
    watcher = await member(server.url, "sam")
    everyone = [*seats, watcher]
    room = (await seats[0].request("create_room", game="giants", players=2))["data"]["room"]
    assert (await watcher.request("watch", room=room))["type"] == "ok"
    for i, m in enumerate(seats):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    version = await agree(redis_url, key_prefix, room, everyone)
    actor = next(m for m in seats if m.legal)
    frames = [len(m.frames) for m in everyone]
    fault_proxy.drop_command(sha)
    task = asyncio.ensure_future(actor.request("act", room=room, action=actor.legal[0]))
    await fault_proxy.wait_triggered()
    await fault_proxy.close_all(refuse=True)
    reply = await task
    assert reply["type"] == "error" and reply["detail"] == {"outcome": "unknown"}, reply
    assert [len(m.frames) for m in everyone] == frames
    fault_proxy.reopen()
    live = server.lobby.rooms[room]
    await eventually(lambda: not live.unsure)  # the recovery task reloads the room once Redis answers
    assert await agree(redis_url, key_prefix, room, everyone) == version
    assert [len(m.frames) for m in everyone] == frames  # nothing changed: no snapshot either
    for _ in range(6):
        actor = next(m for m in seats if m.legal and m.seat not in m.view["room"]["answered"])  # type: ignore[index]
        assert (await actor.request("act", room=room, action=actor.legal[-1]))["type"] == "ok"
        version = await agree(redis_url, key_prefix, room, everyone)
    for m in everyone:
        await m.ws.close()
