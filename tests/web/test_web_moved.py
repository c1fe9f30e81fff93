"""`giants serve --workers 2`: the page's lobby connection names no room, so it may land
on the worker that does not own the room it opens next; told `moved`, the page moves
its socket to the owner and follows the game there (server/moved.py)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import redis.asyncio as aioredis
from web_helpers import wait_until

from client_cli.client import Client
from tests.conftest import ServeProcess, start_serve


@pytest.fixture
def served(redis_url: str, key_prefix: str) -> Iterator[ServeProcess]:
    sp = start_serve(["--workers", "2", "--redis-url", redis_url, "--key-prefix", key_prefix])
    yield sp
    sp.proc.send_signal(signal.SIGTERM)
    assert sp.proc.wait(60) == 0
    assert "Traceback" not in "".join(sp.output)


async def test_a_page_from_the_lobby_moves_to_its_rooms_worker(served, open_page, redis_url, key_prefix) -> None:
    redis = aioredis.from_url(redis_url)
    players: list[Client] = []

    async def owner(room: str) -> str:
        return (await redis.get(f"{key_prefix}room:{{{room}}}:lease")).decode()

    try:
        server = SimpleNamespace(port=int(served.url.rsplit(":", 1)[1]))
        page = await open_page(server, name="eve")
        await page.wait_for_selector("#rooms")
        assert await page.evaluate("giantsClient.ws.url") == f"{served.url}/"  # no hint
        # Which worker the page reached: the one owning a room it creates (a new room is
        # owned by the worker its creator reached).
        own = await page.evaluate("async () => (await giantsClient.request('create_room', {game: 'tara'})).room")
        page_worker = await owner(own)
        # A game on the other worker (each creator lands on either worker).
        room = ""
        while not room:
            py = Client(served.url, name=f"bob{len(players)}")
            players.append(py)
            await py.connect()
            created = (await py.create_room("tara", bots={"1": "random"}))["room"]
            await py.join(created, seat=0)
            if await owner(created) != page_worker:
                room = created
        # The page opens it: relayed at first, told `moved`, it reconnects naming the room.
        await page.evaluate(f"location.hash = '#/room/{room}'")
        await page.wait_for_selector("#watching")
        key = json.dumps(room)
        await wait_until(page, f"() => window.giantsClient.rooms.get({key})?.version >= 0")
        await wait_until(page, "() => window.giantsClient.moves === 1", timeout=20)
        assert await page.evaluate("giantsClient.ws.url") == f"{served.url}/?room={room}"
        # The game goes on and the page follows it over its new socket.
        py = players[-1]
        for _ in range(2):
            legal = await py.rooms[room].wait_turn(timeout=20)
            await py.act(room, legal[0])
        await py.rooms[room].wait_turn(timeout=20)  # the bot answered: nothing moves now
        version = py.rooms[room].version
        await wait_until(page, f"() => window.giantsClient.rooms.get({key}).version >= {version}", timeout=20)
        view = await page.evaluate(f"() => window.giantsClient.rooms.get({key}).view")
        assert view["game"] == json.loads(json.dumps(py.rooms[room].view["game"]))
        assert await page.evaluate("giantsClient.state") == "connected"
    finally:
        for py in players:
            await py.close()
        await redis.aclose()


async def _seated_page(web_server, open_page, server_client) -> tuple[object, str]:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}))["room"]
    page = await open_page(web_server, path=f"#/room/{room}", name="ann")
    await page.click('[data-join="0"]')
    await page.wait_for_selector('#seat-list [data-seat="0"].me')
    return page, room


async def test_an_advisory_during_a_reconnect_is_followed_after_it(web_server, open_page, server_client) -> None:
    """The server advises a connection once per owner: one that reaches the page while
    it is still taking its rooms back (a reconnect, or an earlier advisory's new
    socket) is kept and followed once that is over, not dropped (the page would stay
    relayed for good)."""
    page, room = await _seated_page(web_server, open_page, server_client)
    key = json.dumps(room)
    kept = await page.evaluate(
        f"""() => {{
            const c = window.giantsClient;
            c._setState("reconnecting");  // as while `_onOpen` resumes the rooms
            c._onMoved({{type: "moved", room: {key}}}, c.ws);
            return [c.deferred?.room ?? null, c.moves];
        }}"""
    )
    assert kept == [room, 0]  # kept, not followed while reconnecting
    await page.evaluate("() => { const c = window.giantsClient; c._setState('connected'); c._followDeferred(); }")
    await wait_until(page, "() => window.giantsClient.moves === 1", timeout=20)
    assert await page.evaluate("giantsClient.ws.url") == f"{web_server.url}/?room={room}"
    assert await page.evaluate("giantsClient.state") == "connected"
    await page.wait_for_selector('#seat-list [data-seat="0"].me')  # the seat taken back there


async def test_an_advisory_on_a_socket_since_replaced_is_dropped(web_server, open_page, server_client) -> None:
    page, room = await _seated_page(web_server, open_page, server_client)
    key = json.dumps(room)
    url = await page.evaluate("giantsClient.ws.url")
    await page.evaluate(
        f"""() => {{
            const c = window.giantsClient;
            c._setState("reconnecting");
            c._onMoved({{type: "moved", room: {key}}}, {{}});  // came on a socket no longer in use
            c._setState("connected");
            c._followDeferred();
        }}"""
    )
    await page.wait_for_timeout(500)
    assert await page.evaluate("[giantsClient.moves, giantsClient.deferred]") == [0, None]
    assert await page.evaluate("giantsClient.ws.url") == url  # the same socket
