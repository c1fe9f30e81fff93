"""A seat can be got back: quit the terminal client, start it again, play on.

Scripted sessions of `giants play` as subprocesses against a real server; the seat
token travels only through the per-user seat file (GIANTS_STATE_DIR, set for the whole
test session by tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from client_cli.bots.runner import run_bot
from client_cli.client import Client, SeatStore, TrackedRoom
from engines import registry

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]


async def scripted(url: str, args: list[str], room: TrackedRoom, lines: list[str], moves: int) -> str:
    """Run `giants play URL ARGS --script`: send `lines`, then `moves` moves of seat 0
    (chosen from the spectator `room`'s view when it is seat 0's turn), then end input.
    Returns what the client printed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.cli", "play", url, *args, "--script", "--name", "ann",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    assert proc.stdin is not None
    for line in lines:
        proc.stdin.write(f"{line}\n".encode())
    engine = registry.get_engine("tara")
    for _ in range(moves):
        await room.wait_for(lambda r: r.to_act == [0] and r.info["seats"][0]["connected"], timeout=30)
        version = room.version
        state = engine.state_from_view(room.game)
        proc.stdin.write(f"{engine.format_action(state, engine.legal_actions(state, 0)[0])}\n".encode())
        await proc.stdin.drain()
        await room.wait_for(lambda r, v=version: (r.version or 0) > v and r.to_act != [0], timeout=30)
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert "Traceback" not in err.decode(), err.decode()
    return out.decode()


async def test_quit_and_resume_a_seat_in_the_terminal_client(giants_server: Any, private_state_dir: Path) -> None:
    url = giants_server.url
    host_port = url.removeprefix("ws://")  # a URL without ws:// is accepted
    async with Client(url, name="eyes") as eyes:
        room_id = (await eyes.create_room("tara", options={"games": 1}, bots={"1": "random"}))["room"]
        room = await eyes.watch(room_id)
        first = await scripted(host_port, ["--room", room_id, "--seat", "0"], room, [], 1)
        assert f"joined room {room_id} as seat 0" in first
        assert first.count("ok: played") == 1
        # The token is on disk, readable only by the user; the server keeps the seat.
        entry = SeatStore.default().find(url, room_id)
        assert entry is not None and entry.seat == 0 and entry.game == "tara"
        assert SeatStore.default().path.parent == private_state_dir
        await room.wait_for(lambda r: not r.info["seats"][0]["connected"], timeout=10)
        assert room.status == "playing"
        # Start again with --resume: the same seat, and the lobby lists "my games".
        second = await scripted(url, ["--resume", room_id], room, ["/rooms"], 1)
        assert f"resumed seat 0 of room {room_id}" in second
        assert "Your games (number: resume your seat):" in second
        mine = second.split("Your games (number: resume your seat):\n")[1].splitlines()[0]
        assert mine.split()[:2] == ["1", room_id] and "seat 0" in mine
        assert second.count("ok: played") == 1
        # Plain --room also takes the seat back (no already_started).
        third = await scripted(url, ["--room", room_id], room, [], 1)
        assert f"resumed seat 0 of room {room_id}" in third
        assert "already_started" not in third
        # Resign from the script: the game ends and the file remembers the result.
        fourth = await scripted(url, ["--resume", room_id], room, ["/resign"], 0)
        assert "> /resign\nyou resigned" in fourth
        await room.wait_for(lambda r: r.finished, timeout=10)
        assert room.outcome is not None and room.outcome["reason"] == "resigned"
    entry = SeatStore.default().find(url, room_id)
    assert entry is not None and entry.status == "finished" and entry.result == "lost (resigned)"


async def test_client_join_resumes_a_stored_seat_and_forgets_stale_ones(giants_server: Any, tmp_path: Path) -> None:
    url = giants_server.url
    store = SeatStore(tmp_path / "seats.json")
    async with Client(url, name="host") as host:
        room_id = (await host.create_room("tara", bots={"1": "random"}))["room"]
    async with Client(url, name="ann", seats=store) as first:
        room = await first.join(room_id)
        token = room.token
    assert store.find(url, room_id) is not None
    async with Client(url, name="ann", seats=store) as second:
        again = await second.join(room_id)  # the game started meanwhile: resumed
        assert again.seat == 0 and again.token == token and again.status == "playing"
    # A token the server no longer knows is dropped, and the join goes ahead.
    async with Client(url, name="host") as host:
        other = (await host.create_room("tara"))["room"]
    store.save(url, other, 0, "not-a-real-token")
    async with Client(url, name="ann", seats=store) as third:
        fresh = await third.join(other)
        assert fresh.seat == 0 and fresh.token != "not-a-real-token"
    entry = store.find(url, other)
    assert entry is not None and entry.token == fresh.token


async def test_a_restarted_sdk_bot_resumes_its_seat(giants_server: Any, tmp_path: Path) -> None:
    """`run_bot(..., seats=store)` twice on one room: the second run resumes the seat the
    first one held (a bot process that crashed and was started again)."""
    url = giants_server.url
    store = SeatStore(tmp_path / "seats.json")
    async with Client(url, name="host") as host:
        room_id = (await host.create_room("tara", options={"games": 1}))["room"]
        human = await host.join(room_id, 1)
        seated: list[TrackedRoom] = []
        task = asyncio.create_task(run_bot(url, room_id, "random", seats=store, on_seated=seated.append))
        await human.wait_for(lambda r: r.status == "playing", timeout=10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        held = store.find(url, room_id)
        assert held is not None and held.seat == 0
        play = asyncio.create_task(run_bot(url, room_id, "random", seats=store, on_seated=seated.append))
        while not human.finished:
            legal = await human.wait_turn(30)
            if legal:
                await host.act(room_id, legal[0])
        outcome = await asyncio.wait_for(play, 30)
    assert outcome is not None
    assert [r.seat for r in seated] == [0, 0] and seated[1].token == held.token
