"""HTTP on the WebSocket port: /healthz and /metrics."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from server.config import Config
from server.embedded_redis import EmbeddedRedis

pytestmark = pytest.mark.redis


def http_get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


async def get(server, path: str) -> tuple[int, str, str]:
    return await asyncio.to_thread(http_get, f"http://127.0.0.1:{server.port}{path}")


async def test_healthz_reports_redis_and_rooms(giants_server) -> None:
    status, ctype, body = await get(giants_server, "/healthz")
    assert status == 200
    assert ctype == "application/json"
    data = json.loads(body)
    assert data["status"] == "ok" and data["redis"] is True and data["rooms_loaded"] is True


async def test_metrics_count_connections_rooms_actions_errors(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer"))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: bool(alice.rooms[room].legal) or bool(bob.rooms.get(room) and bob.rooms[room].legal))
    actor = alice if alice.rooms[room].legal else bob
    await actor.ok("act", room=room, action=actor.rooms[room].legal[0])
    await alice.error("join", room="nope")
    status, ctype, text = await get(giants_server, "/metrics")
    assert status == 200
    assert ctype.startswith("text/plain")
    samples = parse_samples(text)
    assert samples[("giants_connections_open", ())] == 2
    assert samples[("giants_rooms", (("game", "giantslayer"), ("status", "playing")))] == 1
    assert samples[("giants_rooms_by_status", (("status", "playing"),))] == 1
    assert samples[("giants_actions_applied_total", (("game", "giantslayer"),))] == 1
    assert samples[("giants_errors_total", (("code", "no_such_room"),))] == 1
    assert samples[("giants_action_seconds_count", ())] == 1
    assert samples[("giants_action_seconds_bucket", (("le", "+Inf"),))] == 1


def parse_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text exposition, parsed by prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_follow_conventions(giants_server, client_factory, caplog) -> None:
    """Standard process metrics, a build-info metric, bot moves and finished games by
    game, valid OpenMetrics, and no log line per scrape."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om

    alice = await client_factory(giants_server.url, "alice")
    room = (await alice.ok("create_room", game="tara", bots={"0": "random", "1": "random"}))["room"]
    await alice.ok("watch", room=room)
    await alice.wait_for(lambda: alice.rooms[room].view["room"]["status"] == "finished", timeout=60)
    caplog.clear()
    with caplog.at_level("INFO"):
        _, _, text = await get(giants_server, "/metrics")
    assert not [r for r in caplog.records if r.levelname == "INFO"], "a scrape must not log at INFO"
    samples = parse_samples(text)
    assert samples[("process_cpu_seconds_total", ())] >= 0
    assert samples[("process_resident_memory_bytes", ())] > 0
    build = [labels for name, labels in samples if name == "giants_build_info"]
    assert build and dict(build[0])["version"]
    assert samples[("giants_bot_moves_total", (("game", "tara"),))] > 0
    assert samples[("giants_rooms_finished_total", (("game", "tara"), ("reason", "rules")))] == 1
    # The same registry in OpenMetrics, when the scraper asks for it: parses strictly
    # (a gauge and a counter sharing a name would fail here).
    request = urllib.request.Request(
        f"http://127.0.0.1:{giants_server.port}/metrics", headers={"Accept": "application/openmetrics-text"}
    )
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(request, timeout=5).read().decode())
    assert body.endswith("# EOF\n")
    names = {family.name for family in parse_om(body)}
    assert {"giants_connections_open", "giants_connections_accepted", "giants_rooms_finished"} <= names


async def test_other_paths_are_not_found(giants_server) -> None:
    assert (await get(giants_server, "/nothing"))[0] == 404
    assert (await get(giants_server, "/"))[0] == 200  # the web client (tests/server/test_web.py)


async def test_healthz_is_503_when_redis_is_gone(server_factory, tmp_path) -> None:
    """A server on its own Redis; when that Redis stops, /healthz says so with 503."""
    redis = EmbeddedRedis(tmp_path / "r")
    url = redis.start()
    try:
        server = await server_factory(redis_url=url)
        assert (await get(server, "/healthz"))[0] == 200
    finally:
        redis.stop()
    status, _, body = await get(server, "/healthz")
    assert status == 503
    assert json.loads(body)["redis"] is False


def test_every_setting_has_a_flag_and_an_environment_variable() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    Config.add_arguments(parser)
    args = parser.parse_args(["--port", "9000", "--log-level", "debug"])
    env = {"GIANTS_PORT": "7000", "GIANTS_HOST": "0.0.0.0", "GIANTS_REDIS_URL": "redis://x:1/0", "GIANTS_RATE": "12.5"}
    config = Config.from_args(args, env)
    assert config.port == 9000  # the flag wins over the environment
    assert config.host == "0.0.0.0"
    assert config.redis_url == "redis://x:1/0"
    assert config.rate == 12.5
    assert config.log_level == "debug"
    with pytest.raises(ValueError, match="port"):
        Config.from_args(None, {"GIANTS_PORT": "eighty"})


async def test_metrics_report_garbage_collection_pauses(giants_server) -> None:
    """Every request waits while the cyclic collector runs: /metrics shows each
    generation's pauses, so an operator can tell a GC stall from a slow Redis."""
    import gc

    from prometheus_client.parser import text_string_to_metric_families

    def counts(text: str) -> dict[str, float]:
        return {
            sample.labels["generation"]: sample.value
            for family in text_string_to_metric_families(text)
            if family.name == "giants_gc_pause_seconds"
            for sample in family.samples
            if sample.name.endswith("_count")
        }

    _, _, before = await get(giants_server, "/metrics")
    gc.collect()  # a full collection of this (the server's) process
    _, _, after = await get(giants_server, "/metrics")
    assert set(counts(after)) == {"0", "1", "2"}
    assert counts(after)["2"] >= counts(before)["2"] + 1
