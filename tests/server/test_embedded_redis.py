"""The embedded Redis: a private redis-server on a unix socket in the data directory."""

from __future__ import annotations

import os

import pytest
import redis

from server.embedded_redis import SOCKET_NAME, EmbeddedRedis, ping_socket

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
