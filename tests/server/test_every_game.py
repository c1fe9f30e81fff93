"""Every registered game and rule set runs on the server with no server change.

Each test plays the opening of a game through real connections — every seat its own
client, plus a spectator — choosing random actions from the `legal` lists the server
sends. In simultaneous steps (GIANTS bids) all seats to act get legal lists at once
and act in a random order. After every change each client's copy (snapshot + patches)
must equal the engine's view for its seat: the server sends nothing else, so a hidden
bid can reach no other seat and no spectator before the engine's view shows it.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from typing import Any

import pytest

from engines import registry
from tests.server.game_cases import CASES, plain

pytestmark = pytest.mark.redis

MOVES = 40  # enough to cross the first simultaneous steps and several turns


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
async def test_game_plays_on_the_server_with_exact_views(giants_server, client_factory, game, rules, players) -> None:
    url = giants_server.url
    seats = [await client_factory(url, f"p{i}") for i in range(players)]
    spectator = await client_factory(url, "spectator")
    room = (await seats[0].ok("create_room", game=game, rules=rules, players=players))["room"]
    await spectator.ok("watch", room=room)
    for i, client in enumerate(seats):
        assert (await client.ok("join", room=room, seat=i))["seat"] == i
    live = giants_server.lobby.rooms[room]
    members: list[tuple[int | None, Any]] = [*enumerate(seats), (None, spectator)]
    rng = random.Random(zlib.crc32(repr((game, rules, players)).encode()))
    simultaneous_seen = False
    for _ in range(MOVES):
        await spectator.wait_for(lambda: spectator.rooms[room].view["room"]["status"] != "waiting")
        version = live.version
        for seat, client in members:
            # A member is sent only changes it can see: wait for the version it was sent.
            sent = next(m.version for m in live.members if m.seat == seat)
            copy = await client.wait_version(room, sent)
            expected = plain({"room": live.room_info(), "game": live.engine.view(live.state, seat), "outcome": live.outcome})
            assert copy.view == expected, f"seat {seat} diverged from its engine view at version {version}"
            assert copy.legal == live.legal_for(seat)
        if live.status == "finished":
            break
        acting = [(seat, c) for seat, c in members if seat is not None and c.rooms[room].legal]
        assert sorted(seat for seat, _ in acting) == live.to_act
        simultaneous_seen = simultaneous_seen or len(acting) > 1
        seat, client = rng.choice(acting)
        reply = await client.request("act", room=room, action=rng.choice(client.rooms[room].legal))
        assert reply["type"] == "ok", reply
    info = registry.get_engine(game, rules).info
    if info.simultaneous:
        assert simultaneous_seen, "the opening never had a simultaneous step"
    actions = [e for e in spectator.rooms[room].events if e["type"] == "action"]
    if not info.hidden_information:
        assert len(actions) == live.actions
    else:
        # Others see only the public text of an action: a sealed bid is "bid", and a
        # replaced bid reaches them not at all.
        assert len(actions) <= live.actions
        for seat, client in members:
            for event in client.rooms[room].events:
                if event["type"] == "action" and event["seat"] != seat:
                    assert not event["action"].startswith("bid ") , (seat, event)
    await asyncio.sleep(0)
