"""A reconnect storm against a node: does it keep renewing its leases on time?

    python bench/storm.py --rooms 1000 --clients 3000               # one node
    python bench/storm.py --rooms 1000 --clients 3000 --workers 2   # giants serve --workers 2
    python bench/storm.py ... --py-spy                              # what holds the node's loop

One embedded redis-server and, as subprocesses: the node under test (`giants serve`, or
`giants serve --workers N`), an idle peer node (it takes over any room whose lease
lapses, as a surviving neighbour would), and a victim node that owns no room. Set-up:
`--rooms` Giantslayer rooms on the node under test, two seats joined (the game
started), seat 1 connected to the node, seat 0 to the victim (relayed to the node; with
`--seat0 closed`, to the node, and its connection closed before the storm). The
storm: the victim is killed (SIGKILL), so the node and the peer sweep for orphans every
period for the next few periods and the node drops the victim's members from its rooms,
as after any death, and once its heartbeat has expired `--clients` clients connect to the node at once, each naming its
room in the URL (`/?room=`): the first `--rooms` of them resume seat 0 of their room
with its token, the rest watch a room; each is done when its snapshot arrives.

With `--drop-only` there is no storm: it reports how long after the victim's death
the node has dropped all its members (each room's version moved, read from Redis).

Reported: how long the storm took to absorb (every snapshot in) and each client's time
to its snapshot; from the node's /metrics, every renewal gap of the storm (the
histogram `giants_lease_renewal_gap_seconds`: from one complete pass's first send to
the next one's last answer), the longest since the node started, rooms lost
(`giants_rooms_lost_total`), hand-overs between workers; from Redis itself (a thread
reading every lease of the node's rooms every `--sample` s): the least TTL any lease had
left and how many rooms changed owner. `--py-spy` samples the node's processes during
the storm and splits their samples by what they were doing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import wsclient  # noqa: E402
from bench.loop import run_main  # noqa: E402
from bench.server import SERVER_LOG as LOG  # noqa: E402  (start() keeps every server line here)
from bench.server import start  # noqa: E402
from protocol import PROTOCOL_VERSION  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402

LIMITS = ("--max-connections-per-address", "0", "--max-rooms-per-address", "0", "--rate", "1000", "--burst", "1000")

# What a sample of the node was doing: the first kind whose names appear in its stack.
KINDS = (
    ("dead node's members dropped", ("forget_nodes",)),
    ("take-over / restore", ("server/restore.py", "take_over")),
    ("owner lookups (hand-over)", ("Node.owner", "_look_up", "_owner_of")),
    ("lease renewal / heartbeat", ("server/node.py", "store_leases.py")),
    ("hand-over between workers", ("server/handover.py",)),
    ("commit (Redis write)", ("commit_pipe.py", "_commit (server/room_storage.py")),
    ("snapshot: views, encode", ("send_snapshot", "snapshot", "server/views.py", "server/packing.py")),
    ("resume / watch / join, other", ("on_resume", "on_watch", "on_join", "server/membership.py")),
    ("hello", ("on_hello",)),
    ("decode requests", ("decode_client", "server/wire.py")),
    ("websocket handshake", ("handshake", "process_request", "http11", "server/http.py", "check_origin")),
    ("connection: read, flush, close", ("server/connection.py", "websockets/")),
    ("relay", ("server/relay",)),
)


def kind_of(stack: str) -> str:
    for kind, names in KINDS:
        if any(n in stack for n in names):
            return kind
    if "run_forever" in stack or "_run_once" in stack or "uvloop" in stack:
        return "event loop, other"
    return "other"


def serve(redis_url: str, prefix: str, ttl: float, *extra: str) -> tuple[subprocess.Popen[str], str]:
    return start([sys.executable, "-m", "client_cli.cli", "serve", "--port", "0", "--log-level", "warning",
                  "--redis-url", redis_url, "--key-prefix", prefix, "--lease-ttl", str(ttl), *LIMITS, *extra])


def scrape(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url.replace("ws://", "http://") + "/metrics", timeout=30) as reply:
        return str(reply.read().decode())


def per_node(url: str, nodes: int) -> dict[str, str]:
    """Each worker's /metrics by node id (the kernel picks the worker of each scrape)."""
    seen: dict[str, str] = {}
    for _ in range(100 * nodes):
        text = scrape(url)
        match = re.search(r'giants_node_info\{id="([^"]+)"', text)
        if match is not None:
            seen[match.group(1)] = text
        if len(seen) >= nodes:
            break
    return seen


