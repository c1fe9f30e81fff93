"""The store's foundation: the key layout, the records and errors, and the helpers
every part of the store shares (server.store, server.store_leases, server.store_reads).

Key layout (P = the configured prefix, default "giants:"). Every key of one room
carries the room id as a Redis Cluster hash tag, `{<id>}`, so they all live in one
hash slot and the commit script (which touches only them) runs on a cluster too:

    P rooms:live              set   ids of unfinished rooms (restored on start)
    P rooms:finished          zset  finished room ids scored by finish time (replays)
    P layout                  str   "2" once keys use the hash-tag layout (migrate_layout)
    P room:{<id>}             hash  meta (msgpack: game, rules, players, options, seed,
                                    private, password hash, created, deadline seconds,
                                    autostart, bots), version and actions (count) as of
                                    the last write that was not a plain move (a plain
                                    move appends its log entry only: the room's version
                                    is this one plus the log entries after `actions`),
                                    fence, status, seats (msgpack list), deadline (unix
                                    time or ""; after a plain move: its ts plus the meta's
                                    deadline seconds), outcome (msgpack or ""), answered
                                    (msgpack list: seats done in the current simultaneous
                                    step), wid (id of the last hash write), void (id of a
                                    write its writer settled as never applied), ckey
                                    (creation key), start_key (hash of the start's
                                    request key), hidden (changes only their actor could
                                    see, GI-8)
    P room:{<id>}:log         list  one msgpack entry per applied action {v, seat, action,
                                    ts} (v: the version after it); its length is the
                                    room's action count
    P room:{<id>}:snap        hash  n (actions applied when taken), state (engine snapshot)
    P room:{<id>}:lease       str   id of the node that owns the room, with a TTL (server.node)
    P quota:conn:<address>    hash  node incarnation -> its connections from that client
                                    address (server.shared_quotas), expires a day after
                                    its last change
    P quota:rooms:<address>   hash  node incarnation -> its live rooms created from that
                                    address (server.shared_quotas), the same way
"""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
from collections.abc import Iterator, Set
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack
import redis.asyncio as aioredis
from redis.exceptions import ClusterDownError, SlotNotCoveredError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from protocol.packer import packb

# Write ids name one write of one room (retry detection, settling a lost reply): a
# random prefix per process and a counter, so no two writes anywhere share one and
# making one costs no system call.
_WID_PREFIX = secrets.token_hex(6)
_wid_counter = itertools.count()


def next_write_id() -> str:
    """A write id never used before by any process (one a commit): the prefix and the
    counter's `hex()` (`0x…`; cheaper than a format spec, and as unique: the prefix
    has a fixed length)."""
    return _WID_PREFIX + hex(next(_wid_counter))


def _new_write_ids() -> None:
    global _WID_PREFIX
    _WID_PREFIX = secrets.token_hex(6)


os.register_at_fork(after_in_child=_new_write_ids)  # a forked child is another writer


def pack(data: Any) -> bytes:
    return packb(data)


EMPTY_LIST = pack([])  # most commits' `answered` (no simultaneous step running)


def unpack(blob: Any) -> Any:
    return msgpack.unpackb(blob, raw=False, strict_map_key=False)


def as_text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def is_cluster(url: str) -> bool:
    """True if the Redis at `url` runs in cluster mode (then use Store(cluster=True)).

    Raises ConnectionError if it does not answer.
    """
    client = aioredis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        info = await client.info("cluster")
        return bool(info.get("cluster_enabled"))
    finally:
        await client.aclose()


class StoreError(Exception):
    """Base of the store's errors."""


class StaleWriteError(StoreError):
    """The stored version or fence moved on: this writer's copy of the room is stale."""


class StorageUnavailable(StoreError):
    """Redis could not be reached; the write was NOT applied (its outcome was settled)."""


class OutcomeUnknown(StoreError):
    """Redis stayed away longer than the retry window: the write may or may not be in.

    The caller must not adopt the change and must reload the room from Redis before
    its next write (`Room` marks itself unsure and heals once Redis answers).
    """


def is_transient(exc: BaseException) -> bool:
    """True for failures that say nothing about the command's outcome: the connection
    broke, timed out, or Redis is still loading its data after a restart; and, on a
    cluster, the slot has no master for now (CLUSTERDOWN, MASTERDOWN while a replica is
    being promoted: the command did not run, and settling it says so)."""
    return isinstance(exc, _TRANSIENT)


_TRANSIENT = (RedisConnectionError, RedisTimeoutError, OSError, asyncio.TimeoutError, ClusterDownError,
              SlotNotCoveredError)


def backoff_delays(window: float, first: float = 0.05, cap: float = 1.0) -> Iterator[float]:
    """Exponential delays (with jitter) whose sum stays within `window` seconds."""
    spent, delay = 0.0, first
    while spent < window:
        step = min(delay * (0.5 + secrets.randbelow(1000) / 1000), window - spent)
        spent += step
        yield step
        delay = min(cap, delay * 2)


@dataclass
class RoomRecord:
    """One room as stored: what `Room.restore` rebuilds a live room from."""

    room_id: str
    meta: dict[str, Any]
    version: int
    fence: int
    status: str
    seats: list[dict[str, Any]]
    deadline: float | None
    outcome: dict[str, Any] | None
    actions: int
    snapshot_n: int
    snapshot_state: Any  # engine snapshot data, or None: start from new_game
    log_tail: list[dict[str, Any]]  # log entries after the snapshot, in order
    answered: list[int]  # seats that already acted in the current simultaneous step
    start_key: str = ""  # hash of the request key that started the room
    hidden: int = 0  # changes only their actor could see (a replaced sealed bid)
    # Moves stored in the log only, after the hash's last write (counted into
    # `version` and `actions`; negative if the log lost entries the hash counts).
    moves_in_log: int = 0


class StoredFields(Protocol):
    """A room's hash fields as last stored (`Store.commit`'s `before`: the room)."""

    @property
    def status(self) -> str: ...
    @property
    def deadline(self) -> float | None: ...
    @property
    def outcome(self) -> dict[str, Any] | None: ...
    @property
    def actions(self) -> int: ...
    @property
    def answered(self) -> Set[int]: ...
    @property
    def start_key(self) -> str: ...
    @property
    def hidden(self) -> int: ...
    @property
    def logged(self) -> int: ...  # plain moves stored since the room's last hash write


class StoreKeys:
    """The key of everything the store keeps (see the module docstring)."""

    prefix: str

    # The room id in braces is the hash tag: a room's keys share one cluster slot.

    def k_room(self, room_id: str) -> str:
        return f"{self.prefix}room:{{{room_id}}}"

    def k_log(self, room_id: str) -> str:
        return f"{self.prefix}room:{{{room_id}}}:log"

    def k_snap(self, room_id: str) -> str:
        return f"{self.prefix}room:{{{room_id}}}:snap"

    def k_lease(self, room_id: str) -> str:
        return f"{self.prefix}room:{{{room_id}}}:lease"

    @property
    def k_layout(self) -> str:
        return f"{self.prefix}layout"

    @property
    def k_live(self) -> str:
        return f"{self.prefix}rooms:live"

    @property
    def k_finished(self) -> str:
        return f"{self.prefix}rooms:finished"

    def k_node(self, node_id: str) -> str:
        return f"{self.prefix}node:{node_id}"

    @property
    def k_nodes(self) -> str:
        return f"{self.prefix}nodes"
