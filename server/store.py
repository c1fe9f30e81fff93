"""All Redis access: the key layout, version-guarded writes, restore.

Key layout (P = the configured prefix, default "giants:"). Every key of one room
carries the room id as a Redis Cluster hash tag, `{<id>}`, so they all live in one
hash slot and the commit script (which touches only them) runs on a cluster too:

    P rooms:live              set   ids of unfinished rooms (restored on start)
    P rooms:finished          zset  finished room ids scored by finish time (replays)
    P layout                  str   "2" once keys use the hash-tag layout (migrate_layout)
    P room:{<id>}             hash  meta (msgpack: game, rules, players, options, seed,
                                    private, password hash, created, deadline seconds,
                                    autostart, bots), version, fence, status, seats
                                    (msgpack list), deadline (unix time or ""), outcome
                                    (msgpack or ""), actions (count), answered (msgpack
                                    list: seats done in the current simultaneous step),
                                    wid (id of the last write), void (id of a write its
                                    writer settled as never applied), ckey (creation
                                    key), start_key (hash of the start's request key),
                                    hidden (changes only their actor could see, GI-8)
    P room:{<id>}:log         list  one msgpack entry per applied action {v, seat, action, ts}
    P room:{<id>}:snap        hash  n (actions applied when taken), state (engine snapshot)
    P room:{<id>}:lease       str   id of the node that owns the room, with a TTL (server.node)

Every change to a room is one Lua script call (one round trip) that checks the stored
version equals the writer's and the stored fence token equals the writer's, then writes
the hash fields, appends the log entry and the periodic snapshot atomically. A writer
holding an old version or an old fence gets `StaleWriteError` and must reload the room.
A node takes a room over with `acquire()` (bumps the fence), so a node that lost the
room can never write to it again: the door for several nodes sharing one Redis.

The two lobby indexes (`rooms:live`, `rooms:finished`) live in their own slots, so no
script touches them: `create_room` adds the id to `rooms:live` after the room hash
exists, and the commit that finishes a room moves its id to `rooms:finished` right after
the script succeeded (idempotent: SREM + ZADD). A crash in between leaves a finished
room in `rooms:live`; the next restore sees its status and finishes the move
(`mark_finished`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgpack
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.cancellation import checkpoint
from server.commit_pipe import CommitPipe, GroupSender, resolve

log = logging.getLogger("giants.store")

T = TypeVar("T")

# Write ids name one write of one room (retry detection, settling a lost reply): a
# random prefix per process and a counter, so no two writes anywhere share one and
# making one costs no system call.
_WID_PREFIX = secrets.token_hex(6)
_wid_counter = itertools.count()


def next_write_id() -> str:
    """A write id never used before by any process (one a commit)."""
    return f"{_WID_PREFIX}{next(_wid_counter):x}"


def _new_write_ids() -> None:
    global _WID_PREFIX
    _WID_PREFIX = secrets.token_hex(6)


os.register_at_fork(after_in_child=_new_write_ids)  # a forked child is another writer


_COMMIT = """
local h = KEYS[1]
local cur = redis.call('HGET', h, 'version')
if not cur then return -3 end
if redis.call('HGET', h, 'fence') ~= ARGV[3] then return -1 end
if cur ~= ARGV[1] then
  -- The same write sent again (a retried pipeline): it is already in.
  if cur == ARGV[2] and redis.call('HGET', h, 'wid') == ARGV[12] then return 1 end
  return 0
end
-- Its writer already concluded it was never applied (see _RESOLVE): keep that true.
if redis.call('HGET', h, 'void') == ARGV[12] then return -4 end
redis.call('HSET', h, 'version', ARGV[2], 'status', ARGV[4],
           'deadline', ARGV[6], 'outcome', ARGV[7], 'actions', ARGV[8], 'answered', ARGV[11],
           'wid', ARGV[12], 'start_key', ARGV[13], 'hidden', ARGV[14])
