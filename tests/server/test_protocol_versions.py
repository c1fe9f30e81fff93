"""Protocol 1, 2, 3 and 4 clients in one room, on a real server, Redis and WebSockets.

Every game is played to its end by seats that cycle through the versions (a protocol-3
seat in every game, whose legal lists come as edits), watched by one spectator of each
version. Each client follows the game from its snapshot and the patches of its own
version alone: no patch may fail to apply (no resync), every action a seat picks from
its own copy of its legal list is legal, and at the end each copy equals what the
engine shows that seat.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgpack
import pytest

from client_cli.client import Client, RequestFailed
from engines import registry
from protocol import ErrorCode, key_table

pytestmark = pytest.mark.redis

CASES = [
    pytest.param(e.info.name, e.info.rules, 3 if e.info.name == "giants" else e.info.min_players,
                 id=f"{e.info.name}-{e.info.rules}")
    for e in registry.all_engines()
]


def plain(data: Any) -> Any:
    return msgpack.unpackb(msgpack.packb(data, use_bin_type=True), raw=False)


async def play(client: Client, room_id: str, seat: int, rng: random.Random) -> None:
    """Random legal actions until the end, answering each simultaneous step once."""
    room = client.room(room_id)

    def ready(r: Any) -> bool:
        return bool(r.synced and (r.finished or (r.legal and seat not in r.view["room"]["answered"])))

    while True:
        await room.wait_for(ready, timeout=60)
        if room.finished:
            return
        try:
            await client.act(room_id, rng.choice(room.legal), guard=True)
        except RequestFailed as exc:  # another seat's move came first: look again
            assert exc.code in (ErrorCode.STALE_VERSION, ErrorCode.NOT_YOUR_TURN), exc


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
async def test_both_versions_follow_a_whole_game(server_factory, game: str, rules: str, players: int) -> None:
    giants_server = await server_factory(rate=10_000.0, burst=10_000)  # random play is fast
    url = giants_server.url
    versions = [(4, 3, 1, 2)[i % 4] for i in range(players)]
    seats = [Client(url, name=f"p{i}", protocol=v, reconnect=False) for i, v in enumerate(versions)]
    watchers = [Client(url, name=f"w{v}", protocol=v, reconnect=False) for v in (1, 2, 3, 4)]
    everyone = [*seats, *watchers]
    for client in everyone:
        await client.connect()
    try:
        room_id = (await seats[0].create_room(game, rules=rules, players=players))["room"]
        for watcher in watchers:
            await watcher.watch(room_id)
        for i, client in enumerate(seats):
            await client.join(room_id, seat=i)
        rng = random.Random(f"{game}/{rules}")
        await asyncio.gather(*(play(c, room_id, i, random.Random(rng.random())) for i, c in enumerate(seats)))
        live = giants_server.lobby.rooms[room_id]
        assert live.status == "finished"
        for seat, client in [*enumerate(seats), *((None, w) for w in watchers)]:
            room = client.room(room_id)
            await room.wait_finished(timeout=10)
            expected = plain({"room": live.room_info(), "game": live.engine.view(live.state, seat), "outcome": live.outcome})
            assert room.view == expected, f"protocol {client.protocol} seat {seat} diverged"
            assert room.resyncs == 0, f"protocol {client.protocol} seat {seat} needed a resync"
            assert (room.keys is not None) == (client.protocol >= 2)
        # The key table is the game's static one, the same for every seat and spectator:
        # it cannot tell anyone about another seat's view.
        static = key_table(registry.get_engine(game, rules).view_keys())
        assert {c.room(room_id).keys for c in everyone if c.protocol >= 2} == {static}
        # The spectators saw the same moves, in the same order (the action events).
        acts = [[e for e in w.room(room_id).events if e["type"] == "action"] for w in watchers]
        tail = min(len(a) for a in acts)
        assert tail > 0 and all(a[-tail:] == acts[0][-tail:] for a in acts)
    finally:
        for client in everyone:
            await client.close()


async def test_hello_chooses_the_version_and_refuses_unknown_ones(giants_server, client_factory) -> None:
    client = await client_factory(giants_server.url, hello=False)
    reply = await client.error("hello", protocol=5)
    assert reply["code"] == "protocol_mismatch"
    assert reply["detail"] == {"server": 4, "supported": [1, 2, 3, 4]}
    assert (await client.ok("hello", protocol=4))["protocol"] == 4
    assert (await client.ok("hello", protocol=3))["protocol"] == 3
    assert (await client.ok("hello", protocol=2))["protocol"] == 2
    assert (await client.ok("hello", protocol=1))["protocol"] == 1  # no room yet: may change


async def test_a_connection_keeps_its_version_while_in_rooms(giants_server, client_factory) -> None:
    client = await client_factory(giants_server.url)  # protocol 1
    room = (await client.ok("create_room", game="giantslayer"))["room"]
    await client.ok("watch", room=room)
    assert (await client.error("hello", protocol=2))["code"] == "protocol_mismatch"
    await client.ok("leave", room=room)
    assert (await client.ok("hello", protocol=2))["protocol"] == 2
