"""Games that end early: resign, abort, draw offers (real server, Redis, WebSockets)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.redis


async def two_seats(url: str, client_factory: Any, game: str = "giantslayer", **create: Any) -> tuple[str, Any, Any, Any]:
    """A started two-player room with alice (0), bob (1) and a spectator carol."""
    alice = await client_factory(url, "alice")
    bob = await client_factory(url, "bob")
    carol = await client_factory(url, "carol")
    room = (await alice.ok("create_room", game=game, **create))["room"]
    await carol.ok("watch", room=room)
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    await carol.wait_for(lambda: carol.rooms[room].view["room"]["status"] == "playing")
    return room, alice, bob, carol


async def play_one(room: str, *clients: Any) -> None:
    actor = next(c for c in clients if c.rooms[room].legal)
    await actor.ok("act", room=room, action=actor.rooms[room].legal[0])


async def test_resign_ends_the_game_for_everyone_and_is_in_the_replay(giants_server, client_factory) -> None:
    url = giants_server.url
    room, alice, bob, carol = await two_seats(url, client_factory, options={"rounds": 1})
    for _ in range(3):
        await play_one(room, alice, bob)
    err = await carol.error("resign", room=room)
    assert err["code"] == "not_seated"
    data = await bob.ok("resign", room=room)
    version = data["version"]
    for client in (alice, bob, carol):
        copy = await client.wait_version(room, version)
        assert copy.view["room"]["status"] == "finished"
        outcome = copy.view["outcome"]
        assert outcome["reason"] == "resigned"
        assert outcome["winners"] == [0] and outcome["scores"] == [1.0, 0.0] and outcome["seat"] == 1
        kinds = [e["type"] for e in copy.events[-2:]]
        assert kinds == ["resigned", "finished"]
        assert copy.legal == []
    assert (await alice.error("act", room=room, action="a1-a2"))["code"] == "game_over"
    assert (await alice.error("resign", room=room))["code"] == "game_over"
    replay = await carol.ok("replay", room=room)
    assert replay["outcome"]["reason"] == "resigned"
    assert len(replay["actions"]) == 3  # the three moves; the ending is in the outcome
    # The stored log records the ending after the moves.
    store = giants_server.store
    log = await store.read_log(room)
    assert log[-1]["end"] == "resigned" and log[-1]["seat"] == 1 and "action" not in log[-1]
    listed = await carol.ok("list_rooms", include_finished=True)
    mine = [r for r in listed["rooms"] if r["room"] == room]
    assert mine and mine[0]["status"] == "finished" and mine[0]["outcome"]["reason"] == "resigned"
    # Also once the room left memory: the summary is read from Redis.
    from server.lobby_listing import stored_summary

    fields = (await giants_server.store.room_summaries_raw([room]))[0][1]
    summary = stored_summary(room, fields)
    assert summary is not None and summary["outcome"]["winners"] == [0]


async def test_abort_only_during_the_first_moves(giants_server, client_factory) -> None:
    url = giants_server.url
    room, alice, bob, carol = await two_seats(url, client_factory)
    await play_one(room, alice, bob)
    data = await alice.ok("abort", room=room)  # one move played, two seats: still allowed
    copy = await carol.wait_version(room, data["version"])
    assert copy.view["outcome"]["reason"] == "aborted"
    assert copy.view["outcome"]["winners"] == []
    assert [e["type"] for e in copy.events[-2:]] == ["aborted", "finished"]

    room2, alice2, bob2, _ = await two_seats(url, client_factory)
    await play_one(room2, alice2, bob2)
    await play_one(room2, alice2, bob2)
    err = await alice2.error("abort", room=room2)
    assert err["code"] == "abort_too_late"
    assert "resign" in err["message"]


async def test_abort_a_waiting_room(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    room = (await alice.ok("create_room", game="tara"))["room"]
    await alice.ok("join", room=room)
    assert (await alice.error("resign", room=room))["code"] == "not_started"
    data = await alice.ok("abort", room=room)
    copy = await alice.wait_version(room, data["version"])
    assert copy.view["room"]["status"] == "finished"
    assert copy.view["outcome"]["reason"] == "aborted"


async def test_draw_offer_decline_lapse_and_accept(giants_server, client_factory) -> None:
    url = giants_server.url
    room, alice, bob, carol = await two_seats(url, client_factory)
    assert (await alice.error("decline_draw", room=room))["code"] == "no_draw_offer"
    data = await alice.ok("offer_draw", room=room)
    copy = await carol.wait_version(room, data["version"])
    assert copy.view["room"]["draw_offer"] == 0
    assert copy.events[-1] == {"type": "draw_offered", "seat": 0}
    assert (await alice.error("offer_draw", room=room))["code"] == "draw_not_allowed"
    data = await bob.ok("decline_draw", room=room)
    copy = await carol.wait_version(room, data["version"])
    assert copy.view["room"]["draw_offer"] is None
    assert copy.events[-1] == {"type": "draw_declined", "seat": 1}
    # An offer lapses when a move is played.
    await alice.ok("offer_draw", room=room)
    await play_one(room, alice, bob)
    live = giants_server.lobby.rooms[room]
    copy = await carol.wait_version(room, live.version)
    assert copy.view["room"]["draw_offer"] is None
    # Offer and accept: a draw by agreement.
    await bob.ok("offer_draw", room=room)
    data = await alice.ok("offer_draw", room=room)
    for client in (alice, bob, carol):
        copy = await client.wait_version(room, data["version"])
        assert copy.view["outcome"]["reason"] == "draw_agreed"
        assert copy.view["outcome"]["winners"] == [0, 1]
        assert copy.view["outcome"]["scores"] == [0.5, 0.5]
    assert (await carol.ok("replay", room=room))["outcome"]["reason"] == "draw_agreed"


async def test_draws_need_two_players_and_resign_in_a_larger_game(giants_server, client_factory) -> None:
    url = giants_server.url
    alice = await client_factory(url, "alice")
    room = (await alice.ok("create_room", game="giants", players=3, bots={"1": "random", "2": "random"}))["room"]
    await alice.ok("join", room=room, seat=0)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "playing")
    assert (await alice.error("offer_draw", room=room))["code"] == "draw_not_allowed"
    data = await alice.ok("resign", room=room)
    copy = await alice.wait_version(room, data["version"])
    assert copy.view["outcome"]["winners"] == [1, 2]
    assert copy.view["outcome"]["scores"] == [0.0, 1.0, 1.0]


async def test_an_ended_room_restores_from_its_log(giants_server, client_factory) -> None:
    """The ending's log entry is skipped when a room is rebuilt from Redis."""
    from server.room import Room

    url = giants_server.url
    room, alice, bob, _ = await two_seats(url, client_factory)
    await play_one(room, alice, bob)
    await alice.ok("resign", room=room)
    live = giants_server.lobby.rooms.get(room)
    record = await giants_server.store.load_room(room)
    assert record is not None
    engine = live.engine if live is not None else None
    from engines import registry

    engine = engine or registry.get_engine("giantslayer")
    restored = Room.restore(record, engine, giants_server.store, giants_server.metrics, 50)
    assert restored.status == "finished"
    assert restored.outcome is not None and restored.outcome["reason"] == "resigned"


