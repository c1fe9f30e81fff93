"""Commits acknowledged only once replicas have them (`--replica-acks N`).

Redis replicates asynchronously: a master that acknowledged a write and died before
any replica received it loses that write when a replica is promoted. With
`--replica-acks N` (N > 0) each batch of commits leaving a master's channel
(`server.commit_pipe`) is followed, on the same connection and in the same write, by
`WAIT N timeout`: Redis answers it once N replicas have acknowledged every write the
connection made so far (the batch's scripts included), or when the timeout passes with
the number that did. A commit of a batch whose WAIT answered fewer than N is applied at
the master but not known to be on any replica: its caller gets `NotReplicated` (the
store turns it into an outcome-unknown failure; the room reloads before its next write).

    sender = ReplicatedSender(client, timeout=5.0, on_batch=None, replicas=1, wait_ms=1000)
    result = await sender.call_replicated("EVALSHA", sha, 3, *keys, *args)  # NotReplicated?
    await sender.call("ZADD", ...)   # a plain command, no WAIT of its own

With N = 0 (the default) the store uses a plain `GroupSender`: nothing of this module
runs on the write path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

from server.commit_pipe import CommitPipe, GroupSender, resolve


class NotReplicated(Exception):
    """The command ran at the master (its reply: `result`) but only `acks` of the
    `wanted` replicas confirmed it within the WAIT timeout."""

    def __init__(self, result: Any, acks: int, wanted: int) -> None:
        super().__init__(f"{acks} of {wanted} replica(s) acknowledged the write")
        self.result = result
        self.acks = acks
        self.wanted = wanted


class ReplicatedSender(GroupSender):
    """A `GroupSender` whose batches holding a `call_replicated` command end with WAIT."""

    def __init__(self, client: aioredis.Redis, timeout: float | None,
                 on_batch: Callable[[int, float], None] | None, replicas: int, wait_ms: int) -> None:
        super().__init__(client, timeout, on_batch)
        self.own_send = True  # each batch through `_send`, which adds the WAIT
        self.replicas = replicas
        self.wait_ms = wait_ms
        self.short_batches = 0  # batches whose WAIT answered fewer than `replicas`
        self._replicated: set[asyncio.Future[Any]] = set()  # this turn's call_replicated replies

    async def call_replicated(self, *command: Any) -> Any:
        """`call`, answered only once `replicas` replicas have the batch; raises
        NotReplicated (carrying the reply) if fewer confirmed it within the timeout.
        An error reply is raised as it is (the command changed nothing)."""
        fut = self.add(command)
        self._replicated.add(fut)
        return await fut

    def _send(self, pipe: CommitPipe) -> None:
        if not self._replicated:
            super()._send(pipe)
            return
        commands, batch = self._take()
        waiting, self._replicated = self._replicated, set()
        started = asyncio.get_running_loop().time()
        wanted = self.replicas

        def done(results: Any) -> None:
            if isinstance(results, BaseException):
                for fut in batch:
                    resolve(fut, results)
                return
            acks = results.pop()
            if not isinstance(acks, int):  # WAIT refused (e.g. sent to a replica)
                acks = 0
            if acks < wanted:
                self.short_batches += 1
            if self.on_batch is not None:
                self.on_batch(len(batch), asyncio.get_running_loop().time() - started)
            for fut, result in zip(batch, results, strict=True):
                if acks < wanted and fut in waiting and not isinstance(result, BaseException):
                    resolve(fut, NotReplicated(result, acks, wanted))
                else:
                    resolve(fut, result)

        pipe.send([*commands, ("WAIT", wanted, self.wait_ms)], done)

    def _fail_pending(self, exc: Exception) -> None:
        self._replicated = set()
        super()._fail_pending(exc)
