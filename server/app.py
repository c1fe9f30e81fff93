"""Wiring: store, lobby, WebSocket server; startup restore and graceful shutdown.

    server = GiantsServer(config)
    await server.start()        # Redis reachable, port bound, rooms restored
    ...                         # server.port is the bound port (config.port 0 = any)
    await server.stop()         # finish in-flight changes, send closing, close 1001
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
from collections.abc import Awaitable
from typing import Any

from prometheus_client import Counter as PromCounter
from websockets.asyncio.server import Server, ServerConnection, serve

from server.admission import BACKLOG, Admission
from server.cancellation import cancel_and_wait
from server.config import Config
from server.connection import Connection
from server.embedded_redis import EmbeddedRedis
from server.handover import Handover
from server.http import check_origin, make_process_request
from server.lifecycle import Lifecycle, LifecycleSettings
from server.limits import (
    AddressQuotas,
    GuessLimiter,
    address_key,
    client_address,
    parse_origins,
    redact_url,
)
from server.lobby import Lobby
from server.metrics import Live, Metrics
from server.moved import MoveAdvisor
from server.node import Node, NodeCollector, new_node_id
from server.relay import Relay
from server.relay_requests import LocalConnection
from server.router import Router
from server.seat_bots import BotLimits, SeatBots
from server.shared_quotas import SharedQuotas
from server.store import Store, is_cluster
from server.upkeep import check_persistence, supervise_redis, sweep_idle_views, sweep_new_rooms
from server.wire import encode

log = logging.getLogger("giants.server")
OPEN_TIMEOUT = 10.0  # websockets' handshake timeout (serve's default), also the hand-over's


def _ws_logger() -> logging.Logger:
    """websockets logs every connection and HTTP response (each /metrics scrape) at
    INFO: keep that at debug level only."""
    logger = logging.getLogger("giants.websockets")
    if not logger.isEnabledFor(logging.DEBUG):
        logger.setLevel(logging.WARNING)
    return logger


class GiantsServer:
    """One server process: call `start()`, then `stop()` (or `serve_until(event)`)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.metrics = Metrics()
        self.metrics.set_live(self._live_gauges)
        self.quotas = AddressQuotas(config.max_connections_per_address, config.max_rooms_per_address)
        # Wrong room passwords: per address here (the connection charges them), per
        # room in the lobby (server.passwords).
        self.guesses = GuessLimiter(config.password_guesses_per_address, config.password_guess_window)
        self.allowed_origins = parse_origins([config.allowed_origin])
        self.trusted_proxies = frozenset(parse_origins([config.trusted_proxies]))
        self.limit_closes = PromCounter(
            "giants_limit_closes",
            "Connections the server closed (1008) or refused for a limit, by reason.",
            ["reason"],
            registry=self.metrics.registry,
        )
        self.embedded: EmbeddedRedis | None = None
        self.store: Store = None  # type: ignore[assignment]  # set in start()
        self.lobby: Lobby = None  # type: ignore[assignment]
        self.lifecycle: Lifecycle | None = None
        self.router: Router = None  # type: ignore[assignment]
        self.node: Node | None = None
        self.shared_quotas: SharedQuotas | None = None  # the connection quota across nodes
        self.relay: Relay | None = None
        self.handover: Handover | None = None  # --workers: connections passed between siblings
        self.advisor: MoveAdvisor | None = None  # --workers: relayed members told where their room is
        self.ws_server: Server | None = None
        self.restore_task: asyncio.Task[None] | None = None
        # Set when the server cannot go on (its embedded Redis will not restart):
        # `giants serve` then stops and exits non-zero.
        self.failed = asyncio.Event()
        self.connections: set[Connection] = set()
        self.shutting_down = False
        self.port = config.port
        self._tasks: set[asyncio.Task[Any]] = set()
        self._handlers: set[asyncio.Task[Any]] = set()  # one per open connection
        # Connections with frames queued (Host.dirty): while it holds any, a flush is
        # promised: scheduled (`schedule_flush`), or a room's `flush_now` to come (a room
        # holds the flushes over a move's reply and patches: server.seats.Output).
        self.dirty: list[Connection] = []
        self.flush_promised = False
        self._flush_soon = self._flush  # the callback `schedule_flush` hands the loop, bound once

    async def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, /healthz body): Redis answers, rooms restored, not shutting down."""
        redis_ok = await self.store.ping() if self.store is not None else False
        loaded = self.lobby is not None and self.lobby.loaded
        healthy = redis_ok and loaded and not self.shutting_down
        return healthy, {
            "status": "ok" if healthy else "unavailable",
            "redis": redis_ok,
            "rooms_loaded": loaded,
            "rooms": len(self.lobby.rooms) if self.lobby is not None else 0,
            "rooms_pending": len(self.lobby.pending) if self.lobby is not None else 0,
            "rooms_quarantined": len(self.lobby.quarantined) if self.lobby is not None else 0,
            "connections": len(self.connections),
            "shutting_down": self.shutting_down,
            "node": self.node.id if self.node is not None else None,
            "leases": len(self.node.rooms) if self.node is not None else 0,
            "peers": len(self.node.live_peers) if self.node is not None else 0,
        }

    def render_metrics(self, accept: str) -> tuple[bytes, str]:
        return self.metrics.render(accept)

    def limit_closed(self, reason: str) -> None:
        """Count a connection closed or refused for a limit (flood, slow, origin...)."""
        self.limit_closes.labels(reason).inc()

    def counts_against_quota(self, room_id: str) -> bool:
        return self.lobby is not None and self.lobby.counts_against_quota(room_id)

    async def _store_room_counts(self) -> None:
        """At each node tick: this node's live-room count per address, for the quota
        across nodes (only the changed ones are written)."""
        shared, quotas = self.shared_quotas, self.quotas
        if shared is None or not quotas.max_rooms:
            return
        live = self.counts_against_quota
        counts = {a: n for a in list(quotas.rooms) if (n := quotas.rooms_of(a, live))}
        await shared.sync_rooms(counts)

    async def _owner_of(self, room_id: str) -> str | None:
        """The node holding the room's lease (the hand-over asks; None: nobody)."""
        if self.lobby.find(room_id) is not None:
            return self.node.id if self.node is not None else None
        remote = self.relay.remotes.get(room_id) if self.relay is not None else None
        if remote is not None and remote.owner is not None:
            return remote.owner
        return await self.node.owner(room_id) if self.node is not None else None

    def _live_gauges(self) -> Live:
        rooms = self.lobby.counts() if self.lobby is not None else {}
        return Live(connections=len(self.connections), rooms=rooms)

    @property
    def url(self) -> str:
        """The WebSocket address clients on this machine use."""
        host = self.config.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return f"ws://{host}:{self.port}"

    def schedule_flush(self, conn: Connection) -> None:
        """Write `conn`'s queued frames once the current callback is done."""
        self.dirty.append(conn)
        if not self.flush_promised:
            self.flush_promised = True
            # The connection's own loop (the running one): `asyncio.get_running_loop()`
            # asks the kernel for the pid on Python 3.11, once a move here.
            conn.ws.loop.call_soon(self._flush_soon)

    def flush_now(self) -> None:
        """Write the frames queued so far, without waiting for the end of this turn of
        the loop. A connection's handler calls it after each request: the members of the
        room it changed get their patches before the other requests (and commits
        answered) of the same turn are handled, instead of all frames of a busy turn
        leaving together at its end. The scheduled flush still runs, for what is queued
        after this."""
        dirty = self.dirty
        if not dirty:  # a room's move wrote its frames already (server.seats.Output)
            return
        self.dirty = []
        for conn in dirty:  # `_write(dirty)` without its call: after every request
            try:
                conn.flush()
            except Exception:  # a connection torn down meanwhile; its handler cleans up
                log.debug("flush failed", exc_info=True)

    def _flush(self) -> None:
        self.flush_promised = False
        if self.dirty:  # else `flush_now` wrote them all (a handler's frames: most turns)
            dirty, self.dirty = self.dirty, []
            self._write(dirty)

    @staticmethod
    def _write(dirty: list[Connection]) -> None:
        for conn in dirty:
            try:
                conn.flush()
            except Exception:  # a connection torn down meanwhile; its handler cleans up
                log.debug("flush failed", exc_info=True)

    def rooms_changed(self, conn: Connection) -> None:
        """`conn` joined, watched, resumed or left a room: with --workers, tell it if its
        rooms are all on one sibling worker (server.moved)."""
        if self.advisor is not None:
            self.advisor.consider(conn)

    def _reattached(self, conn: LocalConnection) -> None:
        """One of `conn`'s rooms moved to another node and it follows through the relay."""
        if self.advisor is not None and isinstance(conn, Connection):
            self.advisor.consider(conn)

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start(self, wait_restored: bool = True) -> None:
        """Connect to (or start) Redis, listen, and restore the rooms meanwhile.

        The live room ids are read before listening, so a request for a room not
        restored yet waits for it; `/healthz` says unavailable until every room is
        restored (or quarantined). With `wait_restored` (tests, tools) this returns
        only then; `giants serve` returns as soon as it listens. Raises if Redis is
        unreachable; nothing is listening in that case.
        """
        url = self.config.redis_url
        if not url:
            self.embedded = EmbeddedRedis(self.config.data_path, fsync=self.config.fsync)
            url = await asyncio.to_thread(self.embedded.start)
        try:
            cluster = await is_cluster(url)
        except Exception as exc:
            raise ConnectionError(f"Redis at {redact_url(url)} does not answer ({exc})") from None
        self.store = Store(
            url,
            self.config.key_prefix,
            cluster=cluster,
            timeout=self.config.redis_timeout,
            retry_window=self.config.redis_retry_window,
            replica_acks=self.config.replica_acks,
            replica_timeout=self.config.replica_ack_timeout,
        )
        self.store.on_batch = self.metrics.observe_batch
        if not await self.store.ping():
            raise ConnectionError(f"Redis at {redact_url(url)} does not answer")
        await self.store.migrate_layout()
        limits = BotLimits(
            move_seconds=self.config.bot_move_seconds,
            max_iterations=self.config.bot_max_iterations,
            max_rollout=self.config.bot_max_rollout,
            threads=self.config.bot_threads,
        )
        node_id = self.config.node_id or new_node_id()
        self.node = node = Node(self.store, node_id, self.config.lease_ttl)
        self.lobby = lobby = Lobby(
            self.store, self.metrics, self.config.snapshot_every, self.config.max_rooms,
            bots=SeatBots(limits, self.metrics), node=node, max_replacements=self.config.max_replacements,
        )
        lobby.output = self  # the rooms hold and release its flushes (server.seats.Output)
        self.relay = relay = Relay(url, self.config.key_prefix, node_id, lobby, self.config.relay_timeout, cluster)
        if self.config.max_connections_per_address or self.config.max_rooms_per_address:
            self.shared_quotas = SharedQuotas(self.store.redis, self.store.prefix, node,
                                              self.config.max_connections_per_address,
                                              self.config.max_rooms_per_address)
            node.on_tick = self._store_room_counts
        lobby.on_adopted = relay.announce
        lobby.on_moved = relay.room_lost
        node.on_lost = lobby.lost
        node.on_earlier = lobby.write_hashes
        node.on_orphans = lobby.take_over_many
        node.on_dead = relay.forget_nodes
        self.router = Router(lobby, relay)
        lobby.guesses = GuessLimiter(self.config.password_guesses_per_room, self.config.password_guess_window)
        self.lifecycle = lobby.lifecycle = Lifecycle(
            self.store, lobby.rooms,
            LifecycleSettings(
                waiting_ttl=self.config.waiting_ttl,
                seat_grace=self.config.seat_grace,
                abandon_after=self.config.abandon_after,
                retention=self.config.retention,
                interval=self.config.lifecycle_interval,
            ),
            self.metrics,
        )
        lobby.default_deadline = self.config.default_deadline or None
        self.metrics.registry.register(NodeCollector(node, relay))
        await relay.start()
        await node.start()
        await lobby.list_live()
        # The connection options, also given to connections a sibling worker hands over.
        options: dict[str, Any] = dict(ping_interval=20, ping_timeout=20, max_queue=64, logger=_ws_logger(),
                                       max_size=self.config.hard_max_frame)
        relay.admit = (admission := Admission(self.metrics.registry)).admit  # handshakes and relayed joins
        if self.config.handover_dir:
            self.handover = Handover(self.config.handover_dir, node_id, self._owner_of, self.metrics.registry)
            self.advisor = MoveAdvisor(self.handover.routes_to, relay.remotes, self.metrics.registry)
            relay.on_reattached = self._reattached
        self.ws_server = await serve(
            self._handler,
            self.config.host,
            self.config.port,
            process_request=check_origin(admission.gate(make_process_request(self)), self.allowed_origins,
                                         self.limit_closed),
            open_timeout=OPEN_TIMEOUT,
            backlog=BACKLOG,
            compression=None,  # patches are small; deflate would cost CPU and ~64 KiB per connection
            reuse_port=self.config.reuse_port or None,
            create_connection=self.handover.gate_factory() if self.handover is not None else None,
            **options,
        )
        if self.handover is not None:
            self.handover.start(self.ws_server, options, OPEN_TIMEOUT)
        sockets = list(self.ws_server.sockets)
        if sockets:
            self.port = sockets[0].getsockname()[1]
        node.address = self.url
        log.info("listening on %s:%s (redis %s, prefix %r)", self.config.host, self.port, redact_url(url), self.config.key_prefix)
        if self.config.pack_after > 0:
            self.spawn(sweep_idle_views(lobby, self.config.pack_after))
            self.spawn(sweep_new_rooms(lobby))
        if self.embedded is not None:
            self.spawn(supervise_redis(self.embedded, lambda: self.shutting_down, self.failed))
        else:
            await check_persistence(self.store)
        self.restore_task = asyncio.get_running_loop().create_task(self._restore())
        if wait_restored:
            await asyncio.shield(self.restore_task)

    async def _restore(self) -> None:
        await self.lobby.restore_pending()
        if self.lifecycle is not None:
            self.lifecycle.start()
        # Views, frames and states are acyclic and freed by reference counting; the
        # cyclic collector's full passes over a large heap of them only add latency
        # spikes. Move what exists now out of its reach and run it less often.
        gc.freeze()
        gc.set_threshold(50_000, 20, 100)

    async def _handler(self, ws: ServerConnection) -> None:
        peer = ws.remote_address[0] if ws.remote_address else ""
        forwarded = ws.request.headers.get("X-Forwarded-For") if ws.request is not None else None
        address = address_key(client_address(str(peer), forwarded, self.trusted_proxies))
        if not self.quotas.open_connection(address):
            self.limit_closed("connections")
            await ws.close(1008, "too many connections from your address")
            return
        shared = self.shared_quotas
        counted = await shared.admit(address) if shared is not None and shared.limit else None
        if counted is False:  # within this node's count, over the address's across the nodes
            self.quotas.close_connection(address)
            self.limit_closed("connections")
            await ws.close(1008, "too many connections from your address")
            return
        conn = Connection(ws, self, address)
        self.connections.add(conn)
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        self.metrics.connections_total += 1
        if self.relay is not None:
            self.relay.register(conn)
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)
            self._handlers.discard(handler)
            if self.relay is not None:
                self.relay.unregister(conn)
            self.quotas.close_connection(address)
            if counted and shared is not None:
                self.spawn(shared.release(address))

    async def stop(self) -> None:
        """Graceful shutdown: refuse new requests, let in-flight changes finish, tell
        every client `closing`, close with 1001, stop rooms and Redis."""
        if self.shutting_down:
            return
        self.shutting_down = True
        if self.lobby is not None:
            # Taking each room's lock waits for its in-flight change to be persisted and
            # sent; then its lease is released and another live node takes it over now.
            try:
                await asyncio.wait_for(self._hand_over(), self.config.shutdown_timeout)
            except TimeoutError:
                log.warning("shutdown: handing the rooms over took over %ss; going on", self.config.shutdown_timeout)
        frame = encode({"type": "closing", "reason": "server shutting down"})
        for conn in list(self.connections):
            conn.push(frame)
        if self.handover is not None:
            self.handover.stop()
        if self.ws_server is not None:
            self.ws_server.close(close_connections=True)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.ws_server.wait_closed(), self.config.shutdown_timeout)
        # A connection still detaching from its rooms (Redis away: its last write is
        # being settled) is stopped: nothing the server started outlives stop().
        await self._bounded("connections", cancel_and_wait(self._handlers))
        if self.lobby is not None:
            await self._bounded("rooms", self.lobby.stop_tasks())
        if self.restore_task is not None:
            self.restore_task.cancel()
        if self.lifecycle is not None:
            await self._bounded("lifecycle", self.lifecycle.stop())
        await self._bounded("tasks", cancel_and_wait(self._tasks))
        if self.relay is not None:
            await self._bounded("relay", self.relay.stop())
        if self.node is not None:
            await self._bounded("node", self.node.stop())
        if self.store is not None:
            await self._bounded("store", self.store.close())
        if self.embedded is not None:
            await self._bounded("embedded Redis", asyncio.to_thread(self.embedded.stop))
        log.info("server stopped")

    async def _bounded(self, what: str, step: Awaitable[None]) -> None:
        """One shutdown step, given at most the shutdown timeout: a stuck Redis
        connection or task must never keep the process from exiting."""
        try:
            await asyncio.wait_for(step, self.config.shutdown_timeout)
        except TimeoutError:
            log.warning("shutdown: stopping the %s took over %ss; going on", what, self.config.shutdown_timeout)
        except Exception as exc:
            log.warning("shutdown: stopping the %s failed (%r); going on", what, exc)

    async def _hand_over(self) -> None:
        """Give every room to the other live nodes, round robin (none: just release)."""
        if self.node is not None:
            await self.node.stop_renewing()
        peers: list[str] = []
        if self.node is not None:
            with contextlib.suppress(Exception):
                peers = await self.node.peers()
        relay = self.relay
        if not peers or relay is None:
            await self.lobby.hand_over_all(None)
            return
        turn = itertools.cycle(peers)

        async def to(room_id: str) -> None:
            assert relay is not None
            await relay.hand_over(room_id, next(turn))

        moved = await self.lobby.hand_over_all(to)
        log.info("handed %d room(s) over to %d node(s)", moved, len(peers))

    async def serve_until(self, stop: asyncio.Event) -> None:
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()

