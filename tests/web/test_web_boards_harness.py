"""The GIANTS board against its engine for 3 and 5 tribes, in Chromium, without a server.

The page imports the real board; the engine runs in the test (board_harness.py) and a
seeded random policy plays the other tribes. Every move of the page's tribe is made by
clicking (or through the bid form), and the test checks that what the board sent is
exactly the legal action it meant. Whole games against a server bot are in
test_web_boards.py; here the larger tables and the transport preview are checked.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from board_clicks import click_action, submit_bid
from board_harness import EngineTable, StaticServer, open_board
from web_helpers import screenshot, wait_until


@pytest.fixture(scope="module")
def static_server() -> AsyncIterator[StaticServer]:
    server = StaticServer()
    yield server
    server.close()


@pytest.fixture
async def page(browser: Any) -> AsyncIterator[Any]:
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page
    await context.close()
    assert not errors, errors


async def click_moves(page: Any, table: EngineTable, moves: int, seed: int = 3, pass_bias: float = 0.3) -> None:
    """Click `moves` random legal actions of the page's tribe (fewer if the game ends)."""
    rng = random.Random(seed)
    for _ in range(moves):
        if table.engine.outcome(table.state) is not None:
            return
        legal = table.legal()
        choice = "pass" if "pass" in legal and rng.random() < pass_bias else rng.choice(legal)
        before = len(table.sent)
        if choice.startswith("bid "):
            await submit_bid(page, "#board", choice)
        else:
            await click_action(page, "#board", choice)
        await wait_until(page, "() => document.querySelector('#board .gt-board').dataset.pending !== '1'")
        assert table.sent[before:] == [choice]


@pytest.mark.parametrize("players", [3, 5])
async def test_giants_table_of_n_by_clicking(page: Any, static_server: StaticServer, players: int) -> None:
    table = EngineTable("giants", None, players, {}, seat=players - 1)
    await open_board(page, static_server, table)
    if players == 3:
        # The page may destroy a board and draw one again in the same element (another
        # room): a click must still send exactly one action (checked by click_moves).
        await page.evaluate("""async () => {
            const m = await import('/boards/index.js');
            m.boardFor('giants').destroy(document.getElementById('board'));
        }""")
        await page.evaluate("(c) => window.gtShow(c)", table.ctx())
    # The page shows its own screen and one row per tribe, and never another screen.
    assert await page.locator("#board .gt-private").count() == 1
    assert await page.locator("#board .gt-seat-table tbody tr").count() == players
    # The others have sealed their bids (the harness lets them answer first): the table
    # says that they have bid, never what (GI-8).
    for seat in range(players - 1):
        assert await page.inner_text(f'#board [data-seat-bid="{seat}"]') == "has bid ✓"
    assert await page.inner_text(f'#board [data-seat-bid="{players - 1}"]') == "thinking…"
    if players == 5:
        await screenshot(page, "board-giants-auction-5")
    await click_moves(page, table, moves=25)
    assert table.state.turn >= 2  # bids, claims, placement and transport went by


def _quarry_transport_state(table: EngineTable) -> list[str]:
    """Drive the table (seed 3) until the page's tribe may carry a Moai over two hexes.

    The page's seat places workers around the quarry; the others play at random.
    Returns those transports.
    """
    engine, rng = table.engine, random.Random(3)
    near = ("place worker (11,4)", "place worker (11,3)", "place worker (11,5)",
            "place worker (10,4)", "place chief (10,4)")
    for _ in range(3000):
        seat = sorted(engine.waiting_for(table.state))[0]
        texts = [engine.format_action(table.state, a) for a in engine.legal_actions(table.state, seat)]
        far = [t for t in texts if t.startswith("transport") and t.count(">") >= 2]
        if far and seat == table.seat:
            return far
        close = [t for t in texts if t.startswith(near)]
        choice = rng.choice(close) if close else rng.choice(texts)
        if not close and table.state.phase == "place" and "pass" in texts and rng.random() < 0.5:
            choice = "pass"
        table.state = engine.apply_text(table.state, seat, choice).state
    raise AssertionError("no transport came up")


