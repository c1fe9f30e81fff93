"""Idle rooms keep each member's last view packed (server.views: `compact_views`;
the engine state's packing is tested in test_packing).

What a member was last sent is what the room diffs the next change against, so a
packed view must give back exactly that document: these tests play every game and
rule set through real connections, pack every member's view after every change, and
check that the unpacked view equals the copy the client built from what it actually
received (snapshot + patches), that the next patch still takes every client (seats
and a spectator, hidden-information games included, replaced sealed bids included)
to exactly its engine view, and that resyncs and a reconnect with a token while the
views are packed give the same exact views.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from typing import Any

import pytest

from client_cli.client import Client
from server.packing import dictionaries, unpack_view
from tests.server.game_cases import CASES, expected, named, seated_room, settle

pytestmark = pytest.mark.redis

MOVES = 30


def check_packed(live: Any, room: str, members: list[tuple[int | None, Any]]) -> None:
    """Pack every member's view; each must unpack to what its client was sent."""
    assert live.compact_views(force=True)
    for seat, client in members:
        member = next(m for m in live.members if m.peer.name == client.name)
        assert isinstance(member.view, bytes)
        assert unpack_view(member.view, dictionaries(live.engine, live.meta["players"]).view) == client.rooms[room].view, f"seat {seat}: packed view is not what it was sent"


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
async def test_packed_views_equal_what_was_sent_and_patches_stay_exact(
    giants_server, client_factory, game, rules, players
) -> None:
    seats, spectator, room, tokens, live = await seated_room(giants_server, client_factory, game, rules, players)
    url = giants_server.url
    members: list[tuple[int | None, Any]] = [*enumerate(seats), (None, spectator)]
    rng = random.Random(zlib.crc32(repr((game, rules, players, "packed")).encode()))
    for move in range(MOVES):
        await settle(live, room, members)
        check_packed(live, room, members)
        if live.status == "finished":
            break
        if move == MOVES // 3:
            # A resync while packed: a fresh snapshot equal to the engine view.
            _, client = members[move % len(members)]
            before = client.rooms[room].version
            await client.ok("resync", room=room)
            await client.wait_for(
                lambda c=client, b=before: c.rooms[room].version >= b and c.pushes[-1]["type"] == "snapshot"
            )
            await settle(live, room, members)
            check_packed(live, room, members)
        if move == MOVES // 2:
            # Seat 0 drops while packed (the others see it disconnected) and comes back
            # on a new connection with its token.
            await seats[0].close()
            await spectator.wait_for(lambda: spectator.rooms[room].view["room"]["seats"][0]["connected"] is False)
            await settle(live, room, members[1:])
            check_packed(live, room, members[1:])
            again = await named(client_factory, url, "p0-again")
            assert (await again.ok("resume", room=room, token=tokens[0]))["seat"] == 0
            seats[0] = again
            members[0] = (0, again)
            await settle(live, room, members)
            check_packed(live, room, members)
        acting = [(seat, c) for seat, c in members if seat is not None and c.rooms[room].legal]
        assert sorted(seat for seat, _ in acting) == live.to_act
        _, client = rng.choice(acting)
        reply = await client.request("act", room=room, action=rng.choice(client.rooms[room].legal))
        assert reply["type"] == "ok", reply
    await settle(live, room, members)


async def test_the_sweep_packs_an_idle_room_and_its_next_change_is_exact(server_factory, client_factory) -> None:
    """A room sent nothing for a while has its views packed by the server's own sweep;
    the next move unpacks them and every member's patch lands on its engine view."""
    giants_server = await server_factory(pack_after=0.5)
    url = giants_server.url
    alice = await named(client_factory, url, "alice")
    bob = await named(client_factory, url, "bob")
    watcher = await named(client_factory, url, "watcher")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await watcher.ok("watch", room=room)
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    live = giants_server.lobby.rooms[room]
    # Even before the sweep, the last joiner's snapshot and the others' patch are one
    # object (Room.share_equal_view): equal views, kept once.
    assert len({id(m.view) for m in live.members}) == 1
    members: list[tuple[int | None, Any]] = [(0, alice), (1, bob), (None, watcher)]
    for client in (alice, bob, watcher):
        await client.wait_for(lambda c=client: c.rooms[room].view["room"]["status"] == "playing")
    # Nothing arrives while the room is idle: look at it between sweeps (0.5 s apart).
    for _ in range(200):
        if all(isinstance(m.view, bytes) for m in live.members):
            break
        await asyncio.sleep(0.05)
    assert all(isinstance(m.view, bytes) for m in live.members), "the sweep never packed the idle room"
    assert live.state_is_packed(), "the sweep packed the views but not the engine state"
    # Perfect information: seats and spectator were sent the same view, kept once.
    assert len({id(m.view) for m in live.members}) == 1
    for _, client in members:
        member = next(m for m in live.members if m.peer.name == client.name)
        assert unpack_view(member.view, dictionaries(live.engine, live.meta["players"]).view) == client.rooms[room].view
    actor = alice if live.to_act == [0] else bob
    await actor.ok("act", room=room, action=actor.rooms[room].legal[0])
    assert not live.state_is_packed()
    await settle(live, room, members)


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
async def test_packed_legal_bases_give_exact_legal_edits(server_factory, game, rules, players) -> None:
    """Protocol 3 seats get long legal lists (GIANTS') as edits from the last list they
    were sent; that base is deflated with the views. Packed after every change, every
    seat's list (rebuilt by the client library from edits) still equals the engine's.
    No sweeps (`pack_after=0`): the test packs, and counts what it packed."""
    server = await server_factory(rate=10_000.0, burst=10_000, pack_after=0)
    seats = [Client(server.url, name=f"p{i}", protocol=3, reconnect=False) for i in range(players)]
    for client in seats:
        await client.connect()
    try:
        room_id = (await seats[0].create_room(game, rules=rules, players=players))["room"]
        for i, client in enumerate(seats):
            await client.join(room_id, seat=i)
        live = server.lobby.rooms[room_id]
        rng = random.Random(zlib.crc32(repr((game, rules, players, "bases")).encode()))
        packed_bases = 0
        for _ in range(MOVES):
            for i, client in enumerate(seats):
                sent = next(m.version for m in live.members if m.seat == i)
                room = client.room(room_id)
                await room.wait_for(lambda r, v=sent: r.version is not None and r.version >= v, timeout=10)
                assert room.legal == live.legal_for(i), f"seat {i}'s legal list diverged"
                assert room.view == expected(live, i)
            if live.status == "finished":
                break
            bases = sum(1 for m in live.members if m.legal_base is not None)
            assert live.compact_views(force=True)
            assert sum(1 for m in live.members if m.packed_base is not None) == bases
            assert all(m.legal_base is None for m in live.members)
            packed_bases += bases
            acting = [i for i, c in enumerate(seats) if c.room(room_id).legal]
            i = rng.choice(acting)
            await seats[i].act(room_id, rng.choice(seats[i].room(room_id).legal))
        if game == "giants":  # lists over the edit threshold (server.legal_lists.EDIT_FROM)
            assert packed_bases > 0
    finally:
        for client in seats:
            await client.close()