-- Seats change on joins and leaves only: '' keeps the stored ones (a move sends none).
if ARGV[5] ~= '' then redis.call('HSET', h, 'seats', ARGV[5]) end
if ARGV[9] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[9]) end
if ARGV[10] ~= '' then redis.call('HSET', KEYS[3], 'n', ARGV[8], 'state', ARGV[10]) end
return 1
"""

# Settles a write whose reply never came (Store.settle): 1 = it was applied (it is the
# last write), 0 = it was not and now never will be (its id is voided, so a copy still
# on its way is refused), -1 = the fence moved (another node owns the room), -2 =
# someone else wrote meanwhile, -3 = no such room.
_RESOLVE = """
local h = KEYS[1]
local cur = redis.call('HGET', h, 'version')
if not cur then return -3 end
if redis.call('HGET', h, 'wid') == ARGV[3] then return 1 end
if redis.call('HGET', h, 'fence') ~= ARGV[4] then return -1 end
if cur == ARGV[1] then
  redis.call('HSET', h, 'void', ARGV[3])
  return 0
end
return -2
"""

# Creating twice with the same creation key is the same create (a retried request).
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'ckey') == ARGV[5] then return 2 end
  return 0
end
redis.call('HSET', KEYS[1], 'meta', ARGV[1], 'version', '0', 'fence', '1', 'status', 'waiting',
           'seats', ARGV[2], 'deadline', '', 'outcome', '', 'actions', '0', 'ckey', ARGV[5])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4]) end
return 1
"""

# Leases (server.node). KEYS[1] = lease, KEYS[2] = room hash; ARGV[1] = node id,
# ARGV[2] = TTL in ms. Take the room if nobody else holds a live lease: bump the fence
# (new incarnation, even for the same node id after a restart) and return it; 0 if
# another node holds it, -1 if the room does not exist.
_ACQUIRE = """
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('HINCRBY', KEYS[2], 'fence', 1)
"""

# Renew one lease; ARGV[3] = the fence the owner holds. 1 if still ours (an expired
# lease nobody took is taken back), 0 if another node holds it or the fence moved on.
_RENEW = """
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[2], 'fence') ~= ARGV[3] then return 0 end
if cur then redis.call('PEXPIRE', KEYS[1], ARGV[2])
else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True)


EMPTY_LIST = pack([])  # most commits' `answered` (no simultaneous step running)


def unpack(blob: Any) -> Any:
    return msgpack.unpackb(blob, raw=False, strict_map_key=False)


def _text(value: Any) -> str:
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
    broke, timed out, or Redis is still loading its data after a restart."""
    return isinstance(exc, RedisConnectionError | RedisTimeoutError | OSError | asyncio.TimeoutError)


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


