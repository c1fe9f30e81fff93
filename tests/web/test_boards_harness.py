"""Each board against its engine, in real Chromium, without a server (see harness.py).

Every move of the page's seat is made by clicking the board (targets and buttons), and
the test checks that what the board sent is exactly the legal action it meant.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.web.browser import chromium_or_skip, click_action, submit_bid
from tests.web.harness import EngineTable, StaticServer, open_board


@pytest.fixture(scope="module")
def static_server() -> AsyncIterator[StaticServer]:
    server = StaticServer()
    yield server
    server.close()


@pytest.fixture
async def page() -> AsyncIterator[Any]:
    executable = chromium_or_skip()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable)
        context = await browser.new_context(viewport={"width": 1000, "height": 900})
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        yield page
        await browser.close()
        assert not errors, errors


async def play_by_clicking(
    page: Any, table: EngineTable, limit: int, seed: int = 3, pass_bias: float = 0.0
) -> int:
    """Click random legal moves for the page's seat until the game ends; return the count."""
    rng = random.Random(seed)
    moves = 0
    while table.engine.outcome(table.state) is None and moves < limit:
        legal = table.legal()
        assert legal
        choice = rng.choice(legal)
        if "pass" in legal and rng.random() < pass_bias:
            choice = "pass"
        before = len(table.sent)
        if choice.startswith("bid "):
            await submit_bid(page, "#board", choice)
        else:
            await click_action(page, "#board", choice)
        await page.wait_for_function("document.querySelector('#board .gt-board').dataset.pending !== '1'")
        assert table.sent[before:] == [choice]
        moves += 1
    return moves


async def test_giantslayer_one_round_by_clicking(page: Any, static_server: StaticServer) -> None:
    table = EngineTable("giantslayer", None, 2, {"rounds": 1}, seat=0)
    await open_board(page, static_server, table)
    assert await page.locator("#board .gt-target").count() == 24  # every white stone may slide (GS-5)
    await play_by_clicking(page, table, limit=400)
    assert table.engine.outcome(table.state) is not None


async def test_tara_one_game_by_clicking(page: Any, static_server: StaticServer) -> None:
    table = EngineTable("tara", None, 2, {"games": 1}, seat=1)
    await open_board(page, static_server, table)
    await play_by_clicking(page, table, limit=100)
    assert table.engine.outcome(table.state) is not None


@pytest.mark.parametrize("rules", ["barrier", "spellstone", "quick"])
async def test_causeway_by_clicking(page: Any, static_server: StaticServer, rules: str) -> None:
    table = EngineTable("causeway", rules, 2, {}, seat=0)
    await open_board(page, static_server, table)
    await play_by_clicking(page, table, limit=200)
    assert table.engine.outcome(table.state) is not None


@pytest.mark.parametrize("players", [2, 3, 4, 5])
async def test_giants_by_clicking(page: Any, static_server: StaticServer, players: int) -> None:
    table = EngineTable("giants", None, players, {}, seat=players - 1)
    await open_board(page, static_server, table)
    await play_by_clicking(page, table, limit=600, pass_bias=0.3)
    assert table.engine.outcome(table.state) is not None
