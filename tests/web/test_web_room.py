"""The room page: seats that survive reloads, spectators, password links, the replay
viewer, errors from the server, keyboard and phone width."""

from __future__ import annotations

import json
import re

from web_helpers import room_id_of, screenshot, wait_until

from engines import registry
from protocol.messages import OfferDraw


async def legal_moves(page) -> list[str]:
    return await page.eval_on_selector_all("#legal-list [data-legal]", "els => els.map(e => e.dataset.legal)")


async def play_by_notation(page, action: str) -> None:
    """Type a move into the notation box and press Enter (keyboard only)."""
    await page.fill("#move-input", action)
    await page.press("#move-input", "Enter")


async def wait_my_turn(page) -> None:
    await page.wait_for_selector('#turn[data-mine="true"]', timeout=20_000)


async def test_reload_mid_game_resumes_the_seat(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}, deadline=600.0))["room"]
    page = await open_page(web_server, path=f"#/room/{room}", name="ann")
    await page.click('[data-join="0"]')  # the visitor takes seat 1 of 2
    await page.wait_for_selector('#seat-list [data-seat="0"].me')
    bob = await py.join(room)
    await wait_my_turn(page)
    # The countdown follows the server's deadline (600 s per move).
    await page.wait_for_selector("#deadline:not([hidden])")
    # The page's clock is the server's as read at hello: allow a second either way.
    shown = await page.inner_text("#deadline")
    assert re.search(r"Time left for this move: (9:[0-5]\d|10:0[01])\b", shown), shown
    first = (await legal_moves(page))[0]
    await play_by_notation(page, first)
    await bob.wait_for(lambda r: r.game and r.game.get("last_move") == first, timeout=10)
    token = await page.evaluate(
        "() => Object.entries(localStorage).filter(([k]) => k.includes('|seat|')).map(([k, v]) => [k, JSON.parse(v)])"
    )
    assert len(token) == 1 and token[0][0].endswith(f"|{room}") and token[0][1]["seat"] == 0
    # Bob answers; then the page is reloaded (and later reopened from its link).
    await py.act(room, (await bob.wait_turn(timeout=10))[0])
    await page.reload()
    await page.wait_for_selector('#seat-list [data-seat="0"].me')
    await wait_my_turn(page)
    assert await page.locator("#move-form").is_visible()
    await play_by_notation(page, (await legal_moves(page))[0])
    await bob.wait_turn(timeout=10)
    # Reopening the link in another tab of the same browser resumes the same seat.
    again = await open_page(web_server, path=f"#/room/{room}", context=page.context)
    await again.wait_for_selector('#seat-list [data-seat="0"].me')
    assert await again.locator("#join-box button").count() == 0


async def test_illegal_and_stale_moves_show_the_server_message(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}))["room"]
    await py.join(room, seat=1)
    page = await open_page(web_server, path=f"#/room/{room}?join", name="ann")
    await page.click('[data-join="0"]')
    await wait_my_turn(page)
    await play_by_notation(page, "a1-a1")
    error = page.locator("#move-error")
    await wait_until(page, "() => document.querySelector('#move-error').textContent.length > 0")
    assert "illegal_action" in await error.inner_text() or "bad_notation" in await error.inner_text()
    await play_by_notation(page, "hello world")
    await wait_until(page, "() => document.querySelector('#move-error').textContent.includes('bad_notation')")


async def test_a_spectator_sees_moves_but_cannot_play(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("tara", bots={"1": "random"}))["room"]
    bob = await py.join(room, seat=0)
    page = await open_page(web_server, path=f"#/room/{room}", name="eve")
    await page.wait_for_selector("#watching")
    assert not await page.locator("#move-form").is_visible()
    assert await page.locator("#join-box button").count() == 0  # the game has started
    assert "bob" in await page.inner_text("#seat-list")
    for _ in range(2):
        legal = await bob.wait_turn(timeout=20)
        await py.act(room, legal[0])
    # The spectator's page received the patches: bob's moves are in its event log.
    await page.wait_for_selector('#event-log li[data-type="action"]')
    log = await page.inner_text("#event-log")
    assert "bob:" in log
    # Its view is the spectator view, the same one another spectator builds (compared
    # while the room waits for bob, so nothing moves meanwhile).
    await bob.wait_turn(timeout=20)
    version = bob.version
    other = await (await server_client(web_server, "sam")).watch(room)
    await other.wait_version(version, timeout=10)
    key = json.dumps(room)
    await wait_until(page, f"() => window.giantsClient.rooms.get({key}).version === {version}")
    view = await page.evaluate(f"() => window.giantsClient.rooms.get({key}).view")
    assert view == json.loads(json.dumps(other.view))
    assert await page.evaluate(f"() => window.giantsClient.rooms.get({json.dumps(room)}).seat") is None
    await screenshot(page, "spectator")


