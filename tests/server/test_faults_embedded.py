"""Issue 11 items 4, 5 and 7 and #10.9 with real processes: `giants serve` supervises its
embedded Redis, a data directory serves one server only, a join retried across a
SIGKILL is taken once, and an external Redis without persistence is warned about."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
import redis

from server.app import GiantsServer
from server.config import Config
from server.embedded_redis import SOCKET_NAME, ping_socket, redis_executable
from tests.fault_checks import eventually, one_reply_per_id, stored_room
from tests.server.test_persistence import play

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]


def redis_pid(data: Path) -> int:
    return int((data / "redis.pid").read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


async def test_killed_embedded_redis_is_restarted_and_play_continues(serve_process, client_factory, tmp_path) -> None:
    """redis-server is SIGKILLed mid-game: the server restarts it from its AOF; the
    moves acknowledged before are all there, and the same connections play on."""
    data = tmp_path / "data"
    server = serve_process("--fsync", "always", "--redis-timeout", "1", embedded_dir=data)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await play({0: alice, 1: bob}, room, 4, random.Random(4))
    acked = alice.rooms[room].version
    first = redis_pid(data)
    os.kill(first, signal.SIGKILL)
    await eventually(lambda: not alive(first))
    await eventually(lambda: (data / "redis.pid").exists() and redis_pid(data) != first and alive(redis_pid(data)))
    client = redis.Redis(unix_socket_path=str(data / SOCKET_NAME))
    try:
        assert client.config_get("appendfsync")["appendfsync"] == "always"
    finally:
        client.close()
    assert alice.rooms[room].version == acked  # nothing went back
    await play({0: alice, 1: bob}, room, 3, random.Random(5))  # the same connections play on
    actions = [e for e in alice.rooms[room].events if e["type"] == "action"]
    assert len(actions) == 7
    for c in (alice, bob):
        one_reply_per_id(c)
    assert server.proc.poll() is None


def test_second_server_on_the_same_data_directory_refuses(serve_process, tmp_path, key_prefix) -> None:
    """The second `giants serve` exits 1 with a message naming the first; the first
    keeps its Redis (stopping the second used to stop the first one's Redis)."""
    data = tmp_path / "data"
    first = serve_process(embedded_dir=data)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIANTS_")}
    second = subprocess.run(
        [sys.executable, "-m", "client_cli.cli", "serve", "--port", "0", "--data-dir", str(data),
         "--key-prefix", key_prefix],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env,
    )
    assert second.returncode == 1
    output = second.stdout + second.stderr
    assert "another giants serve" in output and str(data) in output, output
    assert "Traceback" not in output
    client = redis.Redis(unix_socket_path=str(data / SOCKET_NAME))
    try:
        assert client.ping()  # the first server's Redis still runs
    finally:
        client.close()
    assert first.proc.poll() is None


async def test_external_redis_without_persistence_is_warned_about(tmp_path, key_prefix, caplog) -> None:
    """Item 7: a Redis that keeps nothing on disk gets a warning at start (its URL
    without the password)."""

    sock = tmp_path / "bare.sock"
    proc = subprocess.Popen(
        [redis_executable(), "--port", "0", "--unixsocket", str(sock), "--appendonly", "no", "--save", "",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        await eventually(lambda: ping_socket(sock))
        caplog.set_level(logging.WARNING, logger="giants.server")
        server = GiantsServer(Config(host="127.0.0.1", port=0, redis_url=f"unix://{sock}", key_prefix=key_prefix))
        await server.start()
        await server.stop()
        warnings = [r.getMessage() for r in caplog.records if r.name == "giants.server"]
        assert any("has no persistence" in w for w in warnings), warnings
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 10)


async def test_join_retried_after_the_server_was_killed(serve_process, client_factory, redis_url, key_prefix) -> None:
    """Item 5: the server is SIGKILLed right after a join was sent (stored or not, the
    client cannot know); after the restart the same join with the same key takes the
    seat exactly once, and the join that fills the room starts it."""

    first = serve_process()
    host = await client_factory(first.url, "host")
    room = (await host.ok("create_room", game="giantslayer"))["room"]
    key = secrets.token_urlsafe(16)
    alice = await client_factory(first.url, "alice")
    await alice.send_raw(msgpack.packb({"type": "join", "id": 99, "room": room, "key": key}))
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    second = serve_process()
    alice2 = await client_factory(second.url, "alice")
    joined = await alice2.ok("join", room=room, key=key)
    again = await alice2.ok("join", room=room, key=key)
    assert joined == again and joined["seat"] == 0
    bob = await client_factory(second.url, "bob")
    assert (await bob.ok("join", room=room, key=secrets.token_urlsafe(16)))["seat"] == 1
    stored = await stored_room(redis_url, key_prefix, room)
    assert stored.status == "playing" and all(s.taken for s in stored.seats)
    for c in (alice2, bob):
        one_reply_per_id(c)
