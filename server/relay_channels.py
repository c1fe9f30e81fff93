"""Where the relay's messages go: classic pub/sub on one Redis, sharded pub/sub on a cluster.

`server.relay` talks through one of these two, chosen once at start (`open_channels`):

- `PlainChannels` (a single Redis server, embedded or `--redis-url`): every node's inbox
  is `P relay:<node id>`, messages leave with PUBLISH over one `GroupSender` and arrive
  through one `Subscription` (SUBSCRIBE to the inbox and `P relay:all`). `call` is
  `GroupSender.call` with "PUBLISH" bound; `post` is `GroupSender.post` plus a check of
  the receiver count: a frame post nobody received is sent again (`Resending`).
- `ShardedChannels` (a Redis Cluster): every node's inbox is the shard channel
  `P relay:{<node id>}` — the node id is its hash tag, so inboxes spread over the
  masters like rooms do. A node SSUBSCRIBEs to its inbox at the master owning that
  slot, and a sender SPUBLISHes to that master over one `GroupSender` per master: each
  message crosses one master (and its replicas), not the whole cluster bus. SPUBLISH
  answers the number of subscribers on the master it ran on, the same master the owner
  subscribed at, so the count keeps PUBLISH's meaning (0: the owner is not subscribed).
  The broadcast `P relay:all` (ownership changes: rare) stays classic: one PUBLISH at
  any master reaches every node, subscribed with SUBSCRIBE on the same connection as
  its inbox, so a node holds one subscribed connection either way; a sharded broadcast
  would need a second connection per node to the shard owning `relay:all`, which every
  node's subscription would then go through.

  The slot map is redis-py's (`RedisCluster.nodes_manager`, via `server.shard_senders`).
  It is read again when a SPUBLISH is answered MOVED (a call is then sent again to the
  new owner; posted frames too, in the order they were posted: `_redirect`) or its
  master's connection fails, and before every re-subscription: when the inbox's slot
  moves, Redis drops the subscription (`sunsubscribe`), `Subscription.lost` fires and
  the relay subscribes again, at the new owner. A frame post nobody received (SPUBLISH
  answered 0: the inbox's node is subscribing again; or its master broke) is sent
  again with the ones after it, in order, until the node is back (`Resending`).

  redis-py has sharded pub/sub of its own (`RedisCluster.pubsub().ssubscribe`, which
  also follows slot migrations), but it reads every message through its generic reply
  parser into a dict, polled per node by `get_sharded_message`, and its SPUBLISH is one
  pooled command each: the per-message costs `server.subscription` and
  `server.commit_pipe` exist to avoid (bench/relay_transport.py). Only its slot map is
  used here.

    channels = open_channels(url, prefix, timeout, cluster)
    await channels.start()
    sub = await channels.subscribe(channels.inbox(node_id), on_message)
    channels.post(channels.inbox(other), payload)          # frames: no reply awaited
    receivers = await channels.call(channels.inbox(other), payload)
    channels.close(); await channels.aclose()
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import MovedError

from server.cancellation import cancel_and_wait
from server.commit_pipe import GroupSender
from server.shard_senders import ShardSenders
from server.subscription import Subscription

log = logging.getLogger("giants.relay")

OnMessage = Callable[[bytes], None]


def open_channels(url: str, prefix: str, timeout: float, cluster: bool) -> PlainChannels | ShardedChannels:
    """The transport for the Redis at `url` (`cluster`: it runs in cluster mode)."""
    return ShardedChannels(url, prefix, timeout) if cluster else PlainChannels(url, prefix, timeout)


class Resending:
    """Frame posts nobody received, sent again (both transports).

    Pub/sub keeps nothing for a subscriber that is away: a post whose PUBLISH/SPUBLISH
    answered 0 receivers (the inbox's node is subscribing again) or whose connection
    broke is lost. Such posts are kept per channel, in order, and the channel's later
    posts are held back behind them (`post` checks `_holding`); `_resend` sends them
    all again every RESEND_AFTER seconds until none is lost, or drops them after
    RESEND_FOR seconds (the node is gone)."""

    RESEND_AFTER = 0.1
    RESEND_FOR = 10.0

    broadcast: str

    def __init__(self) -> None:
        self._lost: dict[str, list[bytes]] = {}
        self._holding: dict[str, list[bytes]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def _route(self, channel: str) -> tuple[str, GroupSender]:
        raise NotImplementedError

    def post(self, channel: str, data: bytes) -> None:
        raise NotImplementedError

    def _send(self, command: str, sender: GroupSender, channel: str, data: bytes) -> None:
        sender.post(command, channel, data).add_done_callback(functools.partial(self._posted, sender, channel, data))

    def _posted(self, sender: GroupSender, channel: str, data: bytes, fut: asyncio.Future[Any]) -> None:
        if fut.cancelled() or channel == self.broadcast:
            return
        exc = fut.exception()
        if (exc is None and fut.result() == 0) or isinstance(exc, RedisConnectionError):
            self._lose(sender, channel, data)

    @property
    def _resending(self) -> int:
        return sum(map(len, self._lost.values())) + sum(map(len, self._holding.values()))

    def _lose(self, sender: GroupSender, channel: str, data: bytes) -> None:
        self._lost.setdefault(channel, []).append(data)
        if channel not in self._holding:
            self._holding[channel] = []
            self._spawn(self._resend(channel, sender))

    async def _resend(self, channel: str, sender: GroupSender) -> None:
        """Wait until every post to `channel` sent before is answered (a DBSIZE behind
        them: replies come in order), then send the lost ones and the held ones again,
        in order; again while some are lost, up to RESEND_FOR seconds. Frames to a node
        thus arrive whole and in order."""
        end = time.monotonic() + self.RESEND_FOR
        try:
            while True:
                with contextlib.suppress(Exception):
                    await sender.call("DBSIZE")
                lost = self._lost.pop(channel, None)
                if not lost:
                    break
                if time.monotonic() > end:
                    log.warning("relay: %d message(s) to %s dropped: nobody subscribed for %.0f s",
                                len(lost) + len(self._holding.get(channel, ())), channel, self.RESEND_FOR)
                    self._holding[channel] = []
                    break
                await asyncio.sleep(self.RESEND_AFTER)
                lost += self._holding.get(channel, [])
                self._holding[channel] = []
                command, sender = self._route(channel)
                for data in lost:
                    self._send(command, sender, channel, data)
        except asyncio.CancelledError:  # closing
            self._lost.pop(channel, None)
            self._holding.pop(channel, None)
            raise
        self._lost.pop(channel, None)
        for data in self._holding.pop(channel, []):
            self.post(channel, data)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class PlainChannels(Resending):
    """Classic pub/sub on one Redis server."""

    def __init__(self, url: str, prefix: str, timeout: float) -> None:
        super().__init__()
        self.redis = aioredis.Redis.from_url(url)
        self.prefix = prefix
        self.broadcast = f"{prefix}relay:all"
        # A relayed request's PUBLISH waits for its receiver count: many are in flight
        # under load, so they share one connection (batched) instead of one each.
        self._sender = GroupSender(self.redis, timeout)
        self.call: Callable[[str, bytes], Awaitable[Any]] = functools.partial(self._sender.call, "PUBLISH")

    def post(self, channel: str, data: bytes) -> None:
        """Send without waiting (frames); one nobody received is sent again (`Resending`)."""
        holding = self._holding.get(channel)
        if holding is not None:
            holding.append(data)
            return
        self._send("PUBLISH", self._sender, channel, data)

    def _route(self, channel: str) -> tuple[str, GroupSender]:
        return "PUBLISH", self._sender

    def inbox(self, node_id: str) -> str:
        return f"{self.prefix}relay:{node_id}"

    @property
    def in_flight(self) -> int:
        return self._sender.in_flight + self._resending

    async def start(self) -> None:
        return None

    async def subscribe(self, inbox: str, on_message: OnMessage, timeout: float = 5.0,
                        fresh: bool = False) -> Subscription:
        """SUBSCRIBE to `inbox` and the broadcast; returns once Redis confirmed both."""
        return await Subscription.open(self.redis, [inbox, self.broadcast], on_message, timeout)

    def close(self) -> None:
        self._sender.close()

    async def aclose(self) -> None:
        await cancel_and_wait(list(self._tasks))
        await self.redis.aclose()


class ShardedChannels(Resending):
    """Sharded pub/sub on a Redis Cluster (see the module docstring)."""

    REFRESH_EVERY = 0.5  # at most one slot-map read per this many seconds after failed posts

    def __init__(self, url: str, prefix: str, timeout: float) -> None:
        super().__init__()
        self.cluster = RedisCluster.from_url(url)
        self.shards = ShardSenders(self.cluster, timeout)
        self.prefix = prefix
        self.broadcast = f"{prefix}relay:all"
        self._routes: dict[str, tuple[str, GroupSender]] = {}  # channel -> (command, sender)
        self._refreshed = 0.0
        # Posts answered MOVED, to send again in order at the new owner, and posts held
        # back (after them) meanwhile; see `_redirect`.
        self._moved: list[tuple[str, bytes]] = []
        self._held: list[tuple[str, bytes]] | None = None
        self._stale: set[GroupSender] = set()
        self._redirecting = False

    def inbox(self, node_id: str) -> str:
        return f"{self.prefix}relay:{{{node_id}}}"

    @property
    def in_flight(self) -> int:
        return self.shards.in_flight + len(self._moved) + len(self._held or ()) + self._resending

    async def start(self) -> None:
        """Read the cluster's slot map (raises if no node of it answers)."""
        await self.shards.start()

    # -- sending ----------------------------------------------------------------------

    def post(self, channel: str, data: bytes) -> None:
        """Send without waiting (frames). One answered MOVED is sent again at the slot's
        new owner, in order (`_redirect`); one nobody received is sent again, in order,
        until its node has subscribed again (`_resend`); a broken master re-reads the
        slot map."""
        holding = self._holding.get(channel)
        if holding is not None:
            holding.append(data)
            return
        if self._held is not None:
            self._held.append((channel, data))
            return
        command, sender = self._routes.get(channel) or self._route(channel)
        self._send(command, sender, channel, data)

    def _posted(self, sender: GroupSender, channel: str, data: bytes, fut: asyncio.Future[Any]) -> None:
        if fut.cancelled():
            return
        exc = fut.exception()
        if exc is None:
            if fut.result() == 0 and channel != self.broadcast:
                self._lose(sender, channel, data)  # nobody received it: sent again
            return
        if isinstance(exc, RedisConnectionError) and channel != self.broadcast:
            self._lose(sender, channel, data)
        if isinstance(exc, MovedError):
            self._moved.append((channel, data))
            self._stale.add(sender)
            if not self._redirecting:
                self._redirecting = True
                self._spawn(self._redirect())
        elif isinstance(exc, RedisConnectionError) and time.monotonic() - self._refreshed > self.REFRESH_EVERY:
            self._refreshed = time.monotonic()
            self._spawn(self._refresh())

    async def _redirect(self) -> None:
        """A slot moved: read the slot map, hold new posts back, wait until every post
        sent to the masters that answered MOVED is answered (a DBSIZE behind them: replies
        come in order), then send the moved posts and the held ones, in order, at the new
        routes. Frames to a node thus arrive in the order they were posted."""
        try:
            if time.monotonic() - self._refreshed < 0.1:  # the map just read was stale too
                await asyncio.sleep(0.1)
            await self._refresh()
            self._held = []
            while self._stale:
                stale, self._stale = self._stale, set()
                for sender in stale:
                    with contextlib.suppress(Exception):
                        await sender.call("DBSIZE")
        except asyncio.CancelledError:  # closing
            self._moved, self._held, self._redirecting = [], None, False
            raise
        self._routes.clear()
        moved, held = self._moved, self._held or []
        self._moved, self._held, self._redirecting = [], None, False
        for channel, data in moved + held:
            self.post(channel, data)

    async def call(self, channel: str, data: bytes) -> Any:
        """Send and return the receiver count on the slot's master (a MOVED is followed)."""
        for _ in range(3):
            command, sender = self._routes.get(channel) or self._route(channel)
            try:
                return await sender.call(command, channel, data)
            except MovedError:
                await self._refresh()
            except RedisConnectionError:
                await self._refresh()
                raise
        raise RedisConnectionError(f"the slot of {channel!r} kept moving")

    def _route(self, channel: str) -> tuple[str, GroupSender]:
        # The broadcast is classic: PUBLISH at any master reaches the whole cluster.
        route = self._routes[channel] = (
            "PUBLISH" if channel == self.broadcast else "SPUBLISH", self.shards.for_key(channel))
        return route

    async def _refresh(self) -> None:
        """Read the slot map again; every route is looked up afresh after it (a failure
        is logged: the next failed send or lost subscription reads it again)."""
        try:
            await self.shards.refresh()
        except Exception as exc:
            log.warning("relay: reading the cluster's slot map failed: %s", exc)
        finally:
            self._routes.clear()
            self._refreshed = time.monotonic()

    # -- receiving --------------------------------------------------------------------

    async def subscribe(self, inbox: str, on_message: OnMessage, timeout: float = 5.0,
                        fresh: bool = False) -> Subscription:
        """SSUBSCRIBE to `inbox` at the master owning its slot (the slot map read again
        first if `fresh`: after a lost subscription) and SUBSCRIBE to the broadcast on
        the same connection; returns once Redis confirmed both."""
        if fresh:
            await self._refresh()
        client = self.shards.client(self.shards.master(inbox))
        return await Subscription.open(client, [self.broadcast], on_message, timeout, sharded=[inbox])

    def close(self) -> None:
        self.shards.close()

    async def aclose(self) -> None:
        await cancel_and_wait(list(self._tasks))
        await self.shards.aclose()
        await self.cluster.aclose()


Channels = PlainChannels | ShardedChannels
