"""Server benchmark: N rooms x M bot clients on loopback playing random legal moves.

    python bench/server.py --rooms 200 --rate 1000 --duration 20

The server runs as a `giants serve` subprocess (embedded Redis in a temp dir unless
--redis-url), the bots in this process: each seat that receives a non-empty `legal`
list answers with a random legal action at its room's paced time (rate / rooms moves
per second per room). Reported:

- moves/s actually achieved;
- round trip p50/p99/max: `act` sent -> the actor's own patch received;
- bytes per patch vs the full view (the msgpack size of the view in a snapshot);
- server memory per idle connection and per room (RSS deltas of the server process);
- the same round trip against a bare websockets echo server (subprocess), at the same
  rate over the same number of connections, as the reference.

Client-side time (this process's event loop) is inside every round trip, for the
server and the echo reference alike.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent

ECHO_SERVER = """
import asyncio, sys
from websockets.asyncio.server import serve
async def echo(ws):
    async for m in ws:
        await ws.send(m)
async def main():
    async with serve(echo, "127.0.0.1", 0, compression=None) as s:
        print("listening on ws://127.0.0.1:%d" % s.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()
asyncio.run(main())
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


SERVER_LOG: list[str] = []


def start(cmd: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    assert proc.stdout is not None
    for line in proc.stdout:
        match = re.search(r"listening on (ws://\S+)", line)
        if match:
            # Keep reading its output so it never blocks on a full pipe; shown on errors.
            threading.Thread(target=SERVER_LOG.extend, args=(proc.stdout,), daemon=True).start()
            return proc, match.group(1)
    raise RuntimeError("server did not start")


def scrape(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(resp.read().decode())


def histogram_quantiles(text: str, name: str, qs: tuple[float, ...]) -> tuple[float, list[float]]:
    """Mean and bucket upper bounds for quantiles of a Prometheus histogram."""
    buckets = []
    total = count = 0.0
    for line in text.splitlines():
        if line.startswith(name + "_bucket"):
            bound = line.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if bound == "+Inf" else float(bound), float(line.split()[-1])))
        elif line.startswith(name + "_sum"):
            total = float(line.split()[-1])
        elif line.startswith(name + "_count"):
            count = float(line.split()[-1])
    out = []
    for q in qs:
        out.append(next((b for b, c in buckets if c >= q * count), float("inf")))
    return (total / count if count else float("nan")), out


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


@dataclass
class Stats:
    rtts: list[float] = field(default_factory=list)
    patch_bytes: list[int] = field(default_factory=list)  # whole frames without a legal list
    ops_bytes: list[int] = field(default_factory=list)  # the ops alone
    legal_patch_bytes: list[int] = field(default_factory=list)  # frames carrying a legal list
    view_bytes: list[int] = field(default_factory=list)
    moves: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    measuring: bool = False


class Bot:
    """One seated player: answers its legal list at the room's pace."""

    def __init__(self, ws: ClientConnection, stats: Stats, rng: random.Random) -> None:
        self.ws = ws
        self.stats = stats
        self.rng = rng
        self.ids = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.room: str | None = None
        self.version = -1
        self.legal: list[str] = []
        self.sent_at: float | None = None
        self.wake = asyncio.Event()
        self.finished = False

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.ids] = fut
        await self.ws.send(msgpack.packb({"type": kind, "id": self.ids, **fields}))
        return await fut

    async def reader(self) -> None:
        async for frame in self.ws:
            now = time.perf_counter()
            msg = msgpack.unpackb(frame, raw=False)
            kind = msg["type"]
            if kind in ("ok", "error"):
                if kind == "error":
                    self.stats.errors[msg["code"]] = self.stats.errors.get(msg["code"], 0) + 1
                fut = self.replies.pop(msg["id"], None)
                if fut is not None:
                    fut.set_result(msg)
                continue
            if kind == "snapshot":
                self.version, self.legal = msg["version"], msg["legal"]
                self.stats.view_bytes.append(len(msgpack.packb(msg["view"])))
            elif kind == "patch":
                if self.sent_at is not None and msg["from"] == self.version:
                    if self.stats.measuring:
                        self.stats.rtts.append(now - self.sent_at)
                        self.stats.moves += 1
                    self.sent_at = None
                if self.stats.measuring:
                    (self.stats.legal_patch_bytes if msg["legal"] else self.stats.patch_bytes).append(len(frame))
                    self.stats.ops_bytes.append(len(msgpack.packb(msg["ops"])))
                self.version, self.legal = msg["to"], msg["legal"]
                if any(e["type"] == "finished" for e in msg["events"]):
                    self.finished = True
            self.wake.set()


