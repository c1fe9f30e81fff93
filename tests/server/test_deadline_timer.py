"""A move deadline fires even when its timer goes off a hair early.

The room arms its deadline with the event loop's timer, which may fire slightly before
the deadline by the wall clock (uvloop rounds delays to whole milliseconds); the room
then checks again. The deadline can pass between that check and the next: the room
must still arm a timer and play the late seat's default move. It once kept no timer
then, and the game stopped for good with nothing logged (seen as the rare failure of
tests/server/test_nodes.py's paused-owner test).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import server.room_tasks
from tests.server.multinode import two_player_room

pytestmark = pytest.mark.redis


class CrossingClock:
    """The room's view of the wall clock: just before `deadline` on the first reading,
    just after it from then on (the deadline passes while the room is checking)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.readings = 0

    def time(self) -> float:
        self.readings += 1
        return self.deadline - 1e-6 if self.readings == 1 else max(time.time(), self.deadline + 1e-6)

    @staticmethod
    def perf_counter() -> float:
        return time.perf_counter()


async def test_a_deadline_passing_while_the_room_checks_it_is_still_played(
    giants_server: Any, client_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob")
    room, _ = await two_player_room(alice, bob, deadline=30.0)
    live = giants_server.lobby.rooms[room]
    version, deadline = live.version, live.deadline
    assert deadline is not None
    # The armed timer goes off now (a fired timer is used up), a hair before the deadline.
    live._timer.cancel()
    live._timer = None
    monkeypatch.setattr(server.room_tasks, "time", CrossingClock(deadline))
    await live._expire()
    await alice.wait_for(lambda: any(e["type"] == "timeout" for e in alice.rooms[room].events), timeout=10)
    assert live.version == version + 1
    assert live._timer is not None  # and the next deadline is armed
