"""End to end: real server, real Redis, real WebSocket clients playing Giantslayer."""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest

from engines import registry
from server.app import GiantsServer

pytestmark = pytest.mark.redis


def plain(data: Any) -> Any:
    """What a value looks like after the wire (tuples become lists)."""
    return msgpack.unpackb(msgpack.packb(data, use_bin_type=True), raw=False)


def expected_view(server: GiantsServer, room_id: str, seat: int | None) -> Any:
    """The RoomView the server's room and engine say `seat` may see now."""
    room = server.lobby.rooms[room_id]
    return plain({"room": room.room_info(), "game": room.engine.view(room.state, seat), "outcome": room.outcome})


async def test_full_game_every_client_view_matches_engine_view(giants_server, client_factory) -> None:
    """Two players and a spectator: after every patch each client's copy (snapshot +
    patches) equals the engine's view for its seat, and `legal` is the seat's legal list."""
    url = giants_server.url
    alice = await client_factory(url, "alice")
    bob = await client_factory(url, "bob")
    carol = await client_factory(url, "carol")
    room = (await alice.ok("create_room", game="giantslayer", options={"rounds": 2}))["room"]
    await carol.ok("watch", room=room)
    assert (await alice.ok("join", room=room))["seat"] == 0
    assert (await bob.ok("join", room=room))["seat"] == 1
    await carol.wait_for(lambda: carol.rooms[room].view["room"]["status"] == "playing")  # autostart
    members = [(0, alice), (1, bob), (None, carol)]
    rng = random.Random(2024)
    live = giants_server.lobby.rooms[room]
    moves = 0
    while True:
        version = live.version
        for seat, client in members:
            copy = await client.wait_version(room, version)
            assert copy.version == version
            assert copy.gaps == 0
            assert copy.view == expected_view(giants_server, room, seat)
            assert copy.legal == live.legal_for(seat)
        if live.status == "finished":
            break
        actors = [c for s, c in members if s is not None and c.rooms[room].legal]
        assert len(actors) == 1, "Giantslayer has exactly one seat to act"
        actor = actors[0]
        action = rng.choice(actor.rooms[room].legal)
        data = await actor.ok("act", room=room, action=action, version=actor.rooms[room].version)
        assert data["version"] == version + 1
        moves += 1
    assert moves > 10
    # Each client saw every action as an event, in order.
    actions = [e["action"] for e in carol.rooms[room].events if e["type"] == "action"]
    assert len(actions) == moves
    assert carol.rooms[room].view["outcome"] is not None
    assert carol.rooms[room].view["room"]["status"] == "finished"

    # The replay rebuilds the same final position from (players, options, seed) + actions.
    replay = await bob.ok("replay", room=room)
    assert [a["action"] for a in replay["actions"]] == actions
    engine = registry.get_engine(replay["game"], replay["rules"])
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    for entry in replay["actions"]:
        state = engine.apply(state, entry["seat"], engine.parse_action(state, entry["seat"], entry["action"])).state
    assert plain(engine.outcome(state).to_data()) == replay["outcome"]
    for seat, client in members:
        assert client.rooms[room].view["game"] == plain(engine.view(state, seat))


async def test_reconnect_with_token_mid_game_resumes_seat(giants_server, client_factory) -> None:
    """A player drops mid-game; a new connection resumes the seat with its token, gets a
    snapshot equal to its engine view, and plays on. A wrong token is refused."""
    url = giants_server.url
    alice = await client_factory(url, "alice")
    bob = await client_factory(url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    token = (await alice.ok("join", room=room))["token"]
    await bob.ok("join", room=room)
    await bob.wait_for(lambda: bob.rooms[room].view["room"]["status"] == "playing")  # autostart
    live = giants_server.lobby.rooms[room]
    rng = random.Random(5)
    for _ in range(6):
        actor = alice if live.to_act == [0] else bob
        await actor.wait_version(room, live.version)
        await actor.ok("act", room=room, action=rng.choice(actor.rooms[room].legal))
    await alice.close()
    await bob.wait_for(lambda: bob.rooms[room].view["room"]["seats"][0]["connected"] is False)

    stranger = await client_factory(url, "mallory")
    refused = await stranger.error("resume", room=room, token="not-the-token")
    assert refused["code"] == "bad_token"
    assert (await stranger.error("act", room=room, action="pass"))["code"] == "not_in_room"

    again = await client_factory(url, "alice-again")
    assert (await again.ok("resume", room=room, token=token)) == {"room": room, "seat": 0}
    copy = await again.wait_version(room, live.version)
    assert copy.seat == 0
    assert copy.view == expected_view(giants_server, room, 0)
    await bob.wait_for(lambda: bob.rooms[room].view["room"]["seats"][0]["connected"] is True)
    actor = again if live.to_act == [0] else bob
    before = live.version
    await actor.wait_version(room, before)
    await actor.ok("act", room=room, action=actor.rooms[room].legal[0])
    await again.wait_version(room, before + 1)
    assert again.rooms[room].view == expected_view(giants_server, room, 0)


async def test_bots_fill_seats_and_finished_game_is_a_replay(giants_server, client_factory) -> None:
    """A room with a bundled bot in every seat plays itself out; a spectator sees it all
    and the replay is readable afterwards, also once the room has left memory."""
    url = giants_server.url
    watcher = await client_factory(url, "watcher")
    room = (await watcher.ok("create_room", game="giantslayer", options={"rounds": 1}, bots={"0": "random", "1": "greedy"}))["room"]
    await watcher.ok("watch", room=room)
    await watcher.wait_for(lambda: watcher.rooms[room].view["room"]["status"] == "finished", timeout=30)
    assert (await watcher.ok("replay", room=room))["outcome"] == watcher.rooms[room].view["outcome"]
    await watcher.ok("leave", room=room)
    assert room not in giants_server.lobby.rooms  # evicted: finished and unwatched
    replay = await watcher.ok("replay", room=room)
    assert len(replay["actions"]) == watcher.rooms[room].version - 1  # versions: start + actions
    listed = (await watcher.ok("list_rooms", include_finished=True))["rooms"]
    assert any(r["room"] == room and r["status"] == "finished" for r in listed)


async def test_human_against_a_bundled_bot(giants_server, client_factory) -> None:
    """A seat filled by a bundled bot answers each human move; unknown bots are refused."""
    alice = await client_factory(giants_server.url, "alice")
    refused = await alice.error("create_room", game="giantslayer", bots={"1": "no-such-bot"})
    assert refused["code"] == "bad_options"
    room = (await alice.ok("create_room", game="giantslayer", bots={"1": "random"}))["room"]
    await alice.ok("join", room=room)
    rng = random.Random(9)
    for _ in range(5):
        await alice.wait_for(lambda: bool(alice.rooms[room].legal))
        version = (await alice.ok("act", room=room, action=rng.choice(alice.rooms[room].legal)))["version"]
        await alice.wait_version(room, version + 1)  # the bot's reply
    bot_moves = [e for e in alice.rooms[room].events if e["type"] == "action" and e["seat"] == 1]
    assert len(bot_moves) >= 5
    assert alice.rooms[room].view == expected_view(giants_server, room, 0)
