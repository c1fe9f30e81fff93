"""The relay's transport on a Redis Cluster: classic pub/sub (until session 6) vs sharded.

Starts a real 3-master cluster from the redis-server binary (tests/server/cluster.py),
subscribes `--nodes` inboxes (node ids chosen so they spread over the masters, as a
deployment's random ids do) and sends `--messages` payloads of `--size` bytes to them
round-robin, `--batch` per loop pass, through each transport of `server.relay_channels`:

- `classic`: `PlainChannels` on the URL's node, what the relay did on a cluster before:
  SUBSCRIBE/PUBLISH over one connection to one master, every PUBLISH propagated to the
  other masters over the cluster bus;
- `sharded`: `ShardedChannels`: each inbox SSUBSCRIBEd at its slot's master, SPUBLISH
  there over one connection per master.

Reported per message: this process's CPU (sender and receivers), the CPU of all three
redis-servers together (INFO cpu), and the largest share one master took.

    python bench/relay_cluster.py --rounds 3

Both transports run in the same process one after the other, alternating `--rounds`
times; the machine is shared, so compare the two within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.loop import run_main  # noqa: E402
from server.relay_channels import PlainChannels, ShardedChannels  # noqa: E402
from server.subscription import Subscription  # noqa: E402
from tests.server.cluster import start_cluster  # noqa: E402


def redis_cpu(masters: list[redis.Redis]) -> list[float]:
    return [float(m.info("cpu")["used_cpu_user"]) + float(m.info("cpu")["used_cpu_sys"]) for m in masters]


def spread_ids(channels: ShardedChannels, count: int) -> list[str]:
    """`count` node ids whose inboxes hash round-robin over the masters."""
    masters = sorted({node.name for node in channels.cluster.get_primaries()})
    ids: list[str] = []
    for i in itertools.count():
        node_id = f"bench{i}"
        want = masters[len(ids) % len(masters)]
        if channels.cluster.get_node_from_key(channels.inbox(node_id)).name == want:
            ids.append(node_id)
        if len(ids) == count:
            return ids
    raise AssertionError("unreachable")


async def run(channels: PlainChannels | ShardedChannels, ids: list[str], payloads: list[bytes], batch: int,
              masters: list[redis.Redis]) -> tuple[float, list[float]]:
    got = 0
    done = asyncio.Event()

    def received(_data: bytes) -> None:
        nonlocal got
        got += 1
        if got == len(payloads):
            done.set()

    inboxes = [channels.inbox(node_id) for node_id in ids]
    subs: list[Subscription] = [await channels.subscribe(inbox, received) for inbox in inboxes]
    assert await channels.call(inboxes[0], b"warm-up") == 1  # the count sees the subscriber
    await asyncio.sleep(0.1)
    got = 0
    cpu0, server0 = time.process_time(), redis_cpu(masters)
    for i in range(0, len(payloads), batch):
        for j, payload in enumerate(payloads[i : i + batch], i):
            channels.post(inboxes[j % len(inboxes)], payload)
        await asyncio.sleep(0)  # one loop pass per batch, as the relay's flush
        while channels.in_flight > 4 * batch:
            await asyncio.sleep(0)
    await done.wait()
    cpu = time.process_time() - cpu0
    server = [after - before for after, before in zip(redis_cpu(masters), server0, strict=True)]
    for sub in subs:
        sub.close()
    return cpu, server


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=150, help="payload bytes (a relayed patch and its envelope)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--nodes", type=int, default=3, help="inboxes (relay nodes) receiving")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="giants-relay-cluster-")
    cluster = start_cluster(Path(tmp.name))
    masters = [redis.Redis(port=port) for port in cluster.ports]
    prefix = f"giants-bench:{os.getpid()}:"
    payloads = [os.urandom(args.size) for _ in range(args.messages)]
    try:
        probe = ShardedChannels(cluster.url, prefix, 5.0)
        await probe.start()
        ids = spread_ids(probe, args.nodes)
        await probe.aclose()
        for _ in range(args.rounds):
            for name in ("classic", "sharded"):
                channels = (PlainChannels if name == "classic" else ShardedChannels)(cluster.url, prefix, 5.0)
                await channels.start()
                cpu, server = await run(channels, ids, payloads, args.batch, masters)
                channels.close()
                await channels.aclose()
                n = args.messages
                print(f"{name:8} client {1e6 * cpu / n:5.1f} us, redis (3 masters) {1e6 * sum(server) / n:5.1f} us "
                      f"CPU per message; busiest master {100 * max(server) / max(sum(server), 1e-9):3.0f}% of it "
                      f"({n} x {args.size} B to {args.nodes} inboxes, batches of {args.batch})", flush=True)
    finally:
        for master in masters:
            master.close()
        cluster.stop()
        tmp.cleanup()


if __name__ == "__main__":
    run_main(main())
