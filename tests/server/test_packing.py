"""Idle rooms keep their engine state packed (server.packing, `Room.compact`).

A packed room's `state` property unpacks the engine's own snapshot on the first read. These tests check that the round trip is exact for every game
(positions along random games: same snapshot, views, legal lists), and that a room
packed while idle — by the server's own sweep or forced between changes — then acted
on, resynced, timed out, or handed over to another node behaves exactly like one never
packed: every member's patches land on its engine view, and the room's final state is
the one its stored log replays to. Real servers, real Redis, real WebSockets.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from typing import Any

import pytest

from engines import registry
from server.packing import (
    dictionaries,
    pack_state,
    pack_view,
    share_initial,
    template_part,
    template_room,
    unpack_state,
    unpack_view,
)
from server.store_base import pack
from tests.server.game_cases import CASES, named, plain, seated_room, settle

pytestmark = pytest.mark.redis

MOVES = 30


async def replayed(server: Any, live: Any) -> Any:
    """The snapshot of the state the room's stored log replays to from a new game."""
    engine, meta = live.engine, live.meta
    state = engine.new_game(meta["players"], meta["options"], meta["seed"])
    for entry in await server.store.read_log(live.id):
        if "action" in entry:
            state = engine.apply(state, entry["seat"], engine.parse_action(state, entry["seat"], entry["action"])).state
    return plain(engine.snapshot(state))


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
def test_a_packed_state_unpacks_to_the_same_position(game, rules, players) -> None:
    engine = registry.get_engine(game, rules)
    presets = dictionaries(engine, players).state
    rng = random.Random(zlib.crc32(repr((game, rules, players)).encode()))
    state = engine.new_game(players, engine.validate_options(players, {}), rng.randrange(1 << 30))
    for _ in range(60):
        back = unpack_state(engine, pack_state(engine, state, presets), presets)
        assert plain(engine.snapshot(back)) == plain(engine.snapshot(state))
        assert engine.to_act(back) == engine.to_act(state)
        assert engine.outcome(back) == engine.outcome(state)
        for seat in [None, *range(players)]:
            assert engine.view(back, seat) == engine.view(state, seat)
        for seat in engine.to_act(state):
            assert engine.legal_notation(back, seat) == engine.legal_notation(state, seat)
        if engine.outcome(state) is not None:
            break
        seat = rng.choice(sorted(engine.to_act(state)))
        # Play on from the unpacked copy: it must lead where the original does.
        action = rng.choice(engine.legal_actions(back, seat))
        state = engine.apply(back, seat, action).state


@pytest.mark.parametrize("players", [2, 3, 5])
def test_a_hidden_games_view_dictionary_is_its_template_games_views_and_packs_exactly(players) -> None:
    """With hidden information the view dictionary is the seed-0 new game's spectator view
    and then its first seat's, in a room view's shape (constants: nothing of any room
    or seat), and every seat's and a spectator's view of random positions packs and
    unpacks to exactly (msgpack byte for byte) what was packed."""
    engine = registry.get_engine("giants")
    template = engine.new_game(players, engine.validate_options(players, {}), 0)
    room = template_room(engine, players, template)
    presets = dictionaries(engine, players).view
    assert presets == pack({"room": room, "game": engine.view(template, None), "outcome": None}) + pack(
        {"room": room, "game": engine.view(template, 0), "outcome": None})
    rng = random.Random(players)
    state = engine.new_game(players, {}, 4_000 + players)
    for _ in range(80):
        for seat in [None, *range(players)]:
            view = {"room": {**room, "id": "r" + str(players)}, "game": engine.view(state, seat), "outcome": None}
            assert pack(unpack_view(pack_view(view, presets), presets)) == pack(view)
        if engine.outcome(state) is not None:
            break
        seat = rng.choice(sorted(engine.to_act(state)))
        state = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat))).state


