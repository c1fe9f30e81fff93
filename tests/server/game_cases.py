"""Shared by the tests that play every registered game: one case per game, rule set
and player count (the fewest and the most), msgpack's view of a value, and clients
checked against their engine views."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from engines import registry

CASES = [
    pytest.param(engine.info.name, engine.info.rules, players, id=f"{engine.info.name}-{engine.info.rules}-{players}p")
    for engine in registry.all_engines()
    for players in sorted({engine.info.min_players, engine.info.max_players})
]


def plain(data: Any) -> Any:
    """`data` as a client decodes it (tuples become lists)."""
    return msgpack.unpackb(msgpack.packb(data, use_bin_type=True), raw=False)


def expected(live: Any, seat: int | None) -> Any:
    return plain({"room": live.room_info(), "game": live.engine.view(live.state, seat), "outcome": live.outcome})


async def named(client_factory: Any, url: str, name: str) -> Any:
    """A client whose hello name (unique in the test) finds its member in the room."""
    client = await client_factory(url, name)
    client.name = name
    return client


async def seated_room(server: Any, client_factory: Any, game: str, rules: str | None,
                      players: int) -> tuple[list[Any], Any, str, list[str], Any]:
    """A room of `game` with a named client in every seat and one watching, playing:
    (seats, spectator, room id, the seats' tokens, the live Room)."""
    url = server.url
    seats = [await named(client_factory, url, f"p{i}") for i in range(players)]
    spectator = await named(client_factory, url, "spectator")
    room = (await seats[0].ok("create_room", game=game, rules=rules, players=players))["room"]
    await spectator.ok("watch", room=room)
    tokens = [(await client.ok("join", room=room, seat=i))["token"] for i, client in enumerate(seats)]
    await spectator.wait_for(lambda: spectator.rooms[room].view["room"]["status"] != "waiting")
    return seats, spectator, room, tokens, server.lobby.rooms[room]


async def settle(live: Any, room: str, members: list[tuple[int | None, Any]]) -> None:
    """Wait until every client holds the version it was sent; check it is its engine view."""
    for seat, client in members:
        sent = next(m.version for m in live.members if m.peer.name == client.name)
        copy = await client.wait_version(room, sent)
        assert copy.view == expected(live, seat), f"seat {seat} diverged from its engine view"
