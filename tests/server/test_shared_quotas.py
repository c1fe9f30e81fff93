"""The quotas per client address hold across nodes (server.shared_quotas): open
connections and live rooms.

Real `giants serve` processes on the test Redis, real WebSocket connections from
127.0.0.1. Behind a load balancer a client's connections land on every node; the
quota is the address's, not each node's.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest
from raw_ws import RawWs

from server.node import Node
from server.shared_quotas import SharedQuotas
from server.store import Store
from tests.server.multinode import two_player_room

pytestmark = pytest.mark.redis

QUOTA = ("--max-connections-per-address", "3")
# Leases (and heartbeats) of 6 s: a node sees the others at its first tick, 2 s after
# it starts, and a loaded test machine does not make a live node's heartbeat lapse (a
# lapsed node's counts do not count, by design: that would admit one too many here).
# With 2 s leases, at load average 15 a renewal pass ran 2.43 s late and the test failed.
NODES = ("--lease-ttl", "6", "--relay-timeout", "3")
TICK = 2.5  # more than one tick: every node has seen every other


async def two_nodes(serve_process, *extra: str) -> tuple[Any, Any]:
    one, two = serve_process(*NODES, *extra), serve_process(*NODES, *extra)
    await asyncio.sleep(TICK)
    return one, two


async def try_connect(url: str) -> RawWs | None:
    """Open a connection: None if the server closed it at once for the quota (raises if
    it closed it for anything else), the open connection if it was admitted."""
    ws = await RawWs.open(url)
    try:
        got = await ws.read_all(timeout=1.0)
    except TimeoutError:
        return ws  # still open: admitted
    if got.close_code is None:
        return ws
    assert got.close_code == 1008 and "too many connections" in got.close_reason, got
    return None


async def refused(url: str) -> bool:
    """Whether the server refuses one more connection (one it admits is closed again)."""
    ws = await try_connect(url)
    if ws is not None:
        ws.close()
    return ws is None


async def admitted_soon(url: str, kept: list[RawWs], timeout: float = 15.0) -> None:
    """Try until `url` admits a connection (a place freed elsewhere is seen); keep it."""
    async def loop() -> None:
        while (ws := await try_connect(url)) is None:
            await asyncio.sleep(0.1)
        kept.append(ws)

    await asyncio.wait_for(loop(), timeout)


async def test_the_quota_counts_connections_on_every_node(serve_process, client_factory) -> None:
    """Two connections on node one and one on node two use up a quota of three: a
    fourth is refused on either node, however each node counts alone. Closing one
    frees a place for the address on the other node."""
    one, two = await two_nodes(serve_process, *QUOTA)
    a = await client_factory(one.url, "a")
    b = await client_factory(one.url, "b")
    c = await client_factory(two.url, "c")
    assert await refused(two.url)
    assert await refused(one.url)
    for client in (a, b, c):
        await client.ok("ping")  # the three admitted are unaffected
    await a.close()
    kept: list[RawWs] = []
    await admitted_soon(two.url, kept)
    assert await refused(one.url)  # full again: b, c and the one just admitted


async def test_a_killed_nodes_connections_stop_counting(serve_process, client_factory) -> None:
    """Three connections on node one, then node one is killed (its clients cannot say
    goodbye): once its heartbeat expires, the address may use its whole quota on
    node two."""
    one, two = await two_nodes(serve_process, *QUOTA)
    for name in ("a", "b", "c"):
        await client_factory(one.url, name)
    assert await refused(two.url)
    one.proc.send_signal(signal.SIGKILL)
    one.proc.wait(10)
    kept: list[RawWs] = []
    await admitted_soon(two.url, kept)
    for name in ("d", "e"):
        await (await client_factory(two.url, name)).ok("ping")
    assert await refused(two.url)


async def test_the_room_quota_counts_rooms_on_every_node(serve_process, client_factory) -> None:
    """With two live rooms allowed per address, one room created through each node uses
    the quota up on both; when one of them finishes, its node stores the lower count at
    its next tick and the address may create a room through the other node again."""
    quota = ("--max-rooms-per-address", "2")
    one, two = await two_nodes(serve_process, *quota)
    a = await client_factory(one.url, "a")
    a2 = await client_factory(one.url, "a2")
    b = await client_factory(two.url, "b")
    room, _ = await two_player_room(a, a2)
    await b.ok("create_room", game="tara")
    for client in (a, b):
        refused = await client.error("create_room", game="tara")
        assert refused["code"] == "quota_exceeded" and refused["detail"] == {"limit": 2}
    await a.ok("resign", room=room)

    async def created() -> bool:
        reply = await b.request("create_room", game="tara")
        return reply["type"] == "ok"

    await asyncio.wait_for(_until_true(created), 15)
    assert (await a.error("create_room", game="tara"))["code"] == "quota_exceeded"


async def _until_true(check) -> None:
    while not await check():
        await asyncio.sleep(0.1)


async def test_without_redis_a_node_keeps_its_own_count(redis_url, key_prefix) -> None:
    """Redis not answering never locks a client out: `admit` and `admit_room` say None
    (go by the node's own count, release nothing) within their timeout instead of
    raising."""
    store = Store(redis_url, key_prefix)
    node = Node(store, "n1")
    try:
        gone = Store("redis://127.0.0.1:9/0", key_prefix)  # nothing listens on port 9
        shared = SharedQuotas(gone.redis, key_prefix, node, limit=2, rooms_limit=2, timeout=0.5)
        assert await shared.admit("192.0.2.7") is None
        assert await shared.admit_room("192.0.2.7", 1) is None
        await gone.close()
        live = SharedQuotas(store.redis, key_prefix, node, limit=2)
        assert [await live.admit("192.0.2.7") for _ in range(3)] == [True, True, False]
        await live.release("192.0.2.7")
        assert await live.admit("192.0.2.7") is True
    finally:
        await store.redis.delete(f"{key_prefix}quota:conn:192.0.2.7", f"{key_prefix}quota:rooms:192.0.2.7")
        await store.close()
