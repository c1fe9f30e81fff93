"""A move's frames under the room's hold (server.room: `Room.act` sets the server's
`flush_promised` over the actor's `ok` and `publish`, then `flush_now`; server.seats.Output),
on a real server over real WebSockets: every member gets each move's frames, in the
same order as when each push schedules its flush (the general path, a room without the
hold), no flush is scheduled for them, and nothing is left queued or held afterwards —
also when a member's connection goes away in the middle of a publish and when
`publish` raises."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.app import GiantsServer
from server.room import Room
from server.seats import NO_OUTPUT

pytestmark = pytest.mark.redis


class Client:
    """Every frame the server sent, in order (protocol 2: legal lists come whole)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.frames: list[dict[str, Any]] = []
        self.legal: list[str] = []
        self.changed = asyncio.Condition()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            msg = msgpack.unpackb(frame, strict_map_key=False)
            self.frames.append(msg)
            if "legal" in msg:
                self.legal = msg["legal"]
            async with self.changed:
                self.changed.notify_all()

    async def send(self, kind: str, **fields: Any) -> int:
        req_id = next(self.ids)
        await self.ws.send(msgpack.packb({"type": kind, "id": req_id, **fields}))
        return req_id

    async def wait_for(self, predicate: Callable[[], object], timeout: float = 10) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(predicate), timeout)

    async def ok(self, kind: str, **fields: Any) -> dict[str, Any]:
        req_id = await self.send(kind, **fields)
        await self.wait_for(lambda: any(f.get("id") == req_id for f in self.frames))
        reply = next(f for f in self.frames if f.get("id") == req_id)
        assert reply["type"] == "ok", reply
        data: dict[str, Any] = reply["data"]
        return data

    def version(self) -> int:
        """The version of the last snapshot or patch (a patch moves it from `from` by one)."""
        for f in reversed(self.frames):
            if f["type"] == "patch":
                return int(f["from"]) + 1
            if f["type"] == "snapshot":
                return int(f["version"])
        return -1


def _shape(frame: dict[str, Any]) -> tuple[Any, ...]:
    return (frame["type"], frame.get("id"), frame.get("from"), frame.get("events"), frame.get("legal"))


async def _table(server: GiantsServer) -> tuple[list[Client], str]:
    clients = [Client(await connect(server.url)) for _ in range(3)]
    for i, c in enumerate(clients):
        await c.ok("hello", protocol=2, name=f"m{i}")
    room = (await clients[0].ok("create_room", game="giantslayer", players=2))["room"]
    await clients[2].ok("watch", room=room)
    for seat, c in enumerate(clients[:2]):
        await c.ok("join", room=room, seat=seat)
    await asyncio.gather(*(c.wait_for(lambda c=c: c.version() >= 1) for c in clients))
    return clients, room


def _counting_flushes(server: GiantsServer) -> list[None]:
    """The flushes the loop runs (what `schedule_flush` hands it), counted."""
    ran: list[None] = []
    flush = server._flush_soon

    def counted() -> None:
        ran.append(None)
        flush()

    server._flush_soon = counted  # type: ignore[method-assign]
    return ran


async def _play(server: GiantsServer, moves: int, live: list[Client], clients: list[Client], room: str) -> None:
    """`moves` moves, each waited for by every member in `live`; after each, nothing is
    queued and no flush is promised."""
    for _ in range(moves):
        actor = next(c for c in clients[:2] if c.legal)
        start = actor.version()
        await actor.send("act", room=room, action=actor.legal[0])
        await asyncio.gather(*(c.wait_for(lambda c=c, start=start: c.version() > start) for c in live))
        await asyncio.sleep(0)
        assert server.dirty == [] and not server.flush_promised


async def _close(clients: list[Client]) -> None:
    for c in clients:
        c.ws.close_timeout = 1
        await c.ws.close()


async def test_held_moves_send_the_same_frames_in_the_same_order_and_schedule_no_flush(server_factory: Any) -> None:
    runs = []
    for held in (True, False):
        server = await server_factory()
        if not held:
            server.lobby.output = NO_OUTPUT  # the general path: each push schedules its flush
        clients, room = await _table(server)
        ran = _counting_flushes(server)
        before = [len(c.frames) for c in clients]
        await _play(server, 30, clients, clients, room)
        # Held: no flush scheduled for a move's frames; unheld: one a move at least.
        assert (ran == []) if held else (len(ran) >= 30)
        runs.append([[_shape(f) for f in c.frames[n:]] for c, n in zip(clients, before, strict=True)])
        for c, n in zip(clients[:2], before[:2], strict=True):  # each actor's `ok`, then its move's patch
            frames = c.frames[n:]
            assert all(frames[i + 1]["type"] == "patch" for i, f in enumerate(frames) if f["type"] == "ok")
        await _close(clients)
    assert runs[0] == runs[1]


async def test_a_member_gone_in_the_middle_of_a_publish_leaves_nothing_queued(server_factory: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    server = await server_factory()
    clients, room = await _table(server)
    watcher = next(conn for conn in server.connections if conn.name == "m2")
    publish = Room.publish

    def cut_then_publish(self: Room, events: list[dict[str, Any]], skip: Any = None) -> None:
        watcher.ws.transport.abort()  # its socket gone: its frames cannot be written
        publish(self, events, skip)

    monkeypatch.setattr(Room, "publish", cut_then_publish)
    await _play(server, 1, clients[:2], clients, room)
    monkeypatch.setattr(Room, "publish", publish)
    await _play(server, 5, clients[:2], clients, room)
    with contextlib.suppress(ConnectionClosed):
        await clients[2].reader  # the watcher's connection ended (cut off: no close frame)
    await _close(clients[:2])


@pytest.mark.parametrize("pushed", [True, False])
async def test_a_publish_that_raises_still_writes_what_was_pushed(server_factory: Any, monkeypatch: pytest.MonkeyPatch,
                                                                  pushed: bool) -> None:
    server = await server_factory()
    clients, room = await _table(server)
    publish = Room.publish

    def failing(self: Room, events: list[dict[str, Any]], skip: Any = None) -> None:
        if pushed:
            publish(self, events, skip)
        raise RuntimeError("publish failed")

    monkeypatch.setattr(Room, "publish", failing)
    actor = next(c for c in clients[:2] if c.legal)
    start = actor.version()
    req_id = await actor.send("act", room=room, action=actor.legal[0])
    # The reply (pushed before `publish`), then the error the handler sends for the raise.
    await actor.wait_for(lambda: [f["type"] for f in actor.frames if f.get("id") == req_id] == ["ok", "error"])
    if pushed:  # every member got the move's patch
        await asyncio.gather(*(c.wait_for(lambda c=c: c.version() > start) for c in clients))
    await asyncio.sleep(0.05)
    assert server.dirty == [] and not server.flush_promised
    await _close(clients)
