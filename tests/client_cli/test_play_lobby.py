"""`giants play` as a Lichess / boardgame.io user expects: with no arguments it opens
the lobby of the local server, `giants play GAME` pairs you with a player waiting for
that game (or creates a room and waits), and every lobby entry has a number that opens
it — your game resumed, a free seat joined, a running game watched, a finished one
replayed. Real server and Redis; the Textual app through its pilot; the command as a
subprocess."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from client_cli.cli import build_parser
from client_cli.client import Client
from client_cli.commands.play import DEFAULT_URL, resolve_target, start_commands
from client_cli.seat_store import SeatStore
from client_cli.tui.app import PlayApp
from client_cli.tui.session import PlaySession

ROOT = Path(__file__).resolve().parents[2]


def parsed(argv: list[str]) -> Any:
    args = build_parser().parse_args(["play", *argv])
    resolve_target(args)
    return args


def test_play_without_arguments_opens_the_lobby_and_keeps_every_older_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIANTS_URL", raising=False)
    args = parsed([])
    assert (args.url, start_commands(args)) == (DEFAULT_URL, [])  # the lobby of `giants serve`'s default
    args = parsed(["tara"])
    assert (args.url, start_commands(args)) == (DEFAULT_URL, ["/play tara"])
    args = parsed(["causeway", "--rules", "quick"])
    assert start_commands(args) == ["/play causeway rules=quick"]
    args = parsed(["example.org:9000", "giants"])
    assert (args.url, start_commands(args)) == ("example.org:9000", ["/play giants"])
    args = parsed(["example.org:9000"])
    assert (args.url, start_commands(args)) == ("example.org:9000", [])
    assert start_commands(parsed(["h:1", "--resume", "r0"])) == ["/resume r0"]
    assert start_commands(parsed(["h:1", "--create", "tara", "--bots", "1=mcts"])) == ["/create tara bots=1:mcts"]
    assert start_commands(parsed(["h:1", "--room", "r0", "--seat", "1"])) == ["/join r0 1"]
    monkeypatch.setenv("GIANTS_URL", "ws://10.0.0.5:8765")
    assert parsed(["tara"]).url == "ws://10.0.0.5:8765"


def test_an_unknown_game_is_refused_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    from client_cli.cli import main

    assert main(["play", "h:1", "chess"]) == 2
    err = capsys.readouterr().err
    assert "no game 'chess'; choose one of: " in err and "tara" in err


async def until(predicate: Any, pilot: Any, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await pilot.pause(0.02)


def number_of(screen: str, text: str) -> str:
    """The lobby number of the entry whose line holds `text`."""
    line = next(li for li in screen.splitlines() if text in li and li.strip()[:1].isdigit())
    return line.split()[0]


@pytest.mark.redis
async def test_giants_play_game_pairs_the_second_player_with_the_first(giants_server: Any, tmp_path: Path) -> None:
    """ann opens the lobby (no arguments) and picks Tara by its number: a room is
    created and she waits. bob runs `giants play tara` (GIANTS_URL names the server):
    he sits down in ann's room, and the game starts for both."""
    app = PlayApp(giants_server.url, name="ann", seats=SeatStore(tmp_path / "ann.json"))
    async with app.run_test(size=(140, 50)) as pilot:
        await until(lambda: app.session is not None and "New game" in app.board_text(), pilot)
        screen = app.board_text()
        assert "(no open rooms)" in screen
        app.query_one("#command", Input).value = number_of(screen, "tara ")
        await pilot.press("enter")
        await until(lambda: app.last_reply.text.startswith("created room"), pilot)
        assert "waiting for players" in app.last_reply.text
        room = app.session.room
        assert room is not None and room.seat == 0 and room.info["status"] == "waiting"
        env = dict(os.environ, GIANTS_URL=giants_server.url, GIANTS_STATE_DIR=str(tmp_path / "bob"))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client_cli.cli", "play", "tara", "--name", "bob", "--script",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=ROOT, env=env,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, (out.decode(), err.decode())
        assert f"> /play tara\njoined room {room.id} as seat 1" in out.decode()
        await until(lambda: room.info.get("status") == "playing", pilot)
        assert [s["name"] for s in room.info["seats"]] == ["ann", "bob"]
        await until(lambda: "you are seat 0" in app.board_text() and "bob" in app.board_text(), pilot)


@pytest.mark.redis
async def test_lobby_numbers_join_watch_replay_and_resume(giants_server: Any, tmp_path: Path) -> None:
    url = giants_server.url
    async with Client(url, name="bea") as bea:
        waiting = (await bea.create_room("tara"))["room"]
        await bea.join(waiting, 0)
        running = (await bea.create_room("tara", bots={"1": "random"}))["room"]
        await bea.join(running, 0)
        done = (await bea.create_room("giantslayer", options={"rounds": 1}, bots={"0": "random", "1": "random"}))["room"]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while not any(r["room"] == done for r in await bea.list_rooms(include_finished=True)
                      if r["status"] == "finished"):
            assert loop.time() < deadline
            await asyncio.sleep(0.05)
        # In the app: the waiting room's number takes its free seat.
        app = PlayApp(url, name="cal", seats=SeatStore(tmp_path / "cal.json"))
        async with app.run_test(size=(160, 50)) as pilot:
            await until(lambda: app.session is not None and waiting in app.board_text(), pilot)
            screen = app.board_text()
            assert f"{waiting}" in screen and "[bea, -]" in screen and "-> join" in screen
            assert "[bea, bot:random]" in screen and "-> watch" in screen
            app.query_one("#command", Input).value = number_of(screen, waiting)
            await pilot.press("enter")
            await until(lambda: app.last_reply.text == f"joined room {waiting} as seat 1", pilot)
            await until(lambda: "you are seat 1" in app.board_text(), pilot)
        # A fresh session of the same user: that game is listed first, to resume.
        async with Client(url, name="cal", seats=SeatStore(tmp_path / "cal.json")) as cal:
            session = PlaySession(cal)
            await session.handle("/rooms all")
            screen = session.screen()
            mine = screen.split("Your games")[1].split("\n\n")[0]
            assert waiting in mine and number_of(screen, waiting) == "1"
            assert (await session.handle("1")).text == f"resumed seat 1 of room {waiting}"
            session.room = None
            session.screen()
            assert (await session.handle(number_of(session.screen(), running))).text == f"watching room {running}"
            assert session.room is not None and session.room.seat is None
            session.room = None
            reply = await session.handle(number_of(session.screen(), done))
            assert reply.text.startswith(f"replay of room {done}")
            assert session.screen().startswith("Replay - giantslayer/standard")
            assert (await session.handle("99")).error
