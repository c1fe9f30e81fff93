"""The move deadline's timer (server.room_tasks): a pending timer armed for the
deadline or an earlier one is kept when a move moves the deadline later (it goes off
early, `_expire` finds nothing due and arms it again), and the late seat's default
action is still played once the deadline, not before it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from server.room import Room
from tests.server.memory_room import MemoryPeer, commit_arguments, two_seat_room


class _Store:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    async def commit(self, room_id: str, *args: Any, **kwargs: Any) -> bool:
        fields = commit_arguments(room_id, *args, **kwargs)
        if fields.get("log_entry") is not None:
            self.entries.append(fields["log_entry"])
        return True


def _room(seconds: float) -> tuple[Room, list[MemoryPeer], _Store]:
    store = _Store()
    room, peers = two_seat_room("timerroom", store, 4, seconds)
    return room, peers, store


async def _move(room: Room, peers: list[MemoryPeer]) -> None:
    seat = sorted(room.engine.to_act(room.state))[0]
    await room.act(peers[seat], 1, room.engine.legal_notation(room.state, seat)[0], None)  # type: ignore[arg-type]


def test_moves_keep_the_timer_and_the_deadline_is_played_on_time() -> None:
    async def main() -> None:
        room, peers, store = _room(0.4)
        await _move(room, peers)  # the first deadline: a timer is armed
        first = room._timer
        assert first is not None and room.deadline is not None
        for _ in range(4):
            await asyncio.sleep(0.05)
            await _move(room, peers)
            assert room._timer is first  # kept: it goes off before the later deadline
            assert room._timer_for <= room.deadline
        deadline, moves = room.deadline, room.actions
        # The kept timer goes off early (~0.2 s before): nothing is played then ...
        while room._timer is first:
            await asyncio.sleep(0.01)
            assert time.time() < deadline + 2.0
        assert room.actions == moves and time.time() < deadline
        assert room._timer is not None and room._timer_for == deadline  # ... and it is armed again
        # ... and the late seat's default action is played once the deadline passed.
        while room.actions == moves:
            await asyncio.sleep(0.01)
            assert time.time() < deadline + 2.0
        assert store.entries[-1]["ts"] >= deadline
        await room.close()

    asyncio.run(main())


def test_an_earlier_deadline_or_none_replaces_the_timer() -> None:
    async def main() -> None:
        room, peers, _ = _room(30.0)
        await _move(room, peers)
        kept = room._timer
        assert kept is not None and room.deadline is not None
        room.deadline -= 10.0  # as a reload from Redis may set it
        room._arm_timer()
        assert room._timer is not kept and kept.cancelled()
        assert room._timer is not None and room._timer_for == room.deadline
        later = room._timer
        room.deadline = None
        room._arm_timer()
        assert room._timer is None and later.cancelled()
        await room.close()

    asyncio.run(main())