async def test_giants_transport_shows_path_strength_and_pieces(page: Any, static_server: StaticServer) -> None:
    """GI-18/19: before a transport is sent the board draws its path and names, per entered
    hex, the strength it needs and whose pieces carry it — the pieces the server then uses."""
    table = EngineTable("giants", None, 3, {}, seat=0, seed=3)
    transports = _quarry_transport_state(table)
    await open_board(page, static_server, table)
    text = transports[0]
    statue = text.split()[1]
    await page.locator(f'#board [data-target="statue:{statue}"].gt-target').first.click()
    dest = text.split(">")[-1].strip("()")
    await page.locator(f'#board [data-target="{dest}"].gt-target').first.click()
    await page.wait_for_selector("#board .gt-transport-detail")
    assert await page.locator("#board polyline.gt-path").count() == 1
    shown = await page.eval_on_selector_all(
        "#board .gt-transport-detail li", "els => els.map(e => [e.dataset.hex, e.textContent])")
    path = [c.strip("()") for c in text.split()[2].split(">")]
    assert [hex_ for hex_, _ in shown] == path[1:]
    size = table.state.statues[statue].size
    assert all(f"needs strength {size}" in line for _, line in shown)
    await screenshot(page, "board-giants-transport")
    await page.locator("#board button[data-choose=go]").click()
    await wait_until(page, "() => document.querySelector('#board .gt-board').dataset.pending !== '1'")
    assert table.sent == [text]
    used = next(e for e in table.last_events if e["type"] == "transport")["uses"]
    names = await page.evaluate("""async (uses) => {
        const d = await import('/boards/giants-data.js');
        return uses.map((u) => u.map((x) => d.describeToken(x, (s) => 'p' + s)).join(' + '));
    }""", used)
    for (_, line), expected in zip(shown, names, strict=True):
        assert expected in line, (line, expected)


def _other_route(table: EngineTable, text: str) -> str | None:
    """A transport of the same statue to the same hex along a different path that the
    engine accepts (GI-18: any path the pieces can carry), or None."""
    from engines.base import GameError
    from engines.giants.board import ISLAND

    sid, path = text.split()[1], text.split()[2]
    cells = [tuple(int(n) for n in p.strip("()").split(",")) for p in path.split(">")]
    start, dest = cells[0], cells[-1]
    found: list[list[tuple[int, ...]]] = []

    def walk(route: list[tuple[int, ...]]) -> None:
        if found or len(route) > len(cells) + 2:
            return
        if route[-1] == dest:
            if route != cells:
                candidate = f"transport {sid} " + ">".join(f"({c},{r})" for c, r in route)
                try:
                    table.engine.apply_text(table.state, table.seat, candidate)
                    found.append(route)
                except GameError:
                    pass
            return
        for nb in ISLAND.neighbors[route[-1]]:
            if nb not in route:
                walk([*route, nb])

    walk([start])
    if not found:
        return None
    return f"transport {sid} " + ">".join(f"({c},{r})" for c, r in found[0])


async def test_giants_transport_along_a_route_of_the_players_choice(page: Any, static_server: StaticServer) -> None:
    """GI-18: the legal list offers the cheapest route to each destination; the page lets
    the player build another path hex by hex and sends exactly that path, which the
    engine then applies."""
    table = EngineTable("giants", None, 3, {}, seat=0, seed=3)
    transports = _quarry_transport_state(table)
    choice = next(((t, alt) for t in transports if (alt := _other_route(table, t)) is not None), None)
    assert choice is not None, "no transport with a second route in this position"
    text, alt = choice
    await open_board(page, static_server, table)
    statue = text.split()[1]
    await page.locator(f'#board [data-target="statue:{statue}"].gt-target').first.click()
    dest = text.split(">")[-1].strip("()")
    await page.locator(f'#board [data-target="{dest}"].gt-target').first.click()
    await page.click("#board #route-start")
    hexes = [p.strip("()") for p in alt.split()[2].split(">")]
    assert await page.is_disabled("#board #route-send")  # not at the destination yet
    for cell in hexes[1:]:
        await page.click(f'#board [data-route-hex="{cell}"]')
    assert await page.inner_text("#board #route-path") == f"Route of {statue}: " + " → ".join(f"({c})" for c in hexes)
    await page.click("#board #route-send")
    await wait_until(page, "() => document.querySelector('#board .gt-board').dataset.pending !== '1'")
    assert table.sent == [alt]
    moved = [e for e in table.last_events if e["type"] == "transport"]
    assert alt != text and [e["path"] for e in moved] == [hexes]  # applied along that path
    assert await page.locator("#board .gt-message.gt-error").count() == 0
