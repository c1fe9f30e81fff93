"""What a node costs while nothing moves: its fixed work per second, and what does it.

    python bench/node_idle.py                                 # 200 and 1,000 rooms, 1 node vs 2 nodes
    python bench/node_idle.py --rooms 1000 --nodes 1 --py-spy  # where one idle node's CPU goes

One embedded redis-server and `giants serve` nodes as subprocesses (as bench/scale.py
starts them, lease TTL 2 s unless --lease-ttl); the rooms are bench/scale.py's (2
seats + 1 spectator connected to the room's owner, the game started) but nobody moves.
Once `--settle` seconds have passed (the idle sweep packs the rooms meanwhile), for
`--duration` seconds: each node's CPU (`/proc/PID/task/*/schedstat`) per second, its
wake-ups (voluntary context switches) per second, Redis's CPU per second and the
commands Redis ran per second by name (INFO commandstats; every node together).
With 2 nodes the rooms are split between them: the same rooms, twice the nodes, so
"2 nodes minus 1 node" is what a second node adds while idle. `--py-spy` samples each
node (py-spy record, raw collapsed stacks, 100 Hz, active samples only) and splits its
samples by the periodic task they belong to. The machine is shared: compare within a
run, repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _load(name: str, path: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sc = _load("bench_scale", "scale.py")
bs = sys.modules["bench_server"]

from bench.loop import run_main  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402

# Where a sample is, by the first of these names found in its stack (innermost last):
# each periodic task of a node, the connections' keepalive, and the rest.
KINDS = (
    ("lease renewal", ("renew_leases", "Node.renew", "renew (server/node.py")),
    ("orphan sweep", ("orphans", "lease_holders", "live_room_ids")),
    ("heartbeat / node list", ("heartbeat", "nodes (server/store_leases.py", "forget_node")),
    ("node tick, other", ("tick (server/node.py", "_run (server/node.py")),
    ("idle-view sweep", ("compact_idle_views", "compact_new_rooms")),
    ("lifecycle sweep", ("Lifecycle.sweep", "sweep (server/lifecycle.py", "_run (server/lifecycle.py")),
    ("websocket keepalive", ("keepalive", "ping")),
    ("relay", ("server/relay", "server/subscription.py")),
    ("metrics", ("prometheus", "collect")),
)


def kind_of(stack: str) -> str:
    for kind, names in KINDS:
        if any(n in stack for n in names):
            return kind
    if "run_forever" in stack or "_run_once" in stack or "uvloop" in stack:
        return "event loop, other"
    return "other"


def pyspy_summary(path: Path) -> tuple[int, Counter[str], Counter[str]]:
    """(samples, samples by kind, samples by innermost frame) of a raw py-spy file."""
    kinds: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        total += n
        kinds[kind_of(stack)] += n
        leaves[stack.split(";")[-1][:100]] += n
    return total, kinds, leaves


def commandstats(client: Any) -> dict[str, int]:
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in client.info("commandstats").items()}


async def scenario(redis_url: str, redis_pid: int, rooms: int, count: int, args: argparse.Namespace,
                   tag: str) -> dict[str, Any]:
    import redis as redis_sync

    started = [sc.start_node(redis_url, f"giants-idle:{tag}:", args) for _ in range(count)]
    procs = [p for p, _ in started]
    load = sc.PlacedLoad([u for _, u in started], False, game="giantslayer", rules=None, spectators=1,
                         interval=1e9)  # no room ever gets to move
    ready: asyncio.Queue[None] = asyncio.Queue()
    tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(rooms)]
    try:
        for _ in range(rooms):
            await ready.get()
        await asyncio.sleep(args.settle)
        pids = [p.pid for p in procs]
        client = redis_sync.Redis.from_url(redis_url)
        spies: list[tuple[subprocess.Popen[bytes], Path]] = []
        if args.py_spy:
            for i, pid in enumerate(pids):
                out = Path(tempfile.mkdtemp(prefix="giants-idle-spy-")) / f"node{i + 1}.txt"
                spy = subprocess.Popen([args.py_spy, "record", "-p", str(pid), "-f", "raw", "-r", "100", "-d",
                                        str(int(args.duration)), "-o", str(out), "--nonblocking"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                spies.append((spy, out))
        s0 = {pid: sc.sched(pid) for pid in [*pids, redis_pid]}
        c0 = {pid: sc.counters(pid) for pid in pids}
        k0 = commandstats(client)
        t0 = time.perf_counter()
        await asyncio.sleep(args.duration)
        elapsed = time.perf_counter() - t0
        cpu = {pid: (sc.sched(pid)[0] - s0[pid][0]) / elapsed for pid in [*pids, redis_pid]}
        sleeps = {pid: (sc.counters(pid)[2] - c0[pid][2]) / elapsed for pid in pids}
        k1 = commandstats(client)
        calls = {name: (k1[name] - k0.get(name, 0)) / elapsed for name in k1 if k1[name] > k0.get(name, 0)}
        for name in ("info",):  # this bench's own
            calls.pop(name, None)
        spied = []
        for spy, out in spies:
            spy.wait(args.duration + 30)
            if out.exists():
                spied.append(pyspy_summary(out))
        return {"rooms": rooms, "nodes": count, "cpu": [cpu[p] for p in pids], "redis": cpu[redis_pid],
                "sleeps": [sleeps[p] for p in pids], "calls": calls, "spied": spied}
    finally:
        load.halt()
        await asyncio.wait(tasks, timeout=15)
        sc.stop(procs)
        sc.report_log(f"{count} node(s), {rooms} rooms")


def report(r: dict[str, Any]) -> None:
    nodes = sum(r["cpu"])
    each = ", ".join(f"{100 * c:.2f}%" for c in r["cpu"])
    print(f"  {r['nodes']} node(s), {r['rooms']:5} rooms: nodes {100 * nodes:5.2f}% of a core ({each}); "
          f"wake-ups/s {', '.join(f'{s:.0f}' for s in r['sleeps'])}; redis {100 * r['redis']:.2f}%", flush=True)
    top = sorted(r["calls"].items(), key=lambda kv: -kv[1])[:8]
    print(f"{'':8}redis commands/s: {', '.join(f'{k} {v:.0f}' for k, v in top)}", flush=True)
    for i, (total, kinds, leaves) in enumerate(r["spied"]):
        if not total:
            continue
        split = ", ".join(f"{k} {100 * n / total:.0f}%" for k, n in kinds.most_common())
        print(f"{'':8}node{i + 1} py-spy, {total} active samples: {split}", flush=True)
        for leaf, n in leaves.most_common(args_top[0]):
            print(f"{'':12}{100 * n / total:4.1f}% {leaf}", flush=True)


args_top = [8]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="200,1000", help="comma list of room counts")
    parser.add_argument("--nodes", default="1,2", help="comma list of node counts (the rooms split between them)")
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    parser.add_argument("--settle", type=float, default=25.0,
                        help="seconds between the last room set up and the measure (the idle sweep packs the rooms)")
    parser.add_argument("--lease-ttl", type=float, default=2.0)
    parser.add_argument("--py-spy", nargs="?", const=shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy"),
                        default="", metavar="PATH", help="sample the nodes with py-spy (its path, if not on PATH)")
    parser.add_argument("--top", type=int, default=8, help="innermost frames listed per node with --py-spy")
    args = parser.parse_args()
    args_top[0] = args.top
    args.profile, args.callgrind = "", False  # what sc.start_node reads
    tmp = Path(tempfile.mkdtemp(prefix="giants-idle-"))
    redis = EmbeddedRedis(tmp / "redis")
    redis_url = redis.start()
    assert redis.process is not None
    sc.REDIS_URL.append(redis_url)
    print(f"redis {redis_url}; lease TTL {args.lease_ttl:g} s; {args.duration:g} s measured after {args.settle:g} s; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        for i, rooms in enumerate(int(r) for r in args.rooms.split(",")):
            for count in (int(n) for n in args.nodes.split(",")):
                report(await scenario(redis_url, redis.process.pid, rooms, count, args, f"{i}-{count}"))
    finally:
        redis.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main()))
