"""The minimal bot of docs/protocol.md section 10, run as written, plays whole games.

It must answer each simultaneous GIANTS step once (room.answered), never replacing its
own sealed bid, and finish the game; raw_bot.js (client_cli/examples) likewise.
"""

from __future__ import annotations

import asyncio
import json
import re
import types
from pathlib import Path
from typing import Any

import pytest

from client_cli.client import Client
from engines import registry
from server.endings import ENDINGS

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
RAW_BOT = ROOT / "client_cli" / "examples" / "raw_bot.js"


def documented_bot() -> types.ModuleType:
    """The Python block of section 10, loaded as a module."""
    text = DOC.read_text()
    section = text[text.index("## 10. A minimal bot") : text.index("## 11.")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "section 10 has no python block"
    module = types.ModuleType("minimal_bot")
    exec(compile(code.group(1), str(DOC), "exec"), module.__dict__)
    return module


def replacements(replay: dict[str, Any]) -> list[tuple[int, int]]:
    """(index, seat) of every logged action that replaced the seat's own answer in a
    still-open simultaneous step (the same rule the server uses for `answered`)."""
    engine = registry.get_engine(replay["game"], replay["rules"])
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    answered: frozenset[int] = frozenset()
    found = []
    for i, entry in enumerate(replay["actions"]):
        seat = entry["seat"]
        if seat in answered:
            found.append((i, seat))
        before = engine.to_act(state)
        state = engine.apply_text(state, seat, entry["action"]).state
        after = engine.to_act(state)
        step = answered | {seat}
        continuing = len(before) > 1 and len(after) > 1 and after <= before and not after <= step
        answered = step if continuing else frozenset()
    return found


async def test_documented_minimal_bot_plays_a_whole_giants_game(giants_server: Any) -> None:
    bot = documented_bot()
    url = giants_server.url
    async with Client(url, name="host") as host:
        room = (await host.create_room("giants", players=3))["room"]
        outcomes = await asyncio.wait_for(
            asyncio.gather(*(bot.play(url, room, f"doc-bot-{i}") for i in range(3))), 300
        )
        replay = await host.replay(room)
    assert outcomes[0] == outcomes[1] == outcomes[2] == replay["outcome"]
    assert outcomes[0]["reason"] not in ENDINGS  # the rules ended it
    assert len(replay["actions"]) > 50
    assert replacements(replay) == []  # each sealed bid was sent once per step


async def test_documented_minimal_bot_plays_tara_against_a_server_bot(giants_server: Any) -> None:
    bot = documented_bot()
    url = giants_server.url
    async with Client(url, name="host") as host:
        room = (await host.create_room("tara", options={"games": 1}, bots={"1": "random"}))["room"]
        outcome = await asyncio.wait_for(bot.play(url, room), 120)
        assert outcome == (await host.replay(room))["outcome"]


async def test_raw_node_bot_answers_each_giants_step_once(giants_server: Any) -> None:
    """raw_bot.js in a 3-seat GIANTS room against two server bots: it finishes, and its
    sealed bids are never replaced."""
    proc = await asyncio.create_subprocess_exec(
        "node", str(RAW_BOT), giants_server.url, "--create", "giants", "--players", "3",
        "--bots", "1=random,2=random",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    async with Client(giants_server.url, name="host") as host:
        replay = await host.replay(result["room"])
    assert result["outcome"] == replay["outcome"]
    mine = [e for e in replay["actions"] if e["seat"] == 0]
    assert result["moves"] == len(mine) > 10
    assert replacements(replay) == []
