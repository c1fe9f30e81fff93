"""Issue 11 item 3: after a failed write, server-run bots and move deadlines carry on by
themselves once Redis answers again (Redis behind a proxy that loses the write)."""

from __future__ import annotations

import pytest

from tests.fault_checks import eventually, one_reply_per_id, views_agree

pytestmark = pytest.mark.redis

FAST = {"redis_timeout": 0.5, "redis_retry_window": 1.0}
BOT_SEAT_LOG_ENTRY = b"\xa4seat\x01"  # msgpack of "seat": 1 in a log entry: the bot's moves


async def test_bot_seat_moves_again_after_its_write_was_lost(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """The bot's first move never reaches Redis (settled as not applied): the bot is
    not stuck — it moves again once Redis answers, and the game goes on."""
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="giantslayer", bots={"1": "random"}))["room"]
    fault_proxy.drop_command(BOT_SEAT_LOG_ENTRY)
    await alice.ok("join", room=room, seat=0)
    moves = 0
    while moves < 6:  # alice moves whenever it is her turn; the bot must keep answering
        await alice.wait_for(lambda: bool(alice.rooms[room].legal), timeout=20)
        copy = alice.rooms[room]
        await alice.ok("act", room=room, action=copy.legal[0], version=copy.version)
        moves += 1
    assert ("drop_command", BOT_SEAT_LOG_ENTRY) in fault_proxy.triggered
    await alice.wait_for(lambda: bool(alice.rooms[room].legal), timeout=20)
    stored = await views_agree(redis_url, key_prefix, room, {0: alice})
    seats = [e["seat"] for e in stored.log]  # type: ignore[attr-defined]
    assert seats.count(1) >= 6 and seats.count(0) == 6
    one_reply_per_id(alice)


async def test_deadline_whose_default_action_was_lost_fires_again(
    fault_proxy, server_factory, client_factory, redis_url, key_prefix
) -> None:
    """Nobody moves; the timeout's default action is lost on the way to Redis. The
    deadline is re-armed once Redis answers and the default action is applied."""
    server = await server_factory(redis_url=fault_proxy.url, **FAST)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer", deadline=0.5))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: room in alice.rooms and alice.rooms[room].view["room"]["status"] == "playing")
    fault_proxy.drop_command(server.store._commit.sha.encode())
    await fault_proxy.wait_triggered()
    for client in (alice, bob):
        await client.wait_for(lambda c=client: any(e["type"] == "timeout" for e in c.rooms[room].events), timeout=20)
    stored = await views_agree(redis_url, key_prefix, room, {0: alice, 1: bob})
    assert len(stored.log) >= 1  # type: ignore[attr-defined]
    live = server.lobby.rooms[room]
    await eventually(lambda: live.deadline is not None)  # the next step has its deadline armed
    for client in (alice, bob):
        one_reply_per_id(client)