def value(text: str, name: str) -> float:
    match = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def buckets(text: str, name: str) -> dict[str, float]:
    return {m.group(1): float(m.group(2)) for m in re.finditer(rf'^{name}_bucket\{{le="([^"]+)"\}} (\S+)$', text, re.M)}


class Client:
    """One lean WebSocket connection speaking the protocol: requests and their replies,
    and the first snapshot of a room."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.snapshot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ws.on_frame = self.on_frame

    @classmethod
    async def open(cls, url: str, name: str) -> Client:
        client = cls(await wsclient.connect(url, compression=None, max_size=2**22))
        reply = await client.request("hello", protocol=PROTOCOL_VERSION, name=name)
        if reply["type"] != "ok":
            raise RuntimeError(f"hello: {reply}")
        return client

    def on_frame(self, frame: bytes) -> None:
        msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
        if msg["type"] in ("ok", "error"):
            future = self.replies.pop(msg.get("id"), None)
            if future is not None and not future.done():
                future.set_result(msg)
        elif msg["type"] == "snapshot" and not self.snapshot.done():
            self.snapshot.set_result(None)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        future = self.replies[self.next_id] = asyncio.get_running_loop().create_future()
        await self.ws.send(msgpack.packb({"type": kind, "id": self.next_id, **fields}))
        return await future

    async def ok(self, kind: str, **fields: Any) -> dict[str, Any]:
        reply = await self.request(kind, **fields)
        if reply["type"] != "ok":
            raise RuntimeError(f"{kind}: {reply}")
        return dict(reply["data"])

    async def close(self) -> None:
        await self.ws.close()


# Every lease's TTL left (ms; -2 if none) and holder, KEYS = the lease keys.
LEASES = """
local out = {}
for i = 1, #KEYS do
  out[2 * i - 1] = redis.call('PTTL', KEYS[i])
  out[2 * i] = redis.call('GET', KEYS[i]) or ''
