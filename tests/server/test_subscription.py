"""The relay's inbox (server.subscription) against the test Redis: every message
arrives whole and in order, however the socket splits it; the subscription counts as
a receiver once `open` returns; a broken connection is reported through `lost`."""

from __future__ import annotations

import asyncio
import os

import pytest
import redis.asyncio as aioredis

from server.subscription import Subscription

pytestmark = pytest.mark.redis


async def test_messages_arrive_whole_and_in_order(redis_url, key_prefix) -> None:
    client = aioredis.Redis.from_url(redis_url)
    got: list[bytes] = []
    inbox, broadcast = f"{key_prefix}relay:me", f"{key_prefix}relay:all"
    sub = await Subscription.open(client, [inbox, broadcast], got.append)
    try:
        # Subscribed when open returns: each PUBLISH counts this one receiver.
        sizes = [0, 1, 100, 70_000, 3, 1_000_000, 17]
        payloads = [os.urandom(n) for n in sizes]  # any bytes, "\r\n" included
        receivers = []
        for i, payload in enumerate(payloads):
            receivers.append(await client.publish(inbox if i % 2 else broadcast, payload))
        assert receivers == [1] * len(payloads)
        async with asyncio.timeout(10):
            while len(got) < len(payloads):
                await asyncio.sleep(0.01)
        assert got == payloads
        assert not sub.lost.done()
    finally:
        sub.close()
        await client.aclose()


async def test_a_killed_connection_is_reported(redis_url, key_prefix) -> None:
    name = f"giants-test-sub-{os.urandom(4).hex()}"  # kill this connection only: the Redis is shared
    client = aioredis.Redis.from_url(redis_url, client_name=name)
    channel = f"{key_prefix}relay:killed"
    sub = await Subscription.open(client, [channel], lambda data: None)
    try:
        ours = [c["id"] for c in await client.client_list() if c.get("name") == name and "sub=1" in _flags(c)]
        assert len(ours) == 1
        await client.client_kill_filter(_id=ours[0])
        exc = await asyncio.wait_for(sub.lost, 10)
        assert "lost" in str(exc)
        assert await client.publish(channel, b"x") == 0  # nobody listens any more
    finally:
        sub.close()
        await client.aclose()


def _flags(entry: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in entry.items())
