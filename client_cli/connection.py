"""The request/reply layer of the client: one WebSocket, ids, futures, reconnection.

`Connection` opens the socket, says hello, matches every `ok`/`error` to its request
by id, and hands every other server message to `_on_push`. When the socket drops it
fails the requests in flight with ConnectionLost, reconnects with exponential
backoff, says hello again and calls `_restore` (where `client_cli.client.Client`
resumes its seats). When the server advises `moved` (a worker of the same server owns
the rooms: docs/protocol.md) it moves without losing anything: new requests wait, the
ones in flight are answered on the old socket, a new socket naming the room takes
every room back, then the old one closes. Subclass it; use `Client` directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from client_cli.seat_store import normalize_url
from client_cli.tracked_room import ClientClosed, ClientError, ConnectionLost, RequestFailed
from protocol import PROTOCOL_VERSION, ErrorCode, Hello, Ping, ProtocolError, decode_server, encode
from protocol import messages as msgs
from protocol.messages import Request

log = logging.getLogger("giants.client")

CLIENT_NAME = "giants-client/0.1"
_CONNECT_ERRORS = (OSError, TimeoutError, InvalidHandshake, ConnectionClosed, ClientError)

OnOk = Callable[[dict[str, Any]], None]
# A `moved` advisory followed within FOLLOW_MEMORY seconds of another waits FOLLOW_BACKOFF
# seconds, doubling with each such follow.
FOLLOW_MEMORY, FOLLOW_BACKOFF = 60.0, 0.5


def with_room_hint(url: str, room: str | None) -> str:
    """`url` naming `room` as the room this client is about to join (`/?room=<id>`): a
    routing hint only (docs/protocol.md) — a server of several workers then hands the
    connection to the one that owns the room instead of relaying its requests."""
    if not room:
        return url
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode({"room": room})) if q)
    return urlunsplit(parts._replace(path=parts.path or "/", query=query))


def _older_version(exc: RequestFailed, asked: int) -> int | None:
    """The newest protocol below `asked` that a server refusing `asked` speaks, if any."""
    if exc.code != ErrorCode.PROTOCOL_MISMATCH or not isinstance(exc.detail, dict):
        return None
    supported = exc.detail.get("supported")
    older = [v for v in supported if type(v) is int and 1 <= v < asked] if isinstance(supported, list) else []
    return max(older, default=None)


@dataclass
class _Pending:
    kind: str
    future: asyncio.Future[dict[str, Any]]
    on_ok: OnOk | None  # runs in the reader, before any later frame is handled


class Connection:
    """One logical connection to a server that survives socket drops.

    `reconnect` enables automatic reconnection with exponential backoff from
    `backoff_min` to `backoff_max` seconds (with jitter); requests wait up to
    `request_timeout` seconds for their reply (and for a lost connection to come back).
    `room` names the room the client is about to join or watch, if it knows it: the
    socket is opened with it as a routing hint (`with_room_hint`).
    """

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        client_name: str = CLIENT_NAME,
        reconnect: bool = True,
        backoff_min: float = 0.1,
        backoff_max: float = 5.0,
        request_timeout: float = 30.0,
        open_timeout: float = 10.0,
        max_frame: int = 16 * 1024 * 1024,
        protocol: int = PROTOCOL_VERSION,
        room: str | None = None,
        follow_moves: bool = True,
    ) -> None:
        self.url = normalize_url(url)  # "host:port" and http(s):// work too
        self.hint_room = room
        # The wire version asked for in hello (an older one only to talk to old servers
        # or to test them); patches of either version reach rooms in the same form.
        self.protocol = protocol
        self.name = name
        self.client_name = client_name
        self.reconnect = reconnect
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.request_timeout = request_timeout
        self.open_timeout = open_timeout
        self.max_frame = max_frame
        self.session: str | None = None
        self.server: str | None = None
        self.games: list[dict[str, Any]] = []
        self.reconnects = 0  # successful reconnections so far
        # Follow `moved` advisories (protocol 4; only with reconnect on): a server of
        # several workers then serves this client at its rooms' owner, not through a relay.
        self.follow_moves = follow_moves
        self.advisories = 0  # `moved` advisories received so far
        self.moves = 0  # sockets replaced after a `moved` advisory so far
        self._settling = 0  # actions answered whose patch is not in yet (a move waits for them)
        self._followed: list[float] = []  # when the last `moved` advisories were followed
        # An advisory that came during a reconnect or a move, and the socket it came on:
        # followed once that is over, if that socket is still the one in use.
        self._deferred: tuple[str, ClientConnection] | None = None
        self._ws: ClientConnection | None = None
        self._connected = asyncio.Event()
        self._closed = False
        self._next_id = 0
        self._pending: dict[int | str, _Pending] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reconnecting = False
        self._established = False  # the first hello succeeded: later losses reconnect
        self._setup()

    # -- hooks for subclasses ---------------------------------------------------------

    def _setup(self) -> None:
        """Create the subclass's own state (called at the end of `__init__`)."""

    def _on_push(self, msg: msgs.Snapshot | msgs.Patch | msgs.Closing | msgs.Moved) -> None:
        """A server message that is not a reply (called in frame order)."""

    async def _restore(self) -> None:
        """After a reconnect and hello: take back what the old connection held."""

    def _on_give_up(self, exc: BaseException) -> None:
        """The connection is gone for good (reconnect off, or the server refuses us)."""

    def _on_close(self) -> None:
        """`close()` was called."""

    def _room_hint(self) -> str | None:
        """The room named in the URL of the next socket (`room` here)."""
        return self.hint_room

    # -- lifecycle --------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        """True while a socket is open, hello was answered and (after a reconnect) the
        rooms were taken back."""
        return self._connected.is_set() and not self._closed

    @property
    def closed(self) -> bool:
        return self._closed

    async def connect(self) -> None:
        """Open the connection and say hello.

        Raises OSError/InvalidHandshake/TimeoutError if the server cannot be reached
        and RequestFailed (protocol_mismatch) on a version clash.
        """
        if self._closed:
            raise ClientClosed("this client was closed")
        try:
            await self._open()
        except BaseException:
            await self._drop_ws()
            raise
        self._established = True
        self._connected.set()

    async def close(self) -> None:
        """Close for good: stop reconnecting, fail pending requests with ClientClosed."""
        self._shut()
        for task in list(self._tasks):
            task.cancel()
        await self._drop_ws()
        self._fail_pending(ClientClosed("the client was closed"))
        self._on_close()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def drop_connection(self) -> None:
        """Abort the socket as a network failure would (for tests and demos); with
        `reconnect` on, the connection comes back by itself. Returns once the loss
        has been noticed (requests in flight failed with ConnectionLost)."""
        ws = self._ws
        if ws is None:
            return
        ws.transport.abort()
        # Return once the reader noticed: requests made after this wait for the reconnect.
        for _ in range(500):
            if self._ws is not ws:
                return
            await asyncio.sleep(0.01)

    async def _open(self) -> None:
        ws = await connect(
            with_room_hint(self.url, self._room_hint()),
            max_size=self.max_frame,
            compression=None,
            open_timeout=self.open_timeout,
            ping_interval=20,
            ping_timeout=20,
        )
        self._ws = ws
        self._spawn(self._read(ws))
        hello = Hello(
            id=self._new_id(), protocol=self.protocol, name=self.name, client=self.client_name
        )
        try:
            data = await self._request(hello, wait_connected=False)
        except RequestFailed as exc:
            older = _older_version(exc, self.protocol)
            if older is None:
                raise
            # An older server: speak the newest version it knows (every one reads the
            # same way here; protocol 4 only adds the `moved` advisory).
            self.protocol = older
            hello = hello.model_copy(update={"id": self._new_id(), "protocol": older})
            data = await self._request(hello, wait_connected=False)
        self.session = data.get("session")
        self.server = data.get("server")
        self.games = list(data.get("games") or [])

    def _shut(self) -> None:
        self._closed = True
        self._connected.set()  # wakes requests waiting for a reconnect: they see _closed

    async def _drop_ws(self) -> None:
        # Forget the socket first, so its reader does not treat this close as a loss.
        ws, self._ws = self._ws, None
        self._connected.clear()
        if ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 2.0)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- reading ----------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                if isinstance(frame, str):
                    log.warning("ignoring a text frame from the server")
                    continue
                self._dispatch(frame, ws)
        except ConnectionClosed:
            pass
        finally:
            if ws is self._ws:
                self._lost()

    def _dispatch(self, frame: bytes, ws: ClientConnection | None = None) -> None:
        try:
            msg = decode_server(frame, self.max_frame)
        except ProtocolError as exc:
            log.warning("ignoring a bad frame from the server: %s", exc)
            return
        if isinstance(msg, msgs.Ok | msgs.Error):
            self._reply(msg)  # request ids are unique across sockets
        elif ws is not None and ws is not self._ws:
            return  # a socket being replaced (`moved`): the new one's snapshots rule
        elif isinstance(msg, msgs.Moved):
            self.advisories += 1
            if ws is not None and self.follow_moves and self.reconnect:
                if self._reconnecting:  # the server advises once per owner: keep it for later
                    self._deferred = (msg.room, ws)
                else:
                    self._spawn(self._follow(msg.room, ws))
        else:
            if isinstance(msg, msgs.Closing):
                log.info("the server is closing: %s", msg.reason)
            self._on_push(msg)

    def _reply(self, msg: msgs.Ok | msgs.Error) -> None:
        pending = self._pending.pop(msg.id, None) if msg.id is not None else None
        if pending is None:
            if isinstance(msg, msgs.Error):
                log.warning("server error for no pending request: %s %s", msg.code, msg.message)
            return
        if pending.future.done():  # the caller timed out or was cancelled
            return
        if isinstance(msg, msgs.Error):
            pending.future.set_exception(
                RequestFailed(pending.kind, msg.code, msg.message, msg.detail)
            )
            return
        if pending.on_ok is not None:
            pending.on_ok(msg.data)
        pending.future.set_result(msg.data)

    # -- loss and reconnection --------------------------------------------------------

    def _lost(self) -> None:
        self._ws = None
        self._connected.clear()
        self._fail_pending(ConnectionLost("the connection to the server was lost"))
        if self._closed or not self._established:
            return  # closing on purpose, or connect() is failing and will raise
        if not self.reconnect:
            self._shut()
            self._on_give_up(ClientClosed("the connection was lost and reconnect is off"))
            return
        if not self._reconnecting:
            self._spawn(self._reconnect_loop())

    def _fail_pending(self, exc: ClientError) -> None:
        pending, self._pending = self._pending, {}
        for p in pending.values():
            if not p.future.done():
                p.future.set_exception(exc)
                p.future.exception()  # mark it retrieved: its caller may be gone

    def _follow_deferred(self) -> None:
        """Follow the advisory that came while reconnecting or moving, if it came on the
        socket now in use (one that came on a socket since replaced is moot: the server
        advises the new one itself if it must)."""
        deferred, self._deferred = self._deferred, None
        if deferred is not None and deferred[1] is self._ws and not self._closed:
            self._spawn(self._follow(*deferred))

    async def _follow(self, room: str, ws: ClientConnection) -> None:
        """The server advised `moved`: another worker of it owns this client's rooms.

        New requests wait (as during a reconnect) and the ones in flight are answered on
        this socket, actions with their patch; then a socket naming `room` is opened
        (the server hands it to that worker), every room is taken back there
        (`_restore`: seats by token, no `left`/`joined` since the old socket still
        holds them) and only then is this one closed. Still busy after
        `request_timeout`: stay here (the relay keeps serving this socket)."""
        loop = asyncio.get_running_loop()
        # Followed lately already: wait longer each time (a server whose hand-over keeps
        # failing would otherwise have this client reconnect over and over).
        self._followed = [t for t in self._followed if loop.time() - t < FOLLOW_MEMORY]
        if self._followed:
            await asyncio.sleep(min(FOLLOW_BACKOFF * 2 ** (len(self._followed) - 1), self.backoff_max * 6))
        if self._reconnecting or self._closed or ws is not self._ws or not self._connected.is_set():
            return
        self._followed.append(loop.time())
        self._reconnecting = True
        self._connected.clear()
        deadline = loop.time() + self.request_timeout
        lost = False
        try:
            while (self._pending or self._settling) and ws is self._ws and loop.time() < deadline:
                await asyncio.sleep(0.01)
            if ws is not self._ws:
                lost = True  # dropped meanwhile: reconnect as after any loss
            elif self._pending or self._settling:
                log.info("not moving to room %s's worker: requests still in flight", room)
            else:
                self.hint_room = room
                try:
                    await self._open()  # from here on, pushes from `ws` are ignored
                    await self._restore()
                except _CONNECT_ERRORS as exc:
                    log.info("moving to room %s's worker failed (%r); reconnecting", room, exc)
                    await self._drop_ws()
                    self._fail_pending(ConnectionLost("the connection to the server was lost"))
                    lost = True
                else:
                    self.moves += 1
                    log.info("moved to the worker serving room %s", room)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(), 2.0)
        finally:
            self._reconnecting = False
            if not lost:
                self._connected.set()
        if lost and not self._closed:
            await self._reconnect_loop()
        else:
            self._follow_deferred()

    async def _reconnect_loop(self) -> None:
        self._reconnecting = True
        delay = self.backoff_min
        try:
            while not self._closed:
                # Jitter spreads the reconnects of many clients after a server restart.
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, self.backoff_max)
                try:
                    await self._drop_ws()
                    await self._open()
                    await self._restore()
                except _CONNECT_ERRORS as exc:
                    if isinstance(exc, RequestFailed) and exc.code == ErrorCode.PROTOCOL_MISMATCH:
                        log.error("the server no longer speaks protocol %s", self.protocol)
                        self._shut()
                        self._on_give_up(exc)
                        return
                    log.info("reconnecting to %s failed (%r); retrying", self.url, exc)
                    continue
                # Only now may waiting requests go out: after the seats are back.
                self._connected.set()
                self.reconnects += 1
                log.info("reconnected to %s", self.url)
                return
        finally:
            self._reconnecting = False
            self._follow_deferred()

    # -- requests ---------------------------------------------------------------------

    def new_id(self) -> int:
        """A fresh request id (for building a request model to pass to `request`)."""
        self._next_id += 1
        return self._next_id

    _new_id = new_id

    async def request(self, msg: Request) -> dict[str, Any]:
        """Send a request model (id from `new_id()`) and return its `ok` data.

        Waits for a lost connection to come back first. Raises RequestFailed (with the
        server's stable code), ConnectionLost, ClientClosed or TimeoutError.
        """
        return await self._request(msg)

    async def _request(
        self, msg: Request, *, on_ok: OnOk | None = None, wait_connected: bool = True
    ) -> dict[str, Any]:
        if self._closed:
            raise ClientClosed("this client was closed")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.request_timeout
        if wait_connected and not self._connected.is_set():
            async with asyncio.timeout_at(deadline):
                await self._connected.wait()
            if self._closed:
                raise ClientClosed("the client was closed")
        ws = self._ws
        if ws is None:
            raise ConnectionLost("not connected to the server")
        req_id = msg.id
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[req_id] = _Pending(str(getattr(msg, "type", "request")), future, on_ok)
        try:
            await ws.send(encode(msg))
        except ConnectionClosed:
            self._pending.pop(req_id, None)
            raise ConnectionLost("the connection to the server was lost") from None
        try:
            async with asyncio.timeout_at(deadline):
                return await future
        finally:
            self._pending.pop(req_id, None)

    async def ping(self) -> float:
        """Round trip to the server through the protocol, in seconds."""
        started = time.perf_counter()
        await self._request(Ping(id=self._new_id()))
        return time.perf_counter() - started
