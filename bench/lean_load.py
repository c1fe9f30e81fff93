"""The load generator's lean mode (`Load(lean=True)`): the same rooms for less CPU per move.

bench/scale.py runs its load generator on the 2 cores it measures the nodes on, so every
microsecond the load generator spends per move is taken from the nodes (issue 12's
goal, 2 nodes >= 1.6x one node, is bound by 2 cores / (node + Redis + load generator)
per move). This mode still does everything a client does: the HTTP upgrade and masked
binary frames (RFC 6455 §5.3) on real loopback connections, every seat answering its
legal list (whole or as `legal_edit`, protocol 3) with a random legal action when the
room's paced slot comes, spectators connected and reading every frame, and the round
trip measured from an act sent to the actor's own patch. What it leaves out, per move:

- a spectator's patches are read (the socket is drained on every readiness) and
  counted, not decoded: the frame is recognised as a patch by its first packed keys
  (`{"type": "patch", ...}` as the server packs it); anything else (replies,
  snapshots, `moved`), and every frame while the spectator has a request in flight,
  is decoded as `loadgen.Member` does. So spectators do not check version gaps (the
  seats still do);
- an act frame is its room's packed head (`type`, `id`, `room`, `action` key, packed
  once per game) and the packed action: the same bytes as
  `msgpack.packb({"type": "act", "id": 0, "room": room, "action": action})`;
- the `ok` that answers each act is not decoded either (when no other request of the
  member is in flight; an `error` is);
- whole frames from the server are taken straight from the read's bytes; the WebSocket masking key comes from a pool of
  `os.urandom` bytes, the frame header from a table;
- a seat's patch wakes the room's pacer only when it can matter: a legal list came, the
  seat's own act came back, or the game finished; the pacer sends a move that is due
  at once instead of through a timer.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from typing import TYPE_CHECKING, Any

import msgpack
import wsclient
from loadgen import Member, Pacer
from websockets.speedups import apply_mask

from protocol import apply_legal_edit

if TYPE_CHECKING:
    from loadgen import Load

# A patch as the server packs it starts with a map header, then these bytes
# (protocol/codec.py: patch_head); anything else is decoded.
PATCH_START = msgpack.packb("type") + msgpack.packb("patch")
OK_START = msgpack.packb("type") + msgpack.packb("ok")  # a reply (`error` is another type)
_HEADS = [bytes((0x82, 0x80 | n)) for n in range(126)]  # a masked binary frame's header
_KEY_POOL = 1 << 16


class LeanWire(wsclient.LeanConnection):
    """bench/wsclient.py's connection with a fast path for the load's frames."""

    _keys = b""
    _key_at = 0

    def data_received(self, data: bytes) -> None:
        # Whole binary frames, unmasked and final (the load's usual case: one, or an
        # `ok` and a patch): each payload straight to on_frame. From the first thing
        # that is not one (a partial frame, a control frame, the upgrade): the general
        # parser, with the rest.
        if self._buf or self._handshaking:
            super().data_received(data)
            return
        pos, n = 0, len(data)
        while n - pos > 2 and data[pos] == 0x82:
            length = data[pos + 1]
            if length < 126:  # the length itself (and the mask bit clear)
                start = pos + 2
            elif length == 126 and n - pos > 4:
                length, start = data[pos + 2] << 8 | data[pos + 3], pos + 4
            else:
                break
            end = start + length
            if end > n:
                break
            self.on_frame(data[start:end])  # type: ignore[misc]
            pos = end
        if pos < n:
            super().data_received(data[pos:] if pos else data)

    def send_now(self, data: bytes) -> None:
        """One masked binary frame, written at once (a small one through the fast path)."""
        n = len(data)
        if n >= 126 or self.closed or self.transport is None or self.transport.is_closing():
            super().send_now(data)
            return
        at = LeanWire._key_at
        if at + 4 > len(LeanWire._keys):
            LeanWire._keys, at = os.urandom(_KEY_POOL), 0
        key = LeanWire._keys[at:at + 4]
        LeanWire._key_at = at + 4
        self.transport.write(_HEADS[n] + key + apply_mask(data, key))


def settled() -> None:
    """The rooms are set up: what exists now (connections, members, code) lives as long
    as the load, so the cycle collector stops scanning it (`gc.freeze`); collections
    then look at what the moves allocate only."""
    gc.collect()
    gc.freeze()


async def member(load: Load, url: str, spectator: bool, wake: Pacer, name: str) -> Member:
    """A connected `LeanMember` that said hello (what `Load.member` does in lean mode)."""
    m = LeanMember(None, load, spectator, wake)
    m.ws = await m.open(url)
    await m.request("hello", protocol=load.protocol, name=name)
    return m


class LeanMember(Member):
    """`loadgen.Member` with the lean `on_frame` (the module's docstring says what differs)."""

    async def open(self, url: str) -> Any:
        ws = await wsclient.connect(url, factory=LeanWire)
        ws.on_frame = self.on_frame
        return ws

    def on_frame(self, frame: bytes) -> None:
        if self.spectator and not self.replies and frame.startswith(PATCH_START, 1):
            stats = self.load.stats
            if stats.measuring:
                stats.spectator_frames.append(len(frame))
            return
        if self.spectator or not frame.startswith(PATCH_START, 1):
            if not self.replies and frame.startswith(OK_START, 1):
                return  # the `ok` of an act (id 0: nobody waits for it)
            super().on_frame(frame)
            return
        now = time.perf_counter()
        stats = self.load.stats
        # raw: strings as bytes (no UTF-8 decoding of the legal list's actions; the one
        # sent is decoded then, LeanPacer.send)
        msg = msgpack.unpackb(frame, raw=True, strict_map_key=False)
        wake = False
        act = msg.get(b"act")
        events = msg.get(b"events")
        if act is None and events:
            act = next(([e[b"seat"]] for e in events if e.get(b"type") == b"action"), None)
        if act is not None and self.sent_at is not None and act[0] == self.seat:  # our action's patch
            if stats.measuring:
                stats.rtts.append(now - self.sent_at)
                stats.moves += 1
            self.sent_at = None
            wake = True
        carried = legal = msg.get(b"legal")
        if legal is not None:  # absent: unchanged
            self.legal = legal
            if legal:
                self.base = legal
                wake = True
        elif b"legal_edit" in msg:  # (rare: long lists) applied as str lists
            carried = msgpack.unpackb(frame, raw=False, strict_map_key=False)["legal_edit"]
            base = [a.decode() if type(a) is bytes else a for a in self.base]
            self.legal = apply_legal_edit(base, carried)
            if self.legal:
                self.base = self.legal
                wake = True
        if stats.measuring:
            (stats.legal_frames if carried else stats.seat_frames).append(len(frame))
        if msg[b"from"] != self.version:  # a patch lost, repeated or out of order
            stats.errors["version_gap"] = stats.errors.get("version_gap", 0) + 1
        self.version = msg.get(b"to", msg[b"from"] + 1)
        if events and any(e.get(b"type") == b"finished" for e in events):
            self.finished = True
            wake = True
        if wake:
            self.wake.set()


class LeanPacer(Pacer):
    """`loadgen.Pacer` that sends a move already due at once (no timer), and packs its
    act frames from a head packed once per game."""

    head = b""

    def __init__(self, load: Load) -> None:
        super().__init__(load)
        self.loop = asyncio.get_running_loop()

    def play(self, seats: list[Member], room: str, next_move: float) -> Any:
        # the act's packed keys and room, up to the action's value (an empty str's
        # one byte, dropped)
        self.head = msgpack.packb({"type": "act", "id": 0, "room": room, "action": ""})[:-1]
        return super().play(seats, room, next_move)

    def arm(self, delay: float) -> None:
        """A move already due is sent at once, not through a timer of 0 s."""
        if delay > 0:
            self.timer = self.loop.call_later(delay, self.fire)
        else:
            self.send()

    def fire(self) -> None:
        self.timer = None
        self.send()

    def send(self) -> None:
        load, actor = self.load, self.actor
        self.next_move = load.next_slot(self.next_move)
        if actor is None or not actor.legal or self.done is None or self.done.done():
            self.set()  # another seat's move changed it meanwhile
            return
        actor.sent_at = sent = time.perf_counter()
        if load.stats.measuring:
            load.stats.sends.append(sent)
        action = load.rng.choice(actor.legal)
        if type(action) is bytes:  # from a patch (LeanMember.on_frame): a str on the wire
            action = action.decode()
        actor.ws.send_now(self.head + msgpack.packb(action))
        self.set()  # another seat may act now too (simultaneous steps)