async def test_a_strangers_link_to_a_password_room_asks_for_the_password(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", password="s3cret", private=True))["room"]
    await py.join(room, password="s3cret")
    page = await open_page(web_server, path=f"#/room/{room}", name="eve")
    await page.wait_for_selector("#password-form")
    assert await page.locator("#board").count() == 0  # nothing of the room before the password
    await page.fill("#room-password", "guess")
    await page.press("#room-password", "Enter")
    await page.wait_for_selector("#password-form >> text=Wrong password.")
    await page.fill("#room-password", "s3cret")
    await page.press("#room-password", "Enter")
    await page.click('[data-join="1"]')
    await page.wait_for_selector('#seat-list [data-seat="1"].me')
    assert room_id_of(page) == room


async def test_replay_viewer_steps_through_a_finished_game(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}, bots={"0": "random", "1": "random"}))["room"]
    watched = await py.watch(room)
    await watched.wait_finished(timeout=120)
    data = await py.replay(room)
    n = len(data["actions"])
    page = await open_page(web_server, path=f"#/replay/{room}")
    await page.wait_for_selector("#replay-where")
    assert await page.inner_text("#replay-where") == f"move {n} of {n}"
    assert await page.inner_text("#replay-result")  # the outcome at the last position
    await page.keyboard.press("Home")
    assert await page.inner_text("#replay-where") == f"move 0 of {n}"
    await page.keyboard.press("ArrowRight")
    await page.click("#replay-next")
    assert await page.get_attribute(".replay-page", "data-position") == "2"
    await page.click("#replay-prev")
    await page.locator("#replay-slider").fill(str(n // 2))
    assert await page.get_attribute(".replay-page", "data-position") == str(n // 2)
    await page.click(f'[data-step="{n - 1}"]')
    # Every position the viewer built is the table's view the engine gives at that move.
    engine = registry.get_engine(data["game"], data["rules"])
    state = engine.new_game(data["players"], data["options"], data["seed"])
    views = await page.evaluate("() => window.giantsReplay.views")
    assert len(views) == n + 1
    assert views[0] == engine.view(state, None)
    for i, entry in enumerate(data["actions"], start=1):
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
        if i in (1, n // 2, n):
            assert views[i] == json.loads(json.dumps(engine.view(state, None))), i
    await screenshot(page, "replay")


async def test_phone_width_and_keyboard_only(web_server, open_page) -> None:
    page = await open_page(web_server, name="kim", viewport={"width": 360, "height": 740})
    await page.wait_for_selector("#create-form")
    overflow = await page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the lobby is {overflow}px wider than a phone"
    # Tab through the lobby to the create button and press Enter: a room opens.
    await page.select_option("#create-game", "tara")
    for _ in range(60):
        await page.keyboard.press("Tab")
        if await page.evaluate("() => document.activeElement && document.activeElement.id") == "create-submit":
            break
    else:
        raise AssertionError("the create button is not reachable with Tab")
    await page.keyboard.press("Enter")
    await page.wait_for_url("**/#/room/*")
    await page.wait_for_selector("#seat-list")
    overflow = await page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the room page is {overflow}px wider than a phone"
    await screenshot(page, "room-phone")


async def test_server_restart_shows_reconnecting_then_resumes_the_seat(server_factory, open_page, server_client) -> None:
    """The badge says reconnecting while the server is down; the seat comes back by token."""
    first = await server_factory()
    port = first.port
    py = await server_client(first, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}))["room"]
    await py.join(room, seat=1)
    page = await open_page(first, path=f"#/room/{room}", name="ann", allow_console=("WebSocket connection to",))
    await page.click('[data-join="0"]')
    await wait_my_turn(page)
    await first.stop()
    await page.wait_for_selector('#conn[data-state="reconnecting"]')
    second = await server_factory(port=port)  # same Redis and prefix: the room is restored
    await page.wait_for_selector('#conn[data-state="connected"]', timeout=20_000)
    await page.wait_for_selector('#seat-list [data-seat="0"].me')
    await wait_my_turn(page)
    move = (await legal_moves(page))[0]
    await play_by_notation(page, move)
    watcher = await (await server_client(second, "sam")).watch(room)
    await watcher.wait_for(lambda r: r.game.get("last_move") == move, timeout=10)


async def test_resign_and_draw_from_the_page(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}))["room"]
    bob = await py.join(room, seat=1)
    page = await open_page(web_server, path=f"#/room/{room}", name="ann")
    await page.click('[data-join="0"]')
    await wait_my_turn(page)
    # Bob offers a draw; the page shows it and declines with one click.
    await py._request(OfferDraw(id=py._new_id(), room=room))  # the Python client has no helper yet
    await page.click("#decline-draw")
    await bob.wait_for(lambda r: r.info.get("draw_offer") is None and any(e["type"] == "draw_declined" for e in r.events), timeout=10)
    # Resign asks once more, in place; then the result screen says who won.
    await page.click("#resign")
    await page.click('[data-confirm="resign"]')
    await page.wait_for_selector("#result:not([hidden])")
    assert "bob wins" in await page.inner_text("#result-text")
    assert await page.locator("#replay-link").count() == 1
    await bob.wait_finished(timeout=10)
    assert bob.outcome["reason"] == "resigned"


