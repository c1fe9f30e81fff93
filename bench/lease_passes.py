"""How long a node's periodic passes over its rooms hold the event loop and Redis.

    python bench/lease_passes.py --redis-url redis://127.0.0.1:6379/0 --rooms 1000,5000
    python bench/lease_passes.py --redis-url redis://127.0.0.1:<a cluster node> --rooms 1000

A node renews every lease it owns each `--lease-ttl / 3` (0.67 s by default) and its
orphan sweep reads the lease of every live room. For each room count this creates that
many rooms' leases under its own key prefix (deleted afterwards), then times, in one
run and alternating, the sliced passes the server makes (`Node.renew`,
`Store.lease_holders`) against the same work sent as one batch (as before session 7):

- loop held: the longest stretch during the pass in which a probe task sleeping 0 s
  in a loop did not get the event loop (what every move in flight waits out), in CPU
  time of this thread (`time.thread_time`: the time others' processes took the core
  is not counted) and in wall time;
- pass: the whole pass, first call to last reply (wall time: it includes Redis's
  work, which a big pipeline spreads over its reads of 16 KiB each).

Figures are medians over `--passes` passes; prefer `sh bench/isolate.sh` on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.node import Node
from server.store import Store, is_cluster


async def held(pass_: Callable[[], Awaitable[object]]) -> tuple[float, float, float, float]:
    """(loop held in CPU time, loop held in wall time, pass, CPU time of the whole pass)
    in seconds for one run of `pass_`."""
    work = asyncio.ensure_future(pass_())
    begin = last = time.perf_counter()
    first_cpu = last_cpu = time.thread_time()
    held_cpu = held_wall = 0.0
    while not work.done():
        await asyncio.sleep(0)
        now, now_cpu = time.perf_counter(), time.thread_time()
        held_wall, held_cpu = max(held_wall, now - last), max(held_cpu, now_cpu - last_cpu)
        last, last_cpu = now, now_cpu
    await work
    return held_cpu, held_wall, time.perf_counter() - begin, time.thread_time() - first_cpu


async def measure(store: Store, count: int, passes: int) -> None:
    """Create `count` rooms' leases, then time each kind of pass over them."""
    node = Node(store, f"bench-{os.getpid()}", lease_ttl=60.0)
    ids = [f"b{i:06d}" for i in range(count)]
    pipe = store.redis.pipeline(transaction=False)
    for room_id in ids:
        pipe.hset(store.k_room(room_id), "fence", 0)
    await pipe.execute()
    for room_id in ids:
        fence = await node.acquire(room_id)
        assert fence is not None
        node.own(room_id, fence)
    owned = list(node.rooms.items())
    kinds: dict[str, Callable[[], Awaitable[object]]] = {
        "renew, one batch": lambda: store.renew_leases(node.id, owned, node.lease_ms),
        "renew, sliced": node.renew,
        "holders, one batch": lambda: one_batch_holders(store, ids),
        "holders, sliced": lambda: store.lease_holders(ids),
    }
    results: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in kinds}
    for _ in range(passes):  # alternating, so a noisy moment hits every kind
        for kind, pass_ in kinds.items():
            results[kind].append(await held(pass_))
    for kind, runs in results.items():
        cpu_ms, wall_ms, pass_ms, total_ms = (1e3 * statistics.median(r[i] for r in runs) for i in range(4))
        print(f"{count:6d} rooms  {kind:18s}  loop held {cpu_ms:6.2f} ms CPU, {wall_ms:6.2f} ms wall  "
              f"pass {pass_ms:6.1f} ms, {total_ms:6.1f} ms CPU")


async def run(url: str, counts: list[int], passes: int) -> None:
    prefix = f"giants-bench-leases:{os.getpid()}:"
    store = Store(url, prefix, cluster=await is_cluster(url))  # a Redis Cluster too
    try:
        for count in counts:
            await measure(store, count, passes)
    finally:
        keys = [k async for k in store.redis.scan_iter(match=prefix + "*", count=1000)]
        for start in range(0, len(keys), 1000):
            await store.redis.delete(*keys[start : start + 1000])
        await store.close()


async def one_batch_holders(store: Store, ids: list[str]) -> list[object]:
    """The orphan sweep's read as it was: one pipeline of a GET per room."""
    pipe = store.redis.pipeline(transaction=False)
    for room_id in ids:
        pipe.get(store.k_lease(room_id))
    return list(await pipe.execute())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--rooms", default="1000,5000", help="room counts, comma-separated")
    parser.add_argument("--passes", type=int, default=9)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop")
    args = parser.parse_args()
    main_coro = run(args.redis_url, [int(c) for c in args.rooms.split(",")], args.passes)
    if args.loop == "uvloop":
        import uvloop

        uvloop.run(main_coro)
    else:
        asyncio.run(main_coro)


if __name__ == "__main__":
    main()
