"""Helpers for tests with several server nodes (real processes, real Redis)."""

from __future__ import annotations

import asyncio
import random
import re
import time
import urllib.request
from typing import Any

from server.store import Store

FAST = ("--lease-ttl", "0.6", "--relay-timeout", "3")  # short leases: failover in about a second


def metrics(url: str) -> str:
    http = url.replace("ws://", "http://") + "/metrics"
    with urllib.request.urlopen(http, timeout=5) as reply:
        return str(reply.read().decode())


NODE = re.compile(r'giants_node_info\{id="([^"]+)"\}')


def per_node(url: str, nodes: int = 2, within: float = 60.0) -> dict[str, str]:
    """Each live worker's /metrics text by node id, for `giants serve --workers N`: the
    kernel picks the worker of each scrape, so scrape until every one answered. A
    worker the supervisor is restarting (after a kill or a graceful stop) answers once
    it listens again: keep trying for `within` seconds, pausing between tries after
    the first hundred."""
    seen: dict[str, str] = {}
    end = time.monotonic() + within
    tries = 0
    while True:
        text = metrics(url)
        match = NODE.search(text)
        assert match is not None
        seen[match.group(1)] = text
        if len(seen) >= nodes:
            return seen
        tries += 1
        if time.monotonic() > end:
            raise AssertionError(f"only {len(seen)} of {nodes} workers answered /metrics in {within} s")
        if tries > 100:
            time.sleep(0.05)


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


async def acted(client: Any, room: str) -> bool:
    """True when this client's seat is to act (it holds a legal list)."""
    copy = client.rooms.get(room)
    return bool(copy and copy.legal)


async def move(players: list[Any], room: str, rng: random.Random, acked: list[tuple[int, str]]) -> int:
    """One acknowledged random move by whoever is to act; every player sees it."""
    for _ in range(500):
        versions = {p.rooms[room].version for p in players if room in p.rooms}
        actors = [p for p in players if room in p.rooms and p.rooms[room].legal]
        if len(versions) == 1 and actors and len([p for p in players if room in p.rooms]) == len(players):
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("players did not settle")
    actor = actors[0]
    action = rng.choice(actor.rooms[room].legal)
    reply = await actor.ok("act", room=room, action=action)
    acked.append((actor.rooms[room].seat, action))
    for p in players:
        await p.wait_version(room, reply["version"])
    return int(reply["version"])


def no_internal_errors(*clients: Any) -> None:
    for client in clients:
        codes = [m.get("code") for m in client.pushes if m.get("type") == "error"]
        assert "internal_error" not in codes, codes


async def two_player_room(creator: Any, other: Any, **options: Any) -> tuple[str, dict[int, str]]:
    room = (await creator.ok("create_room", game="giantslayer", **options))["room"]
    tokens = {0: (await creator.ok("join", room=room))["token"], 1: (await other.ok("join", room=room))["token"]}
    await other.wait_for(lambda: room in other.rooms and other.rooms[room].view["room"]["status"] == "playing")
    return room, tokens


async def stored_log(redis_url: str, key_prefix: str, room: str) -> list[dict[str, Any]]:
    store = Store(redis_url, key_prefix)
    try:
        return await store.read_log(room)
    finally:
        await store.close()
