"""This process as a node: its id, its heartbeat, and the leases of the rooms it owns.

A room is owned by exactly one node: the one whose id is in the room's lease key
(`P room:{<id>}:lease`, with a TTL). The owner renews all its leases every
`lease_ttl / 3`, RENEW_SLICE at a time (each slice built and sent in its own turn of
the event loop, all of them in flight at once, so neither this event loop nor Redis is
held for a whole pass over thousands of rooms, and a pass still takes about one round
trip); each renewal also checks the room's fence, so a node that was paused past its
TTL and lost a room learns it at its next renewal (or at its next write, which the
commit script refuses) and calls `on_lost`. The heartbeat and the renewals run in a
loop of their own on a fixed schedule, so nothing else the node does (below) holds
them up. Every period the node also looks
for orphans — live rooms whose lease expired because their owner died — and hands them
to `on_orphans`, which takes them over (fence bump) and restores them. A dead node is
noticed by its heartbeat key expiring (same TTL as its leases), or by its leaving the
node list between two looks (the survivor that saw it expire first forgot it); either
triggers sweeps for the next few periods and `on_dead`, and a backstop sweep runs every
SWEEP_EVERY periods.

    node = Node(store, node_id, lease_ttl=2.0)
    node.on_lost, node.on_orphans = lobby.lost, lobby.take_over_many
    await node.start()
    fence = await node.acquire(room_id)   # None: another node owns it
    node.own(room_id, fence)              # renewed from now on
    ...
    await node.stop()                     # stops renewing (leases then expire or are released)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from server.cancellation import cancel_and_wait, checkpoint
from server.metrics import Histogram
from server.store import Store

log = logging.getLogger("giants.node")

# The stored form this node writes, in its heartbeat's info: 2 = a plain move may be its
# log entry only (server.store). Nodes before it list no `writes` (1); while one of them
# is live, this node's store writes the room's hash with every move (`_note_live`).
WRITES = 2
SWEEP_EVERY = 15  # periods between backstop sweeps for orphaned rooms (5 lease TTLs)
# Leases per command batch (one loop turn each). A pass over 1,000 rooms in one batch held the loop
# ~7 ms to build it and Redis ~5 ms to run it (5 µs a script), every period: a stall
# every move in flight waited out. A slice of 64 costs ~0.4 ms of each.
RENEW_SLICE = 64
# Seconds into a renewal pass during which each slice waits for a turn of the loop of its
# own. Past it the loop is congested (a burst of connections: a turn took tens or hundreds
# of ms) and the remaining slices go at once: ~2 ms of the loop per 1,000 rooms, where
# one turn each would delay the last lease by a turn per slice.
SLICE_TURNS_FOR = 0.02
# Buckets of the renewal gap, as shares of the lease TTL (a gap reaching 1 can cost rooms).
GAP_SHARES = (0.35, 0.375, 0.4, 0.45, 0.5, 0.6, 0.75, 0.9, 1.0)


def new_node_id() -> str:
    """A fresh id: host name, process id and randomness (ids are never reused by accident)."""
    return f"{socket.gethostname()[:24]}-{os.getpid()}-{os.urandom(3).hex()}"


def incarnation(node_id: str, started: float) -> str:
    """A node's id and start time: one life of one node."""
    return f"{node_id}/{started:.6f}"


