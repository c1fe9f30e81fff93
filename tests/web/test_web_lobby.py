"""The lobby page: listing, filters, creating a room, the shareable room link."""

from __future__ import annotations

from web_helpers import room_id_of, screenshot, wait_until


async def test_lobby_lists_rooms_with_game_seats_and_status(web_server, open_page, server_client) -> None:
    py = await server_client(web_server, "zoe")
    waiting = (await py.create_room("giantslayer"))["room"]
    await py.join(waiting)
    playing = (await py.create_room("tara", bots={"1": "random"}))["room"]
    await py.join(playing)
    page = await open_page(web_server, name="ann")
    row = page.locator(f'tr[data-room="{waiting}"]')
    await row.wait_for()
    text = await row.inner_text()
    assert "Giantslayer" in text and "standard" in text and "zoe" in text and "free" in text and "waiting" in text
    assert await row.locator("text=Join").count() == 1
    tara = page.locator(f'tr[data-room="{playing}"]')
    assert "playing" in await tara.inner_text()
    assert "random" in await tara.inner_text()
    # Filters: by status and by game.
    await page.select_option("#filter-status", "waiting")
    await page.locator(f'tr[data-room="{playing}"]').wait_for(state="detached")
    assert await row.count() == 1
    await page.select_option("#filter-status", "open")
    await page.select_option("#filter-game", "tara")
    await page.locator(f'tr[data-room="{waiting}"]').wait_for(state="detached")
    await page.locator(f'tr[data-room="{playing}"]').wait_for()
    await page.select_option("#filter-game", "")
    await row.wait_for()
    await screenshot(page, "lobby")


async def test_create_a_room_against_a_bot_and_land_in_it(web_server, open_page) -> None:
    page = await open_page(web_server, name="ann")
    await page.select_option("#create-game", "giantslayer")
    await page.fill("#opt-rounds", "1")
    await page.select_option("#create-seat-1", "random")
    await page.click("#create-submit")
    await page.wait_for_url("**/#/room/*")
    await page.wait_for_selector("#seat-list")
    room = room_id_of(page)
    seats = page.locator("#seat-list li")
    assert await seats.count() == 2
    assert "ann" in await seats.nth(0).inner_text() and "you" in await seats.nth(0).inner_text()
    assert "random" in await seats.nth(1).inner_text()
    # The game started (both seats taken) and the page shows whose turn it is.
    await page.wait_for_selector("#turn:not(:empty)")
    assert room in await page.locator(".room-title").inner_text()
    await screenshot(page, "room-page")


async def test_create_form_rejection_shows_the_server_message(web_server, open_page) -> None:
    page = await open_page(web_server)
    await page.select_option("#create-game", "giantslayer")
    await page.fill("#opt-rounds", "3")  # GS-13: 1 or an even number
    await page.click("#create-submit")
    error = page.locator("#create-error")
    await error.wait_for()
    await wait_until(page, "() => document.querySelector('#create-error').textContent.length > 0")
    assert "rounds" in await error.inner_text()
    assert "#/room/" not in page.url


async def test_more_rooms_than_one_page(server_factory, open_page, server_client) -> None:
    """The listing comes in pages of 50; "More rooms" shows the rest, also after a refresh."""
    server = await server_factory(max_rooms_per_address=0)
    py = await server_client(server, "zoe")
    for _ in range(55):
        await py.create_room("tara")
    page = await open_page(server)
    await page.wait_for_selector("#rooms tbody tr")
    assert await page.locator("#rooms tbody tr").count() == 50
    await page.click("#more-rooms")
    await page.wait_for_selector("#rooms tbody tr >> nth=54")
    assert await page.locator("#rooms tbody tr").count() == 55
    assert await page.locator("#more-rooms").is_hidden()
    await page.click("text=Refresh")
    await page.wait_for_selector("#rooms tbody tr >> nth=54")
