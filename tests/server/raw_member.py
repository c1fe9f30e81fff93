"""A raw protocol client for the tests that check what a member was really sent.

It keeps its copy of the room from snapshots and patches only (`protocol`'s
`apply_patch`, `expand_ops`, `apply_legal_edit`, as any client would), over a real
WebSocket, and records everything a test may check afterwards: each frame in order,
the legal list after each patch, how lists came (whole or as edits), and anything a
well-behaved server never sends (`odd`: a patch from a version this member never had,
an edit that also carries a whole list, an edit sent to a protocol-2 member).

    m = await member(server.url, "ann")              # hello, protocol 3
    room = (await m.request("create_room", game="giants", players=2))["data"]["room"]
    await m.wait_for(lambda: m.version >= 3)
    assert not m.odd
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgpack
from websockets.asyncio.client import connect

from protocol import apply_legal_edit, apply_patch, expand_ops


class RawMember:
    """One connection's copy of the room, built from what the server sent it."""

    def __init__(self, ws: Any, protocol: int) -> None:
        self.ws, self.protocol = ws, protocol
        self.ids = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.view: dict[str, Any] | None = None
        self.keys: list[str] = []
        self.seat: int | None = None
        self.version = -1
        self.legal: list[str] = []
        self.base: list[str] = []  # the last non-empty list: what a `legal_edit` applies to
        self.frames: list[dict[str, Any]] = []  # every snapshot and patch, in order
        self.acts = 0  # patches that carried an applied action (`act`)
        self.seen: list[tuple[int, list[str]]] = []  # (acts, legal list) after each patch
        self.edits = 0  # lists that came as `legal_edit`
        self.whole = 0  # non-empty lists that came whole in a patch
        self.odd: list[str] = []
        self.changed = asyncio.Condition()
        self.reader = asyncio.ensure_future(self.read())

    async def read(self) -> None:
        async for frame in self.ws:
            msg = msgpack.unpackb(frame, strict_map_key=False)
            if msg["type"] in ("ok", "error"):
                self.replies.pop(msg["id"]).set_result(msg)
                continue
            self.frames.append(msg)
            if msg["type"] == "snapshot":
                self.view, self.keys, self.seat = msg["view"], msg["keys"], msg["seat"]
                self.version, self.legal = msg["version"], msg["legal"]
                self.base = self.legal
            elif msg["type"] == "patch":
                self._patch(msg)
            async with self.changed:
                self.changed.notify_all()

    def _patch(self, msg: dict[str, Any]) -> None:
        if self.view is None or msg["from"] != self.version:
            self.odd.append(f"a patch from version {msg['from']} reached a member at {self.version}")
            return
        self.view = apply_patch(self.view, expand_ops(msg["ops"], self.keys))
        self.version += 1
        if "legal_edit" in msg:
            if self.protocol < 3 or "legal" in msg:
                self.odd.append(f"a legal_edit to a protocol-{self.protocol} member, whole list too: {'legal' in msg}")
            self.legal = apply_legal_edit(self.base, msg["legal_edit"])
            self.edits += 1
        elif "legal" in msg:
            self.legal = msg["legal"]
            self.whole += bool(self.legal)
        if self.legal:
            self.base = self.legal
        self.acts += "act" in msg
        self.seen.append((self.acts, list(self.legal)))

    async def request(self, kind: str, timeout: float = 20, **fields: Any) -> dict[str, Any]:
        """Send one request and return its reply (`ok` or `error`)."""
        self.ids += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.ids] = fut
        await self.ws.send(msgpack.packb({"type": kind, "id": self.ids, **fields}))
        return await asyncio.wait_for(fut, timeout)

    async def wait_for(self, predicate: Callable[[], object], timeout: float = 10) -> None:
        """Return once `predicate()` holds after some frame (or at once); TimeoutError after `timeout`."""
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(predicate), timeout)

    async def wait_version(self, version: int) -> None:
        await self.wait_for(lambda: self.version >= version)


async def member(url: str, name: str, protocol: int = 3) -> RawMember:
    """A connected member that said hello with `protocol`."""
    m = RawMember(await connect(url), protocol)
    assert (await m.request("hello", protocol=protocol, name=name))["type"] == "ok"
    return m