class Node:
    """See the module docstring."""

    def __init__(self, store: Store, node_id: str, lease_ttl: float = 2.0, address: str = "") -> None:
        self.store = store
        self.id = node_id
        self.lease_ttl = lease_ttl
        self.lease_ms = max(100, int(lease_ttl * 1000))
        self.address = address
        self.started = time.time()
        # This process's life as a node: what per-node counts in Redis are kept under
        # (server.shared_quotas), so a restart under the same --node-id starts afresh.
        self.incarnation = incarnation(node_id, self.started)
        self.live_peers: list[str] = []  # the other live nodes' incarnations, as of the last tick
        self.rooms: dict[str, int] = {}  # owned room id -> the fence this node holds
        self.on_lost: Callable[[str], Awaitable[None]] | None = None
        # Called when a live node of an earlier version appears (`_note_live`): the
        # lobby writes the hash of every room whose last moves are log entries only.
        self.on_earlier: Callable[[], None] | None = None
        self.on_orphans: Callable[[list[str]], Awaitable[None]] | None = None
        self.on_dead: Callable[[list[str]], Awaitable[None]] | None = None  # nodes that vanished
        self.on_tick: Callable[[], Awaitable[None]] | None = None  # after each heartbeat and renewal
        self.last_beat = 0.0
        self.renewals = 0
        self.lost = 0
        self.sweeps = 0
        self.last_tick = 0.0  # seconds the last period's node list, dead nodes and sweep took
        self.last_renewal = 0.0  # seconds from when the last renewal pass was due to its end
        # The renewal gap: from the first send of one complete renewal pass to the last
        # answer of the next, the longest any owned lease may have gone unrenewed.
        self.renewal_gaps = Histogram(tuple(round(lease_ttl * share, 4) for share in GAP_SHARES))
        self.renewal_gap_max = 0.0
        self._renewed_since = 0.0  # loop time the last complete renewal pass started sending
        self._ticks = 0
        self._alive: set[str] = set()  # the other nodes alive at the last look at the node list
        self._sweep_left = 1  # sweep once at start (rooms released while nobody ran)
        self._lookups: dict[str, list[asyncio.Future[str | None]]] = {}  # owner(): room -> callers waiting
        self._looking_up: asyncio.Future[None] | None = None  # the batch those callers wait for
        self._batches: set[asyncio.Future[None]] = set()  # lookups under way (referenced until done)
        self._renewing: asyncio.Task[None] | None = None  # _keep_leases
        self._task: asyncio.Task[None] | None = None  # _run
        self._stopping = False  # stop_renewing: the loops end after the current pass

    @property
    def period(self) -> float:
        return self.lease_ttl / 3

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id, "address": self.address, "rooms": len(self.rooms), "started": self.started,
            "writes": WRITES,
        }

    # -- leases -----------------------------------------------------------------------

    async def acquire(self, room_id: str) -> int | None:
        """Take the room's lease and bump its fence; None if another node holds it."""
        return await self.store.acquire_lease(room_id, self.id, self.lease_ms)

    def own(self, room_id: str, fence: int) -> None:
        """Renew this room's lease from now on."""
        self.rooms[room_id] = fence

    def disown(self, room_id: str) -> None:
        self.rooms.pop(room_id, None)

    async def release(self, room_id: str) -> None:
        """Stop owning the room and delete its lease so another node can take it now."""
        self.rooms.pop(room_id, None)
        try:
            await self.store.release_lease(room_id, self.id)
        except Exception:  # it then expires on its own
            log.warning("room %s: could not release its lease", room_id)

    async def owner(self, room_id: str) -> str | None:
        """The node holding the room's lease (None: nobody).

        The lookups asked for in one turn of the event loop go to Redis together, as one
        MGET (`store.lease_holders`): in a burst of connections naming their room,
        `--workers` asks this for each, and one GET each once had hundreds in flight at
        once, each on a Redis connection of its own, until Redis refused new
        connections (the heartbeat's among them: bench/storm.py)."""
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._lookups.setdefault(room_id, []).append(future)
        if self._looking_up is None:
            self._looking_up = task = asyncio.ensure_future(self._look_up())
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)
        return await future

    async def _look_up(self) -> None:
        """Answer every lookup asked for until this task's first turn, in one batch."""
        await asyncio.sleep(0)  # the lookups of this turn join the batch
        asked, self._lookups, self._looking_up = self._lookups, {}, None
        ids = list(asked)
        try:
            holders = await self.store.lease_holders(ids)
        except BaseException as exc:
            for futures in asked.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(exc if isinstance(exc, Exception) else ConnectionError("cancelled"))
            if not isinstance(exc, Exception):
                raise
            return
        for room_id, holder in zip(ids, holders, strict=True):
            for future in asked[room_id]:
                if not future.done():
                    future.set_result(holder)

    async def peers(self) -> list[str]:
        """Ids of the other nodes whose heartbeat is alive."""
        nodes = await self.store.nodes()
        return [n for n, info in nodes.items() if info is not None and n != self.id]

    # -- the loop ---------------------------------------------------------------------

    async def start(self) -> None:
        """Send the first heartbeat and start renewing (Redis must answer)."""
        await self.store.heartbeat(self.id, self.info(), self.lease_ms)
        self.last_beat = time.time()
        self._note_live(await self.store.nodes())
        loop = asyncio.get_running_loop()
        self._renewing = loop.create_task(self._keep_leases())
        self._task = loop.create_task(self._run())

    async def stop_renewing(self) -> None:
        """Stop both loops (shutdown: the rooms are being handed over).

        The flag ends the loops even when the cancellation is lost inside a pass: seen
        with redis-py 8.1, a cancel landing in `store.nodes()` was swallowed, the loop
        went on renewing (and could take rooms over) and the shutdown waited its whole
        timeout (~10 s) for it. A cancellation of the caller is not swallowed here."""
        self._stopping = True
        tasks = [t for t in (self._renewing, self._task) if t is not None]
        self._renewing = self._task = None
        if tasks:
            await cancel_and_wait(tasks)

    async def stop(self) -> None:
        await self.stop_renewing()
        with contextlib.suppress(Exception):
            await self.store.forget_node(self.id)

    async def _keep_leases(self) -> None:
        """Every period, on a fixed schedule: the heartbeat and a renewal of every lease.

        A loop of its own: nothing else the node does each period (the node list, a
        dead node's members dropped, take-overs, the orphan sweep: `_run`) can hold up
        a renewal. A pass that ends late starts the schedule again from its end."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        while not self._stopping:
            checkpoint()  # a cancel lost in the last pass's Redis calls (server.cancellation)
            due += self.period
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
            else:
                due = loop.time()
            if self._stopping:
                return
            # Redis away: the fence still protects every room.
            await self._attempt(self.renewal_pass, "heartbeat or lease renewal failed")
            took = self.last_renewal = loop.time() - due
            if took > self.period:
                log.warning(
                    "node %s: a renewal pass over %d rooms ended %.2f s after it was due, more than the period "
                    "(%.2f s, --lease-ttl / 3): raise --lease-ttl or add nodes", self.id, len(self.rooms), took,
                    self.period,
                )

    async def _attempt(self, step: Callable[[], Awaitable[None]], failure: str) -> None:
        """Run one periodic step; a failure is logged (its loop goes on), a cancel is not caught."""
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("node %s: %s: %s", self.id, failure, exc)

    async def renewal_pass(self) -> None:
        """The heartbeat and a renewal of every owned lease, sent together."""
        beat, renewed = await asyncio.gather(self._beat(), self.renew(), return_exceptions=True)
        for outcome in (renewed, beat):
            if isinstance(outcome, BaseException):
                raise outcome

    async def _beat(self) -> None:
        await self.store.heartbeat(self.id, self.info(), self.lease_ms)
        self.last_beat = time.time()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        took = 0.0
        while not self._stopping:
            checkpoint()  # a cancel lost in the last tick's Redis calls (server.cancellation)
            # A period from the start of the last tick (if it takes longer, back to back).
            await asyncio.sleep(max(0.0, self.period - took))
            if self._stopping:
                return
            began = loop.time()
            await self._attempt(self.tick, "node list or orphan sweep failed")  # Redis away: again next period
            took = self.last_tick = loop.time() - began

    async def tick(self) -> None:
        """One period besides the renewal: the node list, dead nodes, orphans taken over."""
        # Orphans appear when a node dies (its heartbeat expires with its leases) or a
        # hand-over message is lost. Sweeping every live room each period would cost
        # O(rooms) reads per node per period, so sweep fully only for a few periods
        # after a node vanished (its leases expire about when its heartbeat does), and
        # every SWEEP_EVERY periods as a backstop.
        self._ticks += 1
        nodes = await self.store.nodes()
        expired = [n for n, info in nodes.items() if info is None]
        # A node alive at the last look and off the list now: another survivor saw its
        # heartbeat expire first and forgot it (or it stopped): it is gone for us too.
        dead = expired + [n for n in self._alive if n not in nodes]
        self._note_live(nodes)
        if dead:
            self._sweep_left = 4
            for node_id in expired:
                await self.store.forget_node(node_id)
            if self.on_dead is not None:
                await self.on_dead(dead)
        if self.on_tick is not None:
            await self.on_tick()
        if self._stopping:
            return  # shutting down: take nothing over (the rooms are being handed on)
        if self._sweep_left > 0 or self._ticks % SWEEP_EVERY == 0:
            self._sweep_left = max(0, self._sweep_left - 1)
            self.sweeps += 1
            orphans = await self.orphans()
            if orphans and self.on_orphans is not None:
                await self.on_orphans(orphans)

    async def renew(self) -> None:
        """Renew every owned lease, RENEW_SLICE rooms per command batch; a room whose
        lease or fence moved on is dropped and handed to `on_lost`.

        Each slice is built and sent in its own turn of the event loop, but the slices
        do not wait for each other's replies: under load a pass takes about one round
        trip, not one per slice (a saturated node's round trips grow to tenths of a
        second, and a pass must end well within the lease TTL). Once the pass is
        SLICE_TURNS_FOR old (the loop's turns are long: a burst of connections), the
        remaining slices go in the same turn. Raises the first failure after every
        slice has settled."""
        owned = list(self.rooms.items())
        sent: list[tuple[list[tuple[str, int]], asyncio.Task[list[bool]]]] = []
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            for start in range(0, len(owned), RENEW_SLICE):
                if self._stopping:
                    break  # shutting down: the rooms are being handed over
                part = owned[start : start + RENEW_SLICE]
                sent.append((part, asyncio.ensure_future(self.store.renew_leases(self.id, part, self.lease_ms))))
                if loop.time() - began < SLICE_TURNS_FOR:
                    await asyncio.sleep(0)  # the task builds and sends this slice now; the next one next turn
            failure: BaseException | None = None
            for part, task in sent:
                try:
                    renewed = await task
                except Exception as exc:
                    failure = failure or exc
                    continue
                self.renewals += len(part)
                for (room_id, fence), ok in zip(part, renewed, strict=True):
                    if not ok and self.rooms.get(room_id) == fence:
                        log.warning("node %s lost room %s (lease or fence moved on)", self.id, room_id)
                        self.rooms.pop(room_id, None)
                        if self.on_lost is not None:
                            await self.on_lost(room_id)
            if failure is not None:
                raise failure
            if not self._stopping:
                self._note_renewed(began, loop.time())
        finally:
            for _, task in sent:
                task.cancel()  # only those still running: the caller was cancelled

    def _note_renewed(self, began: float, ended: float) -> None:
        """A pass that started sending at `began` renewed every lease by `ended`."""
        if self._renewed_since:
            gap = ended - self._renewed_since
            self.renewal_gaps.observe(gap)
            self.renewal_gap_max = max(self.renewal_gap_max, gap)
        self._renewed_since = began

    def _note_live(self, nodes: dict[str, dict[str, Any] | None]) -> None:
        self._alive = {n for n, info in nodes.items() if info is not None and n != self.id}
        older = sorted(n for n, info in nodes.items() if info is not None and info.get("writes", 1) < WRITES)
        if bool(older) == self.store.plain_moves:
            self.store.plain_moves = not older
            if older:
                log.warning(
                    "node %s: node(s) %s run an earlier version, which cannot read a room whose last "
                    "moves are log entries only: every move writes the room's hash too until they leave",
                    self.id, ", ".join(older),
                )
                if self.on_earlier is not None:
                    self.on_earlier()  # and the rooms already so are written now
            else:
                log.info("node %s: every live node reads log-only moves; plain moves write their log entry only",
                         self.id)
        self.live_peers = [
            incarnation(n, info.get("started", 0.0)) for n, info in nodes.items() if info is not None and n != self.id
        ]

    async def orphans(self) -> list[str]:
        """Live rooms nobody holds a lease on (their owner died or handed them over)."""
        ids = [i for i in await self.store.live_room_ids() if i not in self.rooms]
        holders = await self.store.lease_holders(ids)
        return [i for i, holder in zip(ids, holders, strict=True) if holder is None]


class RelayStats(Protocol):
    frames_relayed: int
    requests_relayed: int


class NodeCollector(Collector):
    """/metrics series of the node and its relay (registered on the server's registry)."""

    def __init__(self, node: Node, relay: RelayStats) -> None:
        self.node = node
        self.relay = relay

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        node = self.node
        yield InfoMetricFamily("giants_node", "This node's id in Redis.", value={"id": node.id})
        yield GaugeMetricFamily("giants_leases_owned", "Rooms whose lease this node holds.", value=len(node.rooms))
        yield GaugeMetricFamily(
            "giants_node_heartbeat_age_seconds", "Seconds since this node's last heartbeat reached Redis.",
            value=max(0.0, time.time() - node.last_beat) if node.last_beat else 0.0,
        )
        yield CounterMetricFamily("giants_lease_renewals", "Lease renewals sent.", value=node.renewals)
        yield GaugeMetricFamily(
            "giants_node_tick_seconds",
            "Seconds the last period's node list, dead nodes' members dropped, take-overs and orphan sweep took "
            "(beside the lease renewal, which they do not hold up).",
            value=node.last_tick,
        )
        yield GaugeMetricFamily(
            "giants_lease_renewal_pass_seconds",
            "Seconds from when the last heartbeat and lease renewal pass was due to its end (keep it well under "
            "--lease-ttl / 3).",
            value=node.last_renewal,
        )
        yield node.renewal_gaps.family(
            "giants_lease_renewal_gap_seconds",
            "From the start of one complete lease renewal pass to the end of the next: the longest an owned lease "
            "went unrenewed (about --lease-ttl / 3 when on schedule; a room can be taken over once it reaches "
            "--lease-ttl).",
        )
        yield GaugeMetricFamily(
            "giants_lease_renewal_gap_max_seconds", "The longest renewal gap since this node started.",
            value=node.renewal_gap_max,
        )
        yield CounterMetricFamily(
            "giants_rooms_lost", "Rooms this node owned and found owned by another node (its lease or fence moved on).",
            value=node.lost,
        )
        yield CounterMetricFamily(
            "giants_replica_ack_shortfalls",
            "Commit batches fewer replicas confirmed than --replica-acks asks (their moves were not acknowledged).",
            value=node.store.replica_shortfalls,
        )
        yield CounterMetricFamily(
            "giants_relay_frames", "Frames sent to members connected to other nodes.", value=self.relay.frames_relayed
        )
        yield CounterMetricFamily(
            "giants_relay_requests", "Requests relayed to rooms owned by other nodes.", value=self.relay.requests_relayed
        )
