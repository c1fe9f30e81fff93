"""Server-run bots obey the server (issue 10 item 1): bundled names only, parameters
clamped to config, a time budget per move, cancellable thinking, secret randomness."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from server.app import GiantsServer

pytestmark = pytest.mark.redis

HUGE = "mcts,iterations=1000000000000"


async def test_only_bundled_bots_with_documented_parameters_are_accepted(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    for spec in ("engines.bots.greedy:GreedyBot", "os", "mcts,depth=3", "mcts,iterations=lots",
                 "mcts,iterations=nan", "mcts,c=-1", "random,iterations=5", "mcts,order=maybe"):
        refused = await alice.error("create_room", game="tara", bots={"1": spec})
        assert refused["code"] == "bad_options", spec
    assert not giants_server.lobby.rooms  # nothing was created


async def test_parameters_are_clamped_to_the_server_maxima(server_factory, client_factory) -> None:
    """iterations=10**12 is accepted but stored and played as the configured maximum;
    `ms` is capped by the move budget."""
    server = await server_factory(bot_max_iterations=50, bot_move_seconds=0.5)
    alice = await client_factory(server.url, "alice")
    created = await alice.ok("create_room", game="tara", bots={"1": HUGE + ",ms=999999"}, autostart=False)
    room = created["room"]
    listed = {r["room"]: r for r in (await alice.ok("list_rooms"))["rooms"]}
    assert listed[room]["seats"][1]["bot"] == "mcts,iterations=50,ms=500.0"


async def test_a_huge_search_still_moves_within_the_budget(server_factory, client_factory) -> None:
    """With no iteration cap at all, mcts,iterations=10**12 would never answer: the move
    budget stops it and the game goes on."""
    server = await server_factory(bot_max_iterations=10**13, bot_move_seconds=0.2)
    watcher = await client_factory(server.url, "watcher")
    room = (await watcher.ok("create_room", game="tara", bots={"0": HUGE, "1": HUGE}))["room"]
    await watcher.ok("watch", room=room)
    await watcher.wait_for(lambda: watcher.rooms[room].version >= 6, timeout=60)
    moves = [e for e in watcher.rooms[room].events if e["type"] == "action"]
    assert len(moves) >= 4
    bots = server.lobby.rooms[room].bot_players
    assert all(bot.iterations == 10**12 for bot in bots.values())  # type: ignore[attr-defined]


async def test_a_restored_room_obeys_todays_limits(server_factory, client_factory) -> None:
    """A room stored under generous limits is restored by a server with strict ones: its
    bots play with the strict clamps."""
    first = await server_factory(bot_max_iterations=10**13, bot_move_seconds=0.2)
    alice = await client_factory(first.url, "alice")
    room = (await alice.ok("create_room", game="tara", bots={"1": HUGE}))["room"]
    token = (await alice.ok("join", room=room))["token"]
    await alice.close()
    await first.stop()
    second = await server_factory(bot_max_iterations=30, bot_move_seconds=5)
    restored = second.lobby.rooms[room]
    assert restored.seats[1].bot == HUGE  # as stored
    alice = await client_factory(second.url, "alice")
    await alice.ok("resume", room=room, token=token)
    await alice.wait_for(lambda: bool(alice.rooms[room].legal))
    version = (await alice.ok("act", room=room, action=alice.rooms[room].legal[0]))["version"]
    await alice.wait_version(room, version + 1, timeout=30)  # the bot answered
    assert restored.bot_players[1].iterations == 30  # type: ignore[attr-defined]


async def test_bot_randomness_is_secret_and_not_the_room_seed(server_factory, client_factory) -> None:
    """GI-6/GI-28: each bot is seeded from a fresh secret, never from meta["seed"]."""
    server = await server_factory(bot_move_seconds=0.2)
    watcher = await client_factory(server.url, "watcher")
    room_id = (await watcher.ok("create_room", game="giants", players=3,
                                bots={"0": "islander", "1": "random", "2": "greedy"}))["room"]
    await watcher.ok("watch", room=room_id)
    await watcher.wait_for(lambda: watcher.rooms[room_id].version >= 4, timeout=30)
    room = server.lobby.rooms[room_id]
    seeds = {seat: bot.context.seed for seat, bot in room.bot_players.items()}
    assert seeds
    seed = room.meta["seed"]
    for seat, bot_seed in seeds.items():
        assert bot_seed not in (seed, seed + seat, None)
    assert len(set(seeds.values())) == len(seeds)


async def until_the_bot_thinks(client: Any, room: str, thinking: Callable[[], Awaitable[bool]]) -> None:
    """Play the human's first move if Tara's lots (TA-10) gave it the start, then wait
    until the bot is searching."""
    acted = False
    for _ in range(400):
        if await thinking():
            return
        copy = client.rooms.get(room)
        if not acted and copy is not None and copy.legal:
            await client.ok("act", room=room, action=copy.legal[0])
            acted = True
        await asyncio.sleep(0.05)
    pytest.fail("the bot never started thinking")


def _metric(url: str, name: str) -> float:
    http = url.replace("ws://", "http://") + "/metrics"
    with urllib.request.urlopen(http, timeout=10) as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


async def test_sigterm_stops_the_server_while_a_bot_thinks(serve_process, client_factory) -> None:
    """A bot allowed to think for an hour: SIGTERM still ends `giants serve` at once
    (shutdown never waits for a search), with exit code 0."""
    sp = serve_process("--bot-move-seconds", "3600", "--bot-max-iterations", str(10**13))
    client = await client_factory(sp.url, "alice")
    room = (await client.ok("create_room", game="tara", bots={"1": HUGE}))["room"]
    await client.ok("join", room=room)
    loop = asyncio.get_running_loop()

    async def thinking() -> bool:
        return await loop.run_in_executor(None, _metric, sp.url, "giants_bots_thinking") >= 1

    await until_the_bot_thinks(client, room, thinking)
    sp.proc.send_signal(signal.SIGTERM)
    try:
        code = await loop.run_in_executor(None, sp.proc.wait, 60)
    except subprocess.TimeoutExpired:
        pytest.fail("giants serve ignored SIGTERM while a bot was thinking")
    assert code == 0, "".join(sp.output)


async def test_stop_never_waits_for_a_thinking_bot(server_factory, client_factory) -> None:
    server: GiantsServer = await server_factory(bot_move_seconds=3600, bot_max_iterations=10**13)
    alice = await client_factory(server.url, "alice")
    room = (await alice.ok("create_room", game="tara", bots={"1": HUGE}))["room"]
    await alice.ok("join", room=room)
    pool = server.lobby.bots.pool

    async def thinking() -> bool:
        return pool.busy == 1

    await until_the_bot_thinks(alice, room, thinking)
    await asyncio.wait_for(server.stop(), 60)
    for _ in range(200):  # the cancelled search notices and ends
        if not pool.busy:
            break
        await asyncio.sleep(0.05)
    assert pool.busy == 0