def test_share_initial_takes_only_msgpack_equal_parts_and_changes_nothing() -> None:
    template = {"board": [1, 2, 3], "flags": {"a": True, "b": 1.0}, "you": None, "seats": {"0": {"n": 1}}}
    part = template_part(template, 3)
    view = {"board": [1, 2, 3], "flags": {"a": 1, "b": 1}, "you": 0, "seats": {"0": {"n": 1}}, "extra": []}
    copy = {**view}
    shared = share_initial(view, part)
    assert view == copy and all(view[k] is copy[k] for k in view)  # the engine's view is left alone
    assert shared["board"] is template["board"] and shared["seats"] is template["seats"]
    assert shared["flags"] is view["flags"]  # 1 == True in Python, not in msgpack: not shared
    assert pack(shared) == pack(view)
    assert share_initial(template, part) is template and share_initial(copy, None) is copy
    same = {"board": [1, 2, 3], "flags": {"a": True, "b": 1.0}, "you": None, "seats": {"0": {"n": 1}}}
    assert share_initial(same, part) is template  # equal throughout: the template's own object
    reordered = {"flags": {"b": 1.0, "a": True}, "board": [1, 2, 3], "you": None, "seats": {"0": {"n": 1}}}
    shared = share_initial(reordered, part)  # msgpack keeps a map's order: entries only
    assert shared is not template and shared["board"] is template["board"] and pack(shared) == pack(reordered)


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
async def test_a_new_room_shares_its_views_parts_with_the_games_template(
    server_factory, client_factory, game, rules, players
) -> None:
    """Until the first action a member's game view holds the template's own object for
    every part equal to it (memory per new room), and is sent exactly its engine view."""
    server = await server_factory(pack_after=0)  # no sweep: the views stay unpacked to be looked at
    seats, spectator, room, _, live = await seated_room(server, client_factory, game, rules, players)
    await settle(live, room, [*enumerate(seats), (None, spectator)])
    assert live.actions == 0
    presets = dictionaries(live.engine, players)
    for member in live.members:
        template = presets.game(member.seat if live.engine.info.hidden_information else None)
        assert template is not None
        obj, _, children = template
        game_view = member.view["game"]
        assert children is not None
        shared = [key for key, value in game_view.items() if key in children and value is children[key][0]]
        equal = [key for key, value in game_view.items() if key in children and pack(value) == children[key][1]]
        assert game_view is obj or (shared == equal and shared), (member.seat, equal, shared)


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
async def test_a_room_packed_between_changes_plays_resyncs_and_replays_exactly(
    giants_server, client_factory, game, rules, players
) -> None:
    seats, spectator, room, _, live = await seated_room(giants_server, client_factory, game, rules, players)
    members: list[tuple[int | None, Any]] = [*enumerate(seats), (None, spectator)]
    rng = random.Random(zlib.crc32(repr((game, rules, players, "state")).encode()))
    for move in range(MOVES):
        await settle(live, room, members)
        assert live.compact(force=True)
        assert live.state_is_packed()
        if live.status == "finished":
            break
        if move % 7 == 3:
            # A resync while packed: a fresh snapshot of the engine view (it unpacks).
            _, client = members[move % len(members)]
            await client.ok("resync", room=room)
            await client.wait_for(lambda c=client: c.pushes[-1]["type"] == "snapshot")
            assert not live.state_is_packed()
            await settle(live, room, members)
            assert live.compact(force=True)
        acting = [(seat, c) for seat, c in members if seat is not None and c.rooms[room].legal]
        _, client = rng.choice(acting)
        reply = await client.request("act", room=room, action=rng.choice(client.rooms[room].legal))
        assert reply["type"] == "ok", reply
        assert not live.state_is_packed()
    await settle(live, room, members)
    assert plain(live.engine.snapshot(live.state)) == await replayed(giants_server, live)


async def test_the_sweep_packs_an_idle_room_and_its_deadline_still_fires(server_factory, client_factory) -> None:
    """A timed room idle across sweeps keeps its state packed; its deadline then plays
    the default action from the unpacked state, as in a room never packed."""
    server = await server_factory(pack_after=0.5)
    alice = await named(client_factory, server.url, "alice")
    bob = await named(client_factory, server.url, "bob")
    room = (await alice.ok("create_room", game="tara", deadline=4.0))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    live = server.lobby.rooms[room]
    for client in (alice, bob):
        await client.wait_for(lambda c=client: c.rooms[room].view["room"]["status"] == "playing")
    version = live.version
    while not live.state_is_packed() and live.version == version:
        await asyncio.sleep(0.05)  # the sweep runs every 0.5 s here; the deadline is 4 s away
    assert live.state_is_packed(), "the deadline fired before the sweep packed the room"
    await alice.wait_for(lambda: any(e.get("type") == "timeout" for p in alice.pushes for e in p.get("events", ())),
                         timeout=20)
    assert live.version == version + 1
    await settle(live, room, [(0, alice), (1, bob)])
    assert plain(live.engine.snapshot(live.state)) == await replayed(server, live)


async def test_a_packed_room_handed_over_plays_on_at_the_new_owner(server_factory, client_factory) -> None:
    """Node A holds a room packed while idle and shuts down: it hands the room to node
    B, which restores it from Redis; the players resume there and play on, and the
    state is the one the stored log replays to."""
    a = await server_factory()
    b = await server_factory()
    alice = await named(client_factory, a.url, "alice")
    bob = await named(client_factory, a.url, "bob")
    room = (await alice.ok("create_room", game="causeway", rules="quick"))["room"]
    tokens = [(await alice.ok("join", room=room))["token"], (await bob.ok("join", room=room))["token"]]
    live = a.lobby.rooms[room]
    rng = random.Random(5)
    for _ in range(4):
        await settle(live, room, [(0, alice), (1, bob)])
        actor = alice if alice.rooms[room].legal else bob
        await actor.ok("act", room=room, action=rng.choice(actor.rooms[room].legal))
    await settle(live, room, [(0, alice), (1, bob)])
    assert live.compact(force=True) and live.state_is_packed()
    await a.stop()
    assert room in b.lobby.rooms
    moved = b.lobby.rooms[room]
    players = [await named(client_factory, b.url, "alice"), await named(client_factory, b.url, "bob")]
    for i, client in enumerate(players):
        assert (await client.ok("resume", room=room, token=tokens[i]))["seat"] == i
    for _ in range(4):
        await settle(moved, room, list(enumerate(players)))
        actor = next(c for c in players if c.rooms[room].legal)
        await actor.ok("act", room=room, action=rng.choice(actor.rooms[room].legal))
        assert moved.compact(force=True) and moved.state_is_packed()
    await settle(moved, room, list(enumerate(players)))
    assert plain(moved.engine.snapshot(moved.state)) == await replayed(b, moved)


