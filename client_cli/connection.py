"""The request/reply layer of the client: one WebSocket, ids, futures, reconnection.

`Connection` opens the socket, says hello, matches every `ok`/`error` to its request
by id, and hands every other server message to `_on_push`. When the socket drops it
fails the requests in flight with ConnectionLost, reconnects with exponential
backoff, says hello again and calls `_restore` (where `client_cli.client.Client`
resumes its seats). Subclass it; use `Client` directly.
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


def with_room_hint(url: str, room: str | None) -> str:
    """`url` naming `room` as the room this client is about to join (`/?room=<id>`): a
    routing hint only (docs/protocol.md) — a server of several workers then hands the
    connection to the one that owns the room instead of relaying its requests."""
    if not room:
        return url
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode({"room": room})) if q)
    return urlunsplit(parts._replace(path=parts.path or "/", query=query))


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

    def _on_push(self, msg: msgs.Snapshot | msgs.Patch | msgs.Closing) -> None:
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
                self._dispatch(frame)
        except ConnectionClosed:
            pass
        finally:
            if ws is self._ws:
                self._lost()

    def _dispatch(self, frame: bytes) -> None:
        try:
            msg = decode_server(frame, self.max_frame)
        except ProtocolError as exc:
            log.warning("ignoring a bad frame from the server: %s", exc)
            return
        if isinstance(msg, msgs.Ok | msgs.Error):
            self._reply(msg)
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
