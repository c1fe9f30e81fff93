"""The relay's transport alone: CPU per relayed message, redis-py's pub/sub vs ours.

One process publishes `--messages` payloads of `--size` bytes in batches of `--batch`
(what one loop pass of a busy owner sends to one node) and receives them on a
subscription to the same channel; the process's CPU time per message is reported for:

- `redis-py`: a `pipeline(transaction=False)` of PUBLISHes per batch, awaited (what
  `server.relay` used until session 5), read with `PubSub.listen()`;
- `lean`: `GroupSender.post` (the node's own Redis channel: a batch in one write, no
  wait) read by `server.subscription.Subscription` (what it uses now).

    python bench/relay_transport.py                          # embedded redis-server
    python bench/relay_transport.py --redis-url redis://127.0.0.1:6379/0

Both run in the same process one after the other, alternating `--rounds` times; the
machine is shared, so compare the two within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import redis.asyncio as aioredis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.loop import run_main  # noqa: E402
from server.commit_pipe import GroupSender  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402
from server.subscription import Subscription  # noqa: E402


async def redis_py(client: aioredis.Redis, channel: str, payloads: list[bytes], batch: int) -> float:
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(channel)
    got = 0
    done = asyncio.Event()

    async def read() -> None:
        nonlocal got
        async for message in pubsub.listen():
            if message.get("type") == "message":
                got += 1
                if got == len(payloads):
                    done.set()
                    return

    reader = asyncio.ensure_future(read())
    cpu0 = time.process_time()
    for i in range(0, len(payloads), batch):
        pipe = client.pipeline(transaction=False)
        for payload in payloads[i : i + batch]:
            pipe.publish(channel, payload)
        await pipe.execute()
    await done.wait()
    cpu = time.process_time() - cpu0
    await reader
    await pubsub.aclose()
    return cpu


async def lean(client: aioredis.Redis, channel: str, payloads: list[bytes], batch: int) -> float:
    got = 0
    done = asyncio.Event()

    def received(_data: bytes) -> None:
        nonlocal got
        got += 1
        if got == len(payloads):
            done.set()

    sub = await Subscription.open(client, [channel], received)
    sender = GroupSender(client, timeout=5.0)
    cpu0 = time.process_time()
    for i in range(0, len(payloads), batch):
        for payload in payloads[i : i + batch]:
            sender.post("PUBLISH", channel, payload)
        await asyncio.sleep(0)  # one loop pass per batch, as the relay's flush
        while sender.in_flight > 4 * batch:  # keep as little in flight as redis-py's awaited pipeline
            await asyncio.sleep(0)
    await done.wait()
    cpu = time.process_time() - cpu0
    sender.close()
    sub.close()
    return cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=150, help="payload bytes (a relayed patch and its envelope)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="giants-relay-bench-")
    embedded = None
    url = args.redis_url
    if url is None:
        embedded = EmbeddedRedis(Path(tmp.name), fsync="everysec")
        url = embedded.start()
    client = aioredis.Redis.from_url(url)
    channel = f"giants-bench:{os.getpid()}:relay"
    payloads = [os.urandom(args.size) for _ in range(args.messages)]
    try:
        for _ in range(args.rounds):
            for name, run in (("redis-py", redis_py), ("lean", lean)):
                cpu = await run(client, channel, payloads, args.batch)
                print(f"{name:9} {1e6 * cpu / args.messages:6.1f} us CPU per message "
                      f"({args.messages} x {args.size} B, batches of {args.batch})", flush=True)
    finally:
        await client.aclose()
        if embedded is not None:
            embedded.stop()
        tmp.cleanup()


if __name__ == "__main__":
    run_main(main())
