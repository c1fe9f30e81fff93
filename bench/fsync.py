"""What `--fsync always` costs: Redis write latency with appendfsync always vs everysec.

    python bench/fsync.py [--dir DIR] [--rounds 2]

Starts the embedded Redis (as `giants serve` does) in a temporary directory under DIR
(default: the system temp dir; put it on the disk the data directory will live on),
then times, for each policy: single writes one after another (each waits for its own
fsync with `always`), and pipelines of 50 writes (group commit: the server sends the
commits of all rooms waiting at that moment as one pipeline, and Redis fsyncs once per
pipeline). The two policies alternate `--rounds` times so that a busy machine affects
both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis.asyncio as aioredis

from server.embedded_redis import EmbeddedRedis

ENTRY = b"x" * 200  # about one log entry plus the room hash fields of a commit


def quantile(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * q))] * 1e3


async def probe(policy: str, root: str | None, singles: int, batches: int) -> None:
    tmp = tempfile.mkdtemp(prefix="giants-fsync-", dir=root)
    embedded = EmbeddedRedis(Path(tmp) / "d", fsync=policy)
    try:
        client = aioredis.from_url(embedded.start())
        single = []
        for _ in range(singles):
            started = time.perf_counter()
            await client.rpush("k", ENTRY)
            single.append(time.perf_counter() - started)
        grouped = []
        for _ in range(batches):
            started = time.perf_counter()
            pipe = client.pipeline(transaction=False)
            for _ in range(50):
                pipe.rpush("k", ENTRY)
            await pipe.execute()
            grouped.append(time.perf_counter() - started)
        await client.aclose()
    finally:
        embedded.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{policy:9s} single write p50 {quantile(single, .5):7.3f} ms  p99 {quantile(single, .99):7.3f} ms | "
          f"50-write pipeline p50 {quantile(grouped, .5):7.3f} ms  p99 {quantile(grouped, .99):7.3f} ms", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--singles", type=int, default=300)
    parser.add_argument("--batches", type=int, default=60)
    args = parser.parse_args()
    for _ in range(args.rounds):
        for policy in ("everysec", "always"):
            await probe(policy, args.dir, args.singles, args.batches)


if __name__ == "__main__":
    asyncio.run(main())
