"""The client library retries create/join/start with their request key when the
answer says storage was away (Redis behind a fault proxy drops the write)."""

from __future__ import annotations

from typing import Any

import pytest

from client_cli.client import Client
from tests.fault_proxy import FaultProxy

pytestmark = pytest.mark.redis


async def test_join_and_create_are_retried_with_their_keys(server_factory: Any, redis_url: str) -> None:
    proxy = FaultProxy(redis_url)
    await proxy.start()
    try:
        server = await server_factory(redis_url=proxy.url, redis_timeout=0.5, redis_retry_window=2.0)
        async with Client(server.url, name="alice", request_timeout=20) as alice:
            proxy.drop_command(b"EVALSHA")  # the create script is lost: re-sent, created once
            created = await alice.create_room("giantslayer")
            assert proxy.triggered, "the fault did not happen"
            room = created["room"]
            assert [r["room"] for r in await alice.list_rooms()].count(room) == 1
            proxy.drop_command(server.store._commit.sha.encode())  # the join's write is lost
            tracked = await alice.join(room)
            assert len(proxy.triggered) == 2
            assert tracked.seat == 0 and tracked.token
            summary = next(r for r in await alice.list_rooms() if r["room"] == room)
            assert [s["name"] for s in summary["seats"]] == ["alice", None]
        await server.stop()
    finally:
        await proxy.stop()
