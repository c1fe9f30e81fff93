"""The terminal client against a real server: Textual pilot, script mode, rendering."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from client_cli.client import Client
from client_cli.commands.watch import watch_plain
from client_cli.render import render_game
from client_cli.tui.app import PlayApp
from client_cli.tui.script import run_script
from client_cli.tui.session import PlaySession
from engines import registry

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]


async def until(predicate: Any, pilot: Any, timeout: float = 10.0) -> None:
    """Let the app run until `predicate()` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await pilot.pause(0.02)


async def type_line(pilot: Any, text: str) -> None:
    """Type `text` key by key into the command line and press enter."""
    await pilot.click("#command")
    await pilot.press(*list(text), "enter")


async def paste_line(pilot: Any, text: str) -> None:
    """Put a long command into the command line at once (typing costs ~60 ms a key)."""
    from textual.widgets import Input

    pilot.app.query_one("#command", Input).value = text
    await pilot.press("enter")


async def test_pilot_create_join_play_and_see_errors(giants_server: Any) -> None:
    """Typed in the Textual app: create a Tara room with a server bot, join it, play a
    legal move (the board shows it), then a bad one (a clear error with its code)."""
    app = PlayApp(giants_server.url, name="ann")
    async with app.run_test(size=(120, 60)) as pilot:
        await until(lambda: app.session is not None, pilot)
        await paste_line(pilot, "/create tara bots=1:random games=1")
        await until(lambda: app.last_reply.text.startswith("created room"), pilot)
        assert app.last_reply.text.endswith("and joined it as seat 0")  # /create sits you down
        await until(lambda: app.session.room is not None and bool(app.session.room.legal), pilot)
        assert "you are seat 0" in app.board_text()
        room = app.session.room
        move = room.legal[0]
        await type_line(pilot, move)
        await until(lambda: app.last_reply.text == f"played {move}", pilot)
        await until(lambda: bool(room.legal), pilot)  # the bot answered
        text = app.board_text()
        assert f"seat 0: {move} | seat 1: " in text.split("Recent: ")[1]
        assert "To act: seat 0 (you)" in text
        if room.legal:  # half a move is completed from the legal list
            from client_cli.tui.app import LegalMoveSuggester

            suggester = app.query_one("#command").suggester
            assert isinstance(suggester, LegalMoveSuggester)
            first = room.legal[0]
            assert await suggester.get_suggestion(first[0]) == next(m for m in room.legal if m.startswith(first[0]))
            assert await suggester.get_suggestion("/jo") is None
        await type_line(pilot, "Z9")
        await until(lambda: app.last_reply.error, pilot)
        assert app.last_reply.text.startswith("error [bad_notation]: 'Z9'")
        status = app.query_one("#status")
        assert status.has_class("error")
        await type_line(pilot, "/moves")
        await until(lambda: app.last_reply.panel, pilot)
        shown = app.board_text()  # every legal move, grouped by kind, none cut
        assert shown.startswith(f"Legal moves ({len(room.legal)}):")
        assert all(move in shown.split() for move in room.legal)
        await pilot.press("escape")
        assert "Legal moves (" not in app.board_text().splitlines()[0]


async def test_pilot_watch_shows_the_board_and_follows_moves(giants_server: Any) -> None:
    url = giants_server.url
    async with Client(url, name="host") as host:
        room_id = (await host.create_room("giantslayer", options={"rounds": 1}))["room"]
        seat0 = await host.join(room_id, 0)
        async with Client(url, name="other") as other:
            await other.join(room_id, 1)
            app = PlayApp(url, start=[f"/watch {room_id}"])
            async with app.run_test(size=(120, 60)) as pilot:
                await until(lambda: app.session is not None and app.session.room is not None, pilot)
                assert "you are spectating" in app.board_text()
                assert "To move: White" in app.board_text()
                await host.act(room_id, "a4-c6")
                await until(lambda: "Last move: a4-c6" in app.board_text(), pilot)
                assert "4    o . . B B . . W i   a4..h4" in app.board_text()
                await type_line(pilot, "e6-e7")
                await until(lambda: app.last_reply.error, pilot)
                assert app.last_reply.text == "error: you are watching: spectators cannot move"
        assert seat0.version is not None


