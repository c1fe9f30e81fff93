"""Redis's side of a move's commit: what the redis-server spends per commit.

    python bench/redis_commit.py                     # CPU per commit, commandstats, bytes
    python bench/redis_commit.py --callgrind         # redis-server's instructions per commit
    python bench/redis_commit.py --fsync everysec --batch 1
    python bench/redis_commit.py --callgrind --deadline  # rooms with a move deadline

Starts its own redis-server with the embedded Redis's configuration (AOF on,
`--fsync`, a unix socket; server.embedded_redis), creates `--rooms` rooms through
`Store.create_room`, and stores Giantslayer-like moves through `Store.commit` — the
store's own code: the commit script and its arguments, the group commit over the
store's own connection — `--batch` rooms' commits per turn of the event loop (a loaded
node sends several per Redis write; bench/scale.py prints how many), a snapshot every
50 actions as the server does by default. Prints, per commit: the redis-server's CPU
(/proc schedstat: user and kernel, the AOF's write and fsync included) or, with
`--callgrind`, its user-space instructions (a count other jobs cannot disturb; the
kernel's work is not in it; Redis's timer set to 1 Hz while counting); from INFO commandstats the calls and microseconds per call
of EVALSHA and of the commands the script runs; and the bytes Redis read from the
client and appended to its AOF.

Compare revisions by running it from each checkout with the same arguments
(alternating: CPU figures move with the machine's load, instructions do not).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines.registry import get_engine  # noqa: E402
from server.embedded_redis import EmbeddedRedis, ping_socket  # noqa: E402
from server.store import Store  # noqa: E402

SNAPSHOT_EVERY = 50  # the server's default (--snapshot-every)


def redis_cpu(pid: int) -> float:
    """CPU seconds (user and kernel) of every thread of the redis-server so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            continue
    return total / 1e9