end
return out
"""


class LeaseWatch(threading.Thread):
    """Reads every lease of the node's rooms from Redis every `interval` s (a thread of
    its own: the load generator's loop is as swamped as the node's during the storm)."""

    def __init__(self, redis_url: str, keys: list[str], owners: list[str], interval: float) -> None:
        super().__init__(daemon=True)
        import redis

        self.client = redis.Redis.from_url(redis_url)
        self.keys, self.owners, self.interval = keys, owners, interval
        self.least = float("inf")  # ms
        self.samples = 0
        self.changed: set[str] = set()  # leases seen held by another node
        self.expired: set[str] = set()  # leases seen expired (nobody held them)
        self.halt = threading.Event()

    def run(self) -> None:
        script = self.client.register_script(LEASES)
        while not self.halt.wait(self.interval):
            out = script(keys=self.keys)
            self.samples += 1
            for i, key in enumerate(self.keys):
                ttl, holder = int(out[2 * i]), out[2 * i + 1].decode()
                if not holder:
                    self.expired.add(key)
                elif holder != self.owners[i]:
                    self.changed.add(key)
                elif ttl >= 0:
                    self.least = min(self.least, ttl)


async def set_up(url: str, victim_url: str, rooms: int) -> list[tuple[str, str, Client, Client]]:
    """(room, seat 0's token, seat 0's client, seat 1's client) of each room, 32 at a time.
    Seat 1 creates the room on the node; seat 0 joins it through `victim_url` (the
    victim node relays it) or, if that is "", on the node too."""
    made: list[tuple[str, str, Client, Client]] = []
    gate = asyncio.Semaphore(32)

    async def one(i: int) -> None:
        async with gate:
            b = await Client.open(url, f"b{i}")
            room = (await b.ok("create_room", game="giantslayer", players=2))["room"]
            a = await Client.open(victim_url or f"{url}/?room={room}", f"a{i}")
            token = (await a.ok("join", room=room, seat=0))["token"]
            await b.ok("join", room=room, seat=1)
            made.append((room, token, a, b))

    await asyncio.gather(*(one(i) for i in range(rooms)))
    return made


async def storm(url: str, made: list[tuple[str, str, Client, Client]], count: int,
                timeout: float) -> tuple[list[float], Counter[str], list[Client]]:
    """`count` clients at once; each one's seconds to its snapshot, and the failures."""
    t0 = time.perf_counter()
    took: list[float] = []
    failed: Counter[str] = Counter()
    clients: list[Client] = []

    async def one(i: int) -> None:
        room, token, _, _ = made[i % len(made)]
        try:
            client = await Client.open(f"{url}/?room={room}", f"s{i}")
            clients.append(client)
            if i < len(made):
                await client.ok("resume", room=room, token=token)
            else:
                await client.ok("watch", room=room)
            await client.snapshot
            took.append(time.perf_counter() - t0)
        except Exception as exc:  # counted by kind
            failed[type(exc).__name__ + ": " + str(exc)[:80]] += 1

    _, pending = await asyncio.wait([asyncio.ensure_future(one(i)) for i in range(count)], timeout=timeout)
    for task in pending:
        task.cancel()
    if pending:
        failed["not absorbed within --timeout"] += len(pending)
    return took, failed, clients


def version_of(sync: Any, prefix: str, rooms: list[str]) -> list[int]:
    """Each room's stored version."""
    pipe = sync.pipeline(transaction=False)
    for room in rooms:
        pipe.hget(f"{prefix}room:{{{room}}}", "version")
    return [int(v or 0) for v in pipe.execute()]


async def drops(sync: Any, prefix: str, rooms: list[str], before: list[int], killed: float, timeout: float) -> None:
    """--drop-only: the seconds from the victim's SIGKILL (and from its heartbeat's
    expiry, now) until the node has dropped every member the victim relayed to it: the
    leave commits each room's version once (read from Redis every 20 ms)."""
    expired = time.perf_counter()
    first = 0.0
    while time.perf_counter() - expired < timeout:
        moved = sum(v > b for v, b in zip(version_of(sync, prefix, rooms), before, strict=True))
        now = time.perf_counter()
        if moved and not first:
            first = now
        if moved == len(rooms):
            print(f"  dead node's members dropped: {len(rooms)} rooms; heartbeat expired {expired - killed:.2f} s "
                  f"after SIGKILL; first dropped {first - expired:.2f} s after, all {now - expired:.2f} s after",
                  flush=True)
            return
        await asyncio.sleep(0.02)
    print(f"  dead node's members dropped: only {moved} of {len(rooms)} after {timeout:g} s", flush=True)


def tcp_counters() -> dict[str, int]:
    """The machine's TcpExt counters (/proc/net/netstat): listen queue overflows and SYN
    retransmissions tell a storm that waited in the kernel for the node to accept it."""
    lines = [line.split() for line in Path("/proc/net/netstat").read_text().splitlines() if line.startswith("TcpExt:")]
    return dict(zip(lines[0][1:], (int(v) for v in lines[1][1:]), strict=True))


def pids_of(proc: subprocess.Popen[str], workers: int) -> list[int]:
    if workers <= 1:
        return [proc.pid]
    kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    return [int(k) for k in kids if b"redis" not in Path(f"/proc/{k}/cmdline").read_bytes()]


def pyspy_split(path: Path) -> tuple[int, Counter[str]]:
    kinds: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if count.isdigit():
            total += int(count)
            kinds[kind_of(stack)] += int(count)
    return total, kinds


async def run(args: argparse.Namespace, redis_url: str) -> None:
    import redis

    prefix = f"giants-storm:{os.getpid()}:{time.time():.0f}:"
    extra = ("--workers", str(args.workers)) if args.workers > 1 else ()
    node, url = serve(redis_url, prefix, args.lease_ttl, *extra)
    peer, _ = serve(redis_url, prefix, args.lease_ttl)
    victim, victim_url = serve(redis_url, prefix, args.lease_ttl, "--node-id", "storm-victim")
    sync = redis.Redis.from_url(redis_url)
    clients: list[Client] = []
    try:
        made = await set_up(url, victim_url if args.seat0 == "victim" else "", args.rooms)
        keys = [f"{prefix}room:{{{room}}}:lease" for room, _, _, _ in made]
        owners = [(sync.get(k) or b"").decode() for k in keys]
        if args.seat0 == "closed":
            for _, _, a, _ in made:
                await a.close()
        await asyncio.sleep(args.settle)
        before = per_node(url, args.workers)
        watch = LeaseWatch(redis_url, keys, owners, args.sample)
        watch.start()
        spies: list[tuple[subprocess.Popen[bytes], Path]] = []
        if args.py_spy:
            for i, pid in enumerate(pids_of(node, args.workers)):
                out = Path(tempfile.mkdtemp(prefix="giants-storm-spy-")) / f"node{i + 1}.txt"
                spies.append((subprocess.Popen([args.py_spy, "record", "-p", str(pid), "-f", "raw", "-r", "100",
                                                "-d", str(int(args.spy_seconds)), "-o", str(out), "--nonblocking"],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out))
        versions = version_of(sync, prefix, [room for room, _, _, _ in made])
        killed = time.perf_counter()
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        while sync.exists(f"{prefix}node:storm-victim"):  # its heartbeat expires: the sweeps start
            await asyncio.sleep(0.02)
        if args.drop_only:
            await drops(sync, prefix, [room for room, _, _, _ in made], versions, killed, args.timeout)
            watch.halt.set()
            return
        tcp0 = tcp_counters()
        took, failed, clients = await storm(url, made, args.clients, args.timeout)
        tcp = {k: v - tcp0.get(k, 0) for k, v in tcp_counters().items()}
        await asyncio.sleep(2 * args.lease_ttl)  # the passes the storm delayed come in
        watch.halt.set()
        watch.join()
        after = per_node(url, args.workers)
        gap = "giants_lease_renewal_gap_seconds"
        diff: Counter[str] = Counter()
        for node_id, text in after.items():
            old = buckets(before.get(node_id, ""), gap)
            for bound, n in buckets(text, gap).items():
                diff[bound] += n - old.get(bound, 0.0)
        passes = diff.get("+Inf", 0.0)
        period = args.lease_ttl / 3
        within = max((n for b, n in diff.items() if b != "+Inf" and float(b) <= 1.5 * period + 1e-9), default=0.0)
        worst = min((float(b) if b != "+Inf" else float("inf") for b, n in diff.items() if n >= passes), default=0.0)
        lost = sum(value(t, "giants_rooms_lost_total") - value(before.get(n, ""), "giants_rooms_lost_total")
                   for n, t in after.items())
        max_gap = max(value(t, "giants_lease_renewal_gap_max_seconds") for t in after.values())
        sent = sum(value(t, "giants_handover_sent_total") - value(before.get(n, ""), "giants_handover_sent_total")
                   for n, t in after.items())
        refused = sum(value(t, "giants_handover_failed_total") - value(before.get(n, ""), "giants_handover_failed_total")
                      for n, t in after.items())
        took.sort()
        what = f"--workers {args.workers}" if args.workers > 1 else "1 node"
        print(f"  {what}: {args.rooms} rooms, {args.clients} clients at once ({args.rooms} resume, "
              f"{args.clients - args.rooms} watch); load average {os.getloadavg()[0]:.2f}", flush=True)
        if took:
            print(f"    absorbed: {len(took)} snapshots in {took[-1]:.2f} s; to snapshot p50 "
                  f"{took[len(took) // 2]:.2f} s, p99 {took[int(len(took) * 0.99)]:.2f} s; failed {sum(failed.values())}"
                  + (f" {dict(failed.most_common(3))}" if failed else ""), flush=True)
            tenths = ", ".join(f"{took[min(len(took) - 1, len(took) * i // 10)]:.2f}" for i in range(1, 10))
            print(f"    to snapshot, deciles: {tenths} s; kernel (whole machine): listen queue overflows "
                  f"{tcp.get('ListenOverflows', 0)}, SYN cookies sent {tcp.get('SyncookiesSent', 0)}, "
                  f"SYNs retransmitted {tcp.get('TCPSynRetrans', 0)}", flush=True)
        print(f"    renewal passes during the storm {passes:.0f}: within 1.5 periods ({1.5 * period:.2f} s) "
              f"{within:.0f}, longest gap in bucket <= {worst:g} s; longest since start {max_gap:.3f} s", flush=True)
        print(f"    least lease TTL left (Redis, every {args.sample:g} s, {watch.samples} reads) "
              f"{watch.least:.0f} ms of {1000 * args.lease_ttl:.0f}, leases seen expired {len(watch.expired)}; rooms lost "
              f"{lost:.0f}; rooms seen owned by another node {len(watch.changed)}; hand-overs sent {sent:.0f}, failed {refused:.0f}", flush=True)
        for i, (spy, out) in enumerate(spies):
            spy.wait(args.spy_seconds + 30)
            if out.exists():
                total, kinds = pyspy_split(out)
                if total:
                    print(f"    node{i + 1} py-spy, {total} active samples in {args.spy_seconds:g} s: "
                          + ", ".join(f"{k} {100 * n / total:.0f}%" for k, n in kinds.most_common()), flush=True)
                    if args.keep_spy:
                        print(f"      raw: {out}", flush=True)
    finally:
        for client in clients:
            client.ws.transport.abort() if client.ws.transport else None
        for proc in (node, peer, victim):
            if proc.poll() is None:
                proc.terminate()
        for proc in (node, peer, victim):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if os.environ.get("STORM_LOG"):  # every line the servers logged, for a closer look
            Path(os.environ["STORM_LOG"]).write_text("".join(LOG))
        kinds = Counter(re.sub(r"\b[a-z0-9]{8}\b|\d+(\.\d+)?", "#", line.strip())[:150]
                        for line in LOG if " WARNING " in line or " ERROR " in line or "Traceback" in line)
        LOG.clear()
        for kind, n in kinds.most_common(6):
            print(f"    log x{n}: {kind}", flush=True)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=3000, help="clients connecting at once (>= --rooms)")
    parser.add_argument("--workers", type=int, default=1, help="the node under test runs giants serve --workers N")
    parser.add_argument("--lease-ttl", type=float, default=2.0)
    parser.add_argument("--seat0", choices=("victim", "closed"), default="victim",
                        help="seat 0 of each room is connected through the victim node (relayed: the node drops "
                             "them when the victim dies) or its connection is closed before the storm")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds between set-up and storm")
    parser.add_argument("--sample", type=float, default=0.05, help="seconds between two reads of every lease")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds the storm may take")
    parser.add_argument("--repeat", type=int, default=1, help="runs (a fresh set of servers each)")
    parser.add_argument("--drop-only", action="store_true",
                        help="no storm: how long the node takes to drop the victim's members once it died")
    parser.add_argument("--py-spy", nargs="?", const=shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy"),
                        default="", metavar="PATH", help="sample the node's processes during the storm")
    parser.add_argument("--spy-seconds", type=float, default=8.0)
    parser.add_argument("--keep-spy", action="store_true", help="print the raw py-spy files' paths")
    args = parser.parse_args()
    args.clients = max(args.clients, args.rooms)
    tmp = Path(tempfile.mkdtemp(prefix="giants-storm-"))
    redis = EmbeddedRedis(tmp / "redis")
    redis_url = redis.start()
    print(f"redis {redis_url}; lease TTL {args.lease_ttl:g} s; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        for _ in range(args.repeat):
            await run(args, redis_url)
    finally:
        redis.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main()))
