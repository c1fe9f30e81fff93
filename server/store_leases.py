"""Nodes and room leases in Redis: heartbeats, take a room over (fence bump), renew,
release (server.node drives them; `Store` inherits `LeaseStore`).

    P node:<id>               str   a node's info (msgpack), with a TTL: its heartbeat
    P nodes                   hash  node id -> its last info (every node ever listed)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode
from redis.exceptions import AskError, NoScriptError, ResponseError, TryAgainError

from server.commit_pipe import CommitPipe
from server.shard_senders import ShardSenders
from server.store_base import StoreKeys, as_text, is_transient, pack, unpack

HOLDERS_SLICE = 256  # lease keys read per round trip by `lease_holders`
# Leases one call of _RENEW_MANY renews (on one Redis): its answer is a bit per room, and a
# script's number reaches the client exactly only below 2^53.
RENEW_PER_SCRIPT = 32

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

# _RENEW for many rooms in one call (one Redis, not a cluster: the rooms' keys lie in
# many slots). KEYS = lease, room hash of each room; ARGV[1], ARGV[2] as above, then each
# room's fence. Answers the sum of 2^(i-1) over the rooms i that are lost (0: all renewed).
_RENEW_MANY = """
local lost, bit = 0, 1
for i = 1, #KEYS, 2 do
  local cur = redis.call('GET', KEYS[i])
  if (cur and cur ~= ARGV[1]) or redis.call('HGET', KEYS[i + 1], 'fence') ~= ARGV[(i + 1) / 2 + 2] then
    lost = lost + bit
  elseif cur then redis.call('PEXPIRE', KEYS[i], ARGV[2])
  else redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end
  bit = bit * 2
