"""Issue 11 item 1: a write whose Redis reply is lost, late or never sent is settled
before anyone is answered — applied: `ok` and patches; not applied: an error and the
room unchanged. Redis sits behind a TCP proxy that drops or stalls traffic."""

from __future__ import annotations

import asyncio

import pytest

from tests.fault_checks import one_reply_per_id, views_agree

pytestmark = pytest.mark.redis

FAST = {"redis_timeout": 0.5, "redis_retry_window": 5.0}


async def playing_room(server, client_factory) -> tuple[str, dict[int, object]]:
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await bob.wait_for(lambda: room in bob.rooms and bob.rooms[room].view["room"]["status"] == "playing")
    await alice.wait_version(room, bob.rooms[room].version)
    return room, {0: alice, 1: bob}


def commit_sha(server) -> bytes:
    return server.store._commit.sha.encode()


async def test_lost_reply_of_an_applied_move_still_answers_ok(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """The move reaches Redis but its reply never comes back: the actor gets `ok`
    (not internal_error), everyone gets the patch, and the next seat can move."""
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    room, seats = await playing_room(server, client_factory)
    live = server.lobby.rooms[room]
    actor = seats[live.to_act[0]]
    before = live.version
    fault_proxy.drop_reply(commit_sha(server))
    reply = await actor.request("act", room=room, action=actor.rooms[room].legal[0], version=before)
    assert fault_proxy.triggered == [("drop_reply", commit_sha(server))]
    assert reply["type"] == "ok", reply
    assert reply["data"]["version"] == before + 1
    stored = await views_agree(redis_url, key_prefix, room, seats)
    assert len(stored.log) == 1  # type: ignore[attr-defined]
    nxt = seats[live.to_act[0]]
    assert nxt.rooms[room].legal, "the seat to act sees its legal moves"
    await nxt.ok("act", room=room, action=nxt.rooms[room].legal[0], version=nxt.rooms[room].version)
    stored = await views_agree(redis_url, key_prefix, room, seats)
    assert len(stored.log) == 2  # type: ignore[attr-defined]
    for client in seats.values():
        one_reply_per_id(client)


async def test_move_that_never_reached_redis_is_refused_and_can_be_retried(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """The command is lost on the way: the actor gets storage_unavailable with
    outcome not_applied, nothing is stored or broadcast, and the same move retried
    is applied once."""
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    room, seats = await playing_room(server, client_factory)
    live = server.lobby.rooms[room]
    actor = seats[live.to_act[0]]
    version = live.version
    action = actor.rooms[room].legal[0]
    fault_proxy.drop_command(commit_sha(server))
    refused = await actor.request("act", room=room, action=action, version=version)
    assert refused["type"] == "error" and refused["code"] == "storage_unavailable", refused
    assert refused["detail"] == {"outcome": "not_applied"}
    stored = await views_agree(redis_url, key_prefix, room, seats)
    assert stored.version == version and stored.log == []  # type: ignore[attr-defined]
    assert (await actor.ok("act", room=room, action=action, version=version))["version"] == version + 1
    stored = await views_agree(redis_url, key_prefix, room, seats)
    assert [e["action"] for e in stored.log] == [action]  # type: ignore[attr-defined]
    for client in seats.values():
        one_reply_per_id(client)


async def test_late_command_after_the_timeout_is_settled_one_way_only(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """Redis stalls past the socket timeout, then delivers the held command late. The
    settling read and the late command race; whichever wins, the answer the actor got
    and the stored room agree, and the move is stored at most once."""
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    room, seats = await playing_room(server, client_factory)
    live = server.lobby.rooms[room]
    actor = seats[live.to_act[0]]
    version = live.version
    action = actor.rooms[room].legal[0]
    fault_proxy.stall()
    pending = asyncio.ensure_future(actor.request("act", room=room, action=action, version=version, timeout=20))
    await asyncio.sleep(1.5)  # past the 0.5 s socket timeout: the write is in doubt now
    assert not pending.done()  # nobody is answered while the outcome is unknown
    fault_proxy.release()
    reply = await pending
    stored = await views_agree(redis_url, key_prefix, room, seats)
    log = stored.log  # type: ignore[attr-defined]
    if reply["type"] == "ok":
        assert [e["action"] for e in log] == [action] and reply["data"]["version"] == version + 1
    else:
        assert reply["code"] == "storage_unavailable" and reply["detail"] == {"outcome": "not_applied"}
        assert log == [] and stored.version == version
    for client in seats.values():
        one_reply_per_id(client)


async def test_redis_away_longer_than_the_window_says_unknown_then_heals(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """The reply is lost and Redis then stays unreachable past the retry window: the
    actor learns the outcome is unknown; once Redis is back the room reloads by itself
    and every member gets the stored position (here: the move was applied)."""
    server = await server_factory(redis_url=fault_proxy.url, redis_timeout=0.5, redis_retry_window=1.0)
    room, seats = await playing_room(server, client_factory)
    live = server.lobby.rooms[room]
    actor = seats[live.to_act[0]]
    version = live.version
    fault_proxy.drop_reply(commit_sha(server))
    task = asyncio.ensure_future(
        actor.request("act", room=room, action=actor.rooms[room].legal[0], version=version, timeout=20)
    )
    await fault_proxy.wait_triggered()
    await fault_proxy.close_all(refuse=True)
    reply = await task
    assert reply["type"] == "error" and reply["code"] == "storage_unavailable", reply
    assert reply["detail"] == {"outcome": "unknown"}
    stale_move = actor.rooms[room].legal[1] if len(actor.rooms[room].legal) > 1 else actor.rooms[room].legal[0]
    fault_proxy.reopen()
    # At once, from the position before the move in doubt (no version guard): the room
    # reloads first and must not store a change computed from the stale position.
    again = await actor.request("act", room=room, action=stale_move, timeout=20)
    assert again["type"] == "error", again
    assert again["code"] in ("storage_unavailable", "not_your_turn"), again
    stored = await views_agree(redis_url, key_prefix, room, seats)  # the members caught up
    assert stored.version == version + 1 and len(stored.log) == 1  # type: ignore[attr-defined]
    retry = await actor.request("act", room=room, action="anything", version=version)
    assert retry["code"] == "stale_version"  # a guarded retry cannot apply twice
    for client in seats.values():
        one_reply_per_id(client)
