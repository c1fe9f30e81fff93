"""Scale-out benchmark: one node vs two nodes on one Redis, the relay's cost, failover.

    python bench/scale.py                       # every scenario, Giantslayer, 200 rooms
    python bench/scale.py --rates 500,1000,1500 --duration 5 --failovers 3

One Redis (the embedded redis-server, started here in a temp dir) and `giants serve`
nodes as subprocesses; the load generator (bench/server.py's rooms of 2 bot seats + 1
spectator playing random legal moves at a paced total rate) runs in this process and
shares the machine's cores with the nodes, as the goals in issue 12 say. Scenarios:

- `1 node`: every room on one node.
- `2 nodes, direct`: two nodes; each room's members all connect to the node that owns
  it (what a client-aware balancer achieves): the relay does nothing.
- `2 nodes, relayed`: each room's second seat and its spectator connect to the other
  node: every move's request or frames cross the relay. Its CPU per move minus the
  direct one is the relay's cost per move.
- `--workers 2`: `giants serve --workers 2` on one port (SO_REUSEPORT spreads the
  connections at random, so about half of the members are relayed).

For each: the achieved moves/s at each rate, round trip p50/p99 (act sent -> own patch
back), node CPU per move (all nodes together) and Redis CPU per move; the knee is the
highest rate whose p99 stays under 10 ms while achieving 95% of it, the saturated
throughput the highest rate achieved at all. Failover: a room owned by node A with a
player on node B; A is SIGKILLed; the time until B's player has a move accepted (with
the default lease TTL unless --lease-ttl). The machine is shared: compare within a run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_spec = importlib.util.spec_from_file_location("bench_server", ROOT / "bench" / "server.py")
assert _spec is not None and _spec.loader is not None
bs = importlib.util.module_from_spec(_spec)
sys.modules["bench_server"] = bs
_spec.loader.exec_module(bs)

from protocol import PROTOCOL_VERSION  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402

# The load generator is one address with hundreds of connections and rooms.
LIMITS = ("--max-connections-per-address", "0", "--max-rooms-per-address", "0")


class PlacedLoad(bs.Load):  # type: ignore[misc, name-defined]
    """bench/server.py's load, with each member's node chosen per room."""

    def __init__(self, urls: list[str], relayed: bool, **kwargs: Any) -> None:
        super().__init__(url=urls[0], **kwargs)
        self.urls = urls
        self.relayed = relayed
        self.placed: dict[int, int] = {}  # a room loop's wake-up object -> its creator's node

    async def member(self, name: str, spectator: bool, wake: Any) -> Any:
        # The first seat creates every room of its loop, so its node owns them; the
        # others connect to the same node (direct) or the next one (relayed). Rooms
        # connect concurrently, so the node is remembered per room loop.
        index = self.placed.setdefault(id(wake), len(self.placed) % len(self.urls))
        if self.relayed and name != "a":
            index = (index + 1) % len(self.urls)
        self.url = self.urls[index]
        return await super().member(name, spectator, wake)


def node_pids(procs: list[subprocess.Popen[str]]) -> list[int]:
    """The node processes: the given ones, or a supervisor's worker children."""
    pids: list[int] = []
    for proc in procs:
        kids = [p for p in bs.children(proc.pid) if b"redis-server" not in Path(f"/proc/{p}/cmdline").read_bytes()]
        pids += kids or [proc.pid]
    return pids


