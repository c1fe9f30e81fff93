"""Scale-out benchmark: one node vs two nodes on one Redis, the relay's cost, failover.

    python bench/scale.py                       # every scenario, Giantslayer, 200 rooms
    python bench/scale.py --rates 500,1000,1500 --duration 5 --failovers 3
    python bench/scale.py --only 1,half,direct --rates 1000,2000,3000   # the cost of being two
    python bench/scale.py --callgrind --rooms 40 --rates 20,40 --only 1,half,direct,relayed

One Redis (the embedded redis-server, started here in a temp dir) and `giants serve`
nodes as subprocesses; the load generator (bench/loadgen.py's rooms of 2 bot seats + 1
spectator playing random legal moves at a paced total rate, in its lean mode unless
`--load classic`: bench/lean_load.py) runs in this process and shares the machine's
cores with the nodes, as the goals in issue 12 say. Scenarios:

- `1 node`: every room on one node.
- `1 node, half load` (`half`, only when asked for): half the rooms at half of each
  rate, i.e. what each of 2 nodes carries.
- `2 nodes, direct`: two nodes; each room's members all connect to the node that owns
  it (what a client-aware balancer achieves): the relay does nothing.
- `2 nodes, relayed`: each room's second seat and its spectator connect to the other
  node: every move's request or frames cross the relay. Its CPU per move minus the
  direct one is the relay's cost per move.
- `--workers N` (N from `--workers-counts`, default 2): `giants serve --workers N` on one
  port (SO_REUSEPORT spreads the connections at random; the second seat and the
  spectator name their room in the URL, so the worker that accepts them hands them to
  the room's owner: server/handover.py). It prints what the relay and the hand-over did.

For each rate: the achieved moves/s, round trip p50/p99 (act sent -> own patch back),
and where the machine's CPU went, per move (bench/scale_meter.py): each node, redis-server, the load generator
(this process) and "others" (the rest of the machine's busy time: other jobs, kernel
softirq work); each one's share of a core and its kernel (sys) share; the share of wall
time each spent runnable but waiting for a core (run-queue wait: contention); and the
read / write syscalls, sleeps (voluntary context switches) and preemptions (involuntary
ones) per move: the first three fall as a process handles more per wake-up (bigger
commit batches, more frames per loop turn), the last counts contention for the cores;
and each node's room changes per Redis commit batch and per wake-up (its `/metrics`
commit counters, read before and after the phase); and what Redis ran per move (INFO
commandstats: calls and µs per call of EVALSHA and the commands scripts call; the first
master's on a cluster), the bytes it read per move, and its CPU per move as the moves/s
one Redis core carries.
The knee is the highest rate whose p99 stays under 10 ms while achieving 95% of it, the
saturated throughput the highest rate achieved at all. The summary compares node CPU
per move of 1 node and 2 nodes at each rate, and, with the `half` scenario (`1 node,
half load`: half the rooms at half of each rate, so the same load per node and per room
as each of 2 nodes), what is left once the load per node is the same: the cost of being
two nodes. At saturation it adds up the CPU per move of each part: 2 nodes on 2 cores
reach about 2 cores / (nodes + redis + load generator + others) per move, one node
about 1 core / its own CPU per move. Failover: a room owned by node A with a player on
node B; A is SIGKILLed; the time until B's player has a move accepted (with the default
lease TTL unless --lease-ttl). The machine is shared: compare within a run, alternate.

`--callgrind` runs the nodes under valgrind's callgrind and adds their instructions per
move (user-space instructions: robust to other jobs, blind to the kernel and to cache
misses); only light loads fit (e.g. `--rooms 40 --rates 20,40 --only 1,half,direct,relayed`).
`--cluster` runs every scenario on a real 3-master Redis Cluster instead (started from
the redis-server binary as the tests do, tests/server/cluster.py): "redis" is then the
three redis-servers' CPU together.
`--profile DIR` runs them under cProfile (DIR/<scenario>-node<N>.prof). Each phase also
counts the connections Redis accepted meanwhile: the nodes' pools should not churn.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import re
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

import readings  # noqa: E402  (bench/ is on sys.path: bench/server.py put it there)
from scale_meter import REDIS_URL, Meter, fmt_breakdown, node_pids  # noqa: E402

from bench.loop import run_main  # noqa: E402
from protocol import PROTOCOL_VERSION  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402

# The load generator is one address with hundreds of connections and rooms.
LIMITS = ("--max-connections-per-address", "0", "--max-rooms-per-address", "0")


class PlacedLoad(bs.Load):  # type: ignore[misc, name-defined]
    """bench/loadgen.py's load, with each member's node chosen per room."""

    def __init__(self, urls: list[str], relayed: bool, hints: bool = True, **kwargs: Any) -> None:
        super().__init__(url=urls[0], **kwargs)
        self.urls = urls
        self.relayed = relayed
        self.hints = hints  # False: nobody names its room in the URL (lobby clients)
        self.placed: dict[int, int] = {}  # a room loop's wake-up object -> its creator's node

    async def member(self, name: str, spectator: bool, wake: Any, room: str | None = None) -> Any:
        # The first seat creates every room of its loop, so its node owns them; the
        # others connect to the same node (direct) or the next one (relayed). Rooms
        # connect concurrently, so the node is remembered per room loop.
        index = self.placed.setdefault(id(wake), len(self.placed) % len(self.urls))
        if self.relayed and name != "a":
            index = (index + 1) % len(self.urls)
        self.url = self.urls[index]
        return await super().member(name, spectator, wake, room if self.hints else None)


def relay_counts(url: str, nodes: int) -> str:
    """What the relay and the hand-over did over a `--workers` run, summed over every
    worker's /metrics (the kernel picks the worker answering each scrape)."""
    seen: dict[str, str] = {}
    for _ in range(50 * nodes):
        text = readings.scrape(url.replace("ws://", "http://") + "/metrics")
        node = re.search(r'giants_node_info\{id="([^"]+)"', text)
        if node is not None:
            seen[node.group(1)] = text
        if len(seen) == nodes:
            break

    def total(name: str) -> float:
        return sum(float(v) for text in seen.values() for v in re.findall(rf"^{name} (\S+)$", text, re.M))

    return (f"{'':22}over the run ({len(seen)} of {nodes} workers' /metrics): requests relayed "
            f"{total('giants_relay_requests_total'):.0f}, frames relayed {total('giants_relay_frames_total'):.0f}, "
            f"connections handed over {total('giants_handover_sent_total'):.0f} "
            f"(refused {total('giants_handover_failed_total'):.0f}), "
            f"`moved` advisories {total('giants_moved_advised_total'):.0f}")


