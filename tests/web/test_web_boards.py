"""The boards in the real room page against a real server: whole games by clicking.

Each game and rule set is played to its end by one browser seat against a server bot;
every move is made by clicking the board's targets and buttons (never the notation
box). GIANTS is also played by three browser tribes at once, and every frame each page
received is checked against what the engine lets that tribe see.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import random
from typing import Any

import pytest
from board_clicks import board_state, click_action, submit_bid, wait_sent
from web_helpers import screenshot

from engines.registry import get_engine
from protocol import Patch, Snapshot, apply_patch, decode_server, expand_ops

# A whole game of each game and rule set, short options where the game has them.
GAMES = [
    ("giantslayer", "standard", 2, {"rounds": 1}),
    ("tara", "singles", 2, {"games": 1}),
    ("causeway", "barrier", 2, {}),
    ("causeway", "spellstone", 2, {}),
    ("causeway", "quick", 2, {}),
    ("giants", "standard", 2, {}),
]

# Records every binary frame the page receives, before the page's own code sees it.
RECORD_FRAMES = """(() => {
  const Native = window.WebSocket;
  window.__gtFrames = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (ev) => {
        if (!(ev.data instanceof ArrayBuffer)) { window.__gtFrames.push(null); return; }
        const bytes = new Uint8Array(ev.data);
        let s = "";
        for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
        window.__gtFrames.push(btoa(s));
      });
    }
  };
})();"""


def _pick(state: dict[str, Any], rng: random.Random, pass_bias: float) -> str | None:
    """A random legal action, or None while there is nothing (new) to do."""
    legal = state["legal"]
    view = state["view"] or {}
    if not legal or (view.get("phase") == "auction" and view.get("my_bid") is not None):
        return None  # not our turn, or our sealed bid is in: wait for the others
    if "pass" in legal and rng.random() < pass_bias:
        return "pass"
    # Causeway: leaps with drops build towers, so games end sooner than by the ply cap.
    drops = [a for a in legal if "+" in a]
    if drops and rng.random() < 0.7:
        return rng.choice(drops)
    return rng.choice(legal)


async def play_by_clicking(page: Any, rng: random.Random, *, pass_bias: float = 0.0,
                           stop: Any = None, shot: str | None = None, shot_after: int = 12,
                           timeout: float = 240.0) -> int:
    """Play the page's seat by clicking until the game ends (or `stop(view)` holds).

    Returns the number of actions sent. `shot` takes a screenshot after `shot_after` moves.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    moves = 0
    while loop.time() < end:
        state = await board_state(page)
        if state is None:
            await asyncio.sleep(0.05)
            continue
        if state["status"] == "finished" or (stop is not None and stop(state["view"])):
            return moves
        choice = _pick(state, rng, pass_bias)
        if choice is None:
            await asyncio.sleep(0.05)
            continue
        if choice.startswith("bid "):
            await submit_bid(page, "#board", choice)
        else:
            await click_action(page, "#board", choice)
        refused = await wait_sent(page, "#board", state["sent"])
        if refused is not None:
            # Another tribe's bid can land between our view and our bid: the server
            # refuses ours as stale (the page acts with its version); bid again.
            assert refused.startswith("stale_version"), f"{choice!r} refused: {refused}"
            continue
        moves += 1
        if shot and moves == shot_after:
            await screenshot(page, shot)
    raise AssertionError(f"the game did not end within {timeout}s ({moves} moves clicked)")


@pytest.mark.parametrize(("game", "rules", "players", "options"), GAMES, ids=[f"{g}-{r}" for g, r, _, _ in GAMES])
async def test_a_whole_game_by_clicking_against_a_server_bot(
    web_server: Any, open_page: Any, server_client: Any, game: str, rules: str, players: int,
    options: dict[str, Any],
) -> None:
    py = await server_client(web_server, "host")
    bots = {str(s): "random" for s in range(1, players)}
    room = (await py.create_room(game, rules=rules, players=players, options=options, bots=bots))["room"]
    page = await open_page(web_server, path=f"#/room/{room}", name="ann")
    await page.click('[data-join="0"]')
    await page.wait_for_selector(f'#board [data-board="{game}"]')
    moves = await play_by_clicking(page, random.Random(5), pass_bias=0.85 if game == "giants" else 0.0,
                                   shot=f"board-{game}-{rules}")
    assert moves > 0
    watcher = await (await server_client(web_server, "sam")).watch(room)
    assert watcher.outcome is not None  # the server agrees the game is over
    await page.wait_for_selector(f'#board [data-board="{game}"]')


