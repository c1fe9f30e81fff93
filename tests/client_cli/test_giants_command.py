"""The `giants` command line: version, argument checks, JSON output, errors on stderr."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from client_cli.cli import main
from client_cli.client import Client

ROOT = Path(__file__).resolve().parents[2]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("giants-table ") and "(protocol 4)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["selfplay", "tara", "--games", "-5"], "must be at least 1, not -5"),
        (["selfplay", "tara", "--games", "0"], "must be at least 1, not 0"),
        (["arena", "tara", "random", "random", "--games", "-1"], "must be at least 1"),
    ],
)
def test_counts_must_be_positive(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_arena_needs_two_bots(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "tara", "mcts"]) == 2
    captured = capsys.readouterr()
    assert "at least two bots" in captured.err and captured.out == ""


def test_bad_option_is_an_error_not_a_crash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfplay", "tara", "--option", "games"]) == 2
    assert "--option wants NAME=VALUE" in capsys.readouterr().err


def test_selfplay_and_arena_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfplay", "tara", "--games", "2", "--option", "games=1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["games"] == 2 and data["game"] == "tara"
    assert sum(data["wins"].values()) == 2
    assert main(["arena", "tara", "greedy", "random", "--games", "2", "--option", "games=1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["bot"] for b in data["bots"]] == ["greedy", "random"]
    assert all(b["games"] == 2 for b in data["bots"])


@pytest.mark.redis
async def test_bot_that_fails_to_load_creates_no_room(giants_server: Any) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.cli", "bot", giants_server.url.removeprefix("ws://"),
        "--create", "tara", "--bot", "no_such_module:Bot",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert "cannot import bot module 'no_such_module'" in err.decode()
    assert "Traceback" not in err.decode() and out == b""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.cli", "bot", giants_server.url, "--create", "tara", "--bot", "islander",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2 and "does not play tara" in err.decode()
    async with Client(giants_server.url) as client:
        assert await client.list_rooms(include_finished=True) == []


@pytest.mark.parametrize("command", [["play", "--script"], ["watch", "R"], ["bot", "--room", "R"]])
def test_unreachable_server_without_scheme_is_a_clear_error(command: list[str]) -> None:
    import subprocess

    argv = [sys.executable, "-m", "client_cli.cli", command[0], "127.0.0.1:1", *command[1:]]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "cannot reach 127.0.0.1:1" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.redis
async def test_the_scripted_example_of_bots_md_works(giants_server: Any) -> None:
    """docs/bots.md "Scripting the terminal client": its printf pipeline, run as written
    (with this server's URL and the giants command of this environment)."""
    import re

    text = (ROOT / "docs" / "bots.md").read_text()
    section = text[text.index("## Scripting the terminal client"):]
    line = next(li for li in section.splitlines() if li.startswith("printf "))
    assert "ws://127.0.0.1:8765" in line
    command = line.replace("ws://127.0.0.1:8765", giants_server.url)
    command = re.sub(r"\| giants ", f"| {sys.executable} -m client_cli.cli ", command)
    proc = await asyncio.create_subprocess_shell(
        command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, (out.decode(), err.decode())
    shown = out.decode()
    assert "and joined it as seat 0" in shown
    assert "> /resign\nyou resigned" in shown
    assert "resigned" in shown.split("> /resign")[1]
