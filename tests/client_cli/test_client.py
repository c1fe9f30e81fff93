"""The client library end to end: a real server, a real Redis, real WebSockets.

Each test starts `GiantsServer` in-process (tests/conftest.py) and talks to it only
through `client_cli.client.Client`; the server object is read only to compute the
view the engine says a seat may see, which the client's tracked view must equal.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgpack
import pytest

from client_cli.client import Client, ClientClosed, RequestFailed, RoomLost, TrackedRoom, Update
from engines import registry
from protocol import ErrorCode
from server.app import GiantsServer

pytestmark = pytest.mark.redis

MakeClient = Callable[..., Any]


def plain(data: Any) -> Any:
    """What a value looks like after the wire (tuples become lists)."""
    return msgpack.unpackb(msgpack.packb(data, use_bin_type=True), raw=False)


def expected_view(server: GiantsServer, room_id: str, seat: int | None) -> Any:
    """The RoomView the server's room and its engine say `seat` may see now."""
    room = server.lobby.rooms[room_id]
    return plain(
        {
            "room": room.room_info(),
            "game": room.engine.view(room.state, seat),
            "outcome": room.outcome,
        }
    )


async def caught_up(server: GiantsServer, room_id: str, *rooms: TrackedRoom) -> int:
    """Wait until every tracked room shows the server room's current version."""
    version: int = server.lobby.rooms[room_id].version
    for tracked in rooms:
        await tracked.wait_version(version, timeout=10)
    return version


async def started(server: GiantsServer, room_id: str, *rooms: TrackedRoom) -> int:
    """Wait until the game has started (the last join's autostart is committed
    after that join's reply) and every tracked room shows the current version."""
    for tracked in rooms:
        await tracked.wait_for(lambda r: r.status != "waiting", timeout=10)
    return await caught_up(server, room_id, *rooms)


@pytest.fixture
async def make_client(giants_server: GiantsServer) -> AsyncIterator[MakeClient]:
    clients: list[Client] = []

    async def make(name: str, **settings: Any) -> Client:
        client = Client(giants_server.url, name=name, request_timeout=10, **settings)
        await client.connect()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def test_hello_reports_session_and_games(make_client: MakeClient) -> None:
    client = await make_client("ann")
    assert client.connected and client.session
    assert "giantslayer" in {g["name"] for g in client.games}
    assert await client.ping() > 0


