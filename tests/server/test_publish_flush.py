"""A move's patch reaches the members who need no legal list before the next actor's
legal list is worked out (`server.publish.flush_before`): the one who just acted gets
its `ok` and patch without waiting for that work (issue 13: the actor's round trip),
in open games (`_publish_open`) and hidden-information ones (the general loop) alike.
Which bytes each member gets is tests/server/test_publish_frames.py's."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgpack
import pytest

from engines.registry import get_engine
from protocol.codec import encode
from server.metrics import Metrics
from server.room import Room
from tests.server.frame_record import AcceptingStore


class FlushingPeer:
    """A connection that keeps its frames and how many of them were written (flushed)."""

    def __init__(self, name: str) -> None:
        self.name, self.protocol = name, 3
        self.frames: list[bytes] = []
        self.written = 0

    def push(self, frame: bytes) -> None:
        self.frames.append(frame)

    def flush(self) -> None:
        self.written = len(self.frames)

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.push(encode({"type": "ok", "id": req_id, "data": data}))

    def send_ok_version(self, req_id: Any, version: int) -> None:
        self.send_ok(req_id, {"version": version})


class WatchedEngine:
    """The room's engine, noting for each legal list it is asked for how many frames
    each peer had pushed and not yet written."""

    def __init__(self, engine: Any, peers: list[FlushingPeer]) -> None:
        self._engine, self.peers = engine, peers
        self.asked: list[dict[str, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def legal_notation(self, state: Any, seat: int) -> Any:
        self.asked.append({p.name: len(p.frames) - p.written for p in self.peers})
        return self._engine.legal_notation(state, seat)


async def _moves(game: str, rules: str | None, players: int, seed: int, moves: int) -> int:
    engine = get_engine(game, rules)
    meta = {"game": engine.info.name, "rules": engine.info.rules, "players": players, "options": {},
            "seed": seed, "private": False, "password": None, "created": 0.0, "deadline": None}
    room = Room(f"room{seed}", engine, meta, engine.new_game(players, {}, seed), AcceptingStore(),  # type: ignore[arg-type]
                Metrics())
    seats = [FlushingPeer(f"seat{i}") for i in range(players)]
    spectator = FlushingPeer("spectator")
    ids = iter(range(1, 1_000_000))
    await room.watch(spectator, next(ids), None)
    for seat, peer in enumerate(seats):
        await room.join(peer, next(ids), seat, None, key=f"key{seed}-{seat}")
    watched = WatchedEngine(engine, [*seats, spectator])
    room.engine = watched  # type: ignore[assignment]
    rng = random.Random(seed)
    checked = 0
    for _ in range(moves):
        if room.status != "playing":
            break
        to_act = sorted(engine.to_act(room.state))
        seat = rng.choice(to_act)
        actor = seats[seat]
        sent = len(actor.frames)
        action = rng.choice(room.legal_for(seat))
        watched.asked.clear()  # what the room asks for from here on
        await room.act(actor, next(ids), action, None)
        reply = msgpack.unpackb(actor.frames[sent], raw=False)
        assert reply["type"] == "ok", reply
        acting = set(engine.to_act(room.state)) if room.status == "playing" else set()
        if not watched.asked or seat in acting:
            continue  # no list worked out in publish, or the actor is to act again
        # The list publish worked out (its last question): the actor's `ok` and patch and
        # the spectator's patch were written before it
        asked = watched.asked[-1]
        assert asked[actor.name] == 0 and asked["spectator"] == 0, asked
        assert msgpack.unpackb(actor.frames[-1], raw=False)["type"] == "patch"
        checked += 1
    return checked


@pytest.mark.parametrize(("game", "rules", "players"), [
    ("giantslayer", None, 2),
    ("tara", None, 2),
    ("causeway", "barrier", 2),
    ("causeway", "spellstone", 2),
    ("giants", None, 3),
])
def test_the_actor_and_spectators_get_their_patch_before_the_next_legal_list(game: str, rules: str | None,
                                                                              players: int) -> None:
    checked = asyncio.run(_moves(game, rules, players, seed=7, moves=40))
    assert checked >= 5  # moves that handed the turn to another seat, each checked
