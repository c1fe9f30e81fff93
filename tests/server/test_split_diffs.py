"""Hidden information: each member's ops from `SplitDiffs` (the parts every member sees
diffed once, server.split_diffs) are exactly its own view's diff, member by member.

GIANTS (the game with sealed bids and screens, GI-8, GI-28) is played in rooms with
both seats and spectators, seats leaving and coming back, resyncs, replaced bids that
only their bidder is sent (GI-8), packed views and more (tests/server/frame_record.py).
At every diff of every publish the ops must equal `diff_compact(old, new, refs)` of that
member's own old and new views: then no member's ops hold anything of another's view
(its screen, its bid, the Ahu owners only it may see), and nothing in them differs from
what the member-by-member diff sends. The split path must be the one taken for most of
them (else this tests nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from engines.base import Seat
from engines.giants.views import SHARED_START
from server import split_diffs
from server.room import Room
from server.wire import diff_compact
from tests.server.frame_record import play
from tests.server.test_publish_frames import PlainRoom

_split_ops = split_diffs.SplitDiffs.ops
_member = split_diffs.SplitDiffs._member


class _Counts:
    diffs = split = 0


def _checked_ops(self: split_diffs.SplitDiffs, seat: Seat | None, old: Any, new: Any) -> list[list[Any]]:
    got = _split_ops(self, seat, old, new)
    assert got == diff_compact(old, new, self.refs), seat
    _Counts.diffs += 1
    return got


def _counted_member(self: split_diffs.SplitDiffs, old: Any, new: Any) -> list[list[Any]]:
    got = _member(self, old, new)
    _Counts.split += 1
    return got


@pytest.mark.parametrize("players", [2, 3, 5])
def test_each_members_split_ops_are_its_own_diff(monkeypatch: pytest.MonkeyPatch, players: int) -> None:
    monkeypatch.setattr(split_diffs.SplitDiffs, "ops", _checked_ops)
    monkeypatch.setattr(split_diffs.SplitDiffs, "_member", _counted_member)
    _Counts.diffs = _Counts.split = 0
    for seed in range(8):
        play(Room, "giants", None, players, seed, steps=250, deadline=600.0 if seed % 2 else None)
    assert _Counts.diffs > 200
    assert _Counts.split > _Counts.diffs // 2


@pytest.mark.parametrize("seed", range(3))
def test_split_frames_are_the_plain_frames(seed: int) -> None:
    """Longer GIANTS sessions than test_publish_frames': the same bytes to every peer."""
    fast = play(Room, "giants", None, 4, 100 + seed, steps=400)
    plain = play(PlainRoom, "giants", None, 4, 100 + seed, steps=400)
    assert fast == plain


def test_the_shared_start_is_what_the_split_takes() -> None:
    """An engine without `view_shared_start` never splits (0: every member diffed whole)."""
    assert SHARED_START > 0
    splits = split_diffs.SplitDiffs({}, {}, {None: {}}, 0)
    assert splits.gen == {}
