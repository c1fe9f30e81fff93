"""`--workers N`: a connection for a room a sibling worker owns is passed to that worker.

The kernel spreads the connections of one port over the workers (SO_REUSEPORT) at
random, so without this most members of a room would reach its owner through the relay
(server.relay: every request and frame over Redis, CPU on both nodes). A client may name
the room it is about to join in its WebSocket URL (`ws://host:port/?room=<id>`, an
optional routing hint: docs/protocol.md). Before websockets sees a byte, the worker that
accepted the connection reads the request line; if it names a room whose lease a
sibling worker of this machine holds, the socket's file descriptor and the bytes read so
far go to that sibling in one message over a Unix socket (SCM_RIGHTS; the links and
their queue: server.handover_link), this worker closes its own copy (a close, not a shutdown: the client sees nothing), and the sibling
adopts the socket (`loop.connect_accepted_socket`) with the bytes put back in front, so
websockets there runs the handshake as for a connection it accepted itself: same
process_request, limits (the peer address is the socket's own) and handshake timeout.
Anything else — no hint, a hint that is not a room id, a room nobody holds or held by
this worker or by a node of another machine, a sibling that is gone or has taken
nothing for a while (stopped, wedged), a head longer than HEAD_LIMIT, a head that does
not start within the handshake timeout (closed) — is served here as before,
and the answer is the same either way (nothing tells a client which case it was).

Siblings find each other through a private directory the supervisor makes (mode 0700:
only this user's processes can reach the sockets in it) and hands to every worker as
`--handover-dir`: each worker binds `<dir>/<hash of its node id>.sock`, so the lease
holder's id names the socket to send to. With `--workers 1` none of this exists and
websockets accepts connections as always.

    handover = Handover(directory, node_id, owner_of, metrics.registry)
    ws_server = await serve(..., create_connection=handover.gate_factory(), **WS_OPTIONS)
    handover.start(ws_server, WS_OPTIONS, open_timeout)   # bind, adopt what siblings send
    ...
    handover.stop()                                       # unbind; unfinished gates closed
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from prometheus_client import CollectorRegistry, Counter
from websockets.asyncio.server import Server, ServerConnection
from websockets.server import ServerProtocol

from protocol.messages import is_room_id
from server.handover_link import HEAD_LIMIT, STALL, Inbox, Sibling

log = logging.getLogger("giants.handover")

# HEAD_LIMIT: bytes of a request read before the request line must be complete (the hint
# is in it); a longer head is served here without a hint. Also the largest message taken.
# Seconds the lease holder's lookup in Redis may take before the connection is served here.
LOOKUP_TIMEOUT = 1.0
# Seconds a sibling that failed to take a connection is not named to clients (server.moved).
UNREACHABLE_FOR = 30.0

OwnerOf = Callable[[str], Awaitable[str | None]]


def socket_path(directory: str, node_id: str) -> str:
    """The hand-over socket of node `node_id` in `directory` (a hash: node ids may be
    long or hold any character, and a Unix socket path is at most ~107 bytes)."""
    return os.path.join(directory, hashlib.sha256(node_id.encode()).hexdigest()[:20] + ".sock")


def room_hint(line: bytes) -> str | None:
    """The room named by a request line's `room` query parameter (`GET /?room=<id>
    HTTP/1.1`), or None: no hint, or one that is not a room id (never an error)."""
    parts = line.split(b" ")
    if len(parts) != 3 or parts[0] != b"GET" or b"room=" not in parts[1]:
        return None
    try:
        query = urlsplit(parts[1].decode("ascii")).query
        rooms = parse_qs(query, max_num_fields=8).get("room", [])
    except ValueError:  # not ASCII, a malformed URL, too many fields
        return None
    return rooms[0] if len(rooms) == 1 and is_room_id(rooms[0]) else None


class Gate(asyncio.Protocol):
    """What a new connection talks to until its request line is in: then it either
    goes on here (the transport is given to the websockets connection, with what was
    read) or is handed to the sibling owning the room it names."""

    def __init__(self, handover: Handover, real: ServerConnection, head: bytes = b"") -> None:
        self.handover = handover
        self.real = real
        self.head = head
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.paused = False
        self.routing: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        if self.head:  # adopted from a sibling: its request goes on here, whatever it names
            self.serve_here()
            return
        self.handover.gates.add(self)
        self.timer = asyncio.get_running_loop().call_later(self.handover.open_timeout, transport.abort)

    def data_received(self, data: bytes) -> None:
        self.head += data
        end = self.head.find(b"\r\n")
        if end < 0:
            if len(self.head) > HEAD_LIMIT:
                self.serve_here()
            return
        room = room_hint(self.head[:end]) if len(self.head) <= HEAD_LIMIT else None
        if room is None:
            self.serve_here()
            return
        assert self.transport is not None
        self.transport.pause_reading()
        self.paused = True
        self.routing = asyncio.get_running_loop().create_task(self.route(room))

    def eof_received(self) -> bool | None:
        return None  # the client gave up before its request: close

    def connection_lost(self, exc: Exception | None) -> None:
        self.done()
        if self.routing is not None and self.routing is not asyncio.current_task():
            self.routing.cancel()

    def done(self) -> None:
        self.handover.gates.discard(self)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def serve_here(self) -> None:
        """Give the transport to the websockets connection, with the bytes read."""
        transport = self.transport
        assert transport is not None
        self.done()
        if transport.is_closing():
            return
        transport.set_protocol(self.real)
        self.real.connection_made(transport)
        if self.head:
            self.real.data_received(self.head)
        if self.paused:
            transport.resume_reading()

    async def route(self, room: str) -> None:
        try:
            handed = await self.handover.pass_on(self, room)
        except Exception:  # Redis away, too slow: served here
            log.debug("hand-over of a connection for room %s failed", room, exc_info=True)
            self.handover.unrouted.inc()
            handed = False
        if handed:
            self.done()
            assert self.transport is not None
            self.transport.abort()  # closes this process's descriptor only: no FIN
        else:
            self.serve_here()


class Handover:
    """This worker's end of the hand-over; see the module docstring."""

    def __init__(self, directory: str, node_id: str, owner_of: OwnerOf, registry: CollectorRegistry) -> None:
        self.directory = directory
        self.node_id = node_id
        self.owner_of = owner_of
        self.path = socket_path(directory, node_id)
        self.gates: set[Gate] = set()
        self.open_timeout = 10.0
        self.server: Server | None = None
        self.options: dict[str, Any] = {}
        self.inbox: Inbox | None = None  # where siblings send this worker connections
        self.siblings: dict[str, Sibling] = {}  # socket path -> this worker's link to it
        self.unreachable: dict[str, float] = {}  # node id -> until when it is not advised
        self._adopting: set[asyncio.Task[None]] = set()
        self.sent = Counter(
            "giants_handover_sent", "Connections passed to the sibling worker owning the room they named.",
            registry=registry,
        )
        self.received = Counter(
            "giants_handover_received", "Connections a sibling worker passed to this one (their room is here).",
            registry=registry,
        )
        self.failed = Counter(
            "giants_handover_failed",
            "Connections whose room's owner is a sibling worker that could not take them: gone, or it took no "
            "connection for 2 s while its queue was full (served here, through the relay).",
            registry=registry,
        )

        self.unrouted = Counter(
            "giants_handover_unrouted",
            "Connections naming a room whose owner could not be looked up in Redis within 1 s (Redis slow or "
            "away): served here, through the relay if a sibling worker owns the room.",
            registry=registry,
        )

    def gate_factory(self) -> Any:
        """The `create_connection` argument of websockets' `serve`: each new connection
        is gated (returned as Any: websockets types it as a ServerConnection class)."""

        def make(protocol: ServerProtocol, server: Server, **kwargs: Any) -> Gate:
            return Gate(self, ServerConnection(protocol, server, **kwargs))

        return make

    def start(self, server: Server, options: dict[str, Any], open_timeout: float) -> None:
        """Bind this worker's hand-over socket and adopt the connections siblings send.

        `options` are the ones `serve` got (max_size, ping_interval, ping_timeout,
        max_queue, logger): an adopted connection gets the same."""
        self.server, self.options, self.open_timeout = server, options, open_timeout
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a previous life's
        inbox = Inbox(self.path, self._received)
        try:
            inbox.start()
        except OSError as exc:  # a path too long for a Unix socket, a directory gone
            log.warning("no hand-over between workers (%s: %s): members of rooms owned by a sibling are relayed",
                        self.path, exc)
            return
        self.inbox = inbox

    def stop(self) -> None:
        """Unbind (siblings serve what they would have sent here themselves); close the
        connections still waiting for their request line."""
        inbox, self.inbox = self.inbox, None
        if inbox is not None:
            inbox.stop()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        for sibling in self.siblings.values():
            sibling.close()
        self.siblings.clear()
        for gate in list(self.gates):
            if gate.transport is not None:
                gate.transport.abort()
        for task in self._adopting:
            task.cancel()

    async def pass_on(self, gate: Gate, room: str) -> bool:
        """Send the gated connection to the sibling owning `room`; False if it stays here.

        A lookup of the owner that does not finish within LOOKUP_TIMEOUT (Redis slow)
        raises TimeoutError (served here, not a failure of the hand-over). The send waits
        its turn while the sibling's queue is full, as long as the sibling keeps taking
        connections (server.handover_link); a sibling that is gone or has taken none for
        STALL seconds (stopped, wedged) counts in `giants_handover_failed_total` and the
        connection is served here, through the relay."""
        transport = gate.transport
        if self.inbox is None or transport is None or transport.is_closing():
            return False
        async with asyncio.timeout(LOOKUP_TIMEOUT):
            owner = await self.owner_of(room)
        if owner is None or owner == self.node_id or transport.is_closing():
            return False
        raw = transport.get_extra_info("socket")
        if raw is None:
            return False
        path = socket_path(self.directory, owner)
        try:
            sibling = self._reach(path)
            if not await sibling.send(gate.head, raw.fileno(), lambda: not transport.is_closing()):
                return False  # the client went away while it waited
        except FileNotFoundError:  # no such sibling: a node of another machine
            return False
        except TimeoutError:  # alive maybe, but not reading (stopped, wedged): its link stays
            log.debug("sibling %s took no connection for %.1f s", owner, STALL)
            self.failed.inc()
            self.unreachable[owner] = time.monotonic() + UNREACHABLE_FOR
            return False
        except OSError as exc:  # a sibling that died or stopped
            log.debug("sibling %s did not take a connection: %r", owner, exc)
            self.failed.inc()
            self.unreachable[owner] = time.monotonic() + UNREACHABLE_FOR
            gone = self.siblings.pop(path, None)
            if gone is not None:
                gone.close()
            return False
        self.sent.inc()
        return True

    def routes_to(self, node_id: str) -> bool:
        """Whether a connection naming a room `node_id` owns would be handed to it: a
        sibling worker of this machine (its socket is in our directory) that did not
        fail to take one lately. server.moved advises clients to reconnect only then."""
        if self.inbox is None or node_id == self.node_id:
            return False
        if self.unreachable and self.unreachable.get(node_id, 0.0) > time.monotonic():
            return False
        return os.path.exists(socket_path(self.directory, node_id))

    def _reach(self, path: str) -> Sibling:
        """The link to the sibling at `path`, connected now if there is none or it closed
        (OSError if the sibling is not there)."""
        sibling = self.siblings.get(path)
        if sibling is None or sibling.closed:
            self.siblings[path] = sibling = Sibling.connect(path)
        return sibling

    def _received(self, head: bytes, fds: list[int], flags: int) -> None:
        """A message from a sibling (the hand-over is acknowledged already): adopt its
        connection in a task of its own."""
        conn = self._socket_of(fds, flags, head)
        if conn is not None:
            task = asyncio.get_running_loop().create_task(self._adopt(conn, head))
            self._adopting.add(task)
            task.add_done_callback(self._adopting.discard)

    @staticmethod
    def _socket_of(fds: list[int], flags: int, head: bytes) -> socket.socket | None:
        """The TCP connection in a message; anything else is closed and dropped."""
        if len(fds) == 1 and head and not flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC):
            try:
                conn = socket.socket(fileno=fds[0])
            except OSError:
                os.close(fds[0])
                return None
            if conn.type == socket.SOCK_STREAM and conn.family in (socket.AF_INET, socket.AF_INET6):
                return conn
            conn.close()
            return None
        for fd in fds:
            os.close(fd)
        return None

    async def _adopt(self, conn: socket.socket, head: bytes) -> None:
        server, options = self.server, self.options
        assert server is not None
        if not server.is_serving():
            conn.close()
            return

        def adopted() -> Gate:
            protocol = ServerProtocol(max_size=options.get("max_size"), logger=options.get("logger"))
            kwargs = {k: options[k] for k in ("ping_interval", "ping_timeout", "max_queue") if k in options}
            return Gate(self, ServerConnection(protocol, server, **kwargs), head)

        try:
            await asyncio.get_running_loop().connect_accepted_socket(adopted, conn)
        except OSError as exc:  # the client went away meanwhile
            log.debug("adopting a connection failed: %s", exc)
            conn.close()
            return
        self.received.inc()
