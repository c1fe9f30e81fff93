"""`BufferedHistogram` (server.metrics) counts a move's latency by appending it to a
bounded list and folding the list into the buckets later: its buckets, sum and count,
and what /metrics shows of them, must be exactly a plain `Histogram`'s after the same
observations, whenever they are read."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.registry import Collector

from server.metrics import BUCKETS, PENDING_MAX, BufferedHistogram, Histogram, Metrics

# Latencies as a server sees them, the bounds themselves (a value on a bound is counted
# at or below it) and their neighbours, and the extremes.
_EDGES = [b for bound in BUCKETS for b in (bound, math.nextafter(bound, 0.0), math.nextafter(bound, 2.0))]
SECONDS = st.one_of(
    st.floats(min_value=0.0, max_value=2.0, allow_nan=False),
    st.sampled_from([*_EDGES, 0.0, -0.0, 1e-9, 3.0, math.inf]),
    st.floats(allow_nan=False),
)


class _Families(Collector):
    def __init__(self, *histograms: Histogram) -> None:
        self.histograms = histograms

    def collect(self):  # type: ignore[no-untyped-def]
        for hist in self.histograms:
            yield hist.family("giants_action_seconds", "Time from receiving an action to sending its patches.")


def _exposition(hist: Histogram) -> tuple[bytes, bytes]:
    registry = CollectorRegistry(auto_describe=True)
    registry.register(_Families(hist))
    return generate_latest(registry), openmetrics.generate_latest(registry)


def _same(plain: Histogram, buffered: BufferedHistogram) -> None:
    assert buffered.cumulative() == plain.cumulative()
    assert buffered.counts == plain.counts
    assert buffered.n == plain.n
    # the same float to the last bit (repr: -0.0 and 0.0 too)
    assert repr(buffered.total) == repr(plain.total)
    assert _exposition(buffered) == _exposition(plain)


@settings(max_examples=300, deadline=None)
@given(st.lists(SECONDS, max_size=3 * PENDING_MAX + 7), st.lists(st.integers(0, 3 * PENDING_MAX + 7), max_size=4))
def test_a_buffered_histogram_reads_as_the_plain_one(observations: list[float], reads: list[int]) -> None:
    """Read at any points (before, at and after a fold at PENDING_MAX), it is the same."""
    plain, buffered = Histogram(), BufferedHistogram()
    for i, seconds in enumerate(observations):
        if i in reads:
            _same(plain, buffered)
        plain.observe(seconds)
        buffered.observe(seconds)
        assert len(buffered.pending) < PENDING_MAX  # bounded
    _same(plain, buffered)


def test_the_pending_list_is_bounded_and_folded_in_order() -> None:
    buffered, plain = BufferedHistogram(), Histogram()
    for i in range(10 * PENDING_MAX + 3):
        seconds = (i * 7919 % 1000) / 1e5 + 1e-7 * i  # sums whose rounding depends on the order
        buffered.observe(seconds)
        plain.observe(seconds)
    assert len(buffered.pending) == 3
    assert buffered.total == plain.total and buffered.counts == plain.counts


def test_the_metrics_scrape_shows_the_moves_latencies() -> None:
    """What /metrics shows of the action and commit histograms after some observations
    is the plain histograms' exposition."""
    metrics, plain_action, plain_commit = Metrics(), Histogram(), Histogram()
    for i in range(PENDING_MAX + 10):
        seconds = 0.0001 * (i % 37) + 0.00003 * i
        metrics.action_latency.observe(seconds)
        plain_action.observe(seconds)
        metrics.observe_batch(3, seconds / 2)
        plain_commit.observe(seconds / 2)
    body = metrics.render()[0].decode()
    plain = Metrics()
    plain.action_latency, plain.commit_latency = plain_action, plain_commit
    plain.commits = metrics.commits
    expected = plain.render()[0].decode()

    def section(text: str, name: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith((name + "_", f"# HELP {name} ", f"# TYPE {name} "))]

    for name in ("giants_action_seconds", "giants_redis_commit_seconds"):
        assert section(body, name) and section(body, name) == section(expected, name)
    assert 'giants_action_seconds_count 266.0' in body