async def test_default_deadline_applies_unless_the_room_sets_one(server_factory, client_factory) -> None:
    """`--default-deadline`: rooms created without a deadline get it; a room's own
    deadline wins, and 0 asks for none."""
    server = await server_factory(default_deadline=30.0)
    alice = await client_factory(server.url, "alice")
    plain_room = (await alice.ok("create_room", game="tara"))["room"]
    own = (await alice.ok("create_room", game="tara", deadline=5.0))["room"]
    none = (await alice.ok("create_room", game="tara", deadline=0.0))["room"]
    assert server.lobby.rooms[plain_room].meta["deadline"] == 30.0
    assert server.lobby.rooms[own].meta["deadline"] == 5.0
    assert server.lobby.rooms[none].meta["deadline"] is None
    await alice.ok("join", room=plain_room, seat=0)
    bob = await client_factory(server.url, "bob")
    await bob.ok("join", room=plain_room, seat=1)
    copy = await alice.wait_for(lambda: alice.rooms[plain_room].view["room"]["status"] == "playing")
    del copy
    assert alice.rooms[plain_room].view["room"]["deadline"] is not None


async def test_endings_are_counted_in_metrics_by_reason(giants_server, client_factory) -> None:
    room, alice, _bob, _ = await two_seats(giants_server.url, client_factory, game="tara")
    await alice.ok("abort", room=room)
    assert giants_server.metrics.rooms_finished["tara", "aborted"] == 1


async def test_resign_and_draws_reach_a_room_owned_by_another_node(server_factory, client_factory) -> None:
    """Requests on a node that does not own the room go through the relay."""
    owner = await server_factory()
    other = await server_factory()
    alice = await client_factory(owner.url, "alice")
    bob = await client_factory(other.url, "bob")
    room = (await alice.ok("create_room", game="tara"))["room"]
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    await bob.wait_for(lambda: bob.rooms[room].view["room"]["status"] == "playing")
    assert room not in other.lobby.rooms
    data = await bob.ok("offer_draw", room=room)
    await alice.wait_version(room, data["version"])
    assert alice.rooms[room].view["room"]["draw_offer"] == 1
    await bob.ok("decline_draw", room=room)
    data = await bob.ok("resign", room=room)
    copy = await alice.wait_version(room, data["version"])
    assert copy.view["outcome"]["reason"] == "resigned" and copy.view["outcome"]["winners"] == [0]


SEAT_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("act", {"action": "a1-a2"}),
    ("resign", {}),
    ("abort", {}),
    ("offer_draw", {}),
    ("decline_draw", {}),
]


async def errors_of(client: Any, room: str, requests: list[tuple[str, dict[str, Any]]]) -> set[tuple[str, str]]:
    return {((err := await client.error(kind, room=room, **extra))["code"], err["message"]) for kind, extra in requests}


async def test_every_seat_request_answers_one_condition_with_one_error(giants_server, client_factory) -> None:
    """act, resign, abort and the draw requests share one guard: a spectator, a
    non-member, a game not started and a game over each get one code and one message,
    whichever of them was sent."""
    url = giants_server.url
    alice = await client_factory(url, "alice")
    dave = await client_factory(url, "dave")
    waiting = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=waiting, seat=0)
    # abort is the one seat request a waiting room allows (it is tested above).
    started_only = [r for r in SEAT_REQUESTS if r[0] != "abort"]
    assert await errors_of(alice, waiting, started_only) == {("not_started", "the game has not started yet")}
    assert {code for code, _ in await errors_of(dave, waiting, SEAT_REQUESTS)} == {"not_in_room"}
    assert len(await errors_of(dave, waiting, SEAT_REQUESTS)) == 1

    room, alice, bob, carol = await two_seats(url, client_factory, options={"rounds": 1})
    spectator = await errors_of(carol, room, SEAT_REQUESTS)
    assert len(spectator) == 1 and {code for code, _ in spectator} == {"not_seated"}
    await bob.ok("resign", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "finished")
    assert await errors_of(alice, room, SEAT_REQUESTS) == {("game_over", "the game is over")}
    # A spectator of a finished game is still told it is a spectator first.
    assert {code for code, _ in await errors_of(carol, room, SEAT_REQUESTS)} == {"not_seated"}
