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

import pytest

from tests.fault_checks import eventually, plain, stored_room
from tests.server.raw_member import RawMember, member

pytestmark = pytest.mark.redis

FAST = {"redis_timeout": 0.5, "redis_retry_window": 5.0}


async def giants_room(url: str) -> tuple[list[RawMember], RawMember, str]:
    """Two seated members and a spectator in a new 2-player GIANTS room."""
    seats = [await member(url, "ann"), await member(url, "bob")]
    watcher = await member(url, "sam")
    room = (await seats[0].request("create_room", game="giants", players=2))["data"]["room"]
    assert (await watcher.request("watch", room=room))["type"] == "ok"
    for i, m in enumerate(seats):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    return seats, watcher, room


async def agree(redis_url: str, prefix: str, room: str, members: list[RawMember]) -> int:
    """Every member's copy equals the stored game: its view (the engine's view for its
    seat) at its own version, and a seat's legal list the engine's. The stored version."""
    stored = await stored_room(redis_url, prefix, room)
    public = stored.version - stored.hidden
    for m in members:
        await m.wait_version(public)
        assert m.version == public and not m.odd, (m.seat, m.version, public, m.odd)
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
    seats, watcher, room = await giants_room(server.url)
    everyone = [*seats, watcher]
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
    seats, watcher, room = await giants_room(server.url)
    everyone = [*seats, watcher]
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
