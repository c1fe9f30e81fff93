"""`giants serve --workers N`: N nodes on one port around one embedded Redis."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import urllib.request

import pytest

from server.embedded_redis import SOCKET_NAME, ping_socket
from tests.server.multinode import move, no_internal_errors

pytestmark = pytest.mark.redis


def healthz(url: str) -> dict:
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/healthz", timeout=5) as reply:
        return dict(json.loads(reply.read()))


async def test_workers_share_one_port_and_one_embedded_redis(client_factory, tmp_path, key_prefix) -> None:
    from tests.conftest import start_serve

    data = tmp_path / "data"
    sp = start_serve(["--workers", "2", "--data-dir", str(data), "--key-prefix", key_prefix, "--lease-ttl", "0.6"])
    try:
        assert "(2 workers)" in "".join(sp.output)
        # The kernel spreads connections over both nodes; each answers /healthz itself.
        nodes = {healthz(sp.url)["node"] for _ in range(40)}
        assert len(nodes) == 2
        assert ping_socket(data / SOCKET_NAME)  # one Redis, started by the parent
        # Clients land on either node; the game works wherever they are.
        clients = [await client_factory(sp.url, f"p{i}") for i in range(4)]
        alice, bob = clients[0], clients[3]
        room = (await alice.ok("create_room", game="giantslayer"))["room"]
        await alice.ok("join", room=room)
        await bob.ok("join", room=room)
        await bob.wait_for(lambda: room in bob.rooms and bob.rooms[room].view["room"]["status"] == "playing")
        for watcher in clients[1:3]:
            await watcher.ok("watch", room=room)
        rng, acked = random.Random(3), []
        for _ in range(6):
            version = await move([alice, bob], room, rng, acked)
        for watcher in clients[1:3]:
            await watcher.wait_version(room, version)
        no_internal_errors(*clients)
    finally:
        sp.proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(sp.proc.wait, 60)
    assert code == 0
    for _ in range(100):  # the parent stops the shared Redis after the last worker
        if not ping_socket(data / SOCKET_NAME):
            break
        await asyncio.sleep(0.05)
    assert not ping_socket(data / SOCKET_NAME)


def test_workers_flag_is_checked(tmp_path) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "client_cli.cli", "serve", "--workers", "zero", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 2 and "--workers" in out.stderr
