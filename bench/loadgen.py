"""The load generator of bench/server.py and bench/scale.py: rooms of 2 bot seats (+
spectators) that play random legal moves at a paced total rate.

    load = Load(url, "giantslayer", None, spectators=1, interval=rooms / rate)
    tasks = [asyncio.ensure_future(load.room_loop(ready)) for _ in range(rooms)]
    ...                       # load.stats: round trips, frame sizes, errors
    load.halt()

`Load(lean=True)` plays the same rooms with bench/lean_load.py's members and pacer,
which spend less of the shared cores per move (what they leave out: see there).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
import wsclient
from websockets.asyncio.client import connect

from protocol import PROTOCOL_VERSION, apply_legal_edit

# The load generator's WebSocket client: the lean one (bench/wsclient.py) leaves the
# cores to the servers; `websockets` is what real Python clients use.
CLIENTS: dict[str, Any] = {"lean": wsclient.connect, "websockets": connect}


@dataclass
class Stats:
    rtts: list[float] = field(default_factory=list)
    seat_frames: list[int] = field(default_factory=list)  # seats' patches without a legal list
    legal_frames: list[int] = field(default_factory=list)  # seats' patches carrying a legal list
    spectator_frames: list[int] = field(default_factory=list)
    view_bytes: list[int] = field(default_factory=list)
    sends: list[float] = field(default_factory=list)  # when each measured act left
    moves: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    measuring: bool = False
    instructions: int = 0  # --callgrind: server instructions in the measured phase

    @property
    def all_frames(self) -> list[int]:
        return self.seat_frames + self.legal_frames + self.spectator_frames


class Pacer:
    """Plays one room's moves from the frames' callbacks: no task wakes up per move.

    Every frame to a member of the room calls `set`; when a seat holds a legal list and
    has no action in flight, one timer fires at the room's next paced slot (`fire`),
    which sends a random legal action. The room's loop (a task) only sets a game up,
    waits for `done` (the game finished, or the load stops), and leaves.
    """

    def __init__(self, load: Load) -> None:
        self.load = load
        self.seats: list[Member] = []
        self.room = ""
        self.next_move = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.actor: Member | None = None  # who acts when the timer fires
        self.done: asyncio.Future[None] | None = None  # set while a game is played
        self.sending: asyncio.Future[None] | None = None

    def play(self, seats: list[Member], room: str, next_move: float) -> asyncio.Future[None]:
        self.seats, self.room, self.next_move = seats, room, next_move
        self.done = asyncio.get_running_loop().create_future()
        self.set()
        return self.done

    def set(self) -> None:
        """A frame came to a member: finish the game, or arm the next move's timer."""
        done = self.done
        if done is None or self.timer is not None or done.done():
            return
        seats = self.seats
        if seats[0].finished or self.load.stop.is_set():
            done.set_result(None)
            return
        for s in seats:
            if s.legal and s.sent_at is None:  # the actor is chosen now, as a player would
                self.actor = s
                self.arm(self.next_move - time.perf_counter())
                return

    def arm(self, delay: float) -> None:
        """The actor's move is due in `delay` seconds: send it then (`fire`)."""
        self.timer = asyncio.get_running_loop().call_later(delay, self.fire)

    def fire(self) -> None:
        self.timer = None
        load, actor = self.load, self.actor
        self.next_move = load.next_slot(self.next_move)
        if actor is None or not actor.legal or self.done is None or self.done.done():
            self.set()  # another seat's move changed it meanwhile
            return
        # sent_at holds the next action back until our action's patch came (protocol 2
        # resends a legal list only when it changed, so it is not cleared here)
        actor.sent_at = time.perf_counter()
        if load.stats.measuring:
            load.stats.sends.append(actor.sent_at)
        data = msgpack.packb({"type": "act", "id": 0, "room": self.room, "action": load.rng.choice(actor.legal)})
        ws = actor.ws
        if isinstance(ws, wsclient.LeanConnection):
            ws.send_now(data)
        else:
            self.sending = asyncio.ensure_future(ws.send(data))  # (a reference keeps the task alive)
        self.set()  # another seat may act now too (simultaneous steps)

    def stop(self) -> None:
        """The load stops: end the game being played (called for every room)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.done is not None and not self.done.done():
            self.done.set_result(None)


class Member:
    """One connection in a room: a seat that answers its legal list, or a spectator.

    `on_frame` handles each frame from the server; with the lean client it is called
    straight from the socket's callback (no task per connection), with `websockets`
    from a reader task. Any frame calls `wake.set()` (the room's Pacer, shared by its
    members), which sends the room's next move when it is due. A patch whose `from` is not
    the member's version counts as a `version_gap` error.
    """

    def __init__(self, ws: Any, load: Load, spectator: bool, wake: Pacer) -> None:
        self.ws = ws
        self.load = load
        self.spectator = spectator
        self.ids = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.version = -1
        self.legal: list[str] = []
        self.base: list[str] = []  # the last non-empty legal list (protocol 3's legal_edit applies to it)
        self.sent_at: float | None = None  # when our act left; None once its patch (or error) came
        self.seat: int | None = None
        self.wake = wake
        self.finished = False
        self.room = ""  # the room it is in (a `moved` advisory reconnects naming it)
        self.token: str | None = None  # its seat's token (resumed after a `moved`)
        self.moving = False

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.ids] = fut
        await self.ws.send(msgpack.packb({"type": kind, "id": self.ids, **fields}))
        return await fut

    async def move(self, room: str) -> None:
        """Follow a `moved` advisory as the shipped clients do: once no action of ours
        is in flight (and none is sent meanwhile), a new socket naming the room resumes
        the seat (or watches); frames of the old one are dropped from then on, and it
        closes. Counted as `moved_followed` among the errors (it is not one)."""
        while self.sent_at is not None:
            await asyncio.sleep(0.001)
        self.sent_at = time.perf_counter()  # holds the pacer's next action for this seat back
        old = self.ws
        try:
            url = f"{self.load.url.rstrip('/')}/?room={room}"
            self.ws = await self.open(url)
            await self.request("hello", protocol=self.load.protocol, name="moved")
            if isinstance(old, wsclient.LeanConnection):
                old.on_frame = lambda frame: None
            if self.token is not None:
                await self.request("resume", room=self.room, token=self.token)
            elif self.room:
                await self.request("watch", room=self.room)
            self.load.stats.errors["moved_followed"] = self.load.stats.errors.get("moved_followed", 0) + 1
            await old.close()
        finally:
            self.moving = False
            self.sent_at = None
            self.wake.set()

    async def open(self, url: str) -> Any:
        """A new connection whose frames come to `on_frame` (while it is `self.ws`)."""
        ws = await CLIENTS[self.load.client](url, compression=None, max_size=2**22)
        if isinstance(ws, wsclient.LeanConnection):
            ws.on_frame = self.on_frame
        else:
            asyncio.get_running_loop().create_task(self._read(ws))
        return ws

    async def _read(self, ws: Any) -> None:
        async for frame in ws:
            if ws is self.ws:
                self.on_frame(frame)

    async def reader(self) -> None:
        async for frame in self.ws:
            self.on_frame(frame)

    def on_frame(self, frame: bytes) -> None:
        now = time.perf_counter()
        stats = self.load.stats  # replaced at each measured phase
        msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
        kind = msg["type"]
        if kind == "moved":  # protocol 4: the room's owner is another worker of this server
            stats.errors["moved"] = stats.errors.get("moved", 0) + 1
            if self.load.follow_moves and not self.moving:
                self.moving = True
                asyncio.get_running_loop().create_task(self.move(msg["room"]))
            return
        if kind in ("ok", "error"):
            if kind == "error":
                stats.errors[msg["code"]] = stats.errors.get(msg["code"], 0) + 1
                if msg["id"] == 0:  # our act was refused: look again
                    self.sent_at = None
            fut = self.replies.pop(msg["id"], None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return
        if kind == "snapshot":
            self.version, self.legal, self.seat = msg["version"], msg.get("legal") or [], msg["seat"]
            self.base = self.legal
            stats.view_bytes.append(len(msgpack.packb(msg["view"])))
        elif kind == "patch":
            events = msg.get("events", ())
            act = msg.get("act") or next(([e["seat"]] for e in events if e.get("type") == "action"), [None])
            if self.sent_at is not None and act[0] == self.seat:  # our action's patch
                if stats.measuring:
                    stats.rtts.append(now - self.sent_at)
                    stats.moves += 1
                self.sent_at = None
            if "legal" in msg:  # absent: unchanged
                self.legal = msg["legal"]
            elif "legal_edit" in msg:
                self.legal = apply_legal_edit(self.base, msg["legal_edit"])
            if self.legal:
                self.base = self.legal
            if stats.measuring:
                if self.spectator:
                    stats.spectator_frames.append(len(frame))
                else:
                    legal = msg.get("legal") or msg.get("legal_edit")
                    (stats.legal_frames if legal else stats.seat_frames).append(len(frame))
            if msg["from"] != self.version:  # a patch lost, repeated or out of order
                stats.errors["version_gap"] = stats.errors.get("version_gap", 0) + 1
            self.version = msg.get("to", msg["from"] + 1)  # protocol 2 leaves out `to`
            if any(e.get("type") == "finished" for e in events):
                self.finished = True
        self.wake.set()


@dataclass
class Load:
    """The clients of one run: rooms of 2 seats + spectators, paced by `interval`."""

    url: str
    game: str
    rules: str | None
    spectators: int
    interval: float
    stats: Stats = field(default_factory=Stats)
    client: str = "lean"
    protocol: int = PROTOCOL_VERSION
    follow_moves: bool = True  # reconnect naming the room on a `moved` advisory (protocol 4)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    rng: random.Random = field(default_factory=lambda: random.Random(1))
    pacers: list[Pacer] = field(default_factory=list)
    # bench/lean_load.py's members and pacer: the same rooms for less CPU per move
    lean: bool = False

    def settled(self) -> None:
        """Every room is set up (the bench calls this before it measures): in lean mode,
        bench/lean_load.py's `settled` tunes this process's garbage collector."""
        if self.lean:
            import lean_load

            lean_load.settled()

    def halt(self) -> None:
        """Stop the load: every room ends its game and leaves (its loop then returns)."""
        self.stop.set()
        for pacer in self.pacers:
            pacer.stop()

    async def member(self, name: str, spectator: bool, wake: Pacer, room: str | None = None) -> Member:
        # `room`: the room it is about to join, named in the URL (a routing hint: a
        # --workers server hands the connection to the worker owning the room).
        url = f"{self.url.rstrip('/')}/?room={room}" if room else self.url
        if self.lean:
            import lean_load

            return await lean_load.member(self, url, spectator, wake, name)
        ws = await CLIENTS[self.client](url, compression=None, max_size=2**22)
        m = Member(ws, self, spectator, wake)
        if isinstance(ws, wsclient.LeanConnection):
            ws.on_frame = m.on_frame
        else:
            asyncio.get_running_loop().create_task(m.reader())
        await m.request("hello", protocol=self.protocol, name=name)
        return m

    def next_slot(self, slot: float) -> float:
        """The room's next move time after the move of `slot`: one interval later.

        A room that fell more than an interval behind (a game's set-up, a stall) starts
        again at a random point of the next interval. It must not restart from the moment
        it caught up: that moment is when the server's replies arrived, the same for every
        room that waited on the same stall, and rooms restarted together stay together
        (the schedule is periodic), so the server would get their moves as one burst
        every interval from then on instead of an even stream.
        """
        now = time.perf_counter()
        slot += self.interval
        if slot < now - self.interval:
            slot = now + self.rng.random() * self.interval
        return slot

    async def room_loop(self, ready: asyncio.Queue[None]) -> None:
        """Two seats in one room; a new room when a game ends."""
        if self.lean:
            import lean_load

            wake: Pacer = lean_load.LeanPacer(self)
        else:
            wake = Pacer(self)
        create: dict[str, Any] = {"game": self.game, "players": 2}
        if self.rules:
            create["rules"] = self.rules
        # The first seat creates the loop's rooms (each on its node); the others connect
        # once the first room exists and name it, as a client following a room link does.
        seats = [await self.member("a", False, wake)]
        room = await self.create(seats[0], create)
        seats.append(await self.member("b", False, wake, room))
        watchers = [await self.member("w", True, wake, room) for _ in range(self.spectators)]
        await ready.put(None)
        next_move = time.perf_counter() + self.rng.random() * self.interval
        self.pacers.append(wake)
        while not self.stop.is_set():
            if room is None:
                room = await self.create(seats[0], create)
            for w in watchers:
                w.room = room
                await w.request("watch", room=room)
            for s in seats:
                s.finished = False
                s.room = room
                joined = await s.request("join", room=room)
                s.token = (joined.get("data") or {}).get("token")
            await wake.play(seats, room, next_move)
            next_move = wake.next_move
            for m in (*seats, *watchers):
                await m.request("leave", room=room)
            room = None
        for m in (*seats, *watchers):
            await m.ws.close()

    @staticmethod
    async def create(seat: Member, create: dict[str, Any]) -> str:
        created = await seat.request("create_room", **create)
        if created["type"] != "ok":
            raise RuntimeError(f"create_room failed: {created}")
        return str(created["data"]["room"])
