"""The embedded Redis: a private redis-server on a unix socket in the data directory."""

from __future__ import annotations

import os
import stat

import pytest
import redis

from server.embedded_redis import SOCKET_NAME, EmbeddedRedis, EmbeddedRedisError, ping_socket

pytestmark = pytest.mark.redis


def test_socket_only_aof_on_and_data_kept_across_restarts(tmp_path) -> None:
    embedded = EmbeddedRedis(tmp_path)
    url = embedded.start()
    try:
        client = redis.Redis.from_url(url)
        assert client.config_get("port")["port"] == "0"  # no TCP port at all
        assert client.config_get("appendonly")["appendonly"] == "yes"
        client.set("k", "v")
        client.close()
    finally:
        embedded.stop()
    assert not ping_socket(tmp_path / SOCKET_NAME)
    again = EmbeddedRedis(tmp_path)
    client = redis.Redis.from_url(again.start())
    try:
        assert client.get("k") == b"v"
    finally:
        client.close()
        again.stop()


def test_stale_socket_file_is_replaced(tmp_path) -> None:
    """A socket file left by a dead Redis does not block the next start."""
    (tmp_path / SOCKET_NAME).write_text("")
    (tmp_path / "redis.pid").write_text("999999")  # a pid that does not exist
    embedded = EmbeddedRedis(tmp_path)
    try:
        embedded.start()
        assert ping_socket(tmp_path / SOCKET_NAME)
    finally:
        embedded.stop()


def test_running_orphan_is_adopted_not_restarted(tmp_path) -> None:
    first = EmbeddedRedis(tmp_path)
    first.start()
    pid = first.process.pid if first.process else None
    first._unlock()  # as if its server had been SIGKILLed: the lock dies, Redis lives on
    try:
        adopter = EmbeddedRedis(tmp_path)
        adopter.start()
        assert adopter.process is None and adopter.adopted_pid == pid
        adopter.stop()  # stops the adopted server too
        assert not ping_socket(tmp_path / SOCKET_NAME)
    finally:
        first.stop()
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_data_directory_is_private_and_one_server_uses_it(tmp_path) -> None:
    """#10.9: the data directory is 0700, Redis's files 0600, and a second server on
    the same directory is refused with a message naming the first (whose Redis keeps
    serving)."""
    data = tmp_path / "data"
    first = EmbeddedRedis(data)
    url = first.start()
    try:
        client = redis.Redis.from_url(url)
        client.set("k", "v")
        client.bgrewriteaof()
        client.close()
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        files = [f for f in data.rglob("*") if f.is_file()]
        assert any("appendonly" in str(f) for f in files)
        for f in files:
            assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
        second = EmbeddedRedis(data)
        with pytest.raises(EmbeddedRedisError, match=f"pid {os.getpid()}.*{data}"):
            second.start()
        assert ping_socket(data / SOCKET_NAME)  # the refusal stopped nothing
        client = redis.Redis.from_url(url)
        assert client.get("k") == b"v"
        client.close()
    finally:
        first.stop()
    again = EmbeddedRedis(data)  # free again once the first one stopped
    again.start()
    again.stop()


def test_fsync_policy_reaches_redis_and_an_adopted_one(tmp_path) -> None:
    """--fsync always|everysec sets appendfsync, also on a Redis adopted from a killed run."""
    first = EmbeddedRedis(tmp_path, fsync="always")
    url = first.start()
    try:
        client = redis.Redis.from_url(url)
        assert client.config_get("appendfsync")["appendfsync"] == "always"
        first._unlock()  # the server died; its Redis did not
        adopter = EmbeddedRedis(tmp_path, fsync="everysec")
        adopter.start()
        assert client.config_get("appendfsync")["appendfsync"] == "everysec"
        client.close()
        adopter.stop()
    finally:
        first.stop()


def test_a_dead_redis_is_restarted_from_its_append_only_file(tmp_path) -> None:
    embedded = EmbeddedRedis(tmp_path)
    url = embedded.start()
    try:
        client = redis.Redis.from_url(url)
        client.set("k", "v")
        client.close()
        assert embedded.process is not None
        embedded.process.kill()
        embedded.process.wait()
        assert not embedded.alive()
        embedded.restart()
        assert embedded.alive()
        client = redis.Redis.from_url(url)
        assert client.get("k") == b"v"
        client.close()
    finally:
        embedded.stop()
