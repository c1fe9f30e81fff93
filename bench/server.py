"""Server benchmark: N rooms x 2 bot seats (+ spectators) on loopback playing random legal moves.

    python bench/server.py                          # Giantslayer, 1,000 moves/s, then the knee
    python bench/server.py --game causeway/quick    # another game / rule set
    python bench/server.py --patches                # every game and rule set: patch sizes only
    python bench/server.py --patches --protocol 1   # the same in protocol 1

The server runs as a `giants serve` subprocess (embedded Redis in a temp dir unless
--redis-url), the clients in this process: each seat that holds a non-empty legal
list answers with a random legal action at its room's paced time (rate / rooms moves
per second per room); spectators only read. A bare websockets echo server runs as a
second subprocess on the SAME event loop kind as the server (uvloop or asyncio) and is
measured in the same run at the same rate over the same number of connections.

Reported, in one run:

- server CPU per move (the `giants serve` process: Redis client work included), the
  embedded redis-server's CPU per move apart, and the echo server's CPU per round trip;
- the server's wake-ups per move (voluntary context switches: each costs more than its
  system call, the caches being cold after the other processes ran);
- round trip p50/p99 (`act` sent -> the actor's own patch received) at --rate, and the
  same for the echo;
- the knee: the highest of the --knee rates whose p99 stays under 10 ms while the
  achieved rate is within 5% of the target (echo measured at that rate too);
- server memory per idle connection (hello done) and per room (2 seats joined);
- median frame bytes: every patch frame, those without / with a legal list, the
  spectators' frames, the full view;
- how even the offered load was: acts sent per 5 ms and their dispersion (about 1
  when the rooms move independently, each every `rooms / rate` seconds at its own
  phase; tens when they move in step).

Client-side time (this process's event loop) is inside every round trip, for the
server and the echo alike (the echo: bench/echo.py; what is read off /proc and
/metrics: bench/readings.py). The machine is shared: compare ratios from one run, repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.loop import run_main  # noqa: E402
from protocol import PROTOCOL_VERSION  # noqa: E402
from server.config import Config  # noqa: E402
from server.upkeep import NEW_ROOM_SWEEP  # noqa: E402

sys.path.append(str(ROOT / "bench"))
import floor  # noqa: E402
import latency_split  # noqa: E402
from echo import ECHO_SERVER, echo_phase  # noqa: E402
from loadgen import CLIENTS, Load, Member, Pacer, Stats  # noqa: E402, F401  (scale.py uses bs.Load, bs.Stats)
from readings import (  # noqa: E402
    children,
    cpu_seconds,
    evenness,
    gc_report,
    histogram,
    median,
    pct,
    rss_kib,
    scrape,
    wakeups,
)

KNEE_P99_MS = 10.0


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


def resolve_loop(name: str) -> str:
    if name != "auto":
        return name
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


async def measure_memory(url: str, pid: int, conns: int, game: str, rules: str | None) -> tuple[float, float]:
    """KiB of server RSS per idle connection (hello done) and per room (2 seats joined),
    the rooms measured once packed: nobody acts in them, so the server's new-room sweep
    packs them within about a second (server/app.py; none with `pack_after` 0). Both
    figures are read before the server's first keepalive ping (20 s after a connection
    opened): what a ping round leaves is not in either.

    Marginal costs: one connection says hello and one room is created and joined before
    the baseline, so one-time work (engine imports, lookup tables) is not counted.
    """
    create: dict[str, Any] = {"type": "create_room", "id": 2, "game": game, "players": 2}
    if rules:
        create["rules"] = rules
    warm = [await connect(url, compression=None, max_size=2**22) for _ in range(2)]
    for ws in warm:
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION}))
        await ws.recv()
    await warm[0].send(msgpack.packb(create))
    warm_room = msgpack.unpackb(await warm[0].recv(), raw=False)["data"]["room"]
    for ws in warm:
        await ws.send(msgpack.packb({"type": "join", "id": 3, "room": warm_room}))
    await asyncio.sleep(0.5)
    base = rss_kib(pid)
    sockets = [await connect(url, compression=None, max_size=2**22) for _ in range(conns)]
    replies: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue() for _ in sockets]

    async def drain(ws: ClientConnection, queue: asyncio.Queue[dict[str, Any]]) -> None:
        async for frame in ws:
            msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
            if msg["type"] in ("ok", "error"):
                queue.put_nowait(msg)

    readers = [asyncio.ensure_future(drain(ws, q)) for ws, q in zip(sockets, replies, strict=True)]
    for ws, queue in zip(sockets, replies, strict=True):
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION}))
        await queue.get()
    await asyncio.sleep(0.5)
    per_conn = (rss_kib(pid) - base) / conns
    with_conns = rss_kib(pid)
    rooms = conns // 2
    for i in range(rooms):
        a, b = 2 * i, 2 * i + 1
        await sockets[a].send(msgpack.packb(create))
        room = (await replies[a].get())["data"]["room"]
        for j in (a, b):
            await sockets[j].send(msgpack.packb({"type": "join", "id": 3, "room": room}))
            await replies[j].get()
    # A room nobody acted in is packed at the first new-room sweep (every 0.5 s) after
    # its last change (server/upkeep.py, NEW_ROOM_SWEEP).
    await asyncio.sleep(2 * NEW_ROOM_SWEEP + 1.0)
    per_room = (rss_kib(pid) - with_conns) / rooms
    for ws in [*sockets, *warm]:
        await ws.close()
    await asyncio.gather(*readers, return_exceptions=True)
    return per_conn, per_room


@dataclass
class Phase:
    target: float
    moves_per_s: float
    p50: float
    p99: float
    server_us: float  # server process CPU per move
    redis_us: float  # embedded redis-server CPU per move
    server_core: float  # share of one core
    client_core: float  # this process (the load generator), share of one core
    stats: Stats
    server_wakeups: float = float("nan")  # the server's wake-ups per move


CALLGRIND: dict[str, str] = {}  # set by --callgrind: the directory of the server's callgrind output


def callgrind_control(option: str, pid: int) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True, timeout=120)


def callgrind_total(pid: int, directory: str = "", keep: str = "") -> int:
    """Instructions the server (or the process `pid` whose dumps go to `directory`)
    executed since instrumentation was switched on."""
    directory = directory or CALLGRIND["dir"]
    keep = keep if directory != CALLGRIND["dir"] else CALLGRIND["keep"]
    before = set(os.listdir(directory))
    callgrind_control("--dump", pid)
    callgrind_control("--instr=off", pid)
    for name in sorted(set(os.listdir(directory)) - before):
        if keep:
            shutil.copyfile(os.path.join(directory, name), keep)
        with open(os.path.join(directory, name)) as dump:
            for line in dump:
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
    raise RuntimeError("callgrind wrote no dump")


async def measure(load: Load, server_pid: int, rate: float, rooms: int, duration: float, settle: float) -> Phase:
    """Pace the running rooms at `rate` and measure for `duration` seconds."""
    load.interval = rooms / rate
    await asyncio.sleep(settle)
    load.stats = stats = Stats(view_bytes=load.stats.view_bytes)
    stats.measuring = True
    pids = [server_pid, *children(server_pid)]
    if CALLGRIND:
        callgrind_control("--instr=on", server_pid)
    cpu0 = [cpu_seconds(p) for p in pids]
    woken0 = wakeups(server_pid)
    own0 = time.process_time()
    t0 = time.perf_counter()
    await asyncio.sleep(duration)
    stats.measuring = False
    elapsed = time.perf_counter() - t0
    cpu = [cpu_seconds(p) - c for p, c in zip(pids, cpu0, strict=True)]
    woken = wakeups(server_pid) - woken0
    own = time.process_time() - own0
    moves = max(1, stats.moves)
    if CALLGRIND:
        stats.instructions = callgrind_total(server_pid)
    return Phase(rate, stats.moves / elapsed, pct(stats.rtts, 50) * 1e3, pct(stats.rtts, 99) * 1e3,
                 1e6 * cpu[0] / moves, 1e6 * sum(cpu[1:]) / moves, cpu[0] / elapsed, own / elapsed, stats,
                 woken / moves)


async def floor_measure(url: str, pid: int, args: argparse.Namespace,
                        duration: float) -> tuple[float, float, float, float, float]:
    """The I/O floor (bench/floor.py) at --rate over --rooms rooms of the same size:
    p50 ms, p99 ms, its CPU µs per move, its redis-server's, and (with --callgrind)
    its instructions per move."""
    pids = [pid, *children(pid)]
    rooms = floor.FloorRooms(CLIENTS["lean"], url, args.rooms, 2 + args.spectators)
    await rooms.open()
    await asyncio.sleep(1.0)
    if CALLGRIND:
        callgrind_control("--instr=on", pid)
    cpu0 = [cpu_seconds(p) for p in pids]
    rtts = await rooms.run(args.rate, duration)
    cpu = [cpu_seconds(p) - c for p, c in zip(pids, cpu0, strict=True)]
    moves = max(1, len(rtts))
    instructions = callgrind_total(pid, CALLGRIND["dir"] + "/floor") / moves if CALLGRIND else float("nan")
    await rooms.close()
    return (pct(rtts, 50) * 1e3, pct(rtts, 99) * 1e3, 1e6 * cpu[0] / moves, 1e6 * sum(cpu[1:]) / moves,
            instructions)


def parse_game(text: str) -> tuple[str, str | None]:
    game, _, rules = text.partition("/")
    return game, rules or None


async def run_patches(url: str, args: argparse.Namespace) -> None:
    """Every game and rule set at a light load: median frame sizes."""
    from engines import registry

    print(f"{'game/rules':24} {'patch':>6} {'no legal':>9} {'w/ legal':>9} {'spect.':>7} {'view':>6}  (median bytes)")
    for engine in registry.all_engines():
        name = f"{engine.info.name}/{engine.info.rules}"
        load = Load(url, engine.info.name, engine.info.rules, args.spectators, args.rooms / args.rate,
                    protocol=args.protocol)
        ready: asyncio.Queue[None] = asyncio.Queue()
        tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(args.rooms)]
        for _ in range(args.rooms):
            await ready.get()
        await asyncio.sleep(1.0)
        load.stats = stats = Stats(view_bytes=load.stats.view_bytes)
        stats.measuring = True
        await asyncio.sleep(args.duration)
        stats.measuring = False
        load.halt()
        await asyncio.wait(tasks, timeout=10)
        print(f"{name:24} {median(stats.all_frames):6.0f} {median(stats.seat_frames):9.0f} "
              f"{median(stats.legal_frames):9.0f} {median(stats.spectator_frames):7.0f} "
              f"{median(load.stats.view_bytes):6.0f}  ({stats.moves} moves; errors {stats.errors or 'none'})",
              flush=True)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="giantslayer", help="GAME or GAME/RULES (default giantslayer)")
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--spectators", type=int, default=1, help="spectators per room")
    parser.add_argument("--rate", type=float, default=1000.0, help="target moves per second in total")
    parser.add_argument("--duration", type=float, default=15.0, help="measured seconds at --rate")
    parser.add_argument("--knee", default="1500,2000,2500,3000",
                        help="rates tried after --rate, in order, until one fails (empty: skip)")
    parser.add_argument("--knee-duration", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--redis-url", default=None, help="external Redis (default: embedded in a temp dir)")
    parser.add_argument("--fsync", choices=("always", "everysec"), default=None,
                        help="embedded Redis appendfsync policy (default: the server's)")
    parser.add_argument("--memory-conns", type=int, default=1000, help="0 skips the memory figures")
    parser.add_argument("--memory-only", action="store_true", help="stop after the memory figures")
    parser.add_argument("--pack-after", type=float, default=Config.pack_after,
                        help="the server's --pack-after (default: the server's own; 0 = never pack, "
                        "which the memory figures then show)")
    parser.add_argument("--loop", default="auto", help="server (and echo) event loop: auto, uvloop or asyncio")
    parser.add_argument("--patches", action="store_true",
                        help="only frame sizes, every game and rule set (defaults: 20 rooms, 200 moves/s, 5 s)")
    parser.add_argument("--client", choices=sorted(CLIENTS), default="lean",
                        help="the load generator's WebSocket client (default lean: bench/wsclient.py)")
    parser.add_argument("--protocol", type=int, default=PROTOCOL_VERSION,
                        help=f"wire protocol version the clients speak (default {PROTOCOL_VERSION})")
    parser.add_argument("--load", choices=("classic", "lean"), default="classic",
                        help="the load generator's members: classic (bench/loadgen.py, every frame decoded; "
                             "the default, which the figures of docs/performance.md's hot-path section use) or "
                             "lean (bench/lean_load.py: less CPU per move, spectators' patches counted, not "
                             "decoded; implies --client lean)")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the I/O floor reference (bench/floor.py) after the echo")
    parser.add_argument("--profile", metavar="FILE", help="run the server under cProfile, stats to FILE")
    parser.add_argument("--latency-split", action="store_true",
                        help="time each move's steps inside the server (bench/latency_split.py) and print "
                             "the intervals of the measured phase at 1,000/s")
    parser.add_argument("--callgrind", action="store_true",
                        help="run the server under valgrind's callgrind and report instructions per move in "
                             "the measured phase: a count that other jobs on the machine cannot disturb "
                             "(use a light load, e.g. --rooms 10 --rate 20, and --memory-conns 0 --knee '')")
    parser.add_argument("--callgrind-keep", metavar="FILE",
                        help="with --callgrind: keep the measured phase's dump as FILE (for callgrind_annotate)")
    args = parser.parse_args()
    if args.patches:
        argv = sys.argv[1:]
        if "--rooms" not in argv:
            args.rooms = 20
        if "--rate" not in argv:
            args.rate = 200.0
        if "--duration" not in argv:
            args.duration = 5.0

    loop = resolve_loop(args.loop)
    tmp = tempfile.mkdtemp(prefix="giants-bench-")
    redis_args = ["--redis-url", args.redis_url] if args.redis_url else ["--data-dir", tmp]
    if args.fsync and not args.redis_url:
        redis_args += ["--fsync", args.fsync]
    prefix = f"giants-bench:{os.getpid()}:"
    runner = ["-m", "cProfile", "-o", args.profile, "-m", "client_cli.cli"] if args.profile else ["-m", "client_cli.cli"]
    split = f"{tmp}/latency-split.txt" if args.latency_split else ""
    if split:
        runner = [str(ROOT / "bench" / "latency_split.py"), split]
    if args.callgrind:
        runner = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                  f"--callgrind-out-file={tmp}/callgrind.out", sys.executable, *runner]
        CALLGRIND["dir"] = tmp
        CALLGRIND["keep"] = args.callgrind_keep or ""
    else:
        runner = [sys.executable, *runner]
    server, url = start([*runner, "serve", "--port", "0", "--log-level", "warning",
                         "--key-prefix", prefix, "--loop", loop, "--rate", "1000", "--burst", "1000",
                         # every client of the benchmark comes from 127.0.0.1
                         "--max-connections-per-address", "0", "--max-rooms-per-address", "0",
                         "--pack-after", str(args.pack_after), *redis_args])
    echo, echo_url = start([sys.executable, "-c", ECHO_SERVER, loop])
    refs = [server, echo]
    if not args.no_floor and not args.patches and not args.memory_only:
        floor_cmd = [sys.executable, str(ROOT / "bench" / "floor.py"), "serve", loop, args.fsync or "always"]
        if args.callgrind:
            os.mkdir(f"{tmp}/floor")
            floor_cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                         f"--callgrind-out-file={tmp}/floor/callgrind.out", *floor_cmd]
        floor_proc, floor_url = start(floor_cmd)
        refs.append(floor_proc)
    game, rules = parse_game(args.game)
    window = window_end = 0.0  # the measured phase at --rate (monotonic), for --latency-split
    try:
        if args.patches:
            print(f"server {url}; protocol {args.protocol}; {args.rooms} rooms x (2 seats + {args.spectators} spectators); "
                  f"{args.rate:g} moves/s; {args.duration:g} s per game; loop {loop}", flush=True)
            await run_patches(url, args)
            return 0
        fsync = f"; fsync {args.fsync}" if args.fsync else ""
        print(f"server {url} (pid {server.pid}){fsync}; echo {echo_url}; loop {loop} for both; {args.game}; "
              f"{args.rooms} rooms x (2 seats + {args.spectators} spectators); client {args.client}", flush=True)
        per_conn = per_room = float("nan")
        if args.memory_conns:
            per_conn, per_room = await measure_memory(url, server.pid, args.memory_conns, game, rules)
            if args.memory_only:
                print(f"server memory      {per_conn:.1f} KiB per idle connection, {per_room:.1f} KiB per room")
                return 0

        load = Load(url, game, rules, args.spectators, args.rooms / args.rate, client=args.client,
                    protocol=args.protocol, lean=args.load == "lean")
        ready: asyncio.Queue[None] = asyncio.Queue()
        tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(args.rooms)]
        for _ in range(args.rooms):
            await ready.get()
        load.settled()
        metrics_url = url.replace("ws://", "http://") + "/metrics"
        before = await asyncio.to_thread(scrape, metrics_url)
        window = time.monotonic() + args.warmup
        main_phase = await measure(load, server.pid, args.rate, args.rooms, args.duration, args.warmup)
        window_end = time.monotonic()
        after = await asyncio.to_thread(scrape, metrics_url)
        rss_loaded = rss_kib(server.pid)
        knee_phases: list[Phase] = []
        for rate in [float(r) for r in args.knee.split(",") if r.strip()]:
            phase = await measure(load, server.pid, rate, args.rooms, args.knee_duration, 1.0)
            knee_phases.append(phase)
            if not passes(phase):
                break
        load.halt()
        await asyncio.wait(tasks, timeout=10)
        conns = args.rooms * 2
        e50, e99, ecpu = await echo_phase(echo_url, echo.pid, conns, args.rate, min(args.duration, 10.0), args.client)
        knee = max((p for p in [main_phase, *knee_phases] if passes(p)), key=lambda p: p.target, default=None)
        knee_echo = None
        if knee is not None and knee is not main_phase:
            knee_echo = await echo_phase(echo_url, echo.pid, conns, knee.target, 5.0, args.client)
        floor_phase = None
        if len(refs) > 2:
            floor_phase = await floor_measure(floor_url, refs[2].pid, args, min(args.duration, 10.0))
    finally:
        for proc in refs:
            proc.terminate()
            proc.wait(20)
        split_lines = latency_split.report(split, window, window_end) if split and window_end else []
        shutil.rmtree(tmp, ignore_errors=True)
        if args.redis_url:  # leave a shared Redis as we found it: delete our prefix only
            import redis
            import redis.cluster

            client = redis.Redis.from_url(args.redis_url)
            if client.info("cluster").get("cluster_enabled"):  # keys of many slots: one by one
                client.close()
                client = redis.cluster.RedisCluster.from_url(args.redis_url)
                for key in list(client.scan_iter(match=prefix + "*", count=1000)):
                    client.delete(key)
            else:
                keys = list(client.scan_iter(match=prefix + "*", count=1000))
                if keys:
                    client.delete(*keys)
            client.close()

    m = main_phase
    s = m.stats
    print(f"at {args.rate:g}/s      {m.moves_per_s:8.1f} moves/s achieved ({s.moves} moves)")
    print(f"round trip ms      p50 {m.p50:6.3f}  p99 {m.p99:6.3f}  max {max(s.rtts, default=0) * 1e3:6.2f}")
    print(f"bare echo ms       p50 {e50:6.3f}  p99 {e99:6.3f}  (same rate, {conns} connections)")
    print(f"ratio to echo      p50 {m.p50 / e50:5.2f}x  p99 {m.p99 / e99:5.2f}x")
    print(f"CPU per move       server {m.server_us:.0f} us ({100 * m.server_core:.0f}% of a core), "
          f"redis-server {m.redis_us:.0f} us; echo {ecpu:.0f} us per round trip -> "
          f"{m.server_us / ecpu:.2f}x echo")
    print(f"wake-ups           server {m.server_wakeups:.2f} per move (it slept with nothing to do and was woken)")
    if floor_phase is not None:
        f50, f99, fcpu, fredis, _ = floor_phase
        print(f"I/O floor          p50 {f50:6.3f}  p99 {f99:6.3f} ms; CPU {fcpu:.0f} us per move "
              f"(redis-server {fredis:.0f} us) -> {fcpu / ecpu:.2f}x echo; server {m.server_us / fcpu:.2f}x floor "
              "(bench/floor.py: frame in, EVALSHA, frame to each member; no game)")
    if CALLGRIND:
        print(f"instructions       {s.instructions / max(1, s.moves):,.0f} per move (callgrind, {s.moves} moves)"
              + (f"; I/O floor {floor_phase[4]:,.0f}" if floor_phase is not None else ""))
    print(f"load               clients {100 * m.client_core:.0f}% of a core; load average {os.getloadavg()[0]:.2f}")
    mean, most, dispersion = evenness(s.sends)
    print(f"offered load       acts sent per 5 ms: mean {mean:.1f}, most {most}, dispersion {dispersion:.1f} "
          "(independent rooms: about 1; rooms in step: tens)")
    for label, name in (("server-side", "giants_action_seconds"), ("Redis pipeline", "giants_redis_commit_seconds")):
        n0, mean0, _, _ = histogram(before, name)
        n1, mean1, h50, h99 = histogram(after, name)
        n = n1 - n0
        mean = (mean1 * n1 - (mean0 * n0 if n0 else 0.0)) / n if n else float("nan")
        print(f"{label + ' ms':18} mean {1e3 * mean:6.3f} over {n:.0f} (since start: p50 <= {1e3 * h50:g}, "
              f"p99 <= {1e3 * h99:g})")
    print(f"GC pauses          {gc_report(before, after)}")
    for p in knee_phases:
        print(f"at {p.target:g}/s      {p.moves_per_s:8.1f} moves/s  p50 {p.p50:6.3f}  p99 {p.p99:6.3f} ms  "
              f"server {p.server_us:.0f} us/move ({100 * p.server_core:.0f}%, clients {100 * p.client_core:.0f}%)  "
              f"{'ok' if passes(p) else 'FAILS'}")
    if knee is None:
        print(f"knee               below {args.rate:g} moves/s (p99 < {KNEE_P99_MS:g} ms not met)")
    else:
        echo_note = f"; echo p50 {knee_echo[0]:.3f} p99 {knee_echo[1]:.3f} ms" if knee_echo else ""
        print(f"knee               >= {knee.target:g} moves/s (p50 {knee.p50:.3f}, p99 {knee.p99:.3f} ms{echo_note})")
    print(f"frame bytes        median patch {median(s.all_frames):.0f} (seats without legal "
          f"{median(s.seat_frames):.0f}, with legal {median(s.legal_frames):.0f}, spectators "
          f"{median(s.spectator_frames):.0f}); full view {median(s.view_bytes):.0f}")
    print(f"server memory      {per_conn:.1f} KiB per idle connection, {per_room:.1f} KiB per room "
          f"(RSS {rss_loaded / 1024:.0f} MiB under load)")
    for line in split_lines:
        print(line)
    if s.errors:
        print(f"errors             {s.errors}")
    if SERVER_LOG:
        print("server log (last lines):\n" + "".join(SERVER_LOG[-20:]))
    return 0


def passes(p: Phase) -> bool:
    return p.p99 < KNEE_P99_MS and p.moves_per_s >= 0.95 * p.target


if __name__ == "__main__":
    # The load generator runs on uvloop when it is installed (whatever --loop says for
    # the servers): it handles three connections per room and must not be the bottleneck.
    raise SystemExit(run_main(main()))
