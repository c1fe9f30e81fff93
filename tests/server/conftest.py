"""A plain test client for the server tests: real websockets + the protocol codec.

`WsClient` keeps, per room, the view it built from its snapshot and the patches it
applied, so tests can compare it with what the engine says that seat may see.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect

from protocol import apply_patch
from tests.conftest import ServeProcess
from tests.fault_proxy import FaultProxy


@dataclass
class RoomCopy:
    """One client's copy of a room: built only from what the server sent it."""

    version: int
    seat: int | None
    view: Any
    legal: list[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    gaps: int = 0


def _retrieved(fut: asyncio.Future[Any]) -> None:
    """Mark a failed request's exception as seen, so asyncio does not report it."""
    if not fut.cancelled():
        fut.exception()


class WsClient:
    """Request/response over one connection; pushes update `rooms` in the background."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.rooms: dict[str, RoomCopy] = {}
        self.pushes: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()
        self.closed = asyncio.get_running_loop().create_future()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                msg = msgpack.unpackb(frame, raw=False)
                kind = msg["type"]
                if kind in ("ok", "error") and msg.get("id") in self.pending:
                    self.pending.pop(msg["id"]).set_result(msg)
                    continue
                self.pushes.append(msg)
                if kind == "snapshot":
                    self.rooms[msg["room"]] = RoomCopy(msg["version"], msg["seat"], msg["view"], msg["legal"])
                elif kind == "patch":
                    copy = self.rooms[msg["room"]]
                    if msg["from"] != copy.version:
                        copy.gaps += 1
                        continue
                    copy.view = apply_patch(copy.view, msg["ops"])
                    copy.version = msg["to"]
                    copy.legal = msg["legal"]
                    copy.events.extend(msg["events"])
                async with self.changed:
                    self.changed.notify_all()
        except Exception as exc:
            if not self.closed.done():
                self.closed.set_result(exc)
        finally:
            if not self.closed.done():
                self.closed.set_result(None)
            for fut in self.pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("connection closed"))
                    # A test that sent a request and stopped waiting for it (it timed
                    # out, or expects the close) need not retrieve this.
                    fut.add_done_callback(_retrieved)
            async with self.changed:
                self.changed.notify_all()

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send(frame)

    async def request(self, kind: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        """Send one request and return its reply (`ok` or `error`)."""
        req_id = fields.pop("id", None) or next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[req_id] = fut
        await self.ws.send(msgpack.packb({"type": kind, "id": req_id, **fields}, use_bin_type=True))
        return await asyncio.wait_for(fut, timeout)

    async def ok(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A request that must succeed; returns its data."""
        reply = await self.request(kind, **fields)
        assert reply["type"] == "ok", reply
        data: dict[str, Any] = reply["data"]
        return data

    async def error(self, kind: str, **fields: Any) -> dict[str, Any]:
        reply = await self.request(kind, **fields)
        assert reply["type"] == "error", reply
        return reply

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        async def waiter() -> None:
            async with self.changed:
                await self.changed.wait_for(lambda: predicate() or self.closed.done())
        await asyncio.wait_for(waiter(), timeout)
        assert predicate(), "connection closed before the condition held"

    async def wait_version(self, room: str, version: int, timeout: float = 10.0) -> RoomCopy:
        await self.wait_for(lambda: room in self.rooms and self.rooms[room].version >= version, timeout)
        return self.rooms[room]

    async def close(self) -> None:
        await self.ws.close()
        with contextlib.suppress(Exception):
            await self.reader


ClientFactory = Callable[..., Awaitable[WsClient]]


@pytest.fixture
async def client_factory() -> AsyncIterator[ClientFactory]:
    """`await client_factory(url, name=...)`: a connected client; hello done unless hello=False."""
    clients: list[WsClient] = []

    async def make(url: str, name: str = "tester", hello: bool = True, **kwargs: Any) -> WsClient:
        ws = await connect(url, compression=None, max_size=2**22, **kwargs)
        client = WsClient(ws)
        clients.append(client)
        if hello:
            await client.ok("hello", protocol=1, name=name)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture
async def fault_proxy(redis_url: str) -> AsyncIterator[FaultProxy]:
    """A FaultProxy in front of the test Redis; `fault_proxy.url` is what servers use.

    Request it before `server_factory` so servers stop before the proxy does."""
    proxy = FaultProxy(redis_url)
    await proxy.start()
    yield proxy
    await proxy.stop()


@pytest.fixture
def workers() -> Iterator[list[ServeProcess]]:
    """`giants serve --workers N` processes a test starts and appends here: stopped with
    SIGTERM at teardown (each must exit 0), and their logs must hold no traceback."""
    started: list[ServeProcess] = []
    yield started
    for sp in started:
        if sp.proc.poll() is None:
            sp.proc.send_signal(signal.SIGTERM)
            assert sp.proc.wait(60) == 0
        log = "".join(sp.output)
        assert "Traceback" not in log, log