async def room_loop(url: str, stats: Stats, interval: float, stop: asyncio.Event, rng: random.Random,
                    ready: asyncio.Queue[tuple[Bot, Bot]]) -> None:
    """Two bots in one room; a new room when a game ends."""
    bots = []
    for name in ("a", "b"):
        ws = await connect(url, compression=None, max_size=2**22)
        bot = Bot(ws, stats, rng)
        asyncio.get_running_loop().create_task(bot.reader())
        await bot.request("hello", protocol=1, name=name)
        bots.append(bot)
    await ready.put((bots[0], bots[1]))
    next_move = time.perf_counter() + rng.random() * interval
    while not stop.is_set():
        created = await bots[0].request("create_room", game="giantslayer")
        if created["type"] != "ok":
            raise RuntimeError(f"create_room failed: {created}")
        room = created["data"]["room"]
        for bot in bots:
            bot.finished = False
            bot.room = room
            await bot.request("join", room=room)
        while not stop.is_set() and not bots[0].finished:
            actor = next((b for b in bots if b.legal and b.sent_at is None), None)
            if actor is None:
                for b in bots:
                    b.wake.clear()
                await asyncio.wait([asyncio.ensure_future(b.wake.wait()) for b in bots], timeout=1,
                                   return_when=asyncio.FIRST_COMPLETED)
                continue
            delay = next_move - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            next_move = max(next_move + interval, time.perf_counter() - interval)
            action = rng.choice(actor.legal)
            actor.legal = []
            actor.sent_at = time.perf_counter()
            await actor.ws.send(msgpack.packb({"type": "act", "id": 0, "room": room, "action": action}))
        for bot in bots:
            await bot.request("leave", room=room)
    for bot in bots:
        await bot.ws.close()


async def echo_run(url: str, conns: int, rate: float, duration: float) -> list[float]:
    """Round trips to a bare echo server: `conns` connections sharing `rate` messages/s."""
    rtts: list[float] = []
    interval = conns / rate
    payload = msgpack.packb({"type": "act", "id": 0, "room": "abcdefgh", "action": "a5-b5"})
    end = time.perf_counter() + duration

    async def one() -> None:
        async with connect(url, compression=None) as ws:
            next_at = time.perf_counter() + random.random() * interval
            while time.perf_counter() < end:
                delay = next_at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                next_at += interval
                t0 = time.perf_counter()
                await ws.send(payload)
                await ws.recv()
                rtts.append(time.perf_counter() - t0)

    await asyncio.gather(*(one() for _ in range(conns)))
    return rtts