async def test_two_players_and_a_spectator_track_the_engine_view(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    """Snapshot + patches as tracked by the client equal the engine's view for each
    seat (and the spectator) after every move, and `legal` is what the seat may play."""
    alice, bob, carol = [await make_client(n) for n in ("alice", "bob", "carol")]
    created = await alice.create_room("giantslayer", options={"rounds": 1})
    room_id = created["room"]
    assert created["summary"]["status"] == "waiting"
    watched = await carol.watch(room_id)
    a = await alice.join(room_id)
    b = await bob.join(room_id, seat=1)
    assert (a.seat, b.seat, watched.seat) == (0, 1, None)
    assert a.token and b.token and a.token != b.token
    members = [(0, a), (1, b), (None, watched)]
    live = giants_server.lobby.rooms[room_id]
    await started(giants_server, room_id, a, b, watched)
    rng = random.Random(7)
    moves = 0
    while True:
        await caught_up(giants_server, room_id, a, b, watched)
        for seat, tracked in members:
            assert tracked.view == expected_view(giants_server, room_id, seat)
            assert tracked.legal == live.legal_for(seat)
        if live.status == "finished":
            break
        (actor, tracked) = next((c, t) for c, t in ((alice, a), (bob, b)) if t.my_turn)
        before = tracked.version
        assert before is not None
        version = await actor.act(room_id, rng.choice(tracked.legal), guard=True)
        assert version == before + 1
        assert tracked.version == version  # act returns once the view shows the move
        moves += 1
    assert moves > 5
    assert a.finished and a.outcome == b.outcome == watched.outcome is not None
    assert [e["type"] for e in watched.events].count("action") == moves
    assert a.resyncs == b.resyncs == watched.resyncs == 0

    replay = await carol.replay(room_id)
    engine = registry.get_engine(replay["game"], replay["rules"])
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    for entry in replay["actions"]:
        action = engine.parse_action(state, entry["seat"], entry["action"])
        state = engine.apply(state, entry["seat"], action).state
    assert plain(engine.view(state, 0)) == a.game


async def test_game_against_a_server_bot_until_the_end(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    """The bot-loop idiom: wait_turn() until it returns [], then read the outcome."""
    alice = await make_client("alice")
    room_id = (await alice.create_room("giantslayer", options={"rounds": 2}, bots={"1": "random"}))[
        "room"
    ]
    room = await alice.join(room_id)  # the last free seat: the game starts
    rng = random.Random(3)
    while legal := await room.wait_turn(timeout=10):
        assert legal == giants_server.lobby.rooms[room_id].legal_for(0)
        await alice.act(room_id, rng.choice(legal))
    outcome = await room.wait_finished(timeout=10)
    assert outcome is not None and outcome == room.view["outcome"]
    assert room.view == expected_view(giants_server, room_id, 0)


async def test_errors_carry_their_stable_codes(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    alice, bob = await make_client("alice"), await make_client("bob")
    with pytest.raises(RequestFailed) as info:
        await alice.join("no-such-room")
    assert info.value.code == ErrorCode.NO_SUCH_ROOM and info.value.request == "join"
    with pytest.raises(RequestFailed) as info:
        await alice.create_room("no-such-game")
    assert info.value.code == ErrorCode.UNKNOWN_GAME

    room_id = (await alice.create_room("giantslayer"))["room"]
    a = await alice.join(room_id)
    with pytest.raises(RequestFailed) as info:
        await alice.act(room_id, "a1-a2")
    assert info.value.code == ErrorCode.NOT_STARTED
    b = await bob.join(room_id)
    await started(giants_server, room_id, a, b)
    mover, waiter = (alice, bob) if a.my_turn else (bob, alice)
    moving = a if a.my_turn else b
    with pytest.raises(RequestFailed) as info:
        await waiter.act(room_id, moving.legal[0])
    assert info.value.code == ErrorCode.NOT_YOUR_TURN
    with pytest.raises(RequestFailed) as info:
        await mover.act(room_id, "this is not notation")
    assert info.value.code == ErrorCode.BAD_NOTATION
    # A stale guard: the view is one version behind what the client claims to act on.
    moving.version = (moving.version or 0) - 1
    with pytest.raises(RequestFailed) as info:
        await mover.act(room_id, moving.legal[0], guard=True)
    assert info.value.code == ErrorCode.STALE_VERSION
    assert info.value.detail["version"] == moving.version + 1


async def test_a_version_gap_is_resynced_automatically(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    """A patch that does not follow the tracked version makes the client resync; the
    view then equals the engine's again."""
    alice, bob = await make_client("alice"), await make_client("bob")
    room_id = (await alice.create_room("giantslayer"))["room"]
    a, b = await alice.join(room_id), await bob.join(room_id)
    await started(giants_server, room_id, a, b)
    lagging = b if a.my_turn else a
    actor, tracked = (alice, a) if a.my_turn else (bob, b)
    assert lagging.version is not None
    lagging.version -= 1  # as if a patch had been missed
    await actor.act(room_id, tracked.legal[0])
    await caught_up(giants_server, room_id, lagging)
    assert lagging.resyncs == 1
    assert lagging.view == expected_view(giants_server, room_id, lagging.seat)


async def test_dropped_connection_is_resumed_with_the_token(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    """The socket dies mid-game: the client reconnects by itself, resumes the seat with
    its token and re-watches the spectated room; play goes on with views in sync."""
    alice, bob, carol = (
        await make_client("alice", backoff_min=0.05),
        await make_client("bob"),
        await make_client("carol", backoff_min=0.05),
    )
    room_id = (await alice.create_room("giantslayer"))["room"]
    a, b = await alice.join(room_id), await bob.join(room_id)
    watched = await carol.watch(room_id)
    await started(giants_server, room_id, a, b, watched)
    players = {0: (alice, a), 1: (bob, b)}
    rng = random.Random(11)
    for _ in range(4):  # a few moves first
        await caught_up(giants_server, room_id, a, b, watched)
        actor, tracked = next(p for p in players.values() if p[1].my_turn)
        await actor.act(room_id, rng.choice(tracked.legal))
    token, old_session = a.token, alice.session
    live = giants_server.lobby.rooms[room_id]

    await alice.drop_connection()
    await carol.drop_connection()
    # The server notices and shows the seat as disconnected...
    for _ in range(200):
        if not live.seats_data()[0]["connected"]:
            break
        await asyncio.sleep(0.02)
    # ...until the client is back (the seat reconnected: a new version).
    for _ in range(500):
        if alice.reconnects and carol.reconnects and live.seats_data()[0]["connected"]:
            break
        await asyncio.sleep(0.02)
    assert alice.reconnects == 1 and carol.reconnects == 1
    assert alice.session != old_session  # a new connection and session...
    assert alice.room(room_id) is a and a.token == token  # ...same tracked seat
    await caught_up(giants_server, room_id, a, b, watched)
    assert a.view == expected_view(giants_server, room_id, 0)
    assert watched.view == expected_view(giants_server, room_id, None)
    assert a.view["room"]["seats"][0]["connected"] is True

    for _ in range(4):  # and the game goes on
        await caught_up(giants_server, room_id, a, b, watched)
        if live.status == "finished":
            break
        actor, tracked = next(p for p in players.values() if p[1].my_turn)
        await actor.act(room_id, rng.choice(tracked.legal))
    await caught_up(giants_server, room_id, a, b, watched)
    for seat, tracked in ((0, a), (1, b), (None, watched)):
        assert tracked.view == expected_view(giants_server, room_id, seat)


async def test_resume_from_another_client_and_updates_stream(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    """A token works on any connection; `updates()` reports snapshots and patches."""
    alice, bob = await make_client("alice"), await make_client("bob")
    room_id = (await alice.create_room("giantslayer", autostart=False))["room"]
    a = await alice.join(room_id)
    await bob.join(room_id)
    assert a.token is not None
    alice2 = await make_client("alice-laptop")
    seen: list[Update] = []

    async def collect() -> None:
        async for update in alice2.updates():
            seen.append(update)
            if update.kind == "patch" and any(e["type"] == "started" for e in update.events):
                return

    collector = asyncio.create_task(collect())
    await asyncio.sleep(0)
    a2 = await alice2.resume(room_id, a.token)
    assert a2.seat == 0 and a2.status == "waiting"
    await bob.start(room_id)
    await asyncio.wait_for(collector, 10)
    assert seen[0].kind == "snapshot" and seen[0].room is a2
    assert a2.status == "playing"
    await caught_up(giants_server, room_id, a, a2)
    assert a.view == a2.view == expected_view(giants_server, room_id, 0)

    await alice2.leave(room_id)
    assert room_id not in alice2.rooms and a2.lost is not None


async def test_server_restart_clients_come_back_and_resume(server_factory: Callable[..., Any]) -> None:
    """The server shuts down (clients get `closing`, then close 1001) and a new one
    starts on the same port and Redis: both clients reconnect with backoff, resume
    their seats with their tokens and finish the game. No other server shares the
    key prefix: with a live peer node the first one would hand its rooms over to it."""
    first: GiantsServer = await server_factory()
    url = first.url
    alice = Client(url, name="alice", backoff_min=0.05, backoff_max=0.3, request_timeout=10)
    bob = Client(url, name="bob", backoff_min=0.05, backoff_max=0.3, request_timeout=10)
    await alice.connect()
    await bob.connect()
    try:
        room_id = (await alice.create_room("giantslayer", options={"rounds": 1}))["room"]
        a, b = await alice.join(room_id), await bob.join(room_id)
        await started(first, room_id, a, b)
        players = [(alice, a), (bob, b)]
        rng = random.Random(5)
        for _ in range(3):
            actor, tracked = next(p for p in players if p[1].my_turn)
            await actor.act(room_id, rng.choice(tracked.legal))
        version = a.version

        await first.stop()
        for _ in range(100):
            if not alice.connected and not bob.connected:
                break
            await asyncio.sleep(0.02)
        assert not alice.connected and not bob.connected
        second: GiantsServer = await server_factory(port=first.port)

        for client in (alice, bob):
            async with asyncio.timeout(10):
                while not (client.connected and client.reconnects):
                    await asyncio.sleep(0.02)
        await caught_up(second, room_id, a, b)
        assert a.version is not None and version is not None and a.version > version
        assert a.view == expected_view(second, room_id, 0)
        assert b.view == expected_view(second, room_id, 1)
        while not a.finished:  # the views are current here: exactly one seat may act
            actor, tracked = next(p for p in players if p[1].my_turn)
            await actor.act(room_id, rng.choice(tracked.legal))
            await caught_up(second, room_id, a, b)
        assert a.outcome == b.outcome == expected_view(second, room_id, 0)["outcome"] is not None
    finally:
        await alice.close()
        await bob.close()


async def test_requests_made_while_disconnected_wait_for_the_reconnect(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    alice = await make_client("alice", backoff_min=0.05)
    room_id = (await alice.create_room("giantslayer"))["room"]
    await alice.watch(room_id)
    await alice.drop_connection()
    rooms = await alice.list_rooms("giantslayer")  # sent once the client is back
    assert room_id in {r["room"] for r in rooms}
    assert alice.reconnects == 1 and alice.connected
    assert alice.room(room_id).synced  # re-watched before the request went out


async def test_a_bad_token_is_refused_and_not_tracked(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    alice = await make_client("alice")
    room_id = (await alice.create_room("giantslayer"))["room"]
    with pytest.raises(RequestFailed) as info:
        await alice.resume(room_id, "not-a-token")
    assert info.value.code == ErrorCode.BAD_TOKEN
    assert room_id not in alice.rooms


async def test_without_reconnect_a_drop_closes_the_client_and_its_rooms(
    giants_server: GiantsServer, make_client: MakeClient
) -> None:
    alice = await make_client("alice", reconnect=False)
    room_id = (await alice.create_room("giantslayer"))["room"]
    room = await alice.join(room_id)
    waiter = asyncio.create_task(room.wait_turn())
    await asyncio.sleep(0)
    await alice.drop_connection()
    with pytest.raises(RoomLost):
        await asyncio.wait_for(waiter, 5)
    assert alice.closed and not alice.rooms
    with pytest.raises(ClientClosed):
        await alice.ping()


async def test_closing_the_client_releases_requests_waiting_for_a_reconnect(
    server_factory: Callable[..., Any],
) -> None:
    server: GiantsServer = await server_factory()
    client = Client(server.url, name="ann", backoff_min=0.05, backoff_max=0.1)
    await client.connect()
    await server.stop()  # nothing to reconnect to
    for _ in range(100):
        if not client.connected:
            break
        await asyncio.sleep(0.02)
    waiting = asyncio.create_task(client.ping())
    await asyncio.sleep(0.2)
    assert not waiting.done()  # it waits for the connection to come back...
    await client.close()
    with pytest.raises(ClientClosed):  # ...until the client is closed
        await asyncio.wait_for(waiting, 5)


async def test_list_rooms_reads_every_page(server_factory: Any) -> None:
    """More public rooms than one page holds (the server's default page is 50): the
    client follows the `next` cursors and returns each room once, in the server's
    order; `max_rooms` stops early and `list_rooms_page` hands out one page at a time."""
    server = await server_factory(max_rooms_per_address=0)
    client = Client(server.url, name="ann", request_timeout=10)
    await client.connect()
    try:
        created = [(await client.create_room("tara"))["room"] for _ in range(57)]
        rooms = await client.list_rooms()
        assert [r["room"] for r in rooms] == sorted(created)
        assert [r["room"] for r in await client.list_rooms(max_rooms=10)] == sorted(created)[:10]
        seen: list[str] = []
        page, cursor = await client.list_rooms_page(limit=20)
        pages = 1
        seen += [r["room"] for r in page]
        while cursor is not None:
            page, cursor = await client.list_rooms_page(cursor=cursor, limit=20)
            seen += [r["room"] for r in page]
            pages += 1
        assert seen == sorted(created) and pages == 3
    finally:
        await client.close()
