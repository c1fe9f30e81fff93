"""The store's commit channels: which connection a write leaves on, and how.

`Store` (server.store) inherits `CommitChannels`. A commit runs the commit script over
the store's own connection, grouped with the other commits of its turn of the loop
(`server.commit_pipe.GroupSender`); on a Redis Cluster over one such channel per master
(`server.shard_senders`), and with `--replica-acks` each batch ends with WAIT
(`server.replica_acks`). `send_all` runs plain commands the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import AskError, MovedError, NoScriptError, SlotNotCoveredError, TryAgainError

from server.commit_pipe import GroupSender
from server.replica_acks import NotReplicated, ReplicatedSender
from server.shard_senders import ShardSenders
from server.store_scripts import COMMIT


class CommitChannels:
    """Mixin for Store: the commits' channels and the calls that use them."""

    redis: aioredis.Redis
    cluster: bool
    _commit: Any  # the commit script (redis-py's AsyncScript)
    _commits: GroupSender
    _shards: ShardSenders | None
    replica_acks: int
    _direct: bool  # commits on `_commits`, no WAIT: one Redis, no replica acks

    def _open_channels(self, timeout: float, replica_acks: int, wait_ms: int) -> None:
        """Make the channels (`Store.__init__`); they connect on their first write."""
        # The commits' own channel: one write per turn of the loop. On a cluster, one
        # such channel per master, each commit on the one owning its room's slot.
        self.replica_acks = replica_acks
        if replica_acks:
            self._commits = ReplicatedSender(self.redis, timeout, None, replica_acks, wait_ms)
        else:
            self._commits = GroupSender(self.redis, timeout)
        self._shards = (
            ShardSenders(self.redis, timeout, None, replica_acks, wait_ms)  # type: ignore[arg-type]
            if self.cluster else None
        )
        self._direct = not self.cluster and not replica_acks  # commits on `_commits`, no WAIT

    async def send_all(self, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Run plain commands (str, bytes or int arguments, the key first after the
        command's name) in order with the commits of this turn of the loop, over the
        store's own connection instead of a redis-py pipeline (a finished room's
        expiry and index moves). Their replies; like a pipeline, every
        command is sent and the first failure is raised after all are answered. On a
        cluster redis-py's pipeline runs them (it follows MOVED and ASK)."""
        if self._shards is not None:
            pipe = self.redis.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())
        replies = await asyncio.gather(*(self._commits.call(*command) for command in commands), return_exceptions=True)
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        return replies

    @property
    def replica_shortfalls(self) -> int:
        """Commit batches whose WAIT answered fewer replicas than `replica_acks` (/metrics)."""
        senders = [self._commits, *(self._shards.senders.values() if self._shards is not None else ())]
        return sum(s.short_batches for s in senders if isinstance(s, ReplicatedSender))

    @property
    def on_batch(self) -> Callable[[int, float], None] | None:
        """The metrics hook: told of each commit batch answered (its size, its seconds)."""
        return self._commits.on_batch

    @on_batch.setter
    def on_batch(self, hook: Callable[[int, float], None] | None) -> None:
        # Handed to the senders themselves: no call in between per batch.
        self._commits.on_batch = hook
        if self._shards is not None:
            self._shards.on_batch = hook
            for sender in self._shards.senders.values():
                sender.on_batch = hook

    def _submit(self, keys: list[str], args: list[Any]) -> Awaitable[Any]:
        """Run the commit script, grouped with the other commits of this moment: the
        awaitable of its reply. On one Redis without replica acks that is the reply's
        future itself (no coroutine per commit): a NoScriptError from it is the
        caller's to handle (`commit` loads the script and runs it again). (A plain
        move there does not come here: `commit` writes its command in one piece.)

        Group commit: the commits made during one turn of the event loop leave in one
        write at its end (`server.commit_pipe`), without waiting for earlier batches'
        replies, so a commit never waits for another's round trip and many rooms share
        a write under load. On a cluster the same, per master: a commit goes to the
        master owning its room's slot (`server.shard_senders`). Each room's own commits
        are already serialised by its lock, so grouping never reorders them.
        """
        if self._direct:  # one Redis, no replica acks
            return self._commits.add(("EVALSHA", self._commit.sha, len(keys), *keys, *args))
        if self.replica_acks:
            return self._submit_replicated(keys, args)
        return self._submit_sharded(keys, args)

    async def _submit_sharded(self, keys: list[str], args: list[Any]) -> Any:
        """`_submit` on a Redis Cluster: to the master owning the room's slot."""
        sender = await self._sender(keys[0])
        try:
            return await sender.call("EVALSHA", self._commit.sha, len(keys), *keys, *args)
        except NoScriptError:
            # Redis lost its script cache (restarted): load it and retry this one.
            return await self._commit(keys=keys, args=args)
        except (AskError, TryAgainError):
            # Not run (MOVED, ASK: the room's slot moves; TRYAGAIN: it is migrating):
            # redis-py's cluster client follows the redirection and updates its slot map.
            return await self._commit(keys=keys, args=args)

    async def _sender(self, key: str) -> GroupSender:
        """The commits' channel to the master holding `key` (the only one on one Redis)."""
        if self._shards is None:
            return self._commits
        try:
            return self._shards.for_key(key)
        except SlotNotCoveredError:  # the slot map is not read yet
            await self._shards.start()
            return self._shards.for_key(key)

    async def _submit_replicated(self, keys: list[str], args: list[Any]) -> Any:
        """`_submit` with `--replica-acks`: the batch ends with WAIT (server.replica_acks);
        raises NotReplicated if too few replicas confirmed an applied commit."""
        command = ("EVALSHA", self._commit.sha, len(keys), *keys, *args)
        sender = await self._sender(keys[0])
        assert isinstance(sender, ReplicatedSender)
        try:
            return await sender.call_replicated(*command)
        except NoScriptError:  # Redis lost its script cache (restarted): load it, once
            await self.redis.script_load(COMMIT)
        except MovedError:  # the slot has another master now (failover, resharding)
            if self._shards is not None:
                await self._shards.refresh()
        except (AskError, TryAgainError):
            # The slot is migrating: redis-py follows the redirection, with no WAIT on
            # its connection, so an applied write is not known to be replicated.
            result = await self._commit(keys=keys, args=args)
            if int(result) == 1:
                raise NotReplicated(result, 0, self.replica_acks) from None
            return result
        sender = await self._sender(keys[0])
        assert isinstance(sender, ReplicatedSender)
        return await sender.call_replicated(*command)
