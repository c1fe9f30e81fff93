"""`giants serve --workers N`: N node processes on one port, around one Redis.

The parent starts the embedded Redis once (unless --redis-url is given), picks the
port (a free one for --port 0), and runs N children — each an ordinary `giants serve`
node with `--workers 1`, the shared Redis URL and SO_REUSEPORT, so the kernel spreads
incoming connections over them. A connection whose WebSocket URL names a room a sibling
owns is passed to that sibling (server.handover, through sockets in a private directory
made here); otherwise nodes relay to each other like nodes on different
machines (server.relay); a child that dies is restarted and, meanwhile, its rooms fail
over to its siblings. SIGINT/SIGTERM stop every child gracefully (each hands its
rooms over to the ones still running, the last one keeps them in Redis), then Redis.

    code = Supervisor(config).run()     # blocks until a signal; returns the exit code
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import fields
from typing import IO

from server.config import Config
from server.embedded_redis import EmbeddedRedis

log = logging.getLogger("giants.workers")

LISTENING = re.compile(r"listening on ws://[^\s]+:(\d+)")


def worker_count(value: str) -> int:
    """`--workers` as a number: "auto" is one per core. Raises ValueError otherwise."""
    if value == "auto":
        return max(1, os.cpu_count() or 1)
    count = int(value)
    if not 1 <= count <= 256:
        raise ValueError(f"--workers must be between 1 and 256 or 'auto', not {value!r}")
    return count


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class Supervisor:
    """Runs and restarts the worker processes; see the module docstring."""

    def __init__(self, config: Config, count: int) -> None:
        self.config = config
        self.count = count
        self.embedded: EmbeddedRedis | None = None
        self.children: list[subprocess.Popen[str] | None] = [None] * count
        self.stopping = False
        self.port = config.port
        self.handover_dir = ""

    def child_env(self, redis_url: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIANTS_")}
        for f in fields(Config):
            value = getattr(self.config, f.name)
            if value is None:
                continue
            env["GIANTS_" + f.name.upper()] = str(value).lower() if isinstance(value, bool) else str(value)
        env.update(
            GIANTS_WORKERS="1",
            GIANTS_REDIS_URL=redis_url,
            GIANTS_PORT=str(self.port),
            GIANTS_REUSE_PORT="true",
            GIANTS_NODE_ID="",
            GIANTS_HANDOVER_DIR=self.handover_dir,
        )
        return env

    def spawn(self, index: int, env: dict[str, str]) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "client_cli.cli", "serve"],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.children[index] = proc
        return proc

    def wait_listening(self, proc: subprocess.Popen[str], timeout: float = 60.0) -> bool:
        """Read the child's stdout until its 'listening' line; then keep forwarding it."""
        assert proc.stdout is not None
        stream: IO[str] = proc.stdout
        end = time.monotonic() + timeout
        for line in stream:
            if LISTENING.search(line):
                threading.Thread(target=self._forward, args=(stream,), daemon=True).start()
                return True
            if "open http" not in line:
                sys.stdout.write(line)
            if time.monotonic() > end:
                break
        return False

    @staticmethod
    def _forward(stream: IO[str]) -> None:
        for line in stream:
            if "listening on" not in line and "open http" not in line:
                sys.stdout.write(line)

    def run(self) -> int:
        stop = threading.Event()

        def on_signal(signum: int, frame: object) -> None:
            self.stopping = True
            stop.set()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        try:
            url = self.config.redis_url
            if not url:
                self.embedded = EmbeddedRedis(self.config.data_path, fsync=self.config.fsync)
                url = self.embedded.start()
            if self.port == 0:
                self.port = free_port(self.config.host)
            # Mode 0700: only this user's processes can hand connections to the workers.
            self.handover_dir = tempfile.mkdtemp(prefix="giants-workers-")
            env = self.child_env(url)
            for index in range(self.count):
                proc = self.spawn(index, env)
                if not self.wait_listening(proc):
                    log.error("worker %d did not start", index)
                    return 1
            host = self.config.host if self.config.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
            print(f"giants serve: listening on ws://{self.config.host}:{self.port} ({self.count} workers)", flush=True)
            print(f"giants serve: open http://{host}:{self.port}/ in a browser to play", flush=True)
            while not stop.wait(0.5):
                if self.embedded is not None and not self.stopping and not self.embedded.alive():
                    try:  # the workers' writes are settled or refused meanwhile
                        self.embedded.restart()
                    except Exception as exc:
                        log.critical("the embedded Redis will not restart (%s); stopping", exc)
                        return 1
                for index, child in enumerate(self.children):
                    if child is not None and child.poll() is not None and not self.stopping:
                        log.warning("worker %d exited with %s; restarting it", index, child.returncode)
                        self.wait_listening(self.spawn(index, env))
            return 0
        finally:
            self.stop()

    def stop(self) -> None:
        """SIGTERM the children one at a time (each hands its rooms to the others), then Redis."""
        self.stopping = True
        for proc in self.children:
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(self.config.shutdown_timeout + 10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.embedded is not None:
            self.embedded.stop()
        if self.handover_dir:
            shutil.rmtree(self.handover_dir, ignore_errors=True)