class Store:
    """The one place that talks to Redis; embedded and external Redis use the same code."""

    def __init__(
        self,
        url: str,
        prefix: str = "giants:",
        max_connections: int = 1000,
        cluster: bool = False,
        *,
        timeout: float = 5.0,
        retry_window: float = 10.0,
    ) -> None:
        """`timeout`: seconds a command may take before its outcome is in doubt;
        `retry_window`: how long an unsettled write keeps being settled (and other
        idempotent calls retried) while Redis is away."""
        if "{" in prefix or "}" in prefix:
            # A brace in the prefix would become the hash tag of every key.
            raise ValueError(f"key prefix {prefix!r} must not contain braces")
        self.url = url
        self.prefix = prefix
        self.cluster = cluster
        self.timeout = timeout
        self.retry_window = retry_window
        self.redis: aioredis.Redis
        # No silent retries inside redis-py: ours are explicit and only of idempotent
        # calls (the commit script recognises its own write id, see `settle`).
        if cluster:
            # A Redis Cluster: commands and pipelines are routed by key slot; every key a
            # script touches shares the room's hash tag, so each call goes to one node.
            self.redis = RedisCluster.from_url(  # type: ignore[assignment]
                url, max_connections=max_connections, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        else:
            # A blocking pool: under a burst of requests a command waits (up to `timeout`)
            # for a free connection instead of failing at once (the default pool raises
            # MaxConnectionsError when exhausted); commits have their own channel.
            pool = aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=max_connections,
                timeout=timeout,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
            )
            self.redis = aioredis.Redis(connection_pool=pool, decode_responses=False)
        self._commit = self.redis.register_script(_COMMIT)
        self._create = self.redis.register_script(_CREATE)
        self._resolve = self.redis.register_script(_RESOLVE)
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._pending: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._flushing = False
        self._flush_task: asyncio.Task[None] | None = None
        # The commits' own channel (not on a cluster): one write per turn of the loop.
        self._commits = GroupSender(self.redis, timeout, on_batch=self._batch_done)
        self._lease_pipe: CommitPipe | None = None  # lease renewals' own connection
        self.on_batch: Callable[[int, float], None] | None = None  # metrics hook

    # -- keys -----------------------------------------------------------------------

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

    # -- health ---------------------------------------------------------------------

    async def ping(self) -> bool:
        """True if Redis answers; never raises (health checks call it)."""
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False

    async def persistence(self) -> tuple[bool, bool]:
        """(append-only file on, snapshot save points set) of this Redis; raises if
        neither CONFIG nor INFO tells (some managed services disable both)."""
        try:
            aof = await self.redis.config_get("appendonly")
            save = await self.redis.config_get("save")
            aof_on = str(aof.get("appendonly", "no")).lower() == "yes"
            return aof_on, bool(str(save.get("save", "")).strip())
        except ResponseError:
            info = await self.redis.info("persistence")
            return bool(int(info.get("aof_enabled", 0))), True  # snapshots unknown: assume set

    async def close(self) -> None:
        self._commits.close()
        if self._lease_pipe is not None:
            self._lease_pipe.close()
        await self.redis.aclose()

    # -- writes ---------------------------------------------------------------------

    async def create_room(
        self,
        room_id: str,
        meta: dict[str, Any],
        seats: list[dict[str, Any]],
        owner: str = "",
        lease_ms: int = 0,
        ckey: str = "",
    ) -> int:
        """Store a new room at version 0 with fence 1.

        Returns 1 if created, 2 if this id was already created with the same `ckey`
        (a retried create: that room is the answer), 0 if the id belongs to another
        room. A lost reply is settled by sending the same create again (idempotent
        per `ckey`); StorageUnavailable if Redis stays away for the retry window.

        With `owner`, the room's lease is taken in the same script (no other node can
        grab the room before it is listed). The id joins `rooms:live` after the hash
        exists (another slot on a cluster); a crash in between leaves an unlisted
        waiting room nobody was told about (a retried create with the same key lists it).
        """
        ckey = ckey or secrets.token_hex(16)
        keys = [self.k_room(room_id), self.k_lease(room_id)]
        args: list[Any] = [pack(meta), pack(seats), owner, str(lease_ms), ckey]
        created = int(await self.retrying(lambda: self._create(keys=keys, args=args), "create"))
        if created:
            await self.retrying(lambda: self.redis.sadd(self.k_live, room_id), "list the room")
        return created

    async def retrying(self, call: Callable[[], Awaitable[T]], what: str) -> T:
        """Run an idempotent Redis call, retrying transient failures with backoff within
        the retry window; raises StorageUnavailable when Redis stays away."""
        last: BaseException | None = None
        delays = backoff_delays(self.retry_window)
        while True:
            checkpoint()  # a cancel lost in the last attempt (server.cancellation)
            try:
                return await call()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                last = exc
            delay = next(delays, None)
            if delay is None:
                raise StorageUnavailable(f"{what}: Redis does not answer ({last!r})") from last
            await asyncio.sleep(delay)

    async def mark_finished(self, room_id: str, finished_at: float) -> None:
        """Move a finished room from the live index to the finished one (idempotent)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(self.k_finished, {room_id: finished_at})
        pipe.srem(self.k_live, room_id)
        await pipe.execute()

    def _batch_done(self, size: int, seconds: float) -> None:
        if self.on_batch is not None:
            self.on_batch(size, seconds)

    async def _submit(self, keys: list[str], args: list[Any]) -> Any:
        """Run the commit script, grouped with the other commits of this moment.

        Group commit: the commits made during one turn of the event loop leave in one
        write at its end (`server.commit_pipe`), without waiting for earlier batches'
        replies, so a commit never waits for another's round trip and many rooms share
        a write under load. On a cluster, a redis-py pipeline per batch (one in flight;
        commits queue meanwhile). Each room's own commits are already serialised by its
        lock, so grouping never reorders them.
        """
        if not self.cluster:
            try:
                return await self._commits.call("EVALSHA", self._commit.sha, len(keys), *keys, *args)
            except NoScriptError:
                # Redis lost its script cache (restarted): load it and retry this one.
                return await self._commit(keys=keys, args=args)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((keys, args, fut))
        if not self._flushing:
            # Nothing in flight: send this batch from the caller's own task (no extra
            # loop iteration); commits queued meanwhile go out from a helper task.
            self._flushing = True
            try:
                await self._send_batch()
            finally:
                if self._pending:
                    self._flush_task = asyncio.get_running_loop().create_task(self._flush())
                else:
                    self._flushing = False
        return await fut

    async def _flush(self) -> None:
        try:
            while self._pending:
                await self._send_batch()
        finally:
            self._flushing = False

    async def _send_batch(self) -> None:
        batch, self._pending = self._pending, []
        started = time.perf_counter()
        try:
            pipe = self.redis.pipeline(transaction=False)
            # EVALSHA through execute_command: redis-py's cluster pipeline blocks the
            # evalsha() method but routes the raw command by its first key's slot.
            for keys, args, _ in batch:
                pipe.execute_command("EVALSHA", self._commit.sha, len(keys), *keys, *args)
            results = await pipe.execute(raise_on_error=False)
        except BaseException as exc:
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc if isinstance(exc, Exception) else ConnectionError("cancelled"))
            if not isinstance(exc, Exception):
                raise
            return
        if self.on_batch is not None:
            self.on_batch(len(batch), time.perf_counter() - started)
        for (keys, args, fut), result in zip(batch, results, strict=True):
            if isinstance(result, NoScriptError):
                # Redis lost its script cache (restarted): load it and retry this one.
                try:
                    result = await self._commit(keys=keys, args=args)
                except Exception as exc:
                    result = exc
            resolve(fut, result)

    # -- nodes and leases -----------------------------------------------------------

    def k_node(self, node_id: str) -> str:
        return f"{self.prefix}node:{node_id}"

    @property
    def k_nodes(self) -> str:
        return f"{self.prefix}nodes"

    async def acquire_lease(self, room_id: str, node_id: str, lease_ms: int) -> int | None:
        """Take the room's lease and bump its fence; the new fence, or None if another
        node holds a live lease or the room does not exist."""
        fence = int(
            await self._acquire(keys=[self.k_lease(room_id), self.k_room(room_id)], args=[node_id, str(lease_ms)])
        )
        return fence if fence > 0 else None

    async def renew_leases(self, node_id: str, rooms: Sequence[tuple[str, int]], lease_ms: int) -> list[bool]:
        """Renew every (room, fence) lease in one batch; False where the room is lost.

        One write and one reply parse for all of them, over a connection of their own
        (`server.commit_pipe`, not the commits'): a node renews every room it owns each
        `lease_ttl / 3`, thousands of calls at once. On a cluster, a redis-py pipeline.
        """
        if not rooms:
            return []
        sha, ttl = self._renew.sha, str(lease_ms)
        commands = [("EVALSHA", sha, 2, self.k_lease(r), self.k_room(r), node_id, ttl, str(f)) for r, f in rooms]
        if self.cluster:
            pipe = self.redis.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            results = await pipe.execute(raise_on_error=False)
        else:
            lease_pipe = self._lease_pipe
            if lease_pipe is None or lease_pipe.closed:
                lease_pipe = self._lease_pipe = await CommitPipe.open(self.redis, self.timeout)
            results = await lease_pipe.roundtrip(commands)
        if any(isinstance(r, NoScriptError) for r in results):
            await self._renew(keys=[self.k_lease(rooms[0][0]), self.k_room(rooms[0][0])], args=[node_id, "1", "-1"])
            return await self.renew_leases(node_id, rooms, lease_ms)
        for result in results:
            if isinstance(result, Exception):
                raise result
        return [int(r) == 1 for r in results]

    async def release_lease(self, room_id: str, node_id: str) -> bool:
        """Give the lease up if this node holds it (graceful hand-over)."""
        return bool(await self._release(keys=[self.k_lease(room_id)], args=[node_id]))

    async def lease_holder(self, room_id: str) -> str | None:
        holder = await self.redis.get(self.k_lease(room_id))
        return None if holder is None else _text(holder)

    async def lease_holders(self, room_ids: Sequence[str]) -> list[str | None]:
        if not room_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for room_id in room_ids:
            pipe.get(self.k_lease(room_id))
        return [None if h is None else _text(h) for h in await pipe.execute()]

    async def heartbeat(self, node_id: str, info: dict[str, Any], ttl_ms: int) -> None:
        """Say this node is alive (key with a TTL) and list it in `P nodes`."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(self.k_node(node_id), pack(info), px=ttl_ms)
        pipe.hset(self.k_nodes, node_id, pack(info))
        await pipe.execute()

    async def nodes(self) -> dict[str, dict[str, Any] | None]:
        """Every node ever listed: its last info if its heartbeat is alive, else None."""
        listed = [_text(n) for n in await self.redis.hkeys(self.k_nodes)]
        if not listed:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for node_id in listed:
            pipe.get(self.k_node(node_id))
        beats = await pipe.execute()
        return {n: (unpack(b) if b is not None else None) for n, b in zip(listed, beats, strict=True)}

    async def forget_node(self, node_id: str) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(self.k_nodes, node_id)
        pipe.delete(self.k_node(node_id))
        await pipe.execute()

    async def acquire(self, room_id: str) -> int:
        """Take the room over: bump and return its fence; earlier holders can no longer write."""
        return int(await self.redis.hincrby(self.k_room(room_id), "fence", 1))

    async def commit(
        self,
        room_id: str,
        *,
        expected: int,
        version: int,
        fence: int,
        status: str,
        seats: list[dict[str, Any]] | None,
        deadline: float | None,
        outcome: dict[str, Any] | None,
        actions: int,
        log_entry: dict[str, Any] | None = None,
        snapshot: Any = None,
        now: float = 0.0,
        answered: Iterable[int] = (),
        start_key: str = "",
        hidden: int = 0,
    ) -> None:
        """Write one room change atomically, if the stored version is still `expected`.

        Returns once the change is known to be in Redis. A reply lost, or later than
        the socket timeout, is settled before returning (`settle`): applied -> returns
        as if the reply had come; not applied -> StorageUnavailable (the caller keeps
        the room unchanged); unknown after the retry window -> OutcomeUnknown. Raises
        StaleWriteError when another writer got there first (the caller reloads).
        `seats` None keeps the stored seats (the change did not touch them).
        """
        wid = next_write_id()
        keys = [self.k_room(room_id), self.k_log(room_id), self.k_snap(room_id)]
        args = [
            str(expected),
            str(version),
            str(fence),
            status,
            b"" if seats is None else pack(seats),
            "" if deadline is None else repr(deadline),
            b"" if outcome is None else pack(outcome),
            str(actions),
            b"" if log_entry is None else pack(log_entry),
            b"" if snapshot is None else pack(snapshot),
            pack(sorted(answered)) if answered else EMPTY_LIST,
            wid,
            start_key,
            str(hidden),
        ]
        try:
            result = int(await self._submit(keys, args))
        except Exception as exc:
            if not is_transient(exc):
                raise
            log.warning("room %s: no answer to write %s (%r); settling it", room_id, wid, exc)
            result = await self.settle(room_id, expected=expected, fence=fence, wid=wid)
        if result == -4:
            raise StorageUnavailable(f"room {room_id}: the write was settled as not applied")
        if result != 1:
            reason = {0: "version moved on", -1: "fence lost", -2: "version moved on", -3: "room missing"}
            raise StaleWriteError(f"room {room_id}: {reason.get(result, str(result))}")
        if status == "finished":
            try:
                await self.mark_finished(room_id, now or time.time())
            except Exception:
                # The change itself is stored; the next restore finishes the move.
                log.warning("room %s: finished, but the lobby index was not updated", room_id)

    async def settle(self, room_id: str, *, expected: int, fence: int, wid: str) -> int:
        """Find out whether write `wid` is in Redis, retrying while Redis is away.

        Returns 1 (applied) or a refusal code of the commit script (-1 fence lost,
        -2 someone else wrote, -3 room missing); raises StorageUnavailable if it was
        not applied (and now never will be), OutcomeUnknown if Redis did not answer
        within the retry window.
        """
        keys = [self.k_room(room_id)]
        args = [str(expected), str(expected + 1), wid, str(fence)]
        try:
            result = int(await self.retrying(lambda: self._resolve(keys=keys, args=args), "settle"))
        except StorageUnavailable as exc:
            raise OutcomeUnknown(f"room {room_id}: write {wid} unsettled: {exc}") from exc
        log.warning("room %s: write %s settled: %s", room_id, wid, {1: "applied", 0: "not applied"}.get(result, result))
        if result == 0:
            raise StorageUnavailable(f"room {room_id}: Redis did not take the write")
        return result

    # -- reads ----------------------------------------------------------------------

    async def live_room_ids(self) -> list[str]:
        members = await self.redis.smembers(self.k_live)
        return sorted(_text(m) for m in members)

    async def finished_room_ids(self, limit: int = 100, start: int = 0) -> list[str]:
        """Most recently finished first: `limit` ids from position `start`."""
        ids = await self.redis.zrevrange(self.k_finished, start, start + limit - 1)
        return [_text(i) for i in ids]

    async def load_room(self, room_id: str) -> RoomRecord | None:
        """Read a room's hash, snapshot and log tail; None if the room does not exist."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(self.k_room(room_id))
        pipe.hgetall(self.k_snap(room_id))
        raw, snap = await pipe.execute()
        if not raw:
            return None
        fields = {k.decode(): v for k, v in raw.items()}
        snapshot_n = int(snap[b"n"]) if snap else 0
        tail = await self.redis.lrange(self.k_log(room_id), snapshot_n, -1)
        deadline_raw = fields.get("deadline", b"")
        outcome_raw = fields.get("outcome", b"")
        return RoomRecord(
            room_id=room_id,
            meta=unpack(fields["meta"]),
            version=int(fields["version"]),
            fence=int(fields["fence"]),
            status=fields["status"].decode(),
            seats=unpack(fields["seats"]),
            deadline=float(deadline_raw) if deadline_raw else None,
            outcome=unpack(outcome_raw) if outcome_raw else None,
            actions=int(fields.get("actions", b"0")),
            snapshot_n=snapshot_n,
            snapshot_state=unpack(snap[b"state"]) if snap else None,
            log_tail=[unpack(entry) for entry in tail],
            answered=unpack(fields["answered"]) if fields.get("answered") else [],
            hidden=int(fields.get("hidden") or 0),
            start_key=_text(fields.get("start_key", b"")),
        )

    async def read_log(self, room_id: str) -> list[dict[str, Any]]:
        """Every action entry of a room, in order (for replays)."""
        return [unpack(e) for e in await self.redis.lrange(self.k_log(room_id), 0, -1)]

    async def room_summaries_raw(self, room_ids: Sequence[str]) -> list[tuple[str, dict[str, bytes]]]:
        """Hash fields of several rooms in one round trip (listing finished rooms)."""
        pipe = self.redis.pipeline(transaction=False)
        for room_id in room_ids:
            pipe.hgetall(self.k_room(room_id))
        rows = await pipe.execute()
        return [
            (room_id, {k.decode(): v for k, v in row.items()})
            for room_id, row in zip(room_ids, rows, strict=True)
            if row
        ]

    # -- layout migration -----------------------------------------------------------

    async def migrate_layout(self) -> int:
        """Move keys of the first layout (`P room:<id>`, no hash tag) to `P room:{<id>}`.

        Runs once per prefix (marked by `P layout` = 2), before rooms are restored;
        returns how many keys moved. Safe when several nodes start at once: a key
        already moved by another is skipped.
        """
        if await self.redis.get(self.k_layout) == b"2":
            return 0
        moved = 0
        base = self.prefix + "room:"
        async for raw in self.redis.scan_iter(match=base.replace("*", r"\*") + "*", count=500):
            key = _text(raw)
            rest = key[len(base):]
            if rest.startswith("{"):
                continue
            room_id, _, suffix = rest.partition(":")
            new = f"{base}{{{room_id}}}" + (f":{suffix}" if suffix else "")
            dumped = await self.redis.dump(key)
            if dumped is None:
                continue
            try:
                await self.redis.restore(new, 0, dumped)
            except ResponseError as exc:
                if "BUSYKEY" not in str(exc):
                    raise
            await self.redis.delete(key)
            moved += 1
        await self.redis.set(self.k_layout, "2")
        if moved:
            log.warning("moved %d key(s) to the hash-tagged key layout", moved)
        return moved

    async def delete_all(self) -> int:
        """Delete every key under this store's prefix (tests and tools; never FLUSHDB)."""
        deleted = 0
        async for key in self.redis.scan_iter(match=self.prefix.replace("*", r"\*") + "*", count=500):
            deleted += int(await self.redis.delete(key))
        return deleted


class LifecycleStore:
    """Redis commands of server/lifecycle.py (kept apart from the write path above).

        P room:{<id>}:life   hash  lifecycle timestamps of a live room (touched, gone, seat:N)
        P rooms:due          zset  live room ids scored by when the lifecycle looks next
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.redis = store.redis

    def k_life(self, room_id: str) -> str:
        return f"{self.store.prefix}room:{{{room_id}}}:life"

    @property
    def k_due(self) -> str:
        return f"{self.store.prefix}rooms:due"

    def room_keys(self, room_id: str) -> list[str]:
        """Every key of one room (they share its hash tag)."""
        s = self.store
        return [s.k_room(room_id), s.k_log(room_id), s.k_snap(room_id), self.k_life(room_id)]

    async def read(self, room_id: str) -> dict[str, float]:
        raw = await self.redis.hgetall(self.k_life(room_id))
        return {_text(k): float(v) for k, v in raw.items()}

    async def write(self, entries: Sequence[tuple[str, dict[str, float], float | None]]) -> None:
        """Replace each room's timestamps and its due time (None: nothing due)."""
        pipe = self.redis.pipeline(transaction=False)
        for room_id, life, due in entries:
            pipe.delete(self.k_life(room_id))
            if life:
                pipe.hset(self.k_life(room_id), mapping={k: repr(v) for k, v in life.items()})
            if due is None:
                pipe.zrem(self.k_due, room_id)
            else:
                pipe.zadd(self.k_due, {room_id: due})
        await pipe.execute()

    async def due(self, now: float, limit: int = 500) -> list[str]:
        ids = await self.redis.zrangebyscore(self.k_due, "-inf", now, start=0, num=limit)
        return [_text(i) for i in ids]

    async def status(self, room_id: str) -> str | None:
        raw = await self.redis.hget(self.store.k_room(room_id), "status")
        return None if raw is None else _text(raw)

    async def forget(self, room_id: str) -> None:
        await self.redis.zrem(self.k_due, room_id)

    async def retain(self, room_id: str, seconds: float) -> None:
        """A finished room: every key of it expires after the retention period."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.delete(self.k_life(room_id))
        pipe.zrem(self.k_due, room_id)
        for key in self.room_keys(room_id):
            pipe.expire(key, max(1, int(seconds)))
        await pipe.execute()

    async def purge_finished(self, before: float, limit: int = 500) -> list[str]:
        """Rooms finished before `before` leave the finished index and are deleted
        (their keys normally expired already; older rooms had no TTL)."""
        ids = [_text(i) for i in await self.redis.zrangebyscore(self.store.k_finished, "-inf", before, start=0, num=limit)]
        if ids:
            pipe = self.redis.pipeline(transaction=False)
            for room_id in ids:
                pipe.zrem(self.store.k_finished, room_id)
                pipe.delete(*self.room_keys(room_id))
            await pipe.execute()
        return ids
