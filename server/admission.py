"""New WebSocket connections admitted a few per turn of the event loop.

One turn of an asyncio loop runs every callback that was ready when it began. When
hundreds of clients connect at once (a node died and its clients reconnect to the
survivors, a deploy, a balancer that rebalances), each one's handshake, then its
`hello` and its `resume` / `join` / `watch` with the snapshot that follows, land in the
same few turns: measured with `bench/storm.py`, single turns held the loop for 0.2-0.7 s,
so the lease renewal's timer and its Redis replies waited that long each, a pass ended
past the lease TTL (`giants_lease_renewal_gap_seconds`), and every move in flight waited
too. Here each WebSocket handshake waits for a place before its response goes out: at
most PER_TURN handshakes go on per turn, the others in the turns after, in arrival
order. The client only sends its first request once the handshake is answered, so what
follows it (hello, resume, the snapshot) is spread the same way. Whatever else is ready
(renewals, moves, replies from Redis) runs between them. Plain HTTP requests (/healthz,
/metrics, the web client's files) never wait. A connection that waits longer than the
handshake timeout (10 s) is closed by websockets as before. The joins, watches and
resumes other nodes relay to this one take a place too (`Relay.admit`).

    admission = Admission(metrics.registry)
    process_request = admission.gate(process_request)   # the hook given to websockets' serve
    serve(..., backlog=BACKLOG)
"""

from __future__ import annotations

import asyncio
import collections

from prometheus_client import CollectorRegistry, Counter, Gauge
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server.http import ProcessRequest

# The listen backlog: connections the kernel completes and queues until the node accepts
# them (Linux caps it at net.core.somaxconn). asyncio's default, 100, overflowed in a burst
# of 4,000 (bench/storm.py): the clients' TCP retried after 1, 3, 7, 15 s, and with the
# admission below the slowest took 8-57 s; with 1,024 none overflowed (3.6 s for all).
# uvloop accepts every queued connection in one turn: about 0.1 ms each.
BACKLOG = 1024
# Handshakes let through per turn of the event loop. A reconnecting client costs the
# node about 0.5 ms (handshake, hello, resume and its snapshot), so a turn stays near
# 10 ms of admission work however many clients wait.
PER_TURN = 16


class Admission:
    """See the module docstring."""

    def __init__(self, registry: CollectorRegistry | None = None, per_turn: int = PER_TURN) -> None:
        self.per_turn = per_turn
        self.used = 0  # places taken in this turn
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._armed = False  # the next turn's refill is scheduled
        self.waited = Counter(
            "giants_admission_waited", "WebSocket handshakes and relayed joins that waited for a later turn of the "
            "event loop (a burst of connections: at most a few are admitted per turn).", registry=registry,
        ) if registry is not None else None
        if registry is not None:
            Gauge("giants_admission_queued", "WebSocket handshakes and relayed joins waiting for their turn now.",
                  registry=registry).set_function(lambda: len(self.waiting))

    async def admit(self) -> None:
        """Return in this turn if a place is free, else once a later turn gives one."""
        if self.used < self.per_turn and not self.waiting:
            self.used += 1
            self._arm()
            return
        future = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        if self.waited is not None:
            self.waited.inc()
        self._arm()
        await future  # cancelled (the connection went away): its place goes to the next

    def _arm(self) -> None:
        if not self._armed:
            self._armed = True
            asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        """A new turn: free the places and give them to the first waiting."""
        self._armed = False
        self.used = 0
        while self.waiting and self.used < self.per_turn:
            future = self.waiting.popleft()
            if not future.done():
                future.set_result(None)
                self.used += 1
        if self.used:
            self._arm()

    def gate(self, then: ProcessRequest) -> ProcessRequest:
        """Wrap websockets' `process_request` hook: a WebSocket handshake waits for its
        place first; any other request goes on at once."""

        async def process_request(connection: ServerConnection, request: Request) -> Response | None:
            if [v.lower() for v in request.headers.get_all("Upgrade")] == ["websocket"]:
                await self.admit()
            return await then(connection, request)

        return process_request
