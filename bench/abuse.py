"""Abuse benchmark: an honest client's ping latency, alone and under each attack.

    python bench/abuse.py --rooms 400 --duration 10

A `giants serve` subprocess (embedded Redis in a temp dir unless --redis-url) is
filled with --rooms waiting rooms. One honest client (source address 127.0.0.2, so
the per-address limits do not lump it in with the attackers) sends --ping-rate pings
per second for --duration seconds and records each round trip; first alone, then
while 4 hostile connections (from 127.0.0.1, in a separate process so their CPU does
not land in the honest client's event loop) run one attack at a time:

- list_flood: 150 `list_rooms` (largest page) in one TCP write, never reading; reconnect when closed;
- garbage: 1,500 frames of random bytes in one write, no hello; reconnect when closed;
- ping_flood: pings at 1,000/s per connection, reading the replies;
- big_options: `create_room` frames of ~60 KB carrying thousands of option values;
- slow_reader: a seat in a busy room that never reads its patches (4 rooms, bots moving);
- no_hello: connections opened and left silent (up to the per-address limit), reopened when closed.

Reported per row: honest ping p50 / p99 / max, the ratio of p99 to the p99 alone,
how many hostile connections the server closed, and the server's CPU. The goal
(issue 10): p99 under attack within 3x of p99 alone.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import multiprocessing
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
HONEST = "127.0.0.2"
ATTACKS = ("list_flood", "garbage", "ping_flood", "big_options", "slow_reader", "no_hello")


# -- raw WebSocket, as an attacker writes it ----------------------------------------


def frame(payload: bytes, opcode: int = 2) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def req(kind: str, req_id: int, **fields: Any) -> bytes:
    return frame(msgpack.packb({"type": kind, "id": req_id, **fields}, use_bin_type=True))


async def raw_open(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    hostport = url.split("://", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), limit=2**16)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (f"GET / HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        raise ConnectionError(head[:40])
    return reader, writer


async def drain_until_closed(reader: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await reader.read(65536):
            pass


# -- attackers (run in a child process) ---------------------------------------------


async def one_attacker(kind: str, url: str, stop_at: float, closes: list[int], seed: int) -> None:
    big = msgpack.packb(
        {"type": "create_room", "id": 1, "game": "giants", "options": {str(i): i for i in range(4000)}},
        use_bin_type=True,
    )
    while time.monotonic() < stop_at:
        try:
            reader, writer = await raw_open(url)
        except (OSError, ConnectionError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.05)
            continue
        try:
            if kind == "list_flood":
                writer.write(b"".join([req("hello", 0, protocol=1)] + [req("list_rooms", i, limit=200) for i in range(1, 151)]))
                # never read: wait until the server gives up on us
                while time.monotonic() < stop_at and not writer.is_closing():
                    await asyncio.sleep(0.2)
                    if reader.at_eof() or writer.transport.is_closing():
                        break
                    writer.write(req("ping", 9999))
                    await writer.drain()
            elif kind == "garbage":
                writer.write(b"".join(frame(os.urandom(30)) for _ in range(1500)))
                await writer.drain()
                await asyncio.wait_for(drain_until_closed(reader), max(0.1, stop_at - time.monotonic()))
            elif kind == "ping_flood":
                writer.write(req("hello", 0, protocol=1))
                reading = asyncio.get_running_loop().create_task(drain_until_closed(reader))
                n = 1
                while time.monotonic() < stop_at and not reading.done():
                    writer.write(b"".join(req("ping", n + i) for i in range(20)))
                    n += 20
                    await writer.drain()
                    await asyncio.sleep(0.02)  # 20 per 20 ms = 1,000/s
                reading.cancel()
            elif kind == "big_options":
                writer.write(req("hello", 0, protocol=1))
                reading = asyncio.get_running_loop().create_task(drain_until_closed(reader))
                while time.monotonic() < stop_at and not reading.done():
                    writer.write(frame(big))
                    await writer.drain()
                    await asyncio.sleep(0.01)
                reading.cancel()
            elif kind == "slow_reader":
                writer.write(req("hello", 0, protocol=1))
                writer.write(req("create_room", 1, game="giants", players=3, bots={"1": "random", "2": "random"}))
                await writer.drain()
                # read just enough to learn the room id, then never read again
                data = await reader.read(4096)
                match = re.search(rb"\xa4room\xa8([a-z0-9]{8})", data)
                if match:
                    writer.write(req("join", 2, room=match.group(1).decode()))
                    for i in range(200):  # and ask for snapshots it will never read
                        writer.write(req("resync", 3 + i, room=match.group(1).decode()))
                    await writer.drain()
                while time.monotonic() < stop_at and not reader.at_eof():
                    await asyncio.sleep(0.2)
            elif kind == "no_hello":
                await asyncio.wait_for(drain_until_closed(reader), max(0.1, stop_at - time.monotonic()))
        except (TimeoutError, OSError, ConnectionError):
            pass
        finally:
            if reader.at_eof():
                closes[0] += 1
            writer.close()
        await asyncio.sleep(0.01)


def attack_process(kind: str, url: str, seconds: float, connections: int, out: Any) -> None:
    async def run() -> None:
        stop_at = time.monotonic() + seconds
        closes = [0]
        await asyncio.gather(*(one_attacker(kind, url, stop_at, closes, i) for i in range(connections)))
        out.put(closes[0])

    asyncio.run(run())


# -- the honest client --------------------------------------------------------------


async def honest_pings(url: str, seconds: float, rate: float) -> list[float]:
    rtts: list[float] = []
    async with connect(url, compression=None, max_size=2**24, local_addr=(HONEST, 0)) as ws:
        await ws.send(msgpack.packb({"type": "hello", "id": 0, "protocol": 1, "name": "honest"}))
        await ws.recv()
        stop_at = time.monotonic() + seconds
        n = 1
        while time.monotonic() < stop_at:
            t0 = time.perf_counter()
            await ws.send(msgpack.packb({"type": "ping", "id": n}))
            while True:
                reply = msgpack.unpackb(await ws.recv(), raw=False)
                if reply.get("id") == n:
                    break
            rtts.append(time.perf_counter() - t0)
            n += 1
            await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - t0)))
    return rtts


async def fill_rooms(url: str, rooms: int, connections: int = 10) -> None:
    """Create `rooms` waiting rooms over several connections (each has its own rate)."""

    async def one(count: int) -> None:
        async with connect(url, compression=None, local_addr=(HONEST, 0)) as ws:
            await ws.send(msgpack.packb({"type": "hello", "id": 0, "protocol": 1, "name": "owner"}))
            await ws.recv()
            for i in range(count):
                await ws.send(msgpack.packb({"type": "create_room", "id": i + 1, "game": "giantslayer"}))
                await ws.recv()
                if i % 40 == 39:
                    await asyncio.sleep(0.9)  # stay under the rate limit

    share = [rooms // connections + (1 if i < rooms % connections else 0) for i in range(connections)]
    await asyncio.gather(*(one(n) for n in share if n))


async def listing_cost(url: str, samples: int = 20) -> tuple[float, float, int]:
    """Round trip (median, max) and reply size of one default `list_rooms` page."""
    times: list[float] = []
    size = 0
    async with connect(url, compression=None, max_size=2**24, local_addr=(HONEST, 0)) as ws:
        await ws.send(msgpack.packb({"type": "hello", "id": 0, "protocol": 1, "name": "lister"}))
        await ws.recv()
        for i in range(samples):
            t0 = time.perf_counter()
            await ws.send(msgpack.packb({"type": "list_rooms", "id": i + 1}))
            reply = await ws.recv()
            times.append(time.perf_counter() - t0)
            size = len(reply)
            await asyncio.sleep(0.15)  # 6 tokens a page: stay under the rate
    return pct(times, 50), max(times), size


def limit_closes(url: str) -> dict[str, float]:
    """The server's giants_limit_closes_total by reason, from /metrics."""
    import urllib.request

    http = url.replace("ws://", "http://").rstrip("/") + "/metrics"
    with urllib.request.urlopen(http, timeout=10) as response:
        text = response.read().decode()
    out: dict[str, float] = {}
    for match in re.finditer(r'^giants_limit_closes_total\{reason="([a-z_]+)"\} ([0-9.e+]+)$', text, re.M):
        out[match.group(1)] = float(match.group(2))
    return out


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