async def measure_memory(url: str, pid: int, conns: int) -> tuple[float, float]:
    """KiB of server RSS per idle connection (hello done) and per room (2 seats joined)."""
    base = rss_kib(pid)
    sockets = [await connect(url, compression=None, max_size=2**22) for _ in range(conns)]
    replies: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue() for _ in sockets]

    async def drain(ws: ClientConnection, queue: asyncio.Queue[dict[str, Any]]) -> None:
        async for frame in ws:
            msg = msgpack.unpackb(frame, raw=False)
            if msg["type"] in ("ok", "error"):
                queue.put_nowait(msg)

    readers = [asyncio.ensure_future(drain(ws, q)) for ws, q in zip(sockets, replies, strict=True)]
    for ws, queue in zip(sockets, replies, strict=True):
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "protocol": 1}))
        await queue.get()
    await asyncio.sleep(0.5)
    per_conn = (rss_kib(pid) - base) / conns
    with_conns = rss_kib(pid)
    rooms = conns // 2
    for i in range(rooms):
        a, b = 2 * i, 2 * i + 1
        await sockets[a].send(msgpack.packb({"type": "create_room", "id": 2, "game": "giantslayer"}))
        room = (await replies[a].get())["data"]["room"]
        for j in (a, b):
            await sockets[j].send(msgpack.packb({"type": "join", "id": 3, "room": room}))
            await replies[j].get()
    await asyncio.sleep(1.0)
    per_room = (rss_kib(pid) - with_conns) / rooms
    for ws in sockets:
        await ws.close()
    await asyncio.gather(*readers, return_exceptions=True)
    return per_conn, per_room


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--rate", type=float, default=1000.0, help="target moves per second in total")
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--redis-url", default=None, help="external Redis (default: embedded in a temp dir)")
    parser.add_argument("--memory-conns", type=int, default=1000)
    parser.add_argument("--loop", default="auto", help="server event loop: auto, uvloop or asyncio")
    parser.add_argument("--profile", metavar="FILE", help="run the server under cProfile, stats to FILE")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="giants-bench-")
    redis_args = ["--redis-url", args.redis_url] if args.redis_url else ["--data-dir", tmp]
    prefix = f"giants-bench:{os.getpid()}:"
    runner = ["-m", "cProfile", "-o", args.profile, "-m", "client_cli.cli"] if args.profile else ["-m", "client_cli.cli"]
    server, url = start([sys.executable, *runner, "serve", "--port", "0", "--log-level", "warning",
                         "--key-prefix", prefix, "--loop", args.loop, "--rate", "1000", "--burst", "1000", *redis_args])
    echo, echo_url = start([sys.executable, "-c", ECHO_SERVER])
    try:
        print(f"server {url} (pid {server.pid}); echo {echo_url}; {args.rooms} rooms x 2 bots; "
              f"target {args.rate:g} moves/s for {args.duration:g}s", flush=True)
        per_conn, per_room = await measure_memory(url, server.pid, args.memory_conns)

        stats = Stats()
        stop = asyncio.Event()
        rng = random.Random(1)
        ready: asyncio.Queue[tuple[Bot, Bot]] = asyncio.Queue()
        interval = args.rooms / args.rate
        tasks = [asyncio.ensure_future(room_loop(url, stats, interval, stop, rng, ready)) for _ in range(args.rooms)]
        for _ in range(args.rooms):
            await ready.get()
        await asyncio.sleep(args.warmup)
        stats.measuring = True
        cpu0, own0 = cpu_seconds(server.pid), time.process_time()
        t0 = time.perf_counter()
        await asyncio.sleep(args.duration)
        stats.measuring = False
        elapsed = time.perf_counter() - t0
        server_cpu, own_cpu = cpu_seconds(server.pid) - cpu0, time.process_time() - own0
        rss_loaded = rss_kib(server.pid)
        metrics = await asyncio.to_thread(scrape, url.replace("ws://", "http://") + "/metrics")
        stop.set()
        await asyncio.wait(tasks, timeout=10)

        echo_cpu0 = cpu_seconds(echo.pid)
        echo_rtts = await echo_run(echo_url, args.rooms * 2, args.rate, min(args.duration, 10.0))
        echo_cpu = cpu_seconds(echo.pid) - echo_cpu0
    finally:
        for proc in (server, echo):
            proc.terminate()
            proc.wait(20)
        shutil.rmtree(tmp, ignore_errors=True)
        if args.redis_url:  # leave a shared Redis as we found it: delete our prefix only
            import redis

            client = redis.Redis.from_url(args.redis_url)
            keys = list(client.scan_iter(match=prefix + "*", count=1000))
            if keys:
                client.delete(*keys)
            client.close()

    ms = 1000.0
    p50, p99 = pct(stats.rtts, 50) * ms, pct(stats.rtts, 99) * ms
    e50, e99 = pct(echo_rtts, 50) * ms, pct(echo_rtts, 99) * ms
    patch = statistics.median(stats.patch_bytes) if stats.patch_bytes else float("nan")
    view = statistics.median(stats.view_bytes) if stats.view_bytes else float("nan")
    print(f"moves/s            {stats.moves / elapsed:8.1f}  (target {args.rate:g}; {stats.moves} moves in {elapsed:.1f}s)")
    print(f"round trip ms      p50 {p50:6.3f}  p99 {p99:6.3f}  max {max(stats.rtts, default=0) * ms:6.2f}")
    mean, (s50, s99) = histogram_quantiles(metrics, "giants_action_seconds", (0.5, 0.99))
    print(f"server-side ms     mean {mean * ms:6.3f}  p50 <= {s50 * ms:g}  p99 <= {s99 * ms:g}  "
          "(receive act -> patches written, from /metrics; since start)")
    cmean, (c50, c99) = histogram_quantiles(metrics, "giants_redis_commit_seconds", (0.5, 0.99))
    commits = float(next((ln.split()[-1] for ln in metrics.splitlines() if ln.startswith("giants_redis_commits_total")), "nan"))
    batches = float(next((ln.split()[-1] for ln in metrics.splitlines() if ln.startswith("giants_redis_commit_seconds_count")), "nan"))
    print(f"Redis pipeline ms  mean {cmean * ms:6.3f}  p50 <= {c50 * ms:g}  p99 <= {c99 * ms:g}  "
          f"({commits / batches:.2f} commits per round trip)")
    print(f"CPU                server {100 * server_cpu / elapsed:.0f}% of a core "
          f"({1e6 * server_cpu / max(1, stats.moves):.0f} us per move, Redis not included), "
          f"bots {100 * own_cpu / elapsed:.0f}%; load average {os.getloadavg()[0]:.2f}")
    print(f"bare echo ms       p50 {e50:6.3f}  p99 {e99:6.3f}  ({len(echo_rtts)} round trips; "
          f"echo server {1e6 * echo_cpu / max(1, len(echo_rtts)):.0f} us CPU per round trip)")
    print(f"ratio to echo      p50 {p50 / e50:5.2f}x  p99 {p99 / e99:5.2f}x")
    ops = statistics.median(stats.ops_bytes) if stats.ops_bytes else float("nan")
    legal = statistics.median(stats.legal_patch_bytes) if stats.legal_patch_bytes else float("nan")
    print(f"full view bytes    median {view:.0f}")
    print(f"patch ops bytes    median {ops:.0f}  ({100 * ops / view:.1f}% of the view)")
    print(f"patch frame bytes  median {patch:.0f} without legal list ({100 * patch / view:.1f}% of the view), "
          f"{legal:.0f} with the actor's legal list")
    print(f"server memory      {per_conn:.1f} KiB per idle connection, {per_room:.1f} KiB per room "
          f"(RSS {rss_loaded / 1024:.0f} MiB under load)")
    if stats.errors:
        print(f"errors             {stats.errors}")
    if SERVER_LOG:
        print("server log (last lines):\n" + "".join(SERVER_LOG[-20:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