async def run_scenario(name: str, urls: list[str], procs: list[subprocess.Popen[str]], redis_pid: int,
                       relayed: bool, args: argparse.Namespace) -> dict[str, Any]:
    load = PlacedLoad(urls, relayed, game="giantslayer", rules=None, spectators=1, interval=args.rooms / 500)
    ready: asyncio.Queue[None] = asyncio.Queue()
    tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(args.rooms)]
    for _ in range(args.rooms):
        await ready.get()
    pids = node_pids(procs)
    phases = []
    for rate in [float(r) for r in args.rates.split(",")]:
        load.interval = args.rooms / rate
        await asyncio.sleep(1.0)
        load.stats = stats = bs.Stats()
        stats.measuring = True
        cpu0 = [bs.cpu_seconds(p) for p in pids]
        r0 = bs.cpu_seconds(redis_pid)
        own0 = time.process_time()
        t0 = time.perf_counter()
        await asyncio.sleep(args.duration)
        stats.measuring = False
        elapsed = time.perf_counter() - t0
        node_cpu = sum(bs.cpu_seconds(p) - c for p, c in zip(pids, cpu0, strict=True))
        moves = max(1, stats.moves)
        phase = {
            "rate": rate, "achieved": stats.moves / elapsed, "p50": bs.pct(stats.rtts, 50) * 1e3,
            "p99": bs.pct(stats.rtts, 99) * 1e3, "node_us": 1e6 * node_cpu / moves,
            "redis_us": 1e6 * (bs.cpu_seconds(redis_pid) - r0) / moves, "client_core": (time.process_time() - own0) / elapsed,
            "errors": dict(stats.errors),
        }
        phases.append(phase)
        ok = phase["p99"] < bs.KNEE_P99_MS and phase["achieved"] >= 0.95 * rate
        print(f"  {name:18} at {rate:6.0f}/s: {phase['achieved']:7.1f} moves/s  p50 {phase['p50']:6.2f}  "
              f"p99 {phase['p99']:6.2f} ms  nodes {phase['node_us']:4.0f} us/move  redis {phase['redis_us']:3.0f} us/move  "
              f"clients {100 * phase['client_core']:3.0f}%  {'ok' if ok else 'over'}"
              + (f"  errors {phase['errors']}" if phase["errors"] else ""), flush=True)
        if phase["achieved"] < 0.8 * rate:
            break  # saturated: higher rates only add queueing
    load.stop.set()
    await asyncio.wait(tasks, timeout=15)
    knee = max((p["rate"] for p in phases if p["p99"] < bs.KNEE_P99_MS and p["achieved"] >= 0.95 * p["rate"]), default=0.0)
    return {"name": name, "phases": phases, "knee": knee, "saturated": max(p["achieved"] for p in phases)}


def start_node(redis_url: str, prefix: str, args: argparse.Namespace, *extra: str) -> tuple[subprocess.Popen[str], str]:
    return bs.start([sys.executable, "-m", "client_cli.cli", "serve", "--port", "0", "--log-level", "warning",
                     "--redis-url", redis_url, "--key-prefix", prefix, "--rate", "1000", "--burst", "1000", *LIMITS,
                     "--lease-ttl", str(args.lease_ttl), *extra])


def report_log(name: str) -> None:
    """The nodes' warnings and errors during a scenario, counted by kind (then forgotten)."""
    import re
    from collections import Counter

    if os.environ.get("SCALE_LOG"):
        Path(os.environ["SCALE_LOG"]).write_text("".join(bs.SERVER_LOG))
    kinds = Counter(re.sub(r"\b[a-z0-9]{8}\b|\d+(\.\d+)?", "#", line.strip())[:160]
                    for line in bs.SERVER_LOG if " WARNING " in line or " ERROR " in line or "Traceback" in line)
    bs.SERVER_LOG.clear()
    for kind, count in kinds.most_common(8):
        print(f"  {name} log x{count}: {kind}", flush=True)


def stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


