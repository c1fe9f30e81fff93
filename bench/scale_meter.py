"""bench/scale.py's meter: where the machine's CPU goes while a scenario runs.

`Meter` reads, for each node, the Redis server(s) and the load generator, CPU time
(user and kernel, from /proc/PID/task/*/schedstat and stat), run-queue waits, reads,
writes, sleeps and preemptions, and the whole machine's busy time (/proc/stat);
`fmt_breakdown` prints them per move.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import readings

REDIS_URL: list[str] = []  # the embedded Redis of this run (set by bench/scale.py's main)

def node_pids(procs: list[subprocess.Popen[str]]) -> list[int]:
    """The node processes: the given ones, or a supervisor's worker children."""
    pids: list[int] = []
    for proc in procs:
        kids = [p for p in readings.children(proc.pid) if b"redis-server" not in Path(f"/proc/{p}/cmdline").read_bytes()]
        pids += kids or [proc.pid]
    return pids


def sched(pid: int) -> tuple[float, float]:
    """(CPU seconds, seconds spent runnable but waiting for a core) of every thread of a
    process, from /proc/PID/task/*/schedstat; (0, 0) once it is gone."""
    cpu = wait = 0.0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            run, waited, _ = (task / "schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        cpu += int(run) / 1e9
        wait += int(waited) / 1e9
    return cpu, wait


def sys_seconds(pid: int) -> float:
    """System (kernel) CPU seconds of a process so far: its syscalls, and on loopback the
    TCP work of both ends of what it sends."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return int(fields[12]) / os.sysconf("SC_CLK_TCK")


def counters(pid: int) -> tuple[int, int, int, int]:
    """(read syscalls, write syscalls, times it slept, times it was preempted) of a process
    so far: a process that handles more per wake-up (bigger batches) makes fewer of the
    first three per move; preemptions (a runnable process taken off its core for another)
    count contention, each one costs a cache refill."""
    try:
        io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    except OSError:
        return 0, 0, 0, 0
    sleeps = preempted = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches"):
                    sleeps += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    preempted += int(line.split()[1])
    return int(io["syscr"]), int(io["syscw"]), sleeps, preempted


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy (every core; /proc/stat, iowait counted idle)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class Meter:
    """CPU of the processes of a run between `start` and `stop`: each node, Redis, the
    load generator (this process), the rest of the machine; and each one's run-queue
    wait (time it was ready to run but every core was taken: contention)."""

    def __init__(self, nodes: list[int], redis_pids: list[int]) -> None:
        self.pids = {**{f"node{i + 1}": p for i, p in enumerate(nodes)},
                     **{f"redis{i + 1 if i else ''}": p for i, p in enumerate(redis_pids)}, "loadgen": os.getpid()}
        import redis

        self.redis = redis.Redis.from_url(REDIS_URL[0]) if REDIS_URL else None

    def connections(self) -> int:
        """Connections Redis has accepted so far (the nodes' pools should not churn)."""
        return int(self.redis.info("stats")["total_connections_received"]) if self.redis is not None else 0

    def redis_stats(self) -> tuple[dict[str, tuple[int, int]], int]:
        """INFO commandstats (command -> calls, usec) and the bytes Redis has read so
        far (the first master's, on a cluster)."""
        if self.redis is None:
            return {}, 0
        info = self.redis.info("commandstats")
        stats = {k.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"])) for k, v in info.items()}
        return stats, int(self.redis.info("stats")["total_net_input_bytes"])

    def start(self) -> None:
        self.cmd0, self.in0 = self.redis_stats()
        self.conns0 = self.connections()
        self.t0 = time.perf_counter()
        self.busy0 = machine_busy()
        self.s0 = {name: sched(pid) for name, pid in self.pids.items()}
        self.k0 = {name: sys_seconds(pid) for name, pid in self.pids.items()}
        self.c0 = {name: counters(pid) for name, pid in self.pids.items()}

    def stop(self) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.t0
        busy = machine_busy() - self.busy0
        cpu: dict[str, float] = {}
        wait: dict[str, float] = {}
        kernel: dict[str, float] = {}
        count: dict[str, tuple[int, ...]] = {}
        for name, pid in self.pids.items():
            c, w = sched(pid)
            cpu[name], wait[name] = c - self.s0[name][0], w - self.s0[name][1]
            kernel[name] = sys_seconds(pid) - self.k0[name]
            count[name] = tuple(b - a for a, b in zip(self.c0[name], counters(pid), strict=True))
        cpu["others"] = max(0.0, busy - sum(cpu.values()))  # other jobs, kernel softirq work
        cmd1, in1 = self.redis_stats()
        commands = {name: (calls - self.cmd0.get(name, (0, 0))[0], usec - self.cmd0.get(name, (0, 0))[1])
                    for name, (calls, usec) in cmd1.items()}
        return {"elapsed": elapsed, "cpu": cpu, "wait": wait, "sys": kernel, "count": count,
                "connections": self.connections() - self.conns0, "commands": commands, "net_in": in1 - self.in0}


def fmt_breakdown(meter: dict[str, Any], moves: int) -> str:
    """One line: each process's CPU per move (us) and share of a core, run-queue waits."""
    elapsed, cpu, wait, kernel = meter["elapsed"], meter["cpu"], meter["wait"], meter["sys"]

    def part(name: str, c: float) -> str:
        sys_share = f", sys {100 * kernel[name] / c:.0f}%" if name in kernel and c else ""
        return f"{name} {1e6 * c / moves:4.0f} us ({100 * c / elapsed:3.0f}% of a core{sys_share})"

    parts = [part(name, c) for name, c in cpu.items()]
    waits = ", ".join(f"{name} {100 * w / elapsed:.0f}%" for name, w in wait.items() if name.startswith(("node", "redis", "load")))
    counts = "; ".join(f"{name} {r / moves:.1f} / {w / moves:.1f} / {s / moves:.2f} / {p / moves:.2f}"
                       for name, (r, w, s, p) in meter["count"].items())
    batching = ""
    if "batches" in meter:  # per node: its moves per commit batch and per wake-up (sleep)
        each = []
        for i, (commits, batches) in enumerate(meter["batches"]):
            sleeps = meter["count"].get(f"node{i + 1}", (0, 0, 0, 0))[2]
            each.append(f"node{i + 1} {commits / max(1, batches):.2f} / {commits / max(1, sleeps):.2f}")
        batching = f"\n{'':22}room changes per Redis commit batch / per wake-up: {'; '.join(each)}"
    if meter.get("commands"):
        # What Redis ran per move (INFO commandstats): EVALSHA is the commit script (and
        # the few lease renewals), the rest mostly what the scripts call.
        busy = sorted(((n, c, u) for n, (c, u) in meter["commands"].items() if c >= moves / 100 and n != "info"),
                      key=lambda x: -x[2])
        redis_cpu = sum(c for n, c in cpu.items() if n.startswith("redis"))
        batching += (f"\n{'':22}redis per move: " + "; ".join(f"{n} {c / moves:.2f} calls x {u / c:.1f} us"
                                                             for n, c, u in busy[:6])
                     + f"; {meter['net_in'] / moves:.0f} bytes in; redis CPU {1e6 * redis_cpu / moves:.1f} us per move "
                       f"= {moves / max(redis_cpu, 1e-9):,.0f} moves/s per Redis core")
    return f"{'':22}cpu/move: {'; '.join(parts)}; machine {100 * sum(cpu.values()) / elapsed:.0f}% of 1 core\n" \
           f"{'':22}run-queue wait (share of wall time): {waits}\n" \
           f"{'':22}per move, read / write syscalls / sleeps / preemptions: {counts}; " \
           f"Redis connections opened {meter['connections']}{batching}"