async def test_script_mode_plays_against_a_bot_and_reports_bad_moves(giants_server: Any) -> None:
    """`giants play URL --room R --seat 0 --script` as a subprocess, fed by a "human"
    who watches the room and types each move when it is their turn, plus one bad move."""
    url = giants_server.url
    async with Client(url, name="host") as host:
        room_id = (await host.create_room("tara", options={"games": 1}, bots={"1": "random"}))["room"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.cli", "play", url, "--room", room_id, "--seat", "0",
        "--script", "--name", "scripted",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdin is not None
    engine = registry.get_engine("tara")
    played = 0
    async with Client(url, name="human eyes") as eyes:
        room = await eyes.watch(room_id)
        proc.stdin.write(b"A1\n")  # a corner: no such hill
        while True:
            await room.wait_for(lambda r: r.finished or r.to_act == [0], timeout=30)
            if room.finished:
                break
            version = room.version
            state = engine.state_from_view(room.game)
            move = engine.format_action(state, engine.legal_actions(state, 0)[-1])
            proc.stdin.write(f"{move}\n".encode())
            await proc.stdin.drain()
            played += 1
            await room.wait_for(lambda r, v=version: (r.version or 0) > v, timeout=30)
        outcome = room.outcome
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    text = out.decode()
    assert proc.returncode == 1, err.decode()  # one line (A1) was refused
    assert "> A1\nerror [bad_notation]:" in text
    assert text.count("ok: played ") == played
    assert f"Game over: winner seat {outcome['winners'][0]}" in text or "draw" in text
    assert "Room " + room_id in text


async def test_run_script_in_process_with_commands(giants_server: Any) -> None:
    """The script runner: /create with server bots, /join @created, /rooms, and moves."""
    import io

    out = io.StringIO()
    lines = ["/rooms", "pass", "/leave"]
    code = await run_script(giants_server.url, lines, out, name="s",
                            start=["/create giantslayer bots=1:random rounds=1"])
    text = out.getvalue()
    assert "> /create giantslayer bots=1:random rounds=1\ncreated room" in text
    assert "and joined it as seat 0" in text
    assert "> pass\nerror [illegal_action]: " in text  # White has moves, so no pass (GS-12)
    assert "> /leave\nleft room" in text
    assert code == 1


GAMES = [
    ("giantslayer", None, 2, {}),
    ("causeway", "barrier", 2, {}),
    ("causeway", "spellstone", 2, {}),
    ("tara", None, 2, {}),
    ("giants", None, 3, {}),
]


@pytest.mark.parametrize(("game", "rules", "players", "options"), GAMES,
                         ids=[f"{g[0]}-{g[1] or 'default'}" for g in GAMES])
async def test_client_renders_each_games_board_from_a_real_server(
    giants_server: Any, game: str, rules: str | None, players: int, options: dict[str, Any]
) -> None:
    """A seated client's screen shows the game's board drawn from the view the server
    sent, identical to rendering the engine's own view of the room's position."""
    url = giants_server.url
    async with Client(url, name="p0") as p0:
        room_id = (await p0.create_room(game, rules=rules, players=players, options=options))["room"]
        others = [Client(url, name=f"p{i}") for i in range(1, players)]
        for i, client in enumerate(others, start=1):
            await client.connect()
            await client.join(room_id, i)
        try:
            room = await p0.join(room_id, 0)
            await room.wait_for(lambda r: r.status == "playing", timeout=10)
            session = PlaySession(p0, room=room)
            screen = session.screen()
            live = giants_server.lobby.rooms[room_id]
            expected_board = render_game(game, live.engine.view(live.state, 0), 0)
            assert expected_board in screen
            assert screen.splitlines()[0].startswith(f"Room {room_id} - {game}/")
            if game == "giantslayer":
                assert "5   W . . B # B . . W    a5..i5" in screen
            elif game == "tara":
                assert "    A   B   C   D   E   F   G" in screen
            elif game == "causeway":
                assert "Giant's Causeway (" + (rules or "") in screen
                assert "r=0" in screen
            else:
                assert "GIANTS - turn 1, phase auction" in screen
                assert " 4  .   V   .   .   .   f3  f6  f2  .   .   .   .   Q" in screen
                assert "Your screen: " in screen  # our own screen, and only ours
                assert screen.count("thinking") == players
            # The same screen from `giants watch --once` (a spectator: no private screen).
            import io

            out = io.StringIO()
            assert await watch_plain(url, room_id, out, once=True) == 0
            assert "you are spectating" in out.getvalue()
            assert "Your screen" not in out.getvalue()
        finally:
            for client in others:
                await client.close()


async def test_finished_room_is_shown_as_its_replay(giants_server: Any) -> None:
    """An all-bot room plays itself out; `/replay` and `giants watch` show its final
    position (rebuilt from the revealed seed and the action log), outcome and moves."""
    import io

    url = giants_server.url
    async with Client(url, name="host") as host:
        room_id = (await host.create_room(
            "giantslayer", options={"rounds": 1}, bots={"0": "random", "1": "random"}))["room"]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while True:
            finished = await host.list_rooms(include_finished=True)
            if any(r["room"] == room_id and r["status"] == "finished" for r in finished):
                break
            assert loop.time() < deadline
            await asyncio.sleep(0.05)
        replay = await host.replay(room_id)
        session = PlaySession(host)
        await session.handle("/rooms all")
        row = next(line for line in session.lobby_text().splitlines() if room_id in line)
        assert "finished" in row and ("won" in row or "draw" in row)
        assert "[bot:random, bot:random]" in row
        reply = await session.handle(f"/replay {room_id}")
        assert reply.text.startswith(f"replay of room {room_id}: ")
    engine = registry.get_engine("giantslayer")
    state = engine.new_game(2, replay["options"], replay["seed"])
    for entry in replay["actions"]:
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
    screen = session.screen()
    assert screen.startswith("Replay - giantslayer/standard, 2 players, seed ")
    assert render_game("giantslayer", engine.view(state, None)) in screen
    # Stepping: back to the start, forward one move, to the end again.
    first = engine.new_game(2, replay["options"], replay["seed"])
    assert (await session.handle("/first")).text == f"move 0 of {len(replay['actions'])}"
    assert render_game("giantslayer", engine.view(first, None)) in session.screen()
    assert "after move 0 of" in session.screen().splitlines()[0]
    await session.handle("/next")
    one = engine.apply_text(first, replay["actions"][0]["seat"], replay["actions"][0]["action"]).state
    assert render_game("giantslayer", engine.view(one, None)) in session.screen()
    assert f">1. seat {replay['actions'][0]['seat']}" in session.screen()
    await session.handle("/prev 5")
    assert session.replay_at == 0
    await session.handle("/last")
    screen = session.screen()
    assert "final position" in screen.splitlines()[0]
    assert f"Moves ({len(replay['actions'])}): 1. seat 0: {replay['actions'][0]['action']}" in screen
    out = io.StringIO()
    assert await watch_plain(url, room_id, out, once=True) == 0
    # Live or already evicted, the watcher shows the same final board.
    assert render_game("giantslayer", engine.view(state, None)) in out.getvalue()


def test_recent_moves_never_show_another_seats_sealed_bid() -> None:
    """GI-8: the recent-moves line shows that a seat bid, not what (own bids are shown)."""
    from client_cli.client import TrackedRoom

    room = TrackedRoom("r", seat=0, view={"room": {}, "game": None, "outcome": None})
    room.events.extend([
        {"type": "action", "seat": 1, "action": "bid 2 w1 c"},
        {"type": "action", "seat": 0, "action": "bid 1 c"},
        {"type": "action", "seat": 2, "action": "place worker (5,3) logs 0"},
    ])
    session = PlaySession(Client("ws://127.0.0.1:1"), room=room)
    assert session.recent() == ["seat 1: bid (sealed)", "seat 0: bid 1 c", "seat 2: place worker (5,3) logs 0"]


async def test_create_joins_you_and_keeps_the_rooms_password(giants_server: Any) -> None:
    """/create sits you down in a password room; /join @created after `nojoin` reuses
    the password given to /create."""
    import io

    out = io.StringIO()
    code = await run_script(giants_server.url, ["/create tara password=s3cret nojoin", "/join @created"], out,
                            name="p", start=["/create tara password=s3cret bots=1:random"])
    text = out.getvalue()
    assert code == 0, text
    assert "and joined it as seat 0" in text
    assert "> /join @created\njoined room" in text
    async with Client(giants_server.url, name="other") as other:
        rooms = await other.list_rooms()
        assert rooms and all(r["password"] for r in rooms)
