"""Server configuration: every setting has a command-line flag and an environment variable.

`Config.from_args(args)` resolves flag > environment (GIANTS_<NAME>) > default; the
caller then hands the Config to `server.app.GiantsServer`.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

DEFAULT_DATA_DIR = "~/.local/share/giants-table"
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


@dataclass
class Config:
    """Everything the server needs to run; defaults suit a single local node."""

    host: str = "127.0.0.1"
    port: int = 8765
    data_dir: str = DEFAULT_DATA_DIR
    redis_url: str | None = None  # None = start the embedded Redis in data_dir
    log_level: str = "info"
    key_prefix: str = "giants:"
    max_frame: int = 64 * 1024  # inbound frames above this get "frame_too_large"
    hard_max_frame: int = 1024 * 1024  # above this websockets closes the connection (1009)
    rate: float = 50.0  # sustained requests per second per connection
    burst: int = 100  # token-bucket depth
    snapshot_every: int = 50  # actions between engine snapshots in Redis
    max_rooms: int = 10_000
    max_write_buffer: int = 1024 * 1024  # bytes queued to a client before it is closed (1008)
    max_connections_per_address: int = 64  # 0 = unlimited
    max_rooms_per_address: int = 20  # live rooms one address created; 0 = unlimited
    hello_timeout: float = 10.0  # seconds a new connection has to send hello
    allowed_origin: str = ""  # extra WebSocket origins (comma list; "*" = any)
    trusted_proxies: str = ""  # proxy addresses whose X-Forwarded-For is believed
    shutdown_timeout: float = 10.0
    loop: str = "auto"  # auto = uvloop when installed (the `speed` extra), else asyncio
    # Server-run bots (server/seat_bots.py): what a room creator's bot spec is clamped to.
    bot_move_seconds: float = 2.0
    bot_max_iterations: int = 2_000
    bot_max_rollout: int = 400
    bot_threads: int = 2
    workers: str = "1"  # node processes on this port (SO_REUSEPORT); "auto" = one per core
    node_id: str = ""  # "" = a fresh id per process (host-pid-random)
    lease_ttl: float = 2.0  # seconds a room's lease lives without renewal (failover time)
    relay_timeout: float = 5.0  # seconds a relayed request waits for the owner's answer
    reuse_port: bool = False  # set by --workers for its children (SO_REUSEPORT)
    handover_dir: str = ""  # set by --workers: where its children hand connections to each other
    default_deadline: float = 0.0  # seconds per move for rooms created without one; 0 = none
    redis_timeout: float = 5.0  # a Redis reply later than this puts the command's outcome in doubt
    redis_retry_window: float = 10.0  # how long a write in doubt is settled while Redis is away
    replica_acks: int = 0  # replicas that must confirm each commit (WAIT) before it is acknowledged
    replica_ack_timeout: float = 1.0  # seconds WAIT waits for them; fewer in time = outcome unknown
    fsync: str = "always"  # embedded Redis appendfsync: always (acknowledged = on disk) or everysec
    # A seat may replace its action in one simultaneous step (a GIANTS bid) this often.
    max_replacements: int = 20
    # Rooms that end (server/lifecycle.py), in seconds.
    waiting_ttl: float = 3600.0  # a waiting room with no change for this long expires
    seat_grace: float = 120.0  # a seat left by a disconnect before the start is freed after this
    abandon_after: float = 1800.0  # a game (no deadline) with every human away this long ends
    retention: float = 30 * 86400.0  # finished rooms (and their replays) are kept this long
    lifecycle_interval: float = 5.0  # seconds between lifecycle sweeps
    # A room untouched this long (up to twice as long) keeps its members' last views and
    # its engine state packed (memory per idle room; server/packing.py). 0 = never.
    pack_after: float = 10.0
    # Wrong room passwords allowed per window, per client address and per room.
    password_guesses_per_address: int = 10
    password_guesses_per_room: int = 30
    password_guess_window: float = 60.0

    def validate(self) -> None:
        """Raise ValueError naming the first setting out of range (checked before
        anything starts, so `giants serve` exits 2 without touching Redis)."""
        if self.log_level.lower() not in LOG_LEVELS:
            raise ValueError(f"--log-level must be one of {', '.join(LOG_LEVELS)}, not {self.log_level!r}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be 0..65535, not {self.port}")
        if not 0 <= self.default_deadline <= 86_400:
            raise ValueError(f"--default-deadline must be 0..86400 seconds, not {self.default_deadline}")
        for name in ("max_frame", "hard_max_frame", "burst", "snapshot_every", "max_rooms", "max_write_buffer"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {getattr(self, name)}")
        if self.rate <= 0:
            raise ValueError(f"--rate must be positive, not {self.rate}")
        if not 0.1 <= self.lease_ttl <= 600:
            raise ValueError(f"--lease-ttl must be 0.1..600 seconds, not {self.lease_ttl}")
        if self.relay_timeout <= 0:
            raise ValueError(f"--relay-timeout must be positive, not {self.relay_timeout}")
        if "{" in self.key_prefix or "}" in self.key_prefix:
            raise ValueError(f"--key-prefix must not contain braces (they would become a hash tag), not {self.key_prefix!r}")
        if self.redis_timeout <= 0 or self.redis_retry_window < 0:
            raise ValueError("--redis-timeout must be positive and --redis-retry-window not negative")
        if not 0 <= self.replica_acks <= 16:
            raise ValueError(f"--replica-acks must be 0..16, not {self.replica_acks}")
        if self.replica_ack_timeout <= 0 or (self.replica_acks and self.replica_ack_timeout >= self.redis_timeout):
            raise ValueError("--replica-ack-timeout must be positive and below --redis-timeout")
        if self.fsync not in ("always", "everysec"):
            raise ValueError(f"--fsync must be always or everysec, not {self.fsync!r}")
        for name in ("bot_max_iterations", "bot_threads", "max_replacements"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {getattr(self, name)}")
        for name in ("password_guesses_per_address", "password_guesses_per_room"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {getattr(self, name)}")
        for name in ("waiting_ttl", "seat_grace", "abandon_after", "retention", "lifecycle_interval", "password_guess_window"):
            if getattr(self, name) <= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be positive, not {getattr(self, name)}")
        if self.pack_after != 0 and not 0.1 <= self.pack_after <= 86_400:
            raise ValueError(f"--pack-after must be 0 (never) or 0.1..86400 seconds, not {self.pack_after}")
        if self.bot_move_seconds <= 0 or self.bot_max_rollout < 0:
            raise ValueError("--bot-move-seconds must be positive and --bot-max-rollout at least 0")

    @property
    def data_path(self) -> Path:
        return Path(os.path.expanduser(self.data_dir))

    @property
    def flood_refusals(self) -> int:
        """Outstanding refused frames (draining at `rate`/s) that close a connection."""
        return 4 * self.burst

    # -- command line ---------------------------------------------------------------

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add one flag per setting; defaults are None so the environment can fill them."""
        helps = {
            "host": "interface to listen on (GIANTS_HOST, default 127.0.0.1)",
            "port": "TCP port for WebSocket and HTTP (GIANTS_PORT, default 8765; 0 = any free port)",
            "data_dir": f"embedded Redis data directory (GIANTS_DATA_DIR, default {DEFAULT_DATA_DIR})",
            "redis_url": "use this external Redis instead of the embedded one (GIANTS_REDIS_URL)",
            "log_level": "debug, info, warning or error (GIANTS_LOG_LEVEL, default info)",
            "key_prefix": "prefix of every Redis key (GIANTS_KEY_PREFIX, default 'giants:')",
            "max_frame": "largest accepted inbound frame in bytes (GIANTS_MAX_FRAME, default 65536)",
            "hard_max_frame": "frames above this close the connection (GIANTS_HARD_MAX_FRAME)",
            "rate": "requests per second per connection (GIANTS_RATE, default 50)",
            "burst": "request burst per connection (GIANTS_BURST, default 100)",
            "snapshot_every": "actions between state snapshots (GIANTS_SNAPSHOT_EVERY, default 50)",
            "max_rooms": "most live rooms (GIANTS_MAX_ROOMS, default 10000)",
            "max_write_buffer": "bytes queued to a client before it is closed (GIANTS_MAX_WRITE_BUFFER)",
            "max_connections_per_address": "open connections per client address, 0 = unlimited "
            "(GIANTS_MAX_CONNECTIONS_PER_ADDRESS, default 64)",
            "max_rooms_per_address": "live rooms one client address may have created, 0 = unlimited "
            "(GIANTS_MAX_ROOMS_PER_ADDRESS, default 20)",
            "hello_timeout": "seconds a new connection has to send hello (GIANTS_HELLO_TIMEOUT, default 10)",
            "allowed_origin": "also accept WebSocket connections from this browser origin; repeat or "
            "comma-separate, '*' = any (GIANTS_ALLOWED_ORIGIN; same-origin and no Origin always pass)",
            "trusted_proxies": "comma list of reverse-proxy addresses whose X-Forwarded-For names "
            "the client (GIANTS_TRUSTED_PROXIES)",
            "shutdown_timeout": "seconds to finish in-flight work on shutdown (GIANTS_SHUTDOWN_TIMEOUT)",
            "default_deadline": "seconds per move in rooms created without a deadline; 0 = no deadline (GIANTS_DEFAULT_DEADLINE, default 0)",
            "loop": "event loop: auto (uvloop if installed), uvloop or asyncio (GIANTS_LOOP)",
            "bot_move_seconds": "time budget of one server-run bot move (GIANTS_BOT_MOVE_SECONDS, default 2)",
            "bot_max_iterations": "most mcts iterations a server-run bot may search (GIANTS_BOT_MAX_ITERATIONS, default 2000)",
            "bot_max_rollout": "longest mcts playout of a server-run bot (GIANTS_BOT_MAX_ROLLOUT, default 400)",
            "bot_threads": "server-run bots thinking at once (GIANTS_BOT_THREADS, default 2)",
            "workers": "node processes sharing this port, or 'auto' for one per core (GIANTS_WORKERS, default 1)",
            "node_id": "this node's id in Redis (GIANTS_NODE_ID, default: host-pid-random)",
            "lease_ttl": "seconds a room's lease lasts without renewal: the failover time (GIANTS_LEASE_TTL, default 2)",
            "relay_timeout": "seconds a request relayed to another node waits for it (GIANTS_RELAY_TIMEOUT, default 5)",
            "reuse_port": "listen with SO_REUSEPORT, sharing the port with other nodes (GIANTS_REUSE_PORT; --workers sets it)",
            "handover_dir": "private directory of the sibling workers' hand-over sockets (GIANTS_HANDOVER_DIR; "
            "--workers sets it)",
            "redis_timeout": "seconds before an unanswered Redis command is settled (GIANTS_REDIS_TIMEOUT, default 5)",
            "redis_retry_window": "seconds a write in doubt is settled while Redis is away (GIANTS_REDIS_RETRY_WINDOW, default 10)",
            "replica_acks": "replicas that must confirm each change before it is acknowledged (Redis WAIT; "
            "GIANTS_REPLICA_ACKS, default 0 = the master's answer; see docs/operations.md)",
            "replica_ack_timeout": "seconds to wait for those replicas; fewer in time = the client is told the outcome "
            "is unknown (GIANTS_REPLICA_ACK_TIMEOUT, default 1)",
            "fsync": "embedded Redis fsync policy: always or everysec (GIANTS_FSYNC, default always; see docs/operations.md)",
            "waiting_ttl": "seconds a waiting room may stay unchanged before it expires (GIANTS_WAITING_TTL, default 3600)",
            "seat_grace": "seconds before a seat left by a disconnect before the start is freed (GIANTS_SEAT_GRACE, default 120)",
            "abandon_after": "seconds a game without a deadline waits with every human away before it ends (GIANTS_ABANDON_AFTER, default 1800)",
            "retention": "seconds finished rooms and their replays are kept in Redis (GIANTS_RETENTION, default 2592000 = 30 days)",
            "lifecycle_interval": "seconds between lifecycle sweeps (GIANTS_LIFECYCLE_INTERVAL, default 5)",
            "pack_after": "seconds a room must go untouched before its views and state are packed to save memory; "
            "0 = never (GIANTS_PACK_AFTER, default 10; see docs/operations.md)",
            "password_guesses_per_address": "wrong room passwords one address may send per window (GIANTS_PASSWORD_GUESSES_PER_ADDRESS, default 10)",
            "password_guesses_per_room": "wrong passwords one room accepts per window from everyone (GIANTS_PASSWORD_GUESSES_PER_ROOM, default 30)",
            "password_guess_window": "seconds of the wrong-password window (GIANTS_PASSWORD_GUESS_WINDOW, default 60)",
            "max_replacements": "times a seat may replace its action in one simultaneous step (GIANTS_MAX_REPLACEMENTS, default 20)",
        }
        for f in fields(Config):
            flag = "--" + f.name.replace("_", "-")
            if f.name == "allowed_origin":  # repeatable: --allowed-origin A --allowed-origin B
                parser.add_argument(flag, dest=f.name, default=None, action="append", help=helps[f.name])
                continue
            parser.add_argument(flag, dest=f.name, default=None, help=helps.get(f.name))

    @classmethod
    def from_args(cls, args: argparse.Namespace | None = None, env: dict[str, str] | None = None) -> Config:
        """Resolve each setting: flag, then GIANTS_<NAME> from the environment, then default.

        Raises ValueError naming the setting when a value does not convert.
        """
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = getattr(args, f.name, None) if args is not None else None
            if raw is None:
                raw = env.get("GIANTS_" + f.name.upper())
            if isinstance(raw, list):  # a repeatable flag
                raw = ",".join(raw)
            if raw is None or raw == "":
                continue
            default = f.default
            try:
                if isinstance(default, bool):
                    values[f.name] = str(raw).lower() in ("1", "true", "yes", "on")
                elif isinstance(default, int):
                    values[f.name] = int(raw)
                elif isinstance(default, float):
                    values[f.name] = float(raw)
                else:
                    values[f.name] = str(raw)
            except ValueError:
                raise ValueError(f"setting {f.name} has an invalid value {raw!r}") from None
        return cls(**values)
