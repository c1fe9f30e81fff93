"""Random room sessions played in-process, recording every frame each member is sent.

No sockets and no Redis: a `Room` (or a subclass) with a store that accepts every
write, peers that keep the bytes they are pushed, and a clock the driver moves (room
deadlines are in the views, so their frames depend on it). Each session joins the seats
(protocol 1, 2 or 3, chosen at random), lets spectators watch and leave, plays random
legal moves, and between moves has seats disconnect and come back (with their token,
sometimes on a second connection), members resync, draws offered and declined, the
room's views packed as the idle sweep does, and now and then a resignation.

`play(room_class, ...)` returns every peer's frames in order (the `ok` replies and
request errors included), so two room implementations driven by the same seed can be
compared byte for byte (tests/server/test_publish_frames.py).
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import msgpack

from engines.registry import get_engine
from protocol.codec import encode
from server.errors import RequestError
from server.metrics import Metrics
from server.room import Room


class RecordingPeer:
    def __init__(self, name: str, protocol: int) -> None:
        self.name, self.protocol = name, protocol
        self.frames: list[bytes] = []

    def push(self, frame: bytes) -> None:
        self.frames.append(frame)

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.push(encode({"type": "ok", "id": req_id, "data": data}))

    def send_ok_version(self, req_id: Any, version: int) -> None:
        self.send_ok(req_id, {"version": version})  # the general encoder: recorded frames stay comparable


class AcceptingStore:
    """Every write is accepted at once (none is a plain move: the room's `logged` stays 0)."""

    async def commit(self, room_id: str, *args: Any, **fields: Any) -> bool:
        return False


class Clock:
    """`time.time` while a session runs: moved by the driver only, so the frames (room
    deadlines) do not depend on how many times the room reads the time."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def _session(room_class: type[Room], game: str, rules: str | None, players: int, seed: int,
                   steps: int, deadline: float | None) -> dict[str, list[bytes]]:
    engine = get_engine(game, rules)
    rng = random.Random(seed)
    meta = {"game": engine.info.name, "rules": engine.info.rules, "players": players, "options": {},
            "seed": seed, "private": False, "password": None, "created": 0.0, "deadline": deadline}
    room = room_class(f"room{seed}", engine, meta, engine.new_game(players, {}, seed), AcceptingStore(),  # type: ignore[arg-type]
                      Metrics())
    peers: list[RecordingPeer] = []
    tokens: dict[int, str] = {}
    ids = iter(range(1, 1_000_000))

    def peer(kind: str) -> RecordingPeer:
        made = RecordingPeer(f"{kind}{len(peers)}", rng.choice((1, 2, 3)))
        peers.append(made)
        return made

    async def request(made: RecordingPeer, call: Any) -> None:
        try:
            await call
        except RequestError as exc:
            made.push(f"error {exc.code}".encode())

    def seated(seat: int) -> list[RecordingPeer]:
        return [m.peer for m in room.members if m.seat == seat]  # type: ignore[misc]

    for _ in range(rng.randint(0, 2)):
        spectator = peer("s")
        await request(spectator, room.watch(spectator, next(ids), None))
    for seat in rng.sample(range(players), players):
        player = peer("p")
        await room.join(player, next(ids), seat, None, key=f"key{seed}-{seat}")
        tokens[seat] = _token(player.frames)
    for _ in range(steps):
        if room.status != "playing":
            break
        clock_step()
        roll = rng.random()
        to_act = sorted(engine.to_act(room.state))
        if roll < 0.72:
            seat = rng.choice(to_act)
            connected = seated(seat)
            if not connected:
                player = peer("p")
                await request(player, room.resume(player, next(ids), tokens[seat]))
                connected = [player]
            actor = rng.choice(connected)
            legal = room.legal_for(seat)
            member = next(m for m in room.members if m.peer is actor)
            version = member.version if rng.random() < 0.95 else member.version - 1
            await request(actor, room.act(actor, next(ids), rng.choice(legal), version))
        elif roll < 0.78:
            seat = rng.randrange(players)
            if seated(seat):
                await room.leave(rng.choice(seated(seat)), explicit=False)
        elif roll < 0.84:
            seat = rng.randrange(players)
            player = peer("p")  # a second connection when the seat still has one
            await request(player, room.resume(player, next(ids), tokens[seat]))
        elif roll < 0.88:
            spectator = peer("s")
            await request(spectator, room.watch(spectator, next(ids), None))
        elif roll < 0.91:
            watching = [m.peer for m in room.members if m.seat is None]
            if watching:
                await room.leave(rng.choice(watching))  # type: ignore[arg-type]
        elif roll < 0.93:
            if room.members:
                member = rng.choice(room.members)
                await request(member.peer, room.resync(member.peer, next(ids)))  # type: ignore[arg-type]
        elif roll < 0.96:
            seat = rng.randrange(players)
            if seated(seat):
                asker = seated(seat)[0]
                accepting = room.draw_offer is not None and room.draw_offer != seat
                call = room.offer_draw if rng.random() < (0.1 if accepting else 0.6) else room.decline_draw
                await request(asker, call(asker, next(ids)))
        elif roll < 0.998:
            room.compact(force=True)
        else:
            seat = rng.randrange(players)
            if seated(seat):
                await request(seated(seat)[0], room.resign(seated(seat)[0], next(ids)))
    if room._timer is not None:
        room._timer.cancel()
    return {p.name: p.frames for p in peers}


def _token(frames: list[bytes]) -> str:
    """The token of the join's `ok` (the frame before its snapshot)."""
    for frame in reversed(frames):
        message = msgpack.unpackb(frame, raw=False)
        if message.get("type") == "ok":
            token: str = message["data"]["token"]
            return token
    raise AssertionError("no ok frame")


_CLOCK = Clock()


def clock_step() -> None:
    _CLOCK.now += 1.5


def play(room_class: type[Room], game: str, rules: str | None, players: int, seed: int, steps: int = 120,
         deadline: float | None = None) -> dict[str, list[bytes]]:
    """One session's frames by peer name (see the module's docstring)."""
    real = time.time
    time.time = _CLOCK  # type: ignore[assignment]
    try:
        _CLOCK.now = 1_700_000_000.0
        return asyncio.run(_session(room_class, game, rules, players, seed, steps, deadline))
    finally:
        time.time = real  # type: ignore[assignment]
