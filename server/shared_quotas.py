"""Per-address quotas across every node on one Redis: open connections and live rooms.

`--max-connections-per-address` and `--max-rooms-per-address` are limits per client
address, not per node: behind a load balancer a client spreading its connections (and
its room creations) over three nodes must not get three times the quota. Each node still counts its own connections (`AddressQuotas`, no Redis:
the cheap first refusal); on top of that the count of each address is kept in Redis,
one hash per address with a field per node incarnation:

    P quota:conn:<address>   hash  "<node id>/<start time>" -> that node's connections
                                   from the address (expires a day after its last change)

Live rooms are kept the same way (`P quota:rooms:<address>`), each node's field being
its own count of the address's live rooms: a create is admitted when the other live
nodes' counts plus this node's (the new room included) stay within the quota, and each
node stores its changed counts (rooms that finished or left it) at its tick, so a
room's end frees its place on the other nodes within a third of the lease TTL.

A connection is admitted when the live nodes' fields plus one stay within the quota
(one script: the sum, the check and the increment are atomic, so two nodes admitting
at once cannot both take the last place). Only the fields of nodes whose heartbeat was
alive at the admitting node's last tick count, so a dead node's connections stop
counting once its heartbeat expires (about the lease TTL; a node that started since
that tick is not counted until the next one, a third of the TTL later). The field names
a node *incarnation* (id and start time): a node restarted under the same `--node-id`
does not inherit the counts of its previous life (the old field is dropped when seen);
fields of nodes that are gone for good stay, uncounted, until the key expires.

Redis trouble never locks clients out: an admission that Redis does not answer within
`timeout` falls back to the node's own count (logged once per outage, no traceback),
and such a connection is not counted in Redis. The key holds the address as the
quota sees it (an IPv4 address or an IPv6 /64, `server.limits.address_key`).

    shared = SharedQuotas(store.redis, prefix, node, limit=64)
    if await shared.admit(address):        # False: refuse (1008), as for the local quota
        ...                                # serve the connection, then
        await shared.release(address)      # only for an admitted-and-counted connection
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from server.node import Node

log = logging.getLogger(__name__)

# KEYS[1] = one address's hash of counts; ARGV[1] = this incarnation, ARGV[2] = the
# quota (0 = none: count only), ARGV[3] = the key's TTL in seconds, ARGV[4] = this
# node's new count ("+1": one more than stored; connections) or the count itself (live
# rooms, which each node recounts), ARGV[5..] = the other live incarnations.
# 1: this node's field is set to its new count; 0: the live total would pass the quota
# (nothing changed, but fields of earlier lives of live nodes are dropped).
_ADMIT = """
local live, ids = {}, {}
for i = 5, #ARGV do
  live[ARGV[i]] = true
  ids[string.match(ARGV[i], '^(.*)/[^/]*$')] = true
end
ids[string.match(ARGV[1], '^(.*)/[^/]*$')] = true
local others, mine = 0, 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if fields[i] == ARGV[1] then
    mine = tonumber(fields[i + 1])
  elseif live[fields[i]] then
    others = others + tonumber(fields[i + 1])
  elseif ids[string.match(fields[i], '^(.*)/[^/]*$')] then
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
if ARGV[4] == '+1' then
  mine = mine + 1
else
  mine = tonumber(ARGV[4])
end
local limit = tonumber(ARGV[2])
if limit > 0 and others + mine > limit then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], mine)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS[1] = the address's hash; ARGV[1] = this incarnation.
_RELEASE = """
local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return left
"""

KEY_TTL = 86_400  # a key nobody changed for a day belongs to nodes long gone


class SharedQuotas:
    """See the module docstring."""

    def __init__(self, redis: Any, prefix: str, node: Node, limit: int, rooms_limit: int = 0,
                 timeout: float = 1.0) -> None:
        self.redis = redis
        self.prefix = prefix
        self.node = node
        self.limit = limit
        self.rooms_limit = rooms_limit
        self.timeout = timeout
        self._admit = redis.register_script(_ADMIT)
        self._release = redis.register_script(_RELEASE)
        self._failing = False
        self._reported: dict[str, int] = {}  # address -> this node's live rooms of it, as last stored

    def key(self, address: str) -> str:
        return f"{self.prefix}quota:conn:{address}"

    def rooms_key(self, address: str) -> str:
        return f"{self.prefix}quota:rooms:{address}"

    async def _call(self, script: Any, key: str, args: list[Any]) -> Any:
        """One script call within `timeout`; None when Redis does not answer (logged
        once per outage), so a caller serves on its own node's count."""
        try:
            result = await asyncio.wait_for(script(keys=[key], args=args), self.timeout)
        except Exception as exc:  # Redis away or slow: never lock clients out for it
            if not self._failing:
                self._failing = True
                log.warning("per-address quotas across nodes unavailable (%s): using this node's counts", exc)
            return None
        if self._failing:
            self._failing = False
            log.warning("per-address quotas across nodes available again")
        return result

    async def admit_room(self, address: str, held: int) -> bool | None:
        """May `address` hold `held` live rooms on this node (the new one included)
        given its rooms on the other live nodes? True (stored as this node's count),
        False (refuse the create: `quota_exceeded`), None (Redis did not answer: go by
        this node's count alone)."""
        node = self.node
        args = [node.incarnation, self.rooms_limit, KEY_TTL, held, *node.live_peers]
        admitted = await self._call(self._admit, self.rooms_key(address), args)
        if admitted is None:
            return None
        if admitted:
            self._reported[address] = held
        return bool(admitted)

    async def sync_rooms(self, counts: dict[str, int]) -> None:
        """Store this node's live-room count of each address whose count changed since
        it was last stored (rooms finished, left the node): `counts` holds every
        address with rooms here now. The node's tick calls it; a failure is retried at
        the next tick."""
        changed = {a: n for a, n in counts.items() if self._reported.get(a) != n}
        changed.update({a: 0 for a in self._reported if a not in counts})
        if not changed:
            return
        me = self.node.incarnation
        try:
            pipe = self.redis.pipeline(transaction=False)
            for address, held in changed.items():
                if held:
                    pipe.hset(self.rooms_key(address), me, held)
                else:
                    pipe.hdel(self.rooms_key(address), me)
            await asyncio.wait_for(pipe.execute(), self.timeout)
        except Exception as exc:
            log.warning("per-address room counts not stored (retried at the next tick): %s", exc)
            return
        for address, held in changed.items():
            if held:
                self._reported[address] = held
            else:
                self._reported.pop(address, None)

    async def admit(self, address: str) -> bool | None:
        """Count one more connection of `address` across the nodes: True (counted: call
        `release` when it ends), False (the address is at its quota: refuse the
        connection), None (Redis did not answer: serve it on the local count alone and
        do not call `release`)."""
        node = self.node
        args = [node.incarnation, self.limit, KEY_TTL, "+1", *node.live_peers]
        admitted = await self._call(self._admit, self.key(address), args)
        return None if admitted is None else bool(admitted)

    async def release(self, address: str) -> None:
        """Uncount a connection `admit` counted. Tried three times over about 3 s; a
        count still left behind (Redis away that long) stays until this node stops
        (its incarnation's fields are dropped once its heartbeat is gone) or the key
        expires, a day after the address's last connection."""
        for delay in (0.0, 0.5, 2.0):
            await asyncio.sleep(delay)
            try:
                await asyncio.wait_for(
                    self._release(keys=[self.key(address)], args=[self.node.incarnation]), self.timeout
                )
                return
            except Exception as exc:
                failure = exc
        log.warning("per-address quota: could not release a connection of %s: %s", address, failure)