def batch_counts(urls: list[str]) -> list[tuple[float, float]]:
    """(room changes committed, commit batches) of each node so far, from its /metrics."""
    counts = []
    for url in urls:
        text = readings.scrape(url.replace("ws://", "http://", 1).rstrip("/") + "/metrics")
        commits = next((float(line.split()[-1]) for line in text.splitlines()
                        if line.startswith("giants_redis_commits_total") or line.startswith("giants_redis_commits ")), 0.0)
        counts.append((commits, readings.histogram(text, "giants_redis_commit_seconds")[0]))
    return counts


async def run_scenario(name: str, urls: list[str], procs: list[subprocess.Popen[str]], redis_pids: list[int],
                       relayed: bool, args: argparse.Namespace, share: float = 1.0) -> dict[str, Any]:
    """`share` < 1: that share of the rooms at that share of each rate (same load per room)."""
    rooms = max(1, round(args.rooms * share))
    load = PlacedLoad(urls, relayed, hints=not args.unhinted, game="giantslayer", rules=None, spectators=1,
                      interval=rooms / 500, protocol=args.protocol, follow_moves=not args.ignore_moved,
                      lean=args.load == "lean")
    ready: asyncio.Queue[None] = asyncio.Queue()
    tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(rooms)]
    for _ in range(rooms):
        await ready.get()
    load.settled()
    pids = node_pids(procs)
    meter = Meter(pids, redis_pids)
    phases = []
    for i, rate in enumerate([share * float(r) for r in args.rates.split(",")]):
        load.interval = rooms / rate
        await asyncio.sleep(args.warmup if i == 0 else 1.0)
        if args.callgrind:
            for pid in pids:
                await asyncio.to_thread(bs.callgrind_control, "--instr=on", pid)
        load.stats = stats = bs.Stats()
        before = await asyncio.to_thread(batch_counts, urls) if len(urls) == len(pids) else None
        stats.measuring = True
        meter.start()
        await asyncio.sleep(args.duration)
        stats.measuring = False
        measured = meter.stop()
        if before is not None:
            after = await asyncio.to_thread(batch_counts, urls)
            measured["batches"] = [tuple(b - a for a, b in zip(x, y, strict=True)) for x, y in zip(before, after, strict=True)]
        if args.callgrind:
            # (a count callgrind wrapped below zero, seen once, is not a count)
            measured["instructions"] = [n if 0 <= n < 2**62 else float("nan")
                                        for n in [await asyncio.to_thread(bs.callgrind_total, pid) for pid in pids]]
        elapsed, cpu = measured["elapsed"], measured["cpu"]
        node_cpu = sum(c for n, c in cpu.items() if n.startswith("node"))
        moves = max(1, stats.moves)
        phase = {
            "rate": rate, "achieved": stats.moves / elapsed, "p50": readings.pct(stats.rtts, 50) * 1e3,
            "p99": readings.pct(stats.rtts, 99) * 1e3, "node_us": 1e6 * node_cpu / moves,
            "redis_us": 1e6 * sum(c for n, c in cpu.items() if n.startswith("redis")) / moves, "loadgen_us": 1e6 * cpu["loadgen"] / moves,
            "client_core": cpu["loadgen"] / elapsed, "errors": dict(stats.errors), "meter": measured,
        }
        phases.append(phase)
        ok = phase["p99"] < bs.KNEE_P99_MS and phase["achieved"] >= 0.95 * rate
        print(f"  {name:18} at {rate:6.0f}/s: {phase['achieved']:7.1f} moves/s  p50 {phase['p50']:6.2f}  "
              f"p99 {phase['p99']:6.2f} ms  nodes {phase['node_us']:4.0f} us/move  redis {phase['redis_us']:3.0f} us/move  "
              f"loadgen {phase['loadgen_us']:3.0f} us/move  {'ok' if ok else 'over'}"
              + (f"  errors {phase['errors']}" if phase["errors"] else ""), flush=True)
        print(fmt_breakdown(measured, moves), flush=True)
        if args.callgrind:
            each = measured["instructions"]
            phase["instructions"] = sum(each) / moves
            print(f"{'':22}instructions per move (callgrind): nodes {phase['instructions']:,.0f} "
                  f"({', '.join(f'node{i + 1} {n:,}' for i, n in enumerate(each))} over {moves} moves)", flush=True)
        if phase["achieved"] < 0.8 * rate:
            break  # saturated: higher rates only add queueing
    load.halt()
    await asyncio.wait(tasks, timeout=15)
    knee = max((p["rate"] for p in phases if p["p99"] < bs.KNEE_P99_MS and p["achieved"] >= 0.95 * p["rate"]), default=0.0)
    return {"name": name, "phases": phases, "knee": knee, "saturated": max(p["achieved"] for p in phases)}