async def playing_tara(server: Any, client_factory: Any) -> Any:
    """A started two-seat Tara room on `server` (its live Room)."""
    alice = await named(client_factory, server.url, "alice")
    bob = await named(client_factory, server.url, "bob")
    room = (await alice.ok("create_room", game="tara"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "playing")
    return server.lobby.rooms[room]


async def test_pack_after_is_how_long_a_room_idles_before_it_is_packed_and_zero_never_packs(
    server_factory, client_factory
) -> None:
    """`--pack-after`: the sweep packs a room left idle for that long; with 0 it packs
    nothing, ever (an operator who would rather spend memory than CPU)."""
    packing = await playing_tara(await server_factory(pack_after=0.2), client_factory)
    never = await playing_tara(await server_factory(pack_after=0), client_factory)
    for _ in range(200):
        if packing.state_is_packed():
            break
        await asyncio.sleep(0.05)
    assert packing.state_is_packed()
    await asyncio.sleep(1.0)  # five more periods of the packing server
    assert not never.state_is_packed()
    assert all(type(m.view) is dict for m in never.members)


async def test_a_sweep_that_yields_to_the_loop_still_visits_every_room(server_factory, client_factory) -> None:
    """The sweep lets moves in after each slice of work; with no time at all per slice
    it yields after every few rooms and still packs each idle room (the first pass marks
    them idle, the second packs them)."""
    server = await server_factory(pack_after=0)  # no sweep of its own: this test runs it
    rooms = [await playing_tara(server, client_factory) for _ in range(20)]
    assert not any(live.state_is_packed() for live in rooms)
    await server.lobby.compact_idle_views(0.0)
    assert await server.lobby.compact_idle_views(0.0) == len(rooms)
    assert all(live.state_is_packed() for live in rooms)


async def test_a_new_room_is_packed_within_a_second_and_a_playing_one_after_pack_after(
    server_factory, client_factory
) -> None:
    """Rooms nobody has acted in yet are packed by the new-room sweep (every 0.5 s),
    whatever `--pack-after` says; from the first action on a room is packed only after
    idling `--pack-after` seconds. The packed new room then plays like any other."""
    server = await server_factory()  # the default --pack-after (10 s)
    alice = await named(client_factory, server.url, "alice")
    bob = await named(client_factory, server.url, "bob")
    room = (await alice.ok("create_room", game="tara"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    live = server.lobby.rooms[room]
    assert live in server.lobby.fresh
    for _ in range(100):
        if live.state_is_packed():
            break
        await asyncio.sleep(0.05)
    assert live.state_is_packed() and all(type(m.view) is bytes for m in live.members)
    members = [(0, alice), (1, bob)]
    await settle(live, room, members)
    mover = alice if alice.rooms[room].legal else bob
    assert (await mover.request("act", room=room, action=mover.rooms[room].legal[0]))["type"] == "ok"
    assert not live.state_is_packed()
    await asyncio.sleep(1.2)  # two passes of the new-room sweep, far from --pack-after
    assert live not in server.lobby.fresh and not live.state_is_packed()
    await settle(live, room, members)
    assert plain(live.engine.snapshot(live.state)) == await replayed(server, live)


async def test_a_packed_room_that_changes_is_packed_again_by_the_next_sweeps(server_factory, client_factory) -> None:
    """The sweeps pass a packed room again without repacking it (the new-room sweep does
    so every 0.5 s), but whatever unpacked it since — a spectator's snapshot unpacks
    every view, a read of the state unpacks the state — is packed again."""
    server = await server_factory(pack_after=0)  # no sweep of its own: this test runs it
    live = await playing_tara(server, client_factory)
    for _ in range(2):  # the first pass marks it idle, the second packs it
        await server.lobby.compact_idle_views(0.0)
    assert live.state_is_packed() and all(type(m.view) is bytes for m in live.members)
    assert await server.lobby.compact_idle_views(0.0) == 1  # still idle, still packed

    carol = await named(client_factory, server.url, "carol")
    await carol.ok("watch", room=live.id)
    assert any(type(m.view) is dict for m in live.members)
    for _ in range(2):
        await server.lobby.compact_idle_views(0.0)
    assert len(live.members) == 3 and all(type(m.view) is bytes for m in live.members)

    assert live.state is not None and not live.state_is_packed()  # a read unpacks the state only
    assert await server.lobby.compact_idle_views(0.0) == 1
    assert live.state_is_packed() and all(type(m.view) is bytes for m in live.members)