def start_server(args: argparse.Namespace, data_dir: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    cmd = [sys.executable, "-m", "client_cli.cli", "serve", "--host", "127.0.0.1", "--port", "0",
           "--log-level", "warning", "--max-rooms-per-address", "0", "--loop", args.loop]
    cmd += ["--redis-url", args.redis_url, "--key-prefix", f"bench-abuse-{os.getpid()}:"] if args.redis_url else ["--data-dir", data_dir]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    assert proc.stdout is not None
    log: list[str] = []
    for line in proc.stdout:
        log.append(line)
        match = re.search(r"listening on (ws://\S+)", line)
        if match:
            threading.Thread(target=log.extend, args=(proc.stdout,), daemon=True).start()
            return proc, match.group(1), log
    raise RuntimeError("server did not start:\n" + "".join(log))


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=400, help="waiting rooms in the lobby")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per row")
    parser.add_argument("--ping-rate", type=float, default=100.0, help="honest pings per second")
    parser.add_argument("--connections", type=int, default=4, help="hostile connections per attack")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--loop", default="asyncio", help="server event loop (asyncio, uvloop, auto)")
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="giants-abuse-", dir="/tmp")
    proc, url, log = start_server(args, data_dir)
    try:
        await fill_rooms(url, args.rooms)
        rows: list[tuple[str, list[float], int, float]] = []
        cpu0 = cpu_seconds(proc.pid)
        alone = await honest_pings(url, args.duration, args.ping_rate)
        rows.append(("alone", alone, 0, cpu_seconds(proc.pid) - cpu0))
        ctx = multiprocessing.get_context("spawn")
        for kind in args.attacks.split(","):
            closed_before = await asyncio.to_thread(limit_closes, url)
            queue = ctx.Queue()
            child = ctx.Process(target=attack_process, args=(kind, url, args.duration + 1.0, args.connections, queue))
            child.start()
            await asyncio.sleep(1.0)  # the attack is under way before measuring
            cpu0 = cpu_seconds(proc.pid)
            rtts = await honest_pings(url, args.duration - 0.5, args.ping_rate)
            cpu = cpu_seconds(proc.pid) - cpu0
            await asyncio.to_thread(child.join, 30)
            await asyncio.sleep(2.5)  # closes in flight finish (2 s close timeout)
            after = await asyncio.to_thread(limit_closes, url)
            closes = int(sum(after.values()) - sum(closed_before.values()))
            rows.append((kind, rtts, closes, cpu))
            await asyncio.sleep(1.0)  # let the server settle between rows
        cpu0 = cpu_seconds(proc.pid)
        again = await honest_pings(url, args.duration, args.ping_rate)
        rows.append(("alone again", again, 0, cpu_seconds(proc.pid) - cpu0))
        list_p50, list_max, list_bytes = await listing_cost(url)
        base = pct(alone, 99)
        print(f"\nhonest ping round trip, {args.rooms} rooms, {args.connections} hostile connections per attack, "
              f"{args.duration:g} s per row, server loop {args.loop}")
        print(f"{'row':<12} {'pings':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'p99/alone':>10} "
              f"{'closed':>7} {'server CPU %':>13}")
        print("(closed: hostile connections the server closed for a limit during the row, from /metrics)")
        for kind, rtts, closes, cpu in rows:
            print(f"{kind:<12} {len(rtts):>6} {pct(rtts, 50) * 1e3:>8.2f} {pct(rtts, 99) * 1e3:>8.2f} "
                  f"{max(rtts) * 1e3:>8.2f} {pct(rtts, 99) / base:>10.2f} {closes if not kind.startswith('alone') else '-':>7} "
                  f"{100 * cpu / args.duration:>13.0f}")
        print(f"\nlist_rooms (default page of 50) with {args.rooms} rooms: round trip median "
              f"{list_p50 * 1e3:.2f} ms, max {list_max * 1e3:.2f} ms, reply {list_bytes:,} bytes")
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)
        if proc.returncode not in (0, -15, None):
            print("".join(log[-30:]), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
