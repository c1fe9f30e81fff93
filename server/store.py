"""All Redis access: version-guarded writes (the commit script), creation, retries.

The key layout is in `server.store_base`, nodes and leases in `server.store_leases`,
reads in `server.store_reads`, the commit script's arguments and a plain move's command
in `server.store_commands`, the channels commits leave on in `server.store_channels`;
`Store` joins them, and the names callers use are imported
from here.

Every change to a room is one Lua script call (one round trip) that checks the stored
version equals the writer's and the stored fence token equals the writer's, then
appends the log entry, writes the hash fields that changed (the caller passes the room
as it was stored, `before`) and the periodic snapshot atomically. A plain move (one
more action, nothing else changed, no snapshot) writes its log entry only: the hash's
`version` and `actions` stay those of the last other write, and the room's version is
the hash's plus the log entries after its `actions` (`load_room`). A writer
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
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    NoScriptError,
    ResponseError,
)

from protocol.packer import new_packer
from server.cancellation import checkpoint
from server.commit_pipe import CommitPipe
from server.replica_acks import NotReplicated
from server.store_base import EMPTY_LIST as EMPTY_LIST
from server.store_base import OutcomeUnknown as OutcomeUnknown
from server.store_base import RoomRecord as RoomRecord
from server.store_base import StaleWriteError as StaleWriteError
from server.store_base import StorageUnavailable as StorageUnavailable
from server.store_base import StoredFields as StoredFields
from server.store_base import StoreError as StoreError
from server.store_base import as_text, pack
from server.store_base import backoff_delays as backoff_delays
from server.store_base import is_cluster as is_cluster
from server.store_base import is_transient as is_transient
from server.store_base import next_write_id as next_write_id
from server.store_base import unpack as unpack
from server.store_channels import CommitChannels
from server.store_commands import _BULK_INTS, _LENGTHS, BULK_INTS, MOVE_HEADS, CommitArgs, move_head
from server.store_commands import move_command as move_command
from server.store_leases import LeaseStore
from server.store_reads import LifecycleStore as LifecycleStore
from server.store_reads import RoomReads
from server.store_scripts import COMMIT, CREATE, RESOLVE

log = logging.getLogger("giants.store")

T = TypeVar("T")


class Store(CommitChannels, LeaseStore, RoomReads, CommitArgs):
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
        replica_acks: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        """`timeout`: seconds a command may take before its outcome is in doubt;
        `retry_window`: how long an unsettled write keeps being settled (and other
        idempotent calls retried) while Redis is away; `replica_acks`: replicas that
        must confirm a commit (WAIT, within `replica_timeout` seconds) before it counts
        as stored (server.replica_acks; 0 = the master's answer is enough)."""
        if "{" in prefix or "}" in prefix:
            # A brace in the prefix would become the hash tag of every key.
            raise ValueError(f"key prefix {prefix!r} must not contain braces")
        self.url = url
        self.prefix = prefix
        self.cluster = cluster
        self.timeout = timeout
        self.retry_window = retry_window
        # False while a node of an earlier version shares this Redis (`server.node` says
        # so from the node list): every write then stores the room's hash too, as those
        # nodes read a room (their restore refuses a log longer than the hash's `actions`).
        self.plain_moves = True
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
        self._commit = self.redis.register_script(COMMIT)
        self._create = self.redis.register_script(CREATE)
        self._resolve = self.redis.register_script(RESOLVE)
        self._register_lease_scripts()
        self._open_channels(timeout, replica_acks, max(1, round(replica_timeout * 1000)))
        # Plain moves' command heads by room id (`move_head`, at most MOVE_HEADS), for
        # the commit script's sha they were made with.
        self._move_heads: dict[str, bytes] = {}
        self._heads_sha = ""
        # The store's own msgpack packer (commits run on its loop's thread only):
        # `protocol.packer.packb` without its thread-local look-up, same bytes.
        self._packb = new_packer().pack
        self._lease_pipe: CommitPipe | None = None  # lease renewals' own connection
        self._lease_pipes: dict[str, CommitPipe] = {}  # on a cluster: one per master

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
        if self._shards is not None:
            self._shards.close()
            await self._shards.aclose()
        for lease_pipe in [self._lease_pipe, *self._lease_pipes.values()]:
            if lease_pipe is not None:
                lease_pipe.close()
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
        await self.send_all([("ZADD", self.k_finished, repr(finished_at), room_id), ("SREM", self.k_live, room_id)])

    async def acquire(self, room_id: str) -> int:
        """Take the room over: bump and return its fence; earlier holders can no longer write."""
        return int(await self.redis.hincrby(self.k_room(room_id), "fence", 1))

    async def commit(
        self,
        room_id: str,
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
        before: StoredFields | None = None,
        move_seconds: float = 0.0,
    ) -> bool:
        """Write one room change atomically, if the stored version is still `expected`.

        Returns once the change is known to be in Redis: True if it was stored as a
        plain move (its log entry only: the caller counts it in its `logged`, False
        sets that to 0). A reply lost, or later than the socket timeout, is settled
        before returning (`settle`): applied -> returns
        as if the reply had come; not applied -> StorageUnavailable (the caller keeps
        the room unchanged); unknown after the retry window -> OutcomeUnknown. Raises
        StaleWriteError when another writer got there first (the caller reloads).
        `seats` None keeps the stored seats (the change did not touch them).
        `before`: the room's fields as stored at version `expected` (the room itself:
        what its last commit or load left); a field equal to its value there is not
        sent again, and a plain move (one more action with its log entry, nothing else
        changed, no snapshot) appends its entry and writes no hash field (`load_room`
        counts the entries past the hash's `actions` into the version). None: every
        field is written, and the room's last write must have written the hash.
        `move_seconds`: the room's seconds per move (its meta's `deadline`; 0: none);
        in such a room a move is plain only if its deadline is its log entry's `ts`
        plus these seconds (what `load_room` derives for it).

        The arguments may be passed by position: the room's write path does
        (`RoomStorage._commit_fields`), since a call with its fifteen arguments by
        keyword costs ~1,350 instructions more a commit. A stand-in store (tests,
        benches) takes `(room_id, *args, **fields)`.
        """
        wid = next_write_id()
        command = b""
        # A plain move (the most common write: one more action and its log entry, every
        # field as stored, no snapshot; its deadline derived from the move, or unchanged)
        # on the commits' own channel: its command written in one piece (what
        # `commit_pipe.pack` makes of it), the room's part of it kept (`move_head`), no
        # field compared twice, no list of fields or keys made. Any other write, and a
        # move whose command cannot be written so (a long entry, a key not ASCII: its
        # entry packed again), takes the general path, `_write_args`, which makes the
        # same command of a plain move (tests/server/test_stored_moves.py).
        if (before is not None and log_entry is not None and snapshot is None and seats is None
                and actions == before.actions + 1 and status == before.status and outcome == before.outcome
                and answered == before.answered and start_key == before.start_key and hidden == before.hidden
                and (deadline == before.deadline if not move_seconds else
                     isinstance(ts := log_entry.get("ts"), float) and deadline == ts + move_seconds)
                and self.plain_moves and self._direct):
            entry = self._packb(log_entry)
            sha = self._commit.sha or ""
            heads = self._move_heads
            if sha != self._heads_sha:
                heads.clear()
                self._heads_sha = sha
            head = heads.get(room_id)
            if head is None:
                if len(heads) >= MOVE_HEADS:
                    heads.clear()
                head = heads[room_id] = move_head(sha, self.k_room(room_id), self.k_log(room_id))
            count = before.actions
            hashed = expected - before.logged
            if head and len(entry) < 1024:  # the write id is ours: short hex digits
                n = _LENGTHS
                # One copy of every piece, the head's included (no text built, then encoded)
                if 0 <= hashed < BULK_INTS and 0 <= count < BULK_INTS and 0 <= fence < BULK_INTS:
                    ints = _BULK_INTS  # the three guards of most rooms, no int formatted
                    command = b"".join((head, ints[hashed], ints[count], ints[fence], n[len(wid)], wid.encode(),
                                        b"\r\n", n[len(entry)], entry, b"\r\n"))
                else:
                    h, c, f = b"%d" % hashed, b"%d" % count, b"%d" % fence
                    command = b"".join((head, n[len(h)], h, b"\r\n", n[len(c)], c, b"\r\n", n[len(f)], f, b"\r\n",
                                        n[len(wid)], wid.encode(), b"\r\n", n[len(entry)], entry, b"\r\n"))
                args: list[Any] = [hashed, count, fence, wid, entry]
                keys: list[str] = []
                move = True
        if not command:
            args, keys, move, entry = self._write_args(
                room_id, expected, version, fence, status, seats, deadline, outcome, actions, log_entry, snapshot,
                answered, start_key, hidden, before, move_seconds, wid)
        try:
            try:
                if command:
                    result = await self._commits.add(command)  # an int: what the pipe parses
                else:
                    result = int(await self._submit(keys, args))
            except NoScriptError:
                # Redis lost its script cache (restarted): load it and run this write again.
                keys = keys or [self.k_room(room_id), self.k_log(room_id)]
                result = int(await self._commit(keys=keys, args=args))
        except NotReplicated as exc:
            if int(exc.result) == 1:
                raise OutcomeUnknown(f"room {room_id}: write {wid} is in at the master, but {exc}") from exc
            result = int(exc.result)  # refused: nothing to replicate
        except Exception as exc:
            if not is_transient(exc):
                raise
            log.warning("room %s: no answer to write %s (%r); settling it", room_id, wid, exc)
            result = await self.settle(room_id, [*args[:4], entry if move else b""])
            if result == 1 and self.replica_acks:
                # In at the master, but no WAIT followed it on its connection.
                raise OutcomeUnknown(f"room {room_id}: write {wid} settled as applied, not known to be replicated") from exc
        if result != 1:
            if result == -4:
                raise StorageUnavailable(f"room {room_id}: the write was settled as not applied")
            reason = {0: "version moved on", -1: "fence lost", -2: "version moved on", -3: "room missing"}
            raise StaleWriteError(f"room {room_id}: {reason.get(result, str(result))}")
        if status == "finished":
            try:
                await self.mark_finished(room_id, now or time.time())
            except Exception:
                # The change itself is stored; the next restore finishes the move.
                log.warning("room %s: finished, but the lobby index was not updated", room_id)
        return move

    async def settle(self, room_id: str, guards: list[Any]) -> int:
        """Find out whether a write is in Redis, retrying while Redis is away.
        `guards`: the commit's first five arguments (hash version, action count, fence,
        write id, and a move's packed log entry, which names a move: it stores no write
        id; empty for any other write).

        Returns 1 (applied) or a refusal code of the commit script (-1 fence lost,
        -2 someone else wrote, -3 room missing); raises StorageUnavailable if it was
        not applied (and now never will be), OutcomeUnknown if Redis did not answer
        within the retry window.
        """
        keys = [self.k_room(room_id), self.k_log(room_id)]
        wid = guards[3]
        try:
            result = int(await self.retrying(lambda: self._resolve(keys=keys, args=guards), "settle"))
        except StorageUnavailable as exc:
            raise OutcomeUnknown(f"room {room_id}: write {wid} unsettled: {exc}") from exc
        log.warning("room %s: write %s settled: %s", room_id, wid, {1: "applied", 0: "not applied"}.get(result, result))
        if result == 0:
            raise StorageUnavailable(f"room {room_id}: Redis did not take the write")
        return result

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
            key = as_text(raw)
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
