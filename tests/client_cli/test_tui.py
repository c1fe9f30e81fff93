"""The Textual client playing GIANTS: move browser, Tab completion, history, full help,
column labels, the connection indicator and titles (pilot tests, real server)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from client_cli.client import Client
from client_cli.tui.app import PlayApp, completion, matching
from client_cli.tui.session import HELP, group_moves

pytestmark = pytest.mark.redis


async def until(predicate: Any, pilot: Any, timeout: float = 15.0) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await pilot.pause(0.02)


def test_matching_grouping_and_completion() -> None:
    legal = ["bid 0 c", "bid 1 c", "bid 1 w1 c", "pass", "place worker (5,3) logs 0", "xD4", "D4"]
    assert matching(legal, "bid 1") == ["bid 1 c", "bid 1 w1 c"]
    assert matching(legal, "worker 5,3") == ["place worker (5,3) logs 0"]  # words anywhere
    assert matching(legal, "") == legal
    assert completion(legal, "pl") == "place worker (5,3) logs 0"
    assert completion(legal, "bid 1") == "bid 1 "  # the start "bid 1 c" and "bid 1 w1 c" share
    assert completion(legal, "bid 1 ") is None
    assert completion(legal, "bi") == "bid "
    assert group_moves(legal) == {
        "bid": ["bid 0 c", "bid 1 c", "bid 1 w1 c"], "pass": ["pass"],
        "place": ["place worker (5,3) logs 0"], "capture": ["xD4"], "moves": ["D4"],
    }
    # Giant's Causeway: placements by piece, steps, leaps, destroy.
    causeway = ["giant@0,1", "trapper@2,-1", "giant@1,1", "0,1>3,-2", "0,1^e+1,1", "destroy@4,0", "pass"]
    assert group_moves(causeway) == {
        "giant": ["giant@0,1", "giant@1,1"], "trapper": ["trapper@2,-1"], "step": ["0,1>3,-2"],
        "leap": ["0,1^e+1,1"], "destroy": ["destroy@4,0"], "pass": ["pass"],
    }


async def test_giants_in_the_terminal(giants_server: Any) -> None:
    url = giants_server.url
    async with Client(url, name="bea") as bea, Client(url, name="cid") as cid:
        room_id = (await bea.create_room("giants", players=3))["room"]
        others = [await bea.join(room_id, 1), await cid.join(room_id, 2)]
        app = PlayApp(url, name="ann", start=[f"/join {room_id} 0"])
        async with app.run_test(size=(160, 60)) as pilot:
            await until(lambda: app.session is not None and app.session.room is not None, pilot)
            await until(lambda: app.sub_title.endswith("- connected"), pilot)
            room = app.session.room
            await until(lambda: bool(room.legal), pilot)
            assert app.title.endswith("your turn")
            # The move browser lists every legal move, grouped; typing filters it.
            browser = app.moves_text()
            assert browser.startswith(f"{len(room.legal)} of {len(room.legal)} moves")
            assert f"bid ({sum(m.startswith('bid ') for m in room.legal)})" in browser
            command = app.query_one("#command", Input)
            await pilot.press("b", "i")
            await pilot.press("tab")
            assert command.value == "bid "
            await pilot.press("1", " ", "c")
            found = matching(room.legal, command.value)
            assert 0 < len(found) < len(room.legal)
            assert app.moves_text().startswith(f"{len(found)} of {len(room.legal)} moves")
            assert all(f"  {m}" in app.moves_text() for m in found)
            command.value = found[0]
            await pilot.press("enter")
            await until(lambda: app.last_reply.text == f"played {found[0]}", pilot)
            # Answered: not "your turn" any more; our sealed bid is shown to us.
            await until(lambda: room.info.get("answered") == [0], pilot)
            assert app.title.endswith("their turn")
            assert "Your sealed bid: " in app.board_text()
            # Input history: Up brings the last line back.
            await pilot.press("up")
            assert command.value == found[0]
            command.value = ""
            # Full help in the board pane, Esc closes it.
            await pilot.press("f1")
            assert app.board_text() == HELP
            assert "/quit" in app.board_text() and "/resign" in app.board_text()
            await pilot.press("escape")
            text = app.board_text()
            assert text != HELP
            # Column numbers above and below the island.
            ruler = "    0   1   2   3   4   5   6   7   8   9   10  11  12"
            assert text.count(ruler) == 2
            # The others bid: the bids are revealed in the table, "Your sealed bid" goes.
            for client, tracked in ((bea, others[0]), (cid, others[1])):
                bid = next(m for m in tracked.legal if m.startswith("bid "))
                await client.act(room_id, bid)
            await until(lambda: room.info.get("answered") == [] and "has bid" not in app.board_text(), pilot)
            assert "Your sealed bid" not in app.board_text()
            assert "seat  transport  Moai    bid" in app.board_text()
            # Moai points: our own (none erected yet) beside our row, the others' hidden.
            assert "Your score now: 0 transport + 0 Moai = 0 " in app.board_text()
            rows = {line[:4]: line for line in app.board_text().splitlines() if line[:4] in ("   0", "   1", "   2")}
            assert rows["   0"].endswith("(you)") and "hidden" not in rows["   0"]
            assert "  hidden  " in rows["   1"] and "  hidden  " in rows["   2"]


async def test_watch_title_says_playing(giants_server: Any) -> None:
    async with Client(giants_server.url, name="host") as host:
        room_id = (await host.create_room("tara", bots={"1": "random"}))["room"]
        await host.join(room_id, 0)
        app = PlayApp(giants_server.url, start=[f"/watch {room_id}"])
        async with app.run_test(size=(120, 50)) as pilot:
            await until(lambda: app.session is not None and app.session.room is not None, pilot)
            await until(lambda: "watching - playing" in app.title, pilot)
            assert "waiting" not in app.title


def test_fit_wraps_prose_and_never_a_board_row() -> None:
    from client_cli.render import render_game
    from client_cli.tui.fit import fit, is_prose
    from engines import registry

    engine = registry.get_engine("giants")
    text = render_game("giants", engine.view(engine.new_game(3, engine.validate_options(3, {}), 1), 0), 0)
    text += "\nLegal moves (4): bid 0 | bid 0 c | bid 1 w1 c | place worker (5,3) logs 0"
    shown = fit(text, 40)
    board = [line for line in text.splitlines() if not is_prose(line)]
    assert sum(1 for line in board if "  .   " in line) >= 8  # the island's rows count as board
    lines = shown.splitlines()
    assert all(line in lines for line in board)  # every board row whole, unwrapped
    assert all(len(line) <= 40 for line in lines if is_prose(line) or line not in board)
    assert " ".join(shown.split()) == " ".join(text.split())  # nothing lost or reordered
    # A move list breaks between moves, never inside one.
    moves = fit("Legal moves (4): bid 0 | bid 0 c | bid 1 w1 c | place worker (5,3) logs 0", 30)
    assert moves.splitlines() == ["Legal moves (4): bid 0 |", "  bid 0 c | bid 1 w1 c |", "  place worker (5,3) logs 0"]


async def test_a_narrow_window_wraps_long_lines_and_keeps_the_map_whole(giants_server: Any) -> None:
    """Long lines are wrapped to the board pane, not cut; the island's rows never wrap
    (the pane scrolls sideways instead)."""
    from textual.widgets import Static

    from client_cli.tui.fit import is_prose

    url = giants_server.url
    async with Client(url, name="bea") as bea, Client(url, name="cid") as cid:
        room_id = (await bea.create_room("giants", players=3))["room"]
        await bea.join(room_id, 1)  # seats that do not move: the screen holds still
        await cid.join(room_id, 2)
        app = PlayApp(url, name="ann", start=[f"/join {room_id} 0"])
        async with app.run_test(size=(90, 40)) as pilot:
            await until(lambda: app.session is not None and app.session.room is not None
                        and bool(app.session.room.legal), pilot)
            pane = app.query_one("#board-pane")
            width = pane.scrollable_content_region.width
            await until(lambda: "until the end" in str(app.query_one("#board", Static).content)
                        and all(len(li) <= width for li in str(app.query_one("#board", Static).content).splitlines()
                                if is_prose(li)), pilot)
            shown = str(app.query_one("#board", Static).content).splitlines()
            full = app.board_text().splitlines()
            assert any(len(line) > width and is_prose(line) for line in full)  # there was something to wrap
            island = [line for line in full if line.startswith(" 4  ")]
            assert island and island[0] in shown  # a map row is one line on the screen
            assert " ".join(" ".join(shown).split()) == " ".join(app.session.screen(width).split())
            assert all(len(line) <= width for line in app.session.screen(width).split("Legal moves")[1].splitlines())


async def test_the_indicator_says_reconnecting_while_the_server_is_away(server_factory: Any) -> None:
    first = await server_factory()
    async with Client(first.url, name="bea") as bea:
        room_id = (await bea.create_room("tara", bots={"1": "random"}))["room"]
    app = PlayApp(first.url, name="ann", start=[f"/join {room_id} 0"])
    async with app.run_test(size=(120, 50)) as pilot:
        await until(lambda: app.session is not None and app.session.room is not None, pilot)
        await until(lambda: app.sub_title.endswith(" - connected"), pilot)
        await first.stop()
        await until(lambda: app.sub_title.endswith(" - reconnecting..."), pilot)
        await server_factory(port=first.port)
        await until(lambda: app.sub_title.endswith(" - connected"), pilot, timeout=60)
        room = app.session.room
        await until(lambda: room.info.get("seats", [{}])[0].get("connected") is True, pilot, timeout=30)
        assert "you are seat 0" in app.board_text()


async def test_f7_and_f8_step_through_a_replay(giants_server: Any) -> None:
    import asyncio

    async with Client(giants_server.url, name="host") as host:
        room_id = (await host.create_room(
            "tara", options={"games": 1}, bots={"0": "random", "1": "random"}))["room"]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while not any(r["room"] == room_id and r["status"] == "finished"
                      for r in await host.list_rooms(include_finished=True)):
            assert loop.time() < deadline
            await asyncio.sleep(0.05)
        total = len((await host.replay(room_id))["actions"])
    app = PlayApp(giants_server.url, name="ann", start=[f"/replay {room_id}"])
    async with app.run_test(size=(120, 50)) as pilot:
        await until(lambda: app.session is not None and app.session.replay is not None, pilot)
        assert app.title == "Giants Table - replay"
        assert "final position" in app.board_text().splitlines()[0]
        await pilot.press("f7")
        await until(lambda: app.last_reply.text == f"move {total - 1} of {total}", pilot)
        assert f"after move {total - 1} of {total}" in app.board_text().splitlines()[0]
        assert f">{total - 1}. seat " in app.board_text()
        await pilot.press("f8")
        await until(lambda: app.last_reply.text == f"move {total} of {total}", pilot)
        assert "final position" in app.board_text().splitlines()[0]
