"""Process metrics, exposed with `prometheus_client` at `/metrics`.

Each server owns a `Metrics` with its own `CollectorRegistry` (several servers can
share a process in tests). The hot path — a frame in, an action applied — only adds to
plain integers and `Counter`s here; `prometheus_client` turns them into families when
`/metrics` is scraped (`_HotPathCollector`), so counting a move costs a dict update,
not a lock. Live gauges (open connections, rooms by status and game) are read at
scrape time from a callback the server installs with `set_live`.

Other modules add their own series with the usual `prometheus_client` objects bound
to `metrics.registry`:

    quarantined = Gauge("giants_rooms_quarantined", "...", registry=metrics.registry)

Names follow OpenMetrics: counters end in `_total`, and no gauge shares a counter's
base name.
"""

from __future__ import annotations

import bisect
import gc
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    GCCollector,
    Info,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.registry import Collector

from protocol.version import PROTOCOL_VERSION

# Action latency buckets in seconds: validate + apply + persist + diff + send.
BUCKETS: tuple[float, ...] = (
    0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
)


class Histogram:
    """A cumulative histogram with fixed buckets, cheap to observe on the hot path."""

    def __init__(self, buckets: tuple[float, ...] = BUCKETS) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, seconds)] += 1
        self.total += seconds
        self.n += 1

    def cumulative(self) -> list[tuple[str, float]]:
        """Prometheus buckets: (upper bound, observations at or below it)."""
        running = 0
        out: list[tuple[str, float]] = []
        for bound, count in zip(self.buckets, self.counts, strict=False):
            running += count
            out.append((repr(bound), running))
        out.append(("+Inf", self.n))
        return out

    def family(self, name: str, documentation: str) -> HistogramMetricFamily:
        return HistogramMetricFamily(name, documentation, buckets=self.cumulative(), sum_value=self.total)


# Observations a `BufferedHistogram` holds before counting them into its buckets: the
# bound of its list (8 bytes each, 2 KiB), and how often the per-move cost is paid.
PENDING_MAX = 256


class BufferedHistogram(Histogram):
    """A `Histogram` whose `observe` only appends to a bounded list: every move observes
    its latency (Room.act), and finding its bucket one at a time (`bisect` over float
    bounds) with the sum and count cost ~2,200 instructions a call, ~1,400 this way
    with the folds shared out. The list is counted in at `PENDING_MAX` observations and
    whenever anything reads `counts`, `total`, `n` (`cumulative`, `family`): sorted once
    so each bucket is one `bisect_right`, summed in the order observed. The buckets,
    sum and count (and /metrics) are exactly a `Histogram`'s after the same
    observations (tests/server/test_metrics.py).

    Not for observations made from a GC callback: one could land in the middle of a
    fold (`GCPauses` keeps the plain `Histogram`)."""

    def __init__(self, buckets: tuple[float, ...] = BUCKETS) -> None:
        self.pending: list[float] = []
        self._counts: list[int] = []
        self._total = 0.0
        self._n = 0
        super().__init__(buckets)

    # What a `Histogram` reads as attributes, with the pending observations counted in.
    @property
    def counts(self) -> list[int]:
        self.fold()
        return self._counts

    @counts.setter
    def counts(self, value: list[int]) -> None:
        self._counts = value

    @property
    def total(self) -> float:
        self.fold()
        return self._total

    @total.setter
    def total(self, value: float) -> None:
        self._total = value

    @property
    def n(self) -> int:
        self.fold()
        return self._n

    @n.setter
    def n(self, value: int) -> None:
        self._n = value

    def observe(self, seconds: float) -> None:
        pending = self.pending
        pending.append(seconds)
        if len(pending) >= PENDING_MAX:
            self.fold()

    def fold(self) -> None:
        """Count the pending observations into the buckets, sum and count."""
        pending = self.pending
        if not pending:
            return
        self.pending = []
        # One at a time in the order observed, as `Histogram.observe` adds: the same float
        # sum to the last bit (not `sum`, which compensates rounding since Python 3.12).
        total = self._total
        for seconds in pending:
            total += seconds
        self._total = total
        self._n += len(pending)
        pending.sort()
        counts, below = self._counts, 0
        for i, bound in enumerate(self.buckets):
            # observations <= bound: those `bisect_left(buckets, seconds)` puts at i or before
            upto = bisect.bisect_right(pending, bound)
            counts[i] += upto - below
            below = upto
        counts[-1] += len(pending) - below



