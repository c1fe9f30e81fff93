"""What the benches read off processes and a server's /metrics.

bench/server.py and bench/scale.py read CPU time, wake-ups and memory from /proc,
histograms and GC pauses from the Prometheus text of `/metrics`, and take percentiles
and the evenness of the offered load from their own samples.
"""

from __future__ import annotations

import contextlib
import os
import statistics
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wakeups(pid: int) -> int:
    """Voluntary context switches of a process's threads so far: how often it went to
    sleep with nothing to do and was woken (each wake-up finds the caches cold)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
    return total


def children(pid: int) -> list[int]:
    """Child processes of every thread of `pid` (the embedded redis-server)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(p) for p in (task / "children").read_text().split()]
    return found


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def scrape(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(resp.read().decode())


def histogram(text: str, name: str) -> tuple[float, float, float, float]:
    """(count, mean, p50 bucket bound, p99 bucket bound) of a Prometheus histogram."""
    buckets: list[tuple[float, float]] = []
    total = count = 0.0
    for line in text.splitlines():
        if line.startswith(name + "_bucket"):
            bound = line.split('le="')[1].split('"')[0]
            buckets.append((float("inf") if bound == "+Inf" else float(bound), float(line.split()[-1])))
        elif line.startswith(name + "_sum"):
            total = float(line.split()[-1])
        elif line.startswith(name + "_count"):
            count = float(line.split()[-1])
    q = [next((b for b, c in buckets if c >= f * count), float("nan")) for f in (0.5, 0.99)]
    return count, (total / count if count else float("nan")), q[0], q[1]


def gc_pauses(text: str) -> dict[str, tuple[float, float, dict[float, float]]]:
    """Per GC generation: (collections, seconds paused, cumulative count per bucket bound)."""
    out: dict[str, tuple[float, float, dict[float, float]]] = {}
    for line in text.splitlines():
        if not line.startswith("giants_gc_pause_seconds"):
            continue
        gen = line.split('generation="')[1].split('"')[0]
        n, total, buckets = out.get(gen, (0.0, 0.0, {}))
        value = float(line.split()[-1])
        if line.startswith("giants_gc_pause_seconds_bucket"):
            bound = line.split('le="')[1].split('"')[0]
            buckets[float("inf") if bound == "+Inf" else float(bound)] = value
        elif line.startswith("giants_gc_pause_seconds_sum"):
            total = value
        elif line.startswith("giants_gc_pause_seconds_count"):
            n = value
        out[gen] = (n, total, buckets)
    return out


def gc_report(before: str, after: str) -> str:
    """The GC pauses between two scrapes: per generation, count, total and the longest bucket."""
    b, a = gc_pauses(before), gc_pauses(after)
    parts = []
    for gen in sorted(a):
        n0, t0, k0 = b.get(gen, (0.0, 0.0, {}))
        n1, t1, k1 = a[gen]
        longest = max((bound for bound, c in k1.items() if c - k0.get(bound, 0.0) < n1 - n0), default=0.0)
        longest = min((bound for bound in k1 if bound > longest), default=float("nan"))
        parts.append(f"gen{gen} {n1 - n0:.0f}x {1e3 * (t1 - t0):.1f} ms" + (f" (max <= {1e3 * longest:g} ms)" if n1 > n0 else ""))
    return ", ".join(parts) if parts else "not reported by this server"


def evenness(times: list[float], width: float = 0.005) -> tuple[float, int, float]:
    """Mean and most sends per `width` seconds, and their dispersion (variance / mean).

    Rooms moving independently give a dispersion near 1 (a Poisson stream; a little
    more from game set-ups); rooms moving in step send bursts, a dispersion of tens,
    and every latency then measures the bursts rather than the server.
    """
    if len(times) < 2:
        return float("nan"), 0, float("nan")
    start = min(times)
    slots = int((max(times) - start) / width) + 1
    counts = [0] * slots
    for t in times:
        counts[int((t - start) / width)] += 1
    mean = statistics.fmean(counts)
    return mean, max(counts), statistics.pvariance(counts) / mean


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def median(values: list[int]) -> float:
    return statistics.median(values) if values else float("nan")
