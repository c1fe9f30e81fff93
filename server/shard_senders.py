"""One `GroupSender` per master of a Redis Cluster, chosen by a key's slot.

A command that touches one slot (a room's commit script, a SPUBLISH to a shard channel)
goes to the master owning that slot, over that master's own channel
(`server.commit_pipe`): the commands for one master issued during one turn of the event
loop leave in one write, as on a single Redis server. The slot map is redis-py's
(`RedisCluster.nodes_manager`), which its own commands keep current when Redis answers
MOVED; `refresh` reads it again for a caller whose raw command was answered MOVED (or
whose master broke). Each master is reached the way the cluster client reaches it
(AUTH, TLS: the node's connection settings).

    senders = ShardSenders(cluster_client, timeout=5.0, on_batch=None)
    await senders.start()                               # the slot map
    result = await senders.for_key(key).call("EVALSHA", sha, 1, key)
    senders.close(); await senders.aclose()
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster

from server.commit_pipe import GroupSender
from server.replica_acks import ReplicatedSender


class ShardSenders:
    """See the module docstring."""

    def __init__(self, cluster: RedisCluster, timeout: float | None,
                 on_batch: Callable[[int, float], None] | None = None,
                 replicas: int = 0, wait_ms: int = 0) -> None:
        """`replicas` > 0: each master's sender is a `ReplicatedSender` (server.replica_acks)."""
        self.cluster = cluster
        self.timeout = timeout
        self.on_batch = on_batch
        self.replicas = replicas
        self.wait_ms = wait_ms
        self.senders: dict[str, GroupSender] = {}  # master "host:port" -> its sender
        self._clients: dict[str, aioredis.Redis] = {}
        self._refreshing: asyncio.Future[None] | None = None
        self.refreshes = 0

    @property
    def in_flight(self) -> int:
        return sum(sender.in_flight for sender in self.senders.values())

    async def start(self) -> None:
        """Read the cluster's slot map if not read yet (raises if no node answers)."""
        await self.cluster.initialize()

    def master(self, key: str) -> ClusterNode:
        """The master owning `key`'s slot (redis-py's SlotNotCoveredError if none)."""
        node = self.cluster.get_node_from_key(key)
        assert node is not None  # only asked for a replica may it be None
        return node

    def for_key(self, key: str) -> GroupSender:
        """The sender to the master owning `key`'s slot."""
        return self.for_node(self.master(key))

    def for_node(self, node: ClusterNode) -> GroupSender:
        sender = self.senders.get(node.name)
        if sender is None:
            if self.replicas:
                sender = ReplicatedSender(self.client(node), self.timeout, self.on_batch, self.replicas, self.wait_ms)
            else:
                sender = GroupSender(self.client(node), self.timeout, self.on_batch)
            self.senders[node.name] = sender
        return sender

    def client(self, node: ClusterNode) -> aioredis.Redis:
        """A plain client for one master, connecting as the cluster client does (AUTH, TLS)."""
        client = self._clients.get(node.name)
        if client is None:
            pool = aioredis.ConnectionPool(connection_class=node.connection_class, **node.connection_kwargs)
            client = self._clients[node.name] = aioredis.Redis(connection_pool=pool)
        return client

    async def refresh(self) -> None:
        """Read the slot map again (one read at a time: concurrent callers share it)."""
        if self._refreshing is None:
            self._refreshing = asyncio.ensure_future(self._refresh())
        await asyncio.shield(self._refreshing)

    async def _refresh(self) -> None:
        try:
            await self.cluster.nodes_manager.initialize()
            self.refreshes += 1
        finally:
            self._refreshing = None

    def close(self) -> None:
        """Fail what is in flight on every master's channel (later calls reopen them)."""
        for sender in self.senders.values():
            sender.close()

    async def aclose(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
        for client in self._clients.values():
            await client.aclose()
