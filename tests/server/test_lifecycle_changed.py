"""`Lifecycle.changed` (server.lifecycle) runs after every stored change and returns at
once for a game in progress with a human seat connected and no timestamps kept, a test
written out there instead of calling `observe`: for any room it must leave the room's
timestamps and the lifecycle's pending writes exactly as `observe(room, touch=True)`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import lifecycle
from server.lifecycle import Lifecycle, LifecycleSettings
from server.seats import Member, SeatState


@dataclass
class _Room:
    id: str
    meta: dict[str, Any]
    status: str
    seats: list[SeatState]
    members: list[Member]
    closing: bool = False
    life: dict[str, float] = field(default_factory=dict)


def _lifecycle() -> Lifecycle:
    lc = Lifecycle.__new__(Lifecycle)  # no store, no registry: only the timestamps
    lc.settings = LifecycleSettings()
    lc._dirty = {}
    lc._flushing = True  # a flush "is under way": nothing is spawned
    return lc


SEATS = st.lists(
    st.builds(SeatState, st.sampled_from([None, "n"]), st.sampled_from([None, "t"]), st.sampled_from([None, "bot"])),
    min_size=1, max_size=4,
)
LIFE_KEYS = st.sampled_from(["touched", "gone", "finished", "seat:0", "seat:1", "seat:3"])


@st.composite
def rooms(draw: Any) -> tuple[_Room, _Room]:
    seats = draw(SEATS)
    member_seats = draw(st.lists(st.one_of(st.none(), st.integers(0, len(seats) - 1)), max_size=4))
    status = draw(st.sampled_from(["playing", "playing", "waiting", "finished"]))
    life = draw(st.dictionaries(LIFE_KEYS, st.floats(0, 100), max_size=3))
    meta = {"deadline": draw(st.sampled_from([None, 30]))}

    def make() -> _Room:
        return _Room("r", dict(meta), status, list(seats), [Member(object(), s) for s in member_seats],  # type: ignore[arg-type]
                     life=dict(life))

    return make(), make()


@settings(max_examples=400, deadline=None)
@given(rooms())
def test_changed_is_observe_with_a_touch(pair: tuple[_Room, _Room]) -> None:
    fast, plain = pair
    lc_fast, lc_plain = _lifecycle(), _lifecycle()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lifecycle.time, "time", lambda: 1234.5)
        lc_fast.changed(fast)  # type: ignore[arg-type]
        lc_plain.observe(plain, touch=True)  # type: ignore[arg-type]
    assert fast.life == plain.life
    assert list(fast.life) == list(plain.life)
    assert list(lc_fast._dirty) == list(lc_plain._dirty)
