"""Process metrics in Prometheus text format (no client library needed for this few).

The server bumps counters as things happen; `/metrics` calls `render()` with the live
gauges (connections, rooms by state) read at scrape time.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping

# Action latency buckets in seconds: validate + apply + persist + diff + send.
BUCKETS: tuple[float, ...] = (
    0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
)


class Histogram:
    """A cumulative Prometheus histogram with fixed buckets."""

    def __init__(self, buckets: tuple[float, ...] = BUCKETS) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, seconds)] += 1
        self.total += seconds
        self.n += 1

    def lines(self, name: str) -> list[str]:
        out = []
        running = 0
        for bound, count in zip(self.buckets, self.counts, strict=False):
            running += count
            out.append(f'{name}_bucket{{le="{bound}"}} {running}')
        out.append(f'{name}_bucket{{le="+Inf"}} {self.n}')
        out.append(f"{name}_sum {self.total:.6f}")
        out.append(f"{name}_count {self.n}")
        return out


class Metrics:
    """Counters the server updates; one instance per server process."""

    def __init__(self) -> None:
        self.connections_total = 0
        self.actions_applied = 0
        self.errors: Counter[str] = Counter()
        self.frames_in = 0
        self.frames_out = 0
        self.action_latency = Histogram()
        self.commit_latency = Histogram()  # one Redis pipeline of grouped commits
        self.commits = 0

    def observe_batch(self, size: int, seconds: float) -> None:
        self.commits += size
        self.commit_latency.observe(seconds)

    def render(self, connections: int, rooms_by_status: Mapping[str, int]) -> str:
        """The /metrics body; gauges are passed in because only the server knows them."""
        lines = [
            "# HELP giants_connections Open WebSocket connections.",
            "# TYPE giants_connections gauge",
            f"giants_connections {connections}",
            "# HELP giants_connections_total WebSocket connections accepted since start.",
            "# TYPE giants_connections_total counter",
            f"giants_connections_total {self.connections_total}",
            "# HELP giants_rooms Live rooms by status.",
            "# TYPE giants_rooms gauge",
        ]
        for status in ("waiting", "playing", "finished"):
            lines.append(f'giants_rooms{{status="{status}"}} {rooms_by_status.get(status, 0)}')
        lines += [
            "# HELP giants_actions_applied_total Game actions persisted and broadcast.",
            "# TYPE giants_actions_applied_total counter",
            f"giants_actions_applied_total {self.actions_applied}",
            "# HELP giants_errors_total Error replies sent, by stable code.",
            "# TYPE giants_errors_total counter",
        ]
        for code, count in sorted(self.errors.items()):
            lines.append(f'giants_errors_total{{code="{code}"}} {count}')
        lines += [
            "# HELP giants_frames_received_total Inbound WebSocket frames.",
            "# TYPE giants_frames_received_total counter",
            f"giants_frames_received_total {self.frames_in}",
            "# HELP giants_action_seconds Time from receiving an action to sending its patches.",
            "# TYPE giants_action_seconds histogram",
            *self.action_latency.lines("giants_action_seconds"),
            "# HELP giants_redis_commits_total Room changes written to Redis.",
            "# TYPE giants_redis_commits_total counter",
            f"giants_redis_commits_total {self.commits}",
            "# HELP giants_redis_commit_seconds Round trip of one Redis pipeline of grouped room commits.",
            "# TYPE giants_redis_commit_seconds histogram",
            *self.commit_latency.lines("giants_redis_commit_seconds"),
        ]
        return "\n".join(lines) + "\n"
