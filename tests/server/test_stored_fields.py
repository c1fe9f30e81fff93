"""A commit sends only the room's fields that changed (a move: its action count), so
what Redis holds must still be the whole room: after every change, and for rooms whose
earlier changes were written field by field in full (every version before this one)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from engines.registry import get_engine
from server.metrics import Metrics
from server.room import Room
from server.seats import SeatState
from server.store import RoomRecord, StaleWriteError, StorageUnavailable, Store

pytestmark = pytest.mark.redis


def stored_as_live(record: RoomRecord | None, live: Any) -> None:
    """The stored room is the live one, field by field."""
    assert record is not None
    assert record.version == live.version
    assert record.status == live.status
    assert record.deadline == live.deadline
    assert record.outcome == live.outcome
    assert record.actions == live.actions
    assert frozenset(record.answered) == live.answered
    assert record.start_key == live.start_key
    assert record.hidden == live.hidden
    assert record.seats == [s.to_store() for s in live.seats]


async def test_every_change_leaves_the_whole_room_in_redis(giants_server, client_factory) -> None:
    """GIANTS with a move deadline: sealed bids (the answered seats change, a replaced
    bid counts as hidden), reveals, deadlines renewed each step; after each acknowledged
    change the stored hash equals the room, and a room restored from it plays on."""
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room = (await alice.ok("create_room", game="giants", players=2, deadline=600))["room"]
    await alice.ok("join", room=room, seat=0)
    await bob.ok("join", room=room, seat=1)
    live = giants_server.lobby.rooms[room]
    store = giants_server.store
    await alice.wait_for(lambda: live.status == "playing")
    stored_as_live(await store.load_room(room), live)
    rng = random.Random(3)
    clients = {0: alice, 1: bob}
    replaced = False
    for _ in range(24):
        seat = next((s for s in live.to_act if s not in live.answered), None)
        if seat is None or live.status != "playing":
            break
        legal = live.engine.legal_notation(live.state, seat)
        await clients[seat].ok("act", room=room, action=rng.choice(legal))
        if not replaced and seat in live.answered and len(legal) > 1:
            # Replace the sealed bid: seen by its actor only (hidden goes up).
            await clients[seat].ok("act", room=room, action=legal[0])
            replaced = True
        async with live.lock:
            stored_as_live(await store.load_room(room), live)
    assert live.actions >= 4
    assert replaced and live.hidden >= 1
    async with live.lock:
        record = await store.load_room(room)
        assert record is not None
        again = Room.restore(record, live.engine, store, Metrics(), live.snapshot_every)
        assert again.engine.snapshot(again.state) == live.engine.snapshot(live.state)


async def test_a_room_written_in_full_continues_field_by_field(redis_url, key_prefix) -> None:
    """A room whose changes were stored with every field (as every version before this
    one did) restores, takes changes that send only what changed, and restores again to
    the same room: the fields left alone are the ones written earlier."""
    engine = get_engine("giantslayer")
    store = Store(redis_url, key_prefix)
    try:
        meta = {"game": "giantslayer", "rules": engine.info.rules, "players": 2, "options": {}, "seed": 4,
                "private": False, "password": None, "created": 0.0, "deadline": 30}
        seats = [SeatState("a", "x" * 16).to_store(), SeatState("b", "y" * 16).to_store()]
        assert await store.create_room("full1", meta, seats) == 1
        state = engine.new_game(2, {}, 4)
        # The previous version: every field in every write (start, then two moves).
        deadline = 1_900_000_000.25
        await store.commit("full1", expected=0, version=1, fence=1, status="playing", seats=seats,
                           deadline=deadline, outcome=None, actions=0, start_key="k" * 16)
        rng = random.Random(8)
        for actions in (1, 2):  # version = actions + 1
            seat = sorted(engine.waiting_for(state))[0]
            text = rng.choice(engine.legal_notation(state, seat))
            state = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
            deadline += 7
            await store.commit("full1", expected=actions, version=actions + 1, fence=1, status="playing",
                               seats=None, deadline=deadline, outcome=None, actions=actions, start_key="k" * 16,
                               log_entry={"v": actions + 1, "seat": seat, "action": text, "ts": 1.0})
        # This version: the restored room is `before`; each move sends what changed.
        record = await store.load_room("full1")
        assert record is not None
        room = Room.restore(record, engine, store, Metrics(), snapshot_every=5)  # a snapshot at the 5th action
        assert engine.snapshot(room.state) == engine.snapshot(state) and room.start_key == "k" * 16
        for i in range(4):
            seat = sorted(engine.waiting_for(room.state))[0]
            text = rng.choice(engine.legal_notation(room.state, seat))
            cand = room._candidate(
                state=engine.apply(room.state, seat, engine.parse_action(room.state, seat, text)).state,
                actions=room.actions + 1,
                deadline=room.deadline if i == 1 else deadline + 100 * i,  # the second move keeps it
                log_entry={"v": room.version + 1, "seat": seat, "action": text, "ts": 2.0},
            )
            if cand.actions % room.snapshot_every == 0:
                cand.snapshot = engine.snapshot(cand.state)
            async with room.lock:
                await room._commit(cand)
            stored_as_live(await store.load_room("full1"), room)
        record = await store.load_room("full1")
        assert record is not None and record.snapshot_n == 5 and len(record.log_tail) == 1
        again = Room.restore(record, engine, store, Metrics(), snapshot_every=5)
        assert engine.snapshot(again.state) == engine.snapshot(room.state) and again.actions == 6 and again.start_key == "k" * 16
    finally:
        await store.close()


async def test_a_write_sent_twice_is_in_once_and_a_voided_one_never(redis_url, key_prefix) -> None:
    """The commit script's guards, as the store sends it: the same write arriving again
    (a retried pipeline) is answered as applied and appends nothing; a write its writer
    settled as not applied is refused when its copy arrives late; an old fence is refused."""
    store = Store(redis_url, key_prefix)
    submit = store._submit
    sent: list[tuple[list[str], list[Any]]] = []
    lose_reply = False

    async def recording(keys: list[str], args: list[Any]) -> Any:
        sent.append((keys, args))
        if lose_reply:
            raise RedisConnectionError("the reply was lost")  # and the write never arrived
        return await submit(keys, args)

    store._submit = recording  # type: ignore[method-assign]
    try:
        assert await store.create_room("twice", {"game": "x"}, [{}]) == 1
        move = {"status": "playing", "seats": None, "deadline": None, "outcome": None}
        await store.commit("twice", expected=0, version=1, fence=1, actions=1,
                           log_entry={"v": 1, "seat": 0, "action": "a", "ts": 1.0}, **move)
        assert int(await submit(*sent[-1])) == 1  # the same write again: already in
        assert len(await store.read_log("twice")) == 1
        lose_reply = True
        with pytest.raises(StorageUnavailable):  # settled: not applied, and never will be
            await store.commit("twice", expected=1, version=2, fence=1, actions=2,
                               log_entry={"v": 2, "seat": 1, "action": "b", "ts": 2.0}, **move)
        assert int(await submit(*sent[-1])) == -4  # its copy arrives late: refused
        record = await store.load_room("twice")
        assert record is not None and record.version == 1 and record.actions == 1
        assert len(await store.read_log("twice")) == 1
        lose_reply = False
        await store.acquire("twice")  # another node takes the room over
        with pytest.raises(StaleWriteError):
            await store.commit("twice", expected=1, version=2, fence=1, actions=2, **move)
    finally:
        await store.close()