def commandstats(info: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """command -> (calls, usec) from INFO commandstats."""
    return {k.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"])) for k, v in info.items()
            if k.startswith("cmdstat_")}


def start_redis(tmp: Path, fsync: str, callgrind: bool) -> tuple[subprocess.Popen[bytes], str]:
    conf = EmbeddedRedis(tmp, fsync=fsync)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "redis.conf").write_text(conf.config_text())
    runner = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
              f"--callgrind-out-file={tmp}/callgrind.out.%p"] if callgrind else []
    proc = subprocess.Popen([*runner, shutil.which("redis-server") or "redis-server", str(tmp / "redis.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ping_socket(conf.socket_path):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"redis-server did not start (see {tmp / 'redis.log'})")
        time.sleep(0.05)
    return proc, conf.url


def callgrind(option: str, pid: int) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True, timeout=120)


def callgrind_total(pid: int, directory: Path, keep: str = "") -> int:
    before = set(os.listdir(directory))
    callgrind("--dump", pid)
    callgrind("--instr=off", pid)
    for name in sorted(set(os.listdir(directory)) - before):
        if keep:
            shutil.copyfile(directory / name, keep)
        for line in (directory / name).read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no dump")


async def run(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="giants-redis-commit-"))
    proc, url = start_redis(tmp, args.fsync, args.callgrind)
    store = Store(url, prefix="giants-bench-commit:")
    engine = get_engine("giantslayer")
    snapshot = engine.snapshot(engine.new_game(2, {}, 1))
    takes_before = "before" in inspect.signature(store.commit).parameters  # only-changed-fields revisions
    # Revisions that derive a plain move's deadline from its entry's time: the room's seconds per move.
    seconds = {"move_seconds": 30.0} if args.deadline and "move_seconds" in inspect.signature(store.commit).parameters else {}
    seats = [{"name": "a", "token": "t" * 32}, {"name": "b", "token": "u" * 32}]
    rooms = [f"bench{i:05d}" for i in range(args.rooms)]
    version = dict.fromkeys(rooms, 0)
    logged = dict.fromkeys(rooms, 0)  # plain moves since the room's last hash write (log-only revisions)
    try:
        for room in rooms:
            await store.create_room(room, {"game": "giantslayer", "players": 2, "seed": 1}, seats)
            # started: status playing, as every room the load generator moves in
            await store.commit(room, expected=0, version=1, fence=1, status="playing", seats=None, deadline=None,
                               outcome=None, actions=0)
            version[room] = 1
        now = time.time()

        def ts(v: int) -> float:
            """The time of the move to version `v` (its log entry's)."""
            return now + v

        def deadline(v: int) -> float | None:
            """The room's move deadline at version `v` (--deadline: 30 s after its last move)."""
            return ts(v) + 30.0 if args.deadline and v > 1 else None

        async def move(room: str) -> None:
            v = version[room]
            actions = v  # one action per version after the start
            extra: dict[str, Any] = {}
            if takes_before:
                extra["before"] = SimpleNamespace(status="playing", deadline=deadline(v), outcome=None,
                                                  actions=actions - 1, answered=frozenset(), start_key="", hidden=0,
                                                  logged=logged[room])
            move = await store.commit(room, expected=v, version=v + 1, fence=1, status="playing", seats=None,
                                      deadline=deadline(v + 1), outcome=None, actions=actions,
                                      log_entry={"v": v + 1, "seat": v % 2, "action": "c3-d4", "ts": ts(v + 1)},
                                      snapshot=snapshot if actions % SNAPSHOT_EVERY == 0 else None, now=now,
                                      answered=frozenset(), start_key="", hidden=0, **extra, **seconds)
            version[room] = v + 1
            logged[room] = logged[room] + 1 if move else 0  # True: stored as its log entry only

        async def rounds(count: int) -> int:
            done = 0
            while done < count:
                for i in range(0, len(rooms), args.batch):
                    await asyncio.gather(*(move(r) for r in rooms[i:i + args.batch]))
                    done += len(rooms[i:i + args.batch])
            return done

        await rounds(args.warmup)
        if args.callgrind:
            # Its timer (serverCron) runs `hz` times per wall second, and valgrind makes
            # every second long: at 1 Hz it no longer blurs the count per commit.
            await store.redis.config_set("hz", 1)
        info0 = commandstats(await store.redis.info("commandstats"))
        stats0 = await store.redis.info("stats")
        aof0 = int((await store.redis.info("persistence"))["aof_current_size"])
        cpu0 = redis_cpu(proc.pid)
        if args.callgrind:
            callgrind("--instr=on", proc.pid)
        commits = await rounds(args.commits)
        instructions = callgrind_total(proc.pid, tmp, args.keep) if args.callgrind else 0
        cpu = redis_cpu(proc.pid) - cpu0
        aof = int((await store.redis.info("persistence"))["aof_current_size"]) - aof0
        stats1 = await store.redis.info("stats")
        info1 = commandstats(await store.redis.info("commandstats"))
        print(f"{commits} commits, {args.rooms} rooms, {args.batch} per loop turn, fsync {args.fsync}; "
              f"load average {os.getloadavg()[0]:.2f}")
        if args.callgrind:
            print(f"redis-server: {instructions / commits:,.0f} instructions per commit (callgrind, user space)")
        else:
            print(f"redis-server: {1e6 * cpu / commits:.2f} us CPU per commit "
                  f"({commits / cpu:,.0f} commits per second of one core)")
        net_in = int(stats1["total_net_input_bytes"]) - int(stats0["total_net_input_bytes"])
        net_out = int(stats1["total_net_output_bytes"]) - int(stats0["total_net_output_bytes"])
        print(f"bytes per commit: from the client {net_in / commits:.0f}, to it {net_out / commits:.0f}, "
              f"appended to the AOF {aof / commits:.0f}")
        for name, (calls1, usec1) in sorted(info1.items(), key=lambda kv: -kv[1][1]):
            calls0, usec0 = info0.get(name, (0, 0))
            calls, usec = calls1 - calls0, usec1 - usec0
            if calls >= commits // 10:  # the script and what it runs (not INFO itself)
                print(f"  {name:10} {calls / commits:5.2f} calls per commit, {usec / max(1, calls):5.2f} us per call")
    finally:
        await store.delete_all()
        await store.close()
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--batch", type=int, default=4, help="commits per turn of the event loop")
    parser.add_argument("--commits", type=int, default=20000)
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--fsync", choices=("always", "everysec"), default="always")
    parser.add_argument("--deadline", action="store_true",
                        help="rooms with a move deadline (30 s): every move sets a new one")
    parser.add_argument("--callgrind", action="store_true", help="count redis-server's instructions (valgrind)")
    parser.add_argument("--keep", default="", help="with --callgrind: copy its dump here (callgrind_annotate)")
    args = parser.parse_args()
    if args.callgrind and args.commits == 20000:
        args.commits = 4000
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
