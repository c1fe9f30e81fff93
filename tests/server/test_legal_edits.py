"""Protocol 3's `legal_edit`: each seat rebuilds exactly its own legal list, at every step,
and nothing of a seat's list reaches another seat or a spectator.

A 2-player GIANTS game (hidden screens: the seats' lists differ, and a list may name
pieces behind its own screen) played by raw protocol-3 clients over real WebSockets,
then resigned; the engine replays the stored log and says what each seat's list was
after each action. A protocol-2 member of the same room gets whole lists only.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect

from engines import registry
from protocol import apply_legal_edit, apply_patch, expand_ops
from server.legal_lists import EDIT_FROM, list_bytes

pytestmark = pytest.mark.redis


class Member:
    """A raw client: the view from snapshot + patches, the legal list from `legal`
    and `legal_edit`, and for each patch what it carried."""

    def __init__(self, ws: Any, protocol: int) -> None:
        self.ws, self.protocol = ws, protocol
        self.ids = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.view: dict[str, Any] | None = None
        self.keys: list[str] = []
        self.seat: int | None = None
        self.legal: list[str] = []
        self.base: list[str] = []
        self.acts = 0  # actions this member has seen applied (each patch with `act`)
        self.seen: list[tuple[int, list[str]]] = []  # (acts, legal list) after each patch
        self.edits = 0
        self.whole = 0
        self.changed = asyncio.Event()
        self.reader = asyncio.ensure_future(self.read())

    async def read(self) -> None:
        async for frame in self.ws:
            msg = msgpack.unpackb(frame, strict_map_key=False)
            if msg["type"] in ("ok", "error"):
                self.replies.pop(msg["id"]).set_result(msg)
            elif msg["type"] == "snapshot":
                self.view, self.keys, self.seat = msg["view"], msg["keys"], msg["seat"]
                self.legal = self.base = msg["legal"]
            elif msg["type"] == "patch":
                assert self.view is not None
                self.view = apply_patch(self.view, expand_ops(msg["ops"], self.keys))
                if "legal_edit" in msg:
                    assert self.protocol >= 3 and "legal" not in msg
                    self.legal = apply_legal_edit(self.base, msg["legal_edit"])
                    self.edits += 1
                elif "legal" in msg:
                    self.legal = msg["legal"]
                    self.whole += bool(self.legal)
                if self.legal:
                    self.base = self.legal
                self.acts += "act" in msg
                self.seen.append((self.acts, list(self.legal)))
            self.changed.set()

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.ids] = fut
        await self.ws.send(msgpack.packb({"type": kind, "id": self.ids, **fields}))
        return await asyncio.wait_for(fut, 10)


async def member(url: str, name: str, protocol: int = 3) -> Member:
    m = Member(await connect(url), protocol)
    assert (await m.request("hello", protocol=protocol, name=name))["type"] == "ok"
    return m


async def test_each_seat_rebuilds_its_own_legal_list_and_no_other(giants_server: Any) -> None:
    url = giants_server.url
    seats = [await member(url, "ann"), await member(url, "bob")]
    watcher, old = await member(url, "sam"), await member(url, "old", protocol=2)
    room = (await seats[0].request("create_room", game="giants", players=2))["data"]["room"]
    for m in (watcher, old):
        assert (await m.request("watch", room=room))["type"] == "ok"
    for i, m in enumerate(seats):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    rng = random.Random(3)
    moves = 0
    while moves < 160:
        assert all(m.view is not None for m in seats)
        ready = [m for m in seats if m.legal and m.seat not in m.view["room"]["answered"]]  # type: ignore[index]
        if not ready:
            for m in seats:
                m.changed.clear()
            await asyncio.wait([asyncio.ensure_future(m.changed.wait()) for m in seats], timeout=5,
                               return_when=asyncio.FIRST_COMPLETED)
            continue
        actor = ready[0]
        reply = await actor.request("act", room=room, action=rng.choice(actor.legal))
        assert reply["type"] == "ok", reply  # the rebuilt list held only legal actions
        moves += 1
        while actor.acts < moves or any(m.acts < moves for m in (*seats, watcher, old)):
            await asyncio.sleep(0.01)
    played = [len(m.seen) for m in seats]  # the resignation's patch empties every list
    assert (await seats[1].request("resign", room=room))["type"] == "ok"
    replay = (await seats[0].request("replay", room=room))["data"]
    for m in (*seats, watcher, old):
        m.ws.close_timeout = 1
        await m.ws.close()

    # What each seat's legal list was after each action, from the stored log.
    engine = registry.get_engine("giants")
    state = engine.new_game(replay["players"], replay["options"], replay["seed"])
    truth = [[engine.legal_notation(state, s) if s in engine.to_act(state) else [] for s in (0, 1)]]
    for entry in replay["actions"][:moves]:
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
        truth.append([engine.legal_notation(state, s) if s in engine.to_act(state) else [] for s in (0, 1)])
    # No seat ever held an action only the other seat could take. (In some random games
    # one seat's actions are all among the other's: then only the other seat's check
    # says something, so at least one of the two must have such actions.)
    only_other = []
    for seat, m in enumerate(seats):
        assert m.seen and all(legal == truth[acts][seat] for acts, legal in m.seen[: played[seat]])
        other = {a for row in truth for a in row[1 - seat]} - {a for row in truth for a in row[seat]}
        assert not other & {a for _, legal in m.seen for a in legal}
        only_other.append(other)
    assert any(only_other)
    # The edits were used; the protocol-2 member and the spectator never got a legal
    # list or an edit.
    # Long lists come as edits, short ones whole: an edit needs a long list after a
    # long base, and is sent unless it would not be smaller (rare). How many such
    # lists a seat gets depends on the room's random game (19-36 in 160 moves).
    for m in seats:
        can = editable(m.seen)
        assert 0 < m.edits <= can <= m.edits + max(2, can // 10), (m.edits, can)
    assert old.edits == watcher.edits == 0 and all(legal == [] for m in (old, watcher) for _, legal in m.seen)


async def test_a_protocol_2_seat_gets_whole_lists(giants_server: Any) -> None:
    url = giants_server.url
    ann, bob = await member(url, "ann", protocol=2), await member(url, "bob", protocol=2)
    room = (await ann.request("create_room", game="giantslayer", players=2))["data"]["room"]
    for i, m in enumerate((ann, bob)):
        assert (await m.request("join", room=room, seat=i))["type"] == "ok"
    for moves in range(1, 11):
        while not any(m.legal for m in (ann, bob)) or min(m.acts for m in (ann, bob)) < moves - 1:
            await asyncio.sleep(0.01)
        actor = ann if ann.legal else bob
        assert (await actor.request("act", room=room, action=actor.legal[0]))["type"] == "ok"
    while min(m.acts for m in (ann, bob)) < 10:
        await asyncio.sleep(0.01)
    assert ann.whole + bob.whole >= 9 and ann.edits == bob.edits == 0
    for m in (ann, bob):
        await m.ws.close()


def editable(seen: list[tuple[int, list[str]]]) -> int:
    """How many of the lists a seat was sent could have come as an edit: a list of at
    least EDIT_FROM bytes sent (it differs from the one before, maybe []) while the
    seat's last non-empty list (the base) had at least EDIT_FROM bytes too."""
    count, previous, base = 0, None, None
    for _, legal in seen:
        sent = legal != previous
        if sent and legal and base is not None and min(list_bytes(legal), list_bytes(base)) >= EDIT_FROM:
            count += 1
        if legal:
            base = legal
        previous = legal
    return count
