"""server.limits: the frame budget's flood rule, address keys, Origin and URL redaction."""

from __future__ import annotations

import random
import time

import pytest

from server.limits import (
    ACCEPT,
    FLOOD,
    REFUSE,
    AddressQuotas,
    FrameBudget,
    TokenBucket,
    address_key,
    client_address,
    origin_allowed,
    parse_origins,
    redact_url,
)


def test_refusals_do_not_reset_when_a_token_refills() -> None:
    """1,000 frames a second against 50/s: a token refills every 20 ms and one frame
    is served each time, yet the refusals keep adding up until the flood verdict."""
    budget = FrameBudget(rate=50.0, burst=100, flood=400)
    t0 = budget.bucket.stamp
    verdicts = [budget.charge(t0 + i / 1000) for i in range(3000)]
    # The module's verdicts (what Connection.handle compares with) are the class's
    assert (ACCEPT, REFUSE, FLOOD) == (FrameBudget.ACCEPT, FrameBudget.REFUSE, FrameBudget.FLOOD)
    assert {*verdicts} == {ACCEPT, REFUSE, FLOOD}
    first_flood = verdicts.index(FrameBudget.FLOOD)
    served_after_burst = verdicts[100:first_flood].count(FrameBudget.ACCEPT)
    assert served_after_burst > 0  # tokens did refill in between
    assert first_flood < 100 + 400 + 60  # about half a second into the flood


def test_a_client_slightly_over_its_rate_is_never_flagged_as_a_flood() -> None:
    budget = FrameBudget(rate=50.0, burst=100, flood=400)
    t0 = budget.bucket.stamp
    verdicts = [budget.charge(t0 + i / 90) for i in range(90 * 60)]  # 90/s for a minute
    assert FrameBudget.FLOOD not in verdicts
    assert FrameBudget.REFUSE in verdicts


class PlainBudget:
    """FrameBudget.charge as written before it took the bucket's token inline."""

    def __init__(self, rate: float, burst: int, flood: int, stamp: float) -> None:
        self.bucket = TokenBucket(rate, burst)
        self.bucket.stamp = stamp
        self.flood, self.refused, self.stamp = float(flood), 0.0, stamp

    def charge(self, now: float) -> int:
        if self.bucket.take(now):
            return FrameBudget.ACCEPT
        self.refused = max(0.0, self.refused - (now - self.stamp) * self.bucket.rate) + 1.0
        self.stamp = now
        return FrameBudget.FLOOD if self.refused > self.flood else FrameBudget.REFUSE


def test_charge_is_the_bucket_take_written_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same verdicts and the same floats, bit for bit, as TokenBucket.take then the
    refusal count; charge_more interleaved (it shares the bucket and the stamp)."""
    rng = random.Random(13)
    for _ in range(40):
        rate, burst, flood = rng.choice([0.5, 10.0, 50.0, 333.3]), rng.choice([1, 5, 100]), rng.choice([1, 10, 400])
        budget = FrameBudget(rate, burst, flood)
        now = budget.bucket.stamp
        plain = PlainBudget(rate, burst, flood, now)
        budget.stamp = now
        for _ in range(600):
            now += rng.choice([0.0, 0.0, 1e-9, 0.001, 0.02, 0.5, 3.0, rng.random() / rate])
            monkeypatch.setattr(time, "monotonic", lambda now=now: now)  # charge_more's clock
            if rng.random() < 0.05:
                tokens = rng.choice([0.5, 2.0, 20.0])
                assert budget.charge_more(tokens) == FrameBudget.charge_more(plain, tokens)  # type: ignore[arg-type]
                continue
            assert budget.charge(now if rng.random() < 0.5 else None) == plain.charge(now)
            assert (budget.bucket.tokens, budget.bucket.stamp, budget.refused, budget.stamp) == (
                plain.bucket.tokens, plain.bucket.stamp, plain.refused, plain.stamp)


def test_address_keys() -> None:
    assert address_key("203.0.113.7") == "203.0.113.7"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:203.0.113.7") == "203.0.113.7"
    trusted = frozenset({"10.0.0.2"})
    assert client_address("10.0.0.2", "198.51.100.1, 10.0.0.2", trusted) == "198.51.100.1"
    assert client_address("10.0.0.2", "6.6.6.6, 198.51.100.1", trusted) == "198.51.100.1"  # spoofed left part ignored
    assert client_address("198.51.100.9", "1.2.3.4", trusted) == "198.51.100.9"  # not a proxy: header ignored


def test_quotas_count_rooms_in_flight_and_forget_ended_ones() -> None:
    quotas = AddressQuotas(max_connections=2, max_rooms=2)
    live = {"r1"}
    first = quotas.reserve_room("a", live.__contains__)
    second = quotas.reserve_room("a", live.__contains__)
    assert first and second and quotas.reserve_room("a", live.__contains__) is None
    quotas.room_created("a", first, "r1")
    quotas.release_room("a", second)  # that create failed
    assert quotas.reserve_room("a", live.__contains__) is not None
    assert quotas.open_connection("a") and quotas.open_connection("a") and not quotas.open_connection("a")
    quotas.close_connection("a")
    assert quotas.open_connection("a")


def test_origins() -> None:
    none = parse_origins([""])
    assert origin_allowed(None, "giants.example:8765", none)
    assert origin_allowed("http://giants.example:8765", "giants.example:8765", none)
    assert origin_allowed("https://giants.example", "giants.example", none)
    assert not origin_allowed("https://giants.example", "giants.example:8765", none)
    assert not origin_allowed("https://evil.example", "giants.example", none)
    assert not origin_allowed("null", "giants.example", none)
    listed = parse_origins(["https://a.example", "https://b.example/, https://C.example"])
    assert origin_allowed("https://c.example", "giants.example", listed)
    assert origin_allowed("https://anything.example", "giants.example", parse_origins(["*"]))


def test_redis_urls_are_redacted() -> None:
    assert redact_url("redis://:s3cret@db:6379/0") == "redis://:***@db:6379/0"
    assert redact_url("rediss://user:s3cret@[::1]:6380") == "rediss://user:***@[::1]:6380"
    assert redact_url("redis://db:6379/0") == "redis://db:6379/0"
    assert "s3cret" not in redact_url("redis://db:6379/0?password=s3cret")
    assert redact_url("unix:///tmp/redis.sock") == "unix:///tmp/redis.sock"