end
return lost
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class LeaseStore(StoreKeys):
    """Nodes and leases; the attributes are `Store`'s own."""

    redis: aioredis.Redis
    cluster: bool
    timeout: float
    _lease_pipe: CommitPipe | None
    _lease_pipes: dict[str, CommitPipe]  # on a cluster: one per master
    _shards: ShardSenders | None
    _acquire: Any
    _renew: Any
    _renew_many: Any
    _release: Any

    def _register_lease_scripts(self) -> None:
        """Register the lease scripts on `redis` (Store.__init__ calls it once)."""
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._renew = self.redis.register_script(_RENEW)
        self._renew_many = self.redis.register_script(_RENEW_MANY)
        self._release = self.redis.register_script(_RELEASE)

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
        (`server.commit_pipe`, not the commits'); `server.node` renews every room it
        owns each `lease_ttl / 3`, a slice of rooms per call. On one Redis, one script
        call per RENEW_PER_SCRIPT rooms; on a cluster, where each room's keys lie in
        their own slot, one call per room, grouped per master, all masters at once
        (`_renew_per_master`).
        """
        if not rooms:
            return []
        ttl = str(lease_ms)
        if self._shards is not None:
            sha, script = self._renew.sha, _RENEW
            commands = [("EVALSHA", sha, 2, self.k_lease(r), self.k_room(r), node_id, ttl, str(f)) for r, f in rooms]
        else:
            sha, script = self._renew_many.sha, _RENEW_MANY
            commands = []
            for start in range(0, len(rooms), RENEW_PER_SCRIPT):
                part = rooms[start : start + RENEW_PER_SCRIPT]
                keys = [key for r, _ in part for key in (self.k_lease(r), self.k_room(r))]
                commands.append(("EVALSHA", sha, len(keys), *keys, node_id, ttl, *(str(f) for _, f in part)))
        for attempt in range(2):
            if self._shards is not None:
                results = await self._renew_per_master(self._shards, commands)
            else:
                lease_pipe = self._lease_pipe
                if lease_pipe is None or lease_pipe.closed:
                    lease_pipe = self._lease_pipe = await CommitPipe.open(self.redis, self.timeout)
                results = await lease_pipe.roundtrip(commands)
            if attempt or not any(isinstance(r, NoScriptError) for r in results):
                break
            # A Redis without the script (restarted; on a cluster, a promoted replica:
            # scripts are not replicated): load it on every master, then once more.
            await self.redis.script_load(script)
        for result in results:
            if isinstance(result, Exception):
                raise result
        if self._shards is not None:
            return [int(r) == 1 for r in results]
        renewed: list[bool] = []
        for start, lost in zip(range(0, len(rooms), RENEW_PER_SCRIPT), results, strict=True):
            lost = int(lost)
            renewed += [not lost >> i & 1 for i in range(min(RENEW_PER_SCRIPT, len(rooms) - start))]
        return renewed

    async def _renew_per_master(self, shards: ShardSenders, commands: list[tuple[Any, ...]]) -> list[Any]:
        """The renewals grouped by the master owning each room's slot, one batch per
        master over that master's own lease connection, all masters at once; their
        replies in the order of `commands`. One answered MOVED, ASK or TRYAGAIN (the
        slot moved or is moving: the script did not run) is sent again through
        redis-py's cluster client, which follows the redirection; a master that broke
        fails the batch (the next tick tries again, after the slot map is read again)."""
        await shards.start()
        groups: dict[str, tuple[ClusterNode, list[int]]] = {}
        for i, command in enumerate(commands):
            node = shards.master(command[3])  # the lease key
            groups.setdefault(node.name, (node, []))[1].append(i)
        results: list[Any] = [None] * len(commands)

        async def renew(node: ClusterNode, indexes: list[int]) -> None:
            pipe = self._lease_pipes.get(node.name)
            if pipe is None or pipe.closed:
                pipe = self._lease_pipes[node.name] = await CommitPipe.open(shards.client(node), self.timeout)
            for i, reply in zip(indexes, await pipe.roundtrip([commands[i] for i in indexes]), strict=True):
                results[i] = reply

        try:
            await asyncio.gather(*(renew(node, indexes) for node, indexes in groups.values()))
        except Exception as exc:
            if is_transient(exc):
                await shards.refresh()
            raise
        for i, reply in enumerate(results):
            if isinstance(reply, AskError | TryAgainError):
                keys, args = list(commands[i][3:5]), list(commands[i][5:])
                try:
                    results[i] = await self._renew(keys=keys, args=args)
                except ResponseError as exc:
                    results[i] = exc
        return results

    async def release_lease(self, room_id: str, node_id: str) -> bool:
        """Give the lease up if this node holds it (graceful hand-over)."""
        return bool(await self._release(keys=[self.k_lease(room_id)], args=[node_id]))

    async def lease_holder(self, room_id: str) -> str | None:
        holder = await self.redis.get(self.k_lease(room_id))
        return None if holder is None else as_text(holder)

    async def lease_holders(self, room_ids: Sequence[str]) -> list[str | None]:
        """Each room's lease holder (None: nobody), HOLDERS_SLICE rooms per round trip:
        the orphan sweep asks about every live room, and one pipeline of 5,000 GETs held
        the event loop ~60 ms to build."""
        holders: list[str | None] = []
        for start in range(0, len(room_ids), HOLDERS_SLICE):
            keys = [self.k_lease(r) for r in room_ids[start : start + HOLDERS_SLICE]]
            if self.cluster:  # the keys lie in many slots: one GET each, grouped per node
                pipe = self.redis.pipeline(transaction=False)
                for key in keys:
                    pipe.get(key)
                values = await pipe.execute()
            else:
                values = await self.redis.mget(keys)
            holders.extend(None if h is None else as_text(h) for h in values)
        return holders

    async def heartbeat(self, node_id: str, info: dict[str, Any], ttl_ms: int) -> None:
        """Say this node is alive (key with a TTL) and list it in `P nodes`."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(self.k_node(node_id), pack(info), px=ttl_ms)
        pipe.hset(self.k_nodes, node_id, pack(info))
        await pipe.execute()

    async def nodes(self) -> dict[str, dict[str, Any] | None]:
        """Every node ever listed: its last info if its heartbeat is alive, else None."""
        listed = [as_text(n) for n in await self.redis.hkeys(self.k_nodes)]
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
