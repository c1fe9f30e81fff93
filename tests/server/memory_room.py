"""A two-seat Giantslayer `Room` in memory, playing, with a stand-in store and peers:
for tests of the room's own machinery (its lock, its timers) without sockets."""

from __future__ import annotations

import inspect
from typing import Any

from engines.registry import get_engine
from server.metrics import Metrics
from server.room import Room
from server.seats import Member, SeatState
from server.store import Store

_COMMIT = inspect.signature(Store.commit)


def commit_arguments(room_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """A stand-in store's `commit(room_id, *args, **kwargs)` as `Store.commit` would
    take them (the room passes them by position): name -> value, defaults included."""
    bound = _COMMIT.bind(None, room_id, *args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


class MemoryPeer:
    """A member's connection that counts its frames and keeps its `ok` replies."""

    name, protocol = "p", 3

    def __init__(self) -> None:
        self.frames = 0
        self.oks: list[dict[str, Any]] = []

    def push(self, frame: bytes) -> None:
        self.frames += 1

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.oks.append(data)

    def send_ok_version(self, req_id: Any, version: int) -> None:
        self.oks.append({"version": version})


def two_seat_room(room_id: str, store: Any, seed: int, deadline: float | None = None) -> tuple[Room, list[MemoryPeer]]:
    """A playing room whose two seats are members (each sent its snapshot); `store`
    answers its commits, `deadline` is the room's seconds per move (None: none)."""
    engine = get_engine("giantslayer")
    meta = {"game": "giantslayer", "rules": engine.info.rules, "players": 2, "options": {}, "seed": seed,
            "private": False, "password": None, "created": 0.0, "deadline": deadline}
    room = Room(room_id, engine, meta, engine.new_game(2, {}, seed), store, Metrics())
    room.seats = [SeatState("a", "x"), SeatState("b", "y")]
    room.status = "playing"
    peers = [MemoryPeer(), MemoryPeer()]
    room.members = [Member(peers[0], 0), Member(peers[1], 1)]  # type: ignore[arg-type]
    for member in room.members:
        room.send_snapshot(member)
    return room, peers
