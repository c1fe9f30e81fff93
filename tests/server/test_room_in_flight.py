"""A move's frames are built while its write is in flight and sent only once it is
stored (`Room.act`: the store calls the write's `written` hook once it has left for
Redis). In-process, with a store that calls the hook and then answers as told: a write
refused sends nobody anything and keeps nothing of the plan, and a room lost while its
write was in flight (its members handed to another node: `Lobby._room_lost`) sends
its old members nothing built from the move. Real Redis and its faults:
tests/server/test_faults_unsent.py; every frame against a plain room:
tests/server/test_publish_frames.py."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from engines.registry import get_engine
from server.errors import RequestError
from server.metrics import Metrics
from server.room import Room
from server.seats import Member, SeatState
from server.store import StorageUnavailable
from tests.server.frame_record import RecordingPeer


class FlightStore:
    """Calls a write's `written` hook, then `during()`, then stores it or refuses it."""

    def __init__(self) -> None:
        self.refuse = False
        self.hooks = 0
        self.during: Callable[[], None] = lambda: None

    async def commit(self, room_id: str, **fields: Any) -> bool:
        hook = fields.get("written")
        if hook is not None:
            self.hooks += 1
            hook()
        await asyncio.sleep(0)  # the reply is on its way
        self.during()
        if self.refuse:
            raise StorageUnavailable("the write was settled as not applied")
        return False


def giantslayer_room(store: FlightStore) -> tuple[Room, list[RecordingPeer]]:
    engine = get_engine("giantslayer", None)
    meta = {"game": engine.info.name, "rules": engine.info.rules, "players": 2, "options": {}, "seed": 3,
            "private": False, "password": None, "created": 0.0, "deadline": None}
    room = Room("r1", engine, meta, engine.new_game(2, {}, 3), store, Metrics())  # type: ignore[arg-type]
    room.seats = [SeatState(f"n{s}", f"t{s}") for s in range(2)]
    room.status = "playing"
    peers = [RecordingPeer("a", 3), RecordingPeer("b", 2), RecordingPeer("s", 3)]
    room.members = [Member(peers[0], 0), Member(peers[1], 1), Member(peers[2], None)]
    for member in room.members:
        room.send_snapshot(member)
    return room, peers


def seen(room: Room) -> list[tuple[Any, ...]]:
    return [(m.view, m.version, m.legal_hash, m.legal_base) for m in room.members]


async def test_a_refused_write_sends_nobody_the_frames_built_in_flight() -> None:
    store = FlightStore()
    room, peers = giantslayer_room(store)
    for turn in range(6):
        seat = sorted(room.engine.to_act(room.state))[0]
        actor = room.members[seat]
        action = room.legal_for(seat)[0]
        sent = [len(p.frames) for p in peers]
        before = seen(room)
        store.refuse = turn % 2 == 0
        if store.refuse:
            with pytest.raises(RequestError) as refused:
                await room.act(actor.peer, turn, action, actor.version)
            assert refused.value.code == "storage_unavailable"
            assert [len(p.frames) for p in peers] == sent  # nothing of the move went out
            assert seen(room) == before  # nobody's last view, version or legal base moved
            assert room._planned is None and room._flight is None  # nothing of it is kept
        else:
            await room.act(actor.peer, turn, action, actor.version)
            assert [len(p.frames) - n for p, n in zip(peers, sent, strict=True)] == [
                2 if p is actor.peer else 1 for p in peers]  # the ok, and each member's patch
            assert all(m.version == b[1] + 1 for m, b in zip(room.members, before, strict=True))
    assert store.hooks == 6  # every write's frames were built in flight


async def test_a_room_lost_in_flight_sends_its_old_members_nothing_of_the_move() -> None:
    store = FlightStore()
    room, peers = giantslayer_room(store)
    sent = [len(p.frames) for p in peers]
    actor = room.members[0]

    def lost() -> None:  # what Lobby._room_lost does: the members go to the new owner
        room.closing = True
        room.members = []

    store.during = lost
    await room.act(actor.peer, 1, room.legal_for(0)[0], actor.version)
    assert store.hooks == 1
    # The actor's ok only (its write is stored); nobody gets a patch from this node.
    assert [len(p.frames) - n for p, n in zip(peers, sent, strict=True)] == [1, 0, 0]
    assert room._planned is None