def start_node(redis_url: str, prefix: str, args: argparse.Namespace, *extra: str,
               profile: str = "") -> tuple[subprocess.Popen[str], str]:
    runner = [sys.executable]
    if args.profile and profile:  # cProfile's stats are written when the node exits (SIGTERM: gracefully)
        os.makedirs(args.profile, exist_ok=True)
        runner = [sys.executable, "-m", "cProfile", "-o", os.path.join(args.profile, profile + ".prof")]
    if args.callgrind:  # instrumentation off until the measured phase (callgrind_control)
        runner = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                  f"--callgrind-out-file={bs.CALLGRIND['dir']}/callgrind.out.%p", sys.executable]
    return bs.start([*runner, "-m", "client_cli.cli", "serve", "--port", "0", "--log-level", "warning",
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
    parser.add_argument("--unhinted", action="store_true",
                        help="no member names its room in the URL (as clients coming from the lobby): with "
                             "--workers, those that land on a worker not owning their room are relayed until "
                             "they follow its `moved` advisory")
    parser.add_argument("--ignore-moved", action="store_true", help="members do not follow `moved` advisories")
    parser.add_argument("--protocol", type=int, default=PROTOCOL_VERSION,
                        help=f"wire protocol of the load's clients (default {PROTOCOL_VERSION}; `moved` needs 4)")
    parser.add_argument("--load", choices=("lean", "classic"), default="lean",
                        help="the load generator's members: lean (default: bench/lean_load.py, the least CPU per "
                             "move, spectators' patches counted, not decoded) or classic (bench/loadgen.py, as "
                             "bench/server.py uses by default: every frame decoded)")
    parser.add_argument("--cluster", action="store_true", help="a 3-master Redis Cluster instead of one redis-server")
    parser.add_argument("--rates", default="1000,1500,2000,2500,3000,3500", help="total moves/s tried, in order")
    parser.add_argument("--duration", type=float, default=6.0, help="measured seconds per rate")
    parser.add_argument("--failovers", type=int, default=3)
    parser.add_argument("--workers-counts", default="2",
                        help="the workers scenario runs `giants serve --workers N` for each N of this comma list "
                             "(e.g. 2,4: on 2 cores, 4 shows what oversubscribing costs)")
    parser.add_argument("--lease-ttl", type=float, default=None,
                        help="the nodes' lease TTL (default 2 s; 60 s with --callgrind, whose nodes run too slowly "
                             "to renew every 2/3 s)")
    parser.add_argument("--profile", metavar="DIR", default="",
                        help="run the nodes under cProfile; DIR/<scenario>-node<N>.prof (pstats) when they stop")
    parser.add_argument("--warmup", type=float, default=None,
                        help="unmeasured seconds before the first rate (default 1; 20 with --callgrind: first moves "
                             "of each room run one-time code)")
    parser.add_argument("--only", default="", help="comma list of scenarios: 1,half,direct,relayed,workers,failover "
                                                             "(default all but half)")
    parser.add_argument("--callgrind", action="store_true",
                        help="run the nodes under valgrind's callgrind and report their instructions per move "
                             "(a count other jobs cannot disturb; light loads only, e.g. --rooms 20 --rates 10,20,40 "
                             "--only 1,direct,relayed)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else {"1", "direct", "relayed", "workers", "failover"}
    if args.lease_ttl is None:
        args.lease_ttl = 60.0 if args.callgrind else 2.0
    if args.warmup is None:
        args.warmup = 20.0 if args.callgrind else 1.0
    if args.callgrind:
        only -= {"workers", "failover"}
        bs.CALLGRIND.update(dir=tempfile.mkdtemp(prefix="giants-scale-callgrind-"), keep="")
    tmp = Path(tempfile.mkdtemp(prefix="giants-scale-"))
    if args.cluster:
        from tests.server.cluster import start_cluster

        cluster = start_cluster(tmp / "cluster")
        redis_url, redis_pids, stop_redis = cluster.url, [p.pid for p in cluster.procs], cluster.stop
    else:
        redis = EmbeddedRedis(tmp / "redis")
        redis_url, stop_redis = redis.start(), redis.stop
        assert redis.process is not None
        redis_pids = [redis.process.pid]
    REDIS_URL.append(redis_url)
    print(f"redis {redis_url}; {args.rooms} rooms x (2 seats + 1 spectator); rates {args.rates}; "
          f"{args.duration:g} s each; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}", flush=True)
    results = []
    try:
        scenarios = [("1", "1 node", 1, False, 1.0), ("half", "1 node, half load", 1, False, 0.5),
                     ("direct", "2 nodes, direct", 2, False, 1.0), ("relayed", "2 nodes, relayed", 2, True, 1.0)]
        for key, name, count, relayed, share in scenarios:
            if key not in only:
                continue
            prefix = f"giants-scale:{key}:"
            started = [start_node(redis_url, prefix, args, profile=f"{key}-node{i + 1}") for i in range(count)]
            procs = [p for p, _ in started]
            try:
                results.append(await run_scenario(name, [u for _, u in started], procs, redis_pids, relayed, args, share))
            finally:
                stop(procs)
                report_log(name)
        for n in [int(c) for c in args.workers_counts.split(",")] if "workers" in only else []:
            name = f"--workers {n}"
            proc, url = bs.start([sys.executable, "-m", "client_cli.cli", "serve", "--port", "0", "--workers", str(n),
                                  "--log-level", "warning", "--redis-url", redis_url, "--key-prefix", f"giants-scale:w{n}:",
                                  "--rate", "1000", "--burst", "1000", *LIMITS])
            try:
                results.append(await run_scenario(name, [url], [proc], redis_pids, False, args))
                print(relay_counts(url, n), flush=True)
            finally:
                stop([proc])
                report_log(name)
        failovers = []
        if "failover" in only:
            for i in range(args.failovers):
                took = await failover_once(redis_url, f"giants-scale:f{i}:", args)
                failovers.append(took)
                print(f"  failover {i + 1}: {took:.2f} s (lease TTL {args.lease_ttl:g} s)", flush=True)
    finally:
        stop_redis()
    print("\nsummary")
    by = {r["name"]: r for r in results}
    for r in results:
        print(f"  {r['name']:18} knee (p99 < 10 ms) {r['knee']:6.0f} moves/s; saturated {r['saturated']:7.1f} moves/s")
    one, two = by.get("1 node"), by.get("2 nodes, direct")
    if one and two:
        print(f"  2 nodes / 1 node saturated throughput: {two['saturated'] / one['saturated']:.2f}x")

    def at(r: dict[str, Any] | None, rate: float) -> dict[str, Any] | None:
        return next((p for p in r["phases"] if p["rate"] == rate), None) if r else None

    def saturated(r: dict[str, Any]) -> dict[str, Any]:
        return max(r["phases"], key=lambda p: p["achieved"])

    if two:
        for key, unit in (("node_us", "us"), ("instructions", "instructions")):
            if key not in two["phases"][0]:
                continue
            for rate in [p["rate"] for p in two["phases"]]:
                a, b = at(one, rate), at(two, rate)
                if a and b:
                    print(f"  node {unit} per move at {rate:g}/s: 1 node {a[key]:,.0f}, 2 nodes direct {b[key]:,.0f} "
                          f"({100 * (b[key] / a[key] - 1):+.0f}%)")
                half = at(by.get("1 node, half load"), rate / 2)
                if half and b:  # the same load per node and per room: what is left is the cost of being two
                    print(f"  same load per node, {unit} per move: 1 node, half the rooms at {rate / 2:g}/s {half[key]:,.0f}, "
                          f"2 nodes at {rate:g}/s {b[key]:,.0f} ({100 * (b[key] / half[key] - 1):+.0f}%)")
    if one and two:
        # Two nodes on two cores with the load generator and Redis: 2 nodes reach about
        # cores / (S2 + R + L) while one node reaches about 1 / S1 (it holds one core).
        s1, s2 = saturated(one), saturated(two)
        parts: dict[str, tuple[float, float]] = {}
        for label, ph in (("1 node", s1), ("2 nodes direct", s2)):
            m = ph["meter"]
            moves = ph["achieved"] * m["elapsed"]
            per = {k: 1e6 * v / moves for k, v in m["cpu"].items()}
            nodes = sum(v for k, v in per.items() if k.startswith("node"))
            print(f"  saturated, {label:15} {ph['achieved']:6.0f} moves/s: per move nodes {nodes:.0f} us + redis "
                  f"{per['redis']:.0f} + loadgen {per['loadgen']:.0f} + others {per['others']:.0f} = "
                  f"{sum(per.values()):.0f} us; machine {100 * sum(m['cpu'].values()) / m['elapsed']:.0f}% of 1 core")
            parts[label] = (nodes, sum(per.values()) - nodes)
        s1_us, rest = parts["1 node"][0], parts["2 nodes direct"][1]
        cores = os.cpu_count() or 2
        bound = 1e6 * cores / (s1_us + rest)
        print(f"  if 2 nodes spent what 1 node does per move ({s1_us:.0f} us) with the rest as measured ({rest:.0f} us: "
              f"redis, load generator, others), {cores} cores would carry {bound:.0f} moves/s: "
              f"{bound / s1['achieved']:.2f}x one node")
    relayed = by.get("2 nodes, relayed")
    if two and relayed:
        for rate in [p["rate"] for p in relayed["phases"]]:
            a, b = at(two, rate), at(relayed, rate)
            if a and b and b["achieved"] >= 0.95 * rate:
                print(f"  relay CPU per move at {rate:g}/s: {b['node_us'] - a['node_us']:.0f} us "
                      f"(relayed {b['node_us']:.0f} - direct {a['node_us']:.0f}); redis "
                      f"{b['redis_us'] - a['redis_us']:+.0f} us")
                if "instructions" in b:
                    print(f"  relay instructions per move at {rate:g}/s: {b['instructions'] - a['instructions']:,.0f} "
                          f"(relayed {b['instructions']:,.0f} - direct {a['instructions']:,.0f})")
    if failovers:
        print(f"  failover (kill -9 -> first move accepted elsewhere): median {sorted(failovers)[len(failovers) // 2]:.2f} s, "
              f"max {max(failovers):.2f} s over {len(failovers)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main()))