async def failover_once(redis_url: str, prefix: str, args: argparse.Namespace) -> float:
    """Seconds from SIGKILL of the owner to the first move accepted on the other node."""
    a, url_a = start_node(redis_url, prefix, args)
    b, url_b = start_node(redis_url, prefix, args)
    try:
        async def client(url: str) -> Any:
            ws = await connect(url, compression=None)
            await ws.send(msgpack.packb({"type": "hello", "id": 0, "protocol": PROTOCOL_VERSION}))
            await ws.recv()
            return ws

        creator, player0, player1 = await client(url_a), await client(url_b), await client(url_b)
        state: dict[Any, list[str]] = {player0: [], player1: []}
        replies: dict[Any, asyncio.Queue[dict[str, Any]]] = {player0: asyncio.Queue(), player1: asyncio.Queue()}

        async def read(ws: Any) -> None:
            async for frame in ws:
                msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
                if msg["type"] in ("ok", "error"):
                    replies[ws].put_nowait(msg)
                elif "legal" in msg:
                    state[ws] = msg["legal"]

        readers = [asyncio.ensure_future(read(ws)) for ws in (player0, player1)]
        await creator.send(msgpack.packb({"type": "create_room", "id": 1, "game": "giantslayer"}))
        room = msgpack.unpackb(await creator.recv(), raw=False)["data"]["room"]
        for ws in (player0, player1):
            await ws.send(msgpack.packb({"type": "join", "id": 2, "room": room}))
            await replies[ws].get()
        await asyncio.sleep(0.5)
        killed = time.perf_counter()
        a.send_signal(signal.SIGKILL)
        a.wait()
        while True:
            actor = next((ws for ws in (player0, player1) if state[ws]), None)
            if actor is not None:
                await actor.send(msgpack.packb({"type": "act", "id": 3, "room": room, "action": state[actor][0]}))
                reply = await replies[actor].get()
                if reply["type"] == "ok":
                    took = time.perf_counter() - killed
                    break
            await asyncio.sleep(0.01)
        for task in readers:
            task.cancel()
        for ws in (creator, player0, player1):
            await ws.close()
        return took
    finally:
        stop([a, b])


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--rates", default="1000,1500,2000,2500,3000,3500", help="total moves/s tried, in order")
    parser.add_argument("--duration", type=float, default=6.0, help="measured seconds per rate")
    parser.add_argument("--failovers", type=int, default=3)
    parser.add_argument("--lease-ttl", type=float, default=2.0)
    parser.add_argument("--only", default="", help="comma list of scenarios: 1,direct,relayed,workers,failover")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else {"1", "direct", "relayed", "workers", "failover"}
    tmp = Path(tempfile.mkdtemp(prefix="giants-scale-"))
    redis = EmbeddedRedis(tmp / "redis")
    redis_url = redis.start()
    assert redis.process is not None
    redis_pid = redis.process.pid
    print(f"redis {redis_url}; {args.rooms} rooms x (2 seats + 1 spectator); rates {args.rates}; "
          f"{args.duration:g} s each; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)
    results = []
    try:
        scenarios = [("1", "1 node", 1, False), ("direct", "2 nodes, direct", 2, False), ("relayed", "2 nodes, relayed", 2, True)]
        for key, name, count, relayed in scenarios:
            if key not in only:
                continue
            prefix = f"giants-scale:{key}:"
            started = [start_node(redis_url, prefix, args) for _ in range(count)]
            procs = [p for p, _ in started]
            try:
                results.append(await run_scenario(name, [u for _, u in started], procs, redis_pid, relayed, args))
            finally:
                stop(procs)
                report_log(name)
        if "workers" in only:
            proc, url = bs.start([sys.executable, "-m", "client_cli.cli", "serve", "--port", "0", "--workers", "2",
                                  "--log-level", "warning", "--redis-url", redis_url, "--key-prefix", "giants-scale:w:",
                                  "--rate", "1000", "--burst", "1000", *LIMITS])
            try:
                results.append(await run_scenario("--workers 2", [url], [proc], redis_pid, False, args))
            finally:
                stop([proc])
                report_log("--workers 2")
        failovers = []
        if "failover" in only:
            for i in range(args.failovers):
                took = await failover_once(redis_url, f"giants-scale:f{i}:", args)
                failovers.append(took)
                print(f"  failover {i + 1}: {took:.2f} s (lease TTL {args.lease_ttl:g} s)", flush=True)
    finally:
        redis.stop()
    print("\nsummary")
    by = {r["name"]: r for r in results}
    for r in results:
        print(f"  {r['name']:18} knee (p99 < 10 ms) {r['knee']:6.0f} moves/s; saturated {r['saturated']:7.1f} moves/s")
    one, two = by.get("1 node"), by.get("2 nodes, direct")
    if one and two:
        print(f"  2 nodes / 1 node saturated throughput: {two['saturated'] / one['saturated']:.2f}x")

    def cpu_at(r: dict[str, Any], rate: float) -> float | None:
        return next((p["node_us"] for p in r["phases"] if p["rate"] == rate), None)

    first = float(args.rates.split(",")[0])
    relayed = by.get("2 nodes, relayed")
    if one and two and cpu_at(one, first) and cpu_at(two, first):
        print(f"  CPU per move at {first:g}/s: 1 node {cpu_at(one, first):.0f} us, 2 nodes direct {cpu_at(two, first):.0f} us "
              f"({100 * (cpu_at(two, first) / cpu_at(one, first) - 1):+.0f}%)")
    if two and relayed and cpu_at(two, first) and cpu_at(relayed, first):
        print(f"  relay CPU per move at {first:g}/s: {cpu_at(relayed, first) - cpu_at(two, first):.0f} us "
              f"(relayed {cpu_at(relayed, first):.0f} - direct {cpu_at(two, first):.0f})")
    if failovers:
        print(f"  failover (kill -9 -> first move accepted elsewhere): median {sorted(failovers)[len(failovers) // 2]:.2f} s, "
              f"max {max(failovers):.2f} s over {len(failovers)}")
    return 0


if __name__ == "__main__":
    try:
        import uvloop
    except ImportError:
        raise SystemExit(asyncio.run(main())) from None
    raise SystemExit(uvloop.run(main()))