GC_BUCKETS: tuple[float, ...] = (0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class GCPauses:
    """How long each cyclic garbage collection held the process, by generation.

    Every request waits while a collection runs, so these pauses are a floor under
    the tail latency; `/metrics` shows them as `giants_gc_pause_seconds`. Installed
    once per process (`gc.callbacks` is process-wide) by `gc_pauses()`.
    """

    def __init__(self) -> None:
        self.by_generation = [Histogram(GC_BUCKETS) for _ in range(3)]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.by_generation[info["generation"]].observe(time.perf_counter() - self._started)

    def family(self) -> HistogramMetricFamily:
        family = HistogramMetricFamily(
            "giants_gc_pause_seconds", "Cyclic garbage collections: time each held the process.", labels=["generation"]
        )
        for generation, hist in enumerate(self.by_generation):
            family.add_metric([str(generation)], hist.cumulative(), sum_value=hist.total)
        return family


_GC_PAUSES: GCPauses | None = None


def gc_pauses() -> GCPauses:
    """This process's GC pause histograms (the callback is installed on first use)."""
    global _GC_PAUSES
    if _GC_PAUSES is None:
        _GC_PAUSES = GCPauses()
        gc.callbacks.append(_GC_PAUSES)
    return _GC_PAUSES


@dataclass
class Live:
    """Gauges only the server knows, read at scrape time."""

    connections: int = 0
    rooms: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (status, game) -> n


ROOM_STATUSES = ("waiting", "playing", "finished")


class Metrics:
    """Counters the server updates; one instance (and one registry) per server."""

    def __init__(self) -> None:
        self.connections_total = 0
        self.frames_in = 0
        self.frames_out = 0
        self.errors: Counter[str] = Counter()  # error replies by stable code
        # Actions applied, by game. The room decides what counts: a change only one seat
        # can see (GI-8) must not show up in a public scrape. A plain dict, not a Counter:
        # counted on every move, and a dict subclass's `[game] += 1` takes the generic
        # subscript path (~1,700 instructions against ~800 for `d[game] = d.get(game, 0) + 1`).
        self.actions_applied: dict[str, int] = {}
        self.bot_moves: Counter[str] = Counter()  # by game: moves of server-run bots
        self.rooms_finished: Counter[tuple[str, str]] = Counter()  # (game, reason)
        self.action_latency = BufferedHistogram()  # observed on every move (Room.act)
        self.commit_latency = BufferedHistogram()  # one Redis pipeline of grouped commits
        self.commits = 0
        self._live: Callable[[], Live] = Live
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        build = Info("giants_build", "Version of the running server.", registry=self.registry)
        build.info({"version": _version(), "protocol": str(PROTOCOL_VERSION)})
        self.registry.register(_HotPathCollector(self))
        gc_pauses()  # count collections from the start, not from the first scrape

    def set_live(self, source: Callable[[], Live]) -> None:
        """Install the callback `/metrics` reads the live gauges from."""
        self._live = source

    def observe_batch(self, size: int, seconds: float) -> None:
        """A commit batch answered (the store's hook, told of every batch): `size`
        commits, `seconds` its round trip."""
        self.commits += size
        # `commit_latency.observe(seconds)` without its call (~500 instructions a batch)
        latency = self.commit_latency
        pending = latency.pending
        pending.append(seconds)
        if len(pending) >= PENDING_MAX:
            latency.fold()

    def render(self, accept: str = "") -> tuple[bytes, str]:
        """The /metrics body and its content type (OpenMetrics if the scraper asks)."""
        if "application/openmetrics-text" in accept:
            return openmetrics.generate_latest(self.registry), openmetrics.CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("giants-table")
    except PackageNotFoundError:
        return "unknown"


class _HotPathCollector(Collector):
    """Turns the plain counters of `Metrics` into metric families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.m = metrics

    def describe(self) -> Iterable[Metric]:
        return []  # families vary with what happened; nothing to pre-register

    def collect(self) -> Iterable[Metric]:
        m = self.m
        live = m._live()
        yield GaugeMetricFamily("giants_connections_open", "Open WebSocket connections.", value=live.connections)
        yield CounterMetricFamily(
            "giants_connections_accepted", "WebSocket connections accepted since start.", value=m.connections_total
        )
        rooms = GaugeMetricFamily("giants_rooms", "Live rooms on this node by status and game.", labels=["status", "game"])
        by_status = Counter[str]()
        for (status, game), n in sorted(live.rooms.items()):
            rooms.add_metric([status, game], n)
            by_status[status] += n
        yield rooms
        rooms_all = GaugeMetricFamily("giants_rooms_by_status", "Live rooms on this node by status.", labels=["status"])
        for status in ROOM_STATUSES:
            rooms_all.add_metric([status], by_status.get(status, 0))
        yield rooms_all
        yield _by_label("giants_actions_applied", "Game actions persisted and broadcast, by game.", "game", m.actions_applied)
        yield _by_label("giants_bot_moves", "Moves made by server-run bot seats, by game.", "game", m.bot_moves)
        finished = CounterMetricFamily("giants_rooms_finished", "Games that ended, by game and reason.", labels=["game", "reason"])
        for (game, reason), n in sorted(m.rooms_finished.items()):
            finished.add_metric([game, reason], n)
        yield finished
        yield _by_label("giants_errors", "Error replies sent, by stable code.", "code", m.errors)
        yield CounterMetricFamily("giants_frames_received", "Inbound WebSocket frames.", value=m.frames_in)
        yield CounterMetricFamily("giants_frames_sent", "Outbound WebSocket frames.", value=m.frames_out)
        yield m.action_latency.family("giants_action_seconds", "Time from receiving an action to sending its patches.")
        yield gc_pauses().family()
        yield CounterMetricFamily("giants_redis_commits", "Room changes written to Redis.", value=m.commits)
        yield m.commit_latency.family(
            "giants_redis_commit_seconds", "Round trip of one Redis pipeline of grouped room commits."
        )


def _by_label(name: str, documentation: str, label: str, counts: Mapping[str, int]) -> CounterMetricFamily:
    family = CounterMetricFamily(name, documentation, labels=[label])
    for key, n in sorted(counts.items()):
        family.add_metric([key], n)
    return family
