"""Replay positions (server/replays.py): the table's view at every move of a finished game."""

from __future__ import annotations

import pytest

from engines import registry
from protocol import apply_patch

pytestmark = pytest.mark.redis


async def finished_room(server, client, game: str, players: int = 2, **options) -> str:
    bots = {str(s): "random" for s in range(players)}
    room = (await client.ok("create_room", game=game, players=players, options=options, bots=bots))["room"]
    await client.ok("watch", room=room)
    await client.wait_for(lambda: client.rooms[room].view["room"]["status"] == "finished", timeout=120)
    return room


@pytest.mark.parametrize(("game", "players", "options"), [("giantslayer", 2, {"rounds": 1}), ("giants", 3, {})])
async def test_positions_are_the_spectator_views_move_by_move(giants_server, client_factory, game, players, options) -> None:
    client = await client_factory(giants_server.url)
    room = await finished_room(giants_server, client, game, players, **options)
    data = await client.ok("replay", room=room, positions=True)
    pos = data["positions"]
    assert pos["complete"] is True
    assert len(pos["steps"]) == len(data["actions"]) > 0
    # Recompute each spectator view with the engine and compare with what the ops build.
    engine = registry.get_engine(data["game"], data["rules"])
    state = engine.new_game(data["players"], data["options"], data["seed"])
    view = pos["view"]
    assert view == engine.view(state, None)
    assert pos["to_act"] == sorted(engine.to_act(state))  # whose turn it was (not in the view)
    for entry, step in zip(data["actions"], pos["steps"], strict=True):
        action = engine.parse_action(state, entry["seat"], entry["action"])
        assert step["seat"] == entry["seat"]
        assert step["action"] == engine.public_action(state, entry["seat"], action)
        state = engine.apply(state, entry["seat"], action).state
        view = apply_patch(view, step["ops"])
        assert view == engine.view(state, None)
        assert step["to_act"] == sorted(engine.to_act(state))
    assert engine.outcome(state) is not None
    # The final position is the one spectators saw at the end.
    assert view == client.rooms[room].view["game"]


async def test_giants_positions_never_show_a_sealed_bid(giants_server, client_factory) -> None:
    """GI-8: a replay shows the table's view; bids appear as "bid" (or not at all)."""
    client = await client_factory(giants_server.url)
    room = await finished_room(giants_server, client, "giants", 3)
    data = await client.ok("replay", room=room, positions=True)
    engine = registry.get_engine(data["game"], data["rules"])
    state = engine.new_game(data["players"], data["options"], data["seed"])
    bids = 0
    for entry, step in zip(data["actions"], data["positions"]["steps"], strict=True):
        if entry["action"].startswith("bid"):
            bids += 1
            assert step["action"] in ("bid", None)
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
    assert bids > 0


async def test_positions_of_an_unfinished_room_are_refused(giants_server, client_factory) -> None:
    client = await client_factory(giants_server.url)
    room = (await client.ok("create_room", game="tara"))["room"]
    reply = await client.error("replay", room=room, positions=True)
    assert reply["code"] == "not_finished"
    reply = await client.error("replay", room=room, positions="yes")
    assert reply["code"] == "bad_message"
