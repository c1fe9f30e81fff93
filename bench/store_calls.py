"""Client CPU per call of the store's per-game writes: the lifecycle's `write` and
`retain`, and `Store.mark_finished` (each game makes a few of them; a move none).

    python bench/store_calls.py --redis-url redis://127.0.0.1:6379/0

Runs against this checkout's `server/` (run it in another checkout for a before and
after, alternating), one call at a time after `--warmup` calls, under its own key
prefix, deleted afterwards; prints `time.process_time` per call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.store import LifecycleStore, Store


async def run(url: str, calls: int, warmup: int) -> None:
    prefix = f"giants-bench-store-calls:{os.getpid()}:"
    store = Store(url, prefix)
    life = LifecycleStore(store)
    try:
        for i in range(warmup):
            await life.write([(f"r{i}", {"touched": time.time(), "seat:1": time.time()}, time.time() + 60)])
        t0 = time.process_time()
        for i in range(calls):
            await life.write([(f"r{i}", {"touched": time.time(), "seat:1": time.time()}, time.time() + 60)])
        t1 = time.process_time()
        for i in range(calls):
            await life.retain(f"r{i}", 3600)
        t2 = time.process_time()
        for i in range(calls):
            await store.mark_finished(f"r{i}", time.time())
        t3 = time.process_time()
        print(f"CPU per call: write {1e6 * (t1 - t0) / calls:.0f} us, retain {1e6 * (t2 - t1) / calls:.0f} us, "
              f"mark_finished {1e6 * (t3 - t2) / calls:.0f} us ({calls} calls each)")
    finally:
        keys = [k async for k in store.redis.scan_iter(match=prefix + "*", count=1000)]
        if keys:
            await store.redis.delete(*keys)
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(run(args.redis_url, args.calls, args.warmup))


if __name__ == "__main__":
    main()
