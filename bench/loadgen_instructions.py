"""Instructions per move of the load generator itself (callgrind): classic vs lean.

    python bench/loadgen_instructions.py --load lean      # and --load classic, to compare

bench/scale.py's load generator shares the 2 cores with the nodes it measures, so its
CPU per move bounds what 2 nodes can reach; timed on a shared machine that figure moves
by ±15% between runs. This counts the load generator's user-space instructions instead:
it re-runs itself under valgrind's callgrind (instrumentation off), starts an embedded
Redis and one `giants serve` node (not under callgrind), sets up `--rooms` rooms of 2
seats + 1 spectator (bench/loadgen.py's `Load`, lean or classic), and after `--warmup`
seconds counts the instructions of `--duration` seconds at `--rate` moves/s, divided by
the moves whose round trip completed. Only light loads fit (callgrind runs the load
generator ~50x slower); the kernel's part of a syscall is not counted, only how many
reads and writes the process made (from /proc, per move).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

from loadgen import Load, Stats  # noqa: E402

from bench.loop import run_main  # noqa: E402
from protocol import PROTOCOL_VERSION  # noqa: E402
from server.embedded_redis import EmbeddedRedis  # noqa: E402


def control(option: str) -> None:
    subprocess.run(["callgrind_control", option, str(os.getpid())], check=True, capture_output=True, timeout=120)


def syscalls() -> tuple[int, int]:
    io = dict(line.split(": ") for line in Path(f"/proc/{os.getpid()}/io").read_text().splitlines())
    return int(io["syscr"]), int(io["syscw"])


async def inside(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="giants-lgi-"))
    redis = EmbeddedRedis(tmp / "redis")
    url = redis.start()
    node = subprocess.Popen([sys.executable, "-m", "client_cli.cli", "serve", "--port", "0", "--log-level", "warning",
                             "--redis-url", url, "--key-prefix", f"giants-lgi:{os.getpid()}:", "--rate", "1000",
                             "--burst", "1000", "--max-connections-per-address", "0",
                             "--max-rooms-per-address", "0"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert node.stdout is not None
        ws_url = next(line.split("listening on ")[1].split()[0] for line in node.stdout if "listening on" in line)
        load = Load(ws_url, "giantslayer", None, 1, args.rooms / args.rate, protocol=args.protocol,
                    lean=args.load == "lean")
        ready: asyncio.Queue[None] = asyncio.Queue()
        tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(args.rooms)]
        for _ in range(args.rooms):
            await ready.get()
        load.settled()
        await asyncio.sleep(args.warmup)
        dumps = set(os.listdir(args.dir))
        await asyncio.to_thread(control, "--instr=on")
        load.stats = stats = Stats()
        stats.measuring = True
        io0, t0 = syscalls(), time.perf_counter()
        await asyncio.sleep(args.duration)
        stats.measuring = False
        io1, elapsed = syscalls(), time.perf_counter() - t0
        await asyncio.to_thread(control, "--dump")
        await asyncio.to_thread(control, "--instr=off")
        total = 0
        for name in sorted(set(os.listdir(args.dir)) - dumps):
            with open(os.path.join(args.dir, name)) as dump:
                total = next(int(line.split()[1]) for line in dump if line.startswith(("totals:", "summary:")))
        moves = max(1, stats.moves)
        print(f"load {args.load}: {total / moves:,.0f} instructions per move over {stats.moves} moves "
              f"({stats.moves / elapsed:.1f} moves/s); read / write syscalls per move "
              f"{(io1[0] - io0[0]) / moves:.2f} / {(io1[1] - io0[1]) / moves:.2f}; errors {stats.errors or 'none'}",
              flush=True)
        load.halt()
        await asyncio.wait(tasks, timeout=15)
    finally:
        node.terminate()
        node.wait(30)
        redis.stop()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", choices=("lean", "classic"), default="lean")
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--rate", type=float, default=40.0, help="moves/s in total")
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--protocol", type=int, default=PROTOCOL_VERSION)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dir", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        return run_main(inside(args))
    directory = tempfile.mkdtemp(prefix="giants-lgi-cg-")
    return subprocess.call(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                            f"--callgrind-out-file={directory}/callgrind.out", sys.executable, __file__, *sys.argv[1:],
                            "--inside", "--dir", directory])


if __name__ == "__main__":
    raise SystemExit(main())