async def test_unknown_room_link_says_so(web_server, open_page) -> None:
    page = await open_page(web_server, path="#/room/no-such-room")
    await page.wait_for_selector("text=There is no room no-such-room")
    await page.click("text=Back to the lobby")
    await page.wait_for_selector("#rooms")


async def test_a_room_link_names_its_room_in_the_socket_url(web_server, open_page, server_client) -> None:
    """The routing hint (docs/protocol.md): on a --workers server the page's connection
    goes to the worker owning the room. The lobby's connection names none."""
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer"))["room"]
    page = await open_page(web_server, path=f"#/room/{room}?join", name="eve")
    await page.wait_for_selector('[data-join="0"]')
    assert await page.evaluate("giantsClient.ws.url") == f"{web_server.url}/?room={room}"
    lobby = await open_page(web_server, name="ann")
    await lobby.wait_for_selector("#rooms")
    assert await lobby.evaluate("giantsClient.ws.url") == f"{web_server.url}/"


async def test_replay_of_a_password_room_asks_for_the_password(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "bob")
    room = (await py.create_room("giantslayer", options={"rounds": 1}, password="pw", bots={"0": "random", "1": "random"}))["room"]
    await (await py.watch(room, password="pw")).wait_finished(timeout=120)
    page = await open_page(web_server, path=f"#/replay/{room}")
    await page.wait_for_selector("#password-form")
    assert await page.locator("#replay-slider").count() == 0
    await page.fill("#room-password", "nope")
    await page.press("#room-password", "Enter")
    await page.wait_for_selector("#password-form >> text=Wrong password.")
    await page.fill("#room-password", "pw")
    await page.press("#room-password", "Enter")
    await page.wait_for_selector("#replay-slider")
    assert (await page.inner_text("#replay-where")).startswith("move ")


async def test_replay_viewer_reads_past_the_first_listing_page_for_names(server_factory, open_page, server_client) -> None:
    """The seat names of a replay come from the paged lobby listing, live rooms first: a
    finished room behind more than one page of live rooms still shows its players."""
    server = await server_factory(max_rooms_per_address=0, rate=2000.0, burst=2000)
    bob = await server_client(server, "bob")
    ann = await server_client(server, "ann")
    room = (await bob.create_room("giantslayer"))["room"]
    await bob.join(room)
    mine = await ann.join(room)
    await mine.wait_for(lambda r: r.status == "playing", timeout=10)
    await ann.resign(room)
    for _ in range(205):  # one listing page holds at most 200 rooms
        await bob.create_room("giantslayer")
    first = await bob.list_rooms_page("giantslayer", include_finished=True, limit=200)
    assert room not in {r["room"] for r in first[0]} and first[1] is not None
    page = await open_page(server, path=f"#/replay/{room}")
    await page.wait_for_selector("#replay-where")
    await page.wait_for_selector(".replay-page >> text=bob vs ann")