async def test_giants_three_browser_tribes_bid_at_once_and_see_only_their_own(
    web_server: Any, open_page: Any, server_client: Any,
) -> None:
    """GI-8, GI-28: three pages seal their bids at the same time, turn after turn, to the
    end of the game; no page ever holds another tribe's bid before the reveal or another
    tribe's screen before the end. Every frame each page received is decoded and each
    view it built is compared with the engine's view for that seat at some point of the
    game (replayed from the server's log)."""
    py = await server_client(web_server, "host")
    room = (await py.create_room("giants", players=3))["room"]
    pages = []
    for seat, name in enumerate(("ann", "bob", "cyd")):
        page = await open_page(web_server, path=f"#/room/{room}", name=name)
        await page.context.add_init_script(RECORD_FRAMES)
        await page.reload()
        await page.click(f'[data-join="{seat}"]')
        pages.append(page)
    for page in pages:
        await page.wait_for_selector('#board [data-board="giants"] .gt-bid-form')
    # All three fill in and seal their bids concurrently, turn after turn, to the end.
    await asyncio.gather(*(
        play_by_clicking(page, random.Random(seat), pass_bias=0.85, timeout=480.0,
                         shot="board-giants-three-tribes" if seat == 0 else None, shot_after=1)
        for seat, page in enumerate(pages)
    ))

    engine = get_engine("giants")
    record = await web_server.store.load_room(room)
    meta = record.meta
    state = engine.new_game(meta["players"], meta["options"], meta["seed"])
    states = [state]
    for entry in await web_server.store.read_log(room):
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
        states.append(state)
    assert engine.outcome(states[-1]) is not None  # the whole game, to its end

    for seat, page in enumerate(pages):
        allowed = {json.dumps(engine.view(s, seat), sort_keys=True) for s in states}
        # Before taking its seat the page watched: spectator views are allowed then.
        public = {json.dumps(engine.view(s, None), sort_keys=True) for s in states}
        frames = [decode_server(base64.b64decode(f)) for f in await page.evaluate("() => window.__gtFrames")]
        view: Any = None
        keys: list[str] | None = None
        member: int | None = None
        held = over = 0
        for msg in frames:
            if not isinstance(msg, Snapshot | Patch) or msg.room != room:
                continue
            if isinstance(msg, Snapshot):
                member = msg.seat
                assert member in (None, seat)
                view, keys = msg.view, msg.keys
            else:
                ops = expand_ops(msg.ops, keys) if keys is not None else msg.ops
                view = apply_patch(copy.deepcopy(view), ops)
                for event in msg.events:
                    if event["type"] == "action" and event["seat"] != member and event["action"].startswith("bid"):
                        assert event["action"] == "bid", event  # a sealed bid shows only as "bid"
            game_view = view["game"]
            if game_view["phase"] != "over":  # the end reveals every screen and the seed
                assert "screens" not in game_view and "seed" not in game_view  # nobody's screen but its own
            else:
                over += 1
            text = json.dumps(game_view, sort_keys=True)
            assert text in (allowed if member == seat else public), f"seat {seat} held a view the engine never gave it"
            held += 1
        assert held > 10 and over > 0  # views from the first bids to the final reveal


async def _keyboard_to_target(page: Any, limit: int = 400) -> str:
    """Press Tab until a board target has the focus; return its target id."""
    for _ in range(limit):
        await page.keyboard.press("Tab")
        target = await page.evaluate(
            "() => { const e = document.activeElement;"
            " return e && e.classList && e.classList.contains('gt-target') ? e.dataset.target : null; }")
        if target:
            return str(target)
    raise AssertionError("no board target is reachable with Tab")


@pytest.mark.parametrize("game", ["giantslayer", "giants"])
async def test_boards_at_phone_width_by_keyboard_only(web_server: Any, open_page: Any, server_client: Any, game: str) -> None:
    """A seat plays with Tab and Enter only, at 360 px, and the page never scrolls sideways."""
    py = await server_client(web_server, "host")
    options = {"rounds": 1} if game == "giantslayer" else {}
    room = (await py.create_room(game, options=options, bots={"1": "random"}))["room"]
    page = await open_page(web_server, path=f"#/room/{room}", name="kim", viewport={"width": 360, "height": 740})
    await page.click('[data-join="0"]')
    await page.wait_for_selector(f'#board [data-board="{game}"]')
    if game == "giants":
        # The sealed bid form is ordinary form fields: Tab to the button, press Enter.
        await page.wait_for_selector("#gt-bid-submit")
        await page.focus("#gt-bid-markers")
        await page.keyboard.press("Tab")
        while await page.evaluate("() => document.activeElement.id") != "gt-bid-submit":
            await page.keyboard.press("Tab")
        start = (await board_state(page))["sent"]
        await page.keyboard.press("Enter")
        assert await wait_sent(page, "#board", start) is None
    else:
        for _ in range(3):
            while not (await board_state(page))["legal"]:
                await asyncio.sleep(0.05)
            start = (await board_state(page))["sent"]
            stone = await _keyboard_to_target(page)
            await page.keyboard.press("Enter")  # the stone: its destinations light up
            assert (await board_state(page))["prefix"] == 1, stone
            await _keyboard_to_target(page)
            await page.keyboard.press(" ")  # Space works as well as Enter
            assert await wait_sent(page, "#board", start) is None
    overflow = await page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the {game} board is {overflow}px wider than a phone"
    await screenshot(page, f"board-{game}-phone")
