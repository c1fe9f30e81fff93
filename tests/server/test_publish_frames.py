"""A room sends every member exactly the frames the plain rule gives (issue 13's fast paths).

`RoomPublish.publish` and `RoomViews._views` share one view between members, keep the room part's
unchanged entries from the last one, cache ops, packed bodies and frames by identity,
and edit legal lists. `PlainRoom` does none of it: each member's RoomView is built
afresh (`room_info()`, `engine.view(state, seat)`), diffed against what it was last
sent, and its frame encoded whole (`compact_patch_frame` / `patch_frame`). Random
sessions with fixed seeds (tests/server/frame_record.py: every game and rule set, the
fewest and the most players, protocol 1, 2 and 3 members, spectators, seats leaving
and coming back mid-game, second connections, resyncs, draw offers, packed views, a
move deadline or none) must give every peer the same bytes in both rooms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import pytest

from engines.base import Seat
from engines.registry import get_engine
from server import legal_lists, publish, views
from server.legal_lists import joined_legal, legal_change
from server.room import Room
from server.seats import Member
from server.views import AS_BASE, engine_facts
from server.wire import compact_ops, compact_patch_frame, diff, encode, patch_frame
from tests.server.frame_record import play
from tests.server.game_cases import CASES


class PlainRoom(Room):
    """A room whose views and patches follow the rule plainly: nothing shared, reused or
    cached (GI-8 for hidden information: redacted actions, nothing sent for a change a
    member cannot see), a legal list resent when it is not the very list the member was
    last sent (the lists kept, not hashed)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent_legal: dict[Member, tuple[str, ...]] = {}  # member -> its last list

    def send_snapshot(self, member: Member) -> None:
        super().send_snapshot(member)
        self.sent_legal[member] = tuple(self.legal_for(member.seat))

    def _views(self, state: Any = None) -> Callable[[Seat | None], dict[str, Any]]:
        def view(seat: Seat | None) -> dict[str, Any]:
            return {"room": self.room_info(), "game": self.engine.view(self.state, seat), "outcome": self.outcome}

        return view

    def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None:
        self.expand_views()
        self.touched, self.compacted = True, False
        engine, state = self.engine, self.state
        redacted: list[dict[str, Any]] | None = None
        actor: Seat | None = None
        if engine.info.hidden_information and events and events[0].get("type") == "action":
            head = dict(events[0])
            public = head.pop("public", None)
            actor = head["seat"]
            events = [head, *events[1:]]
            redacted = [*([] if public is None else [{"type": "action", "seat": actor, "action": public}]), *events[1:]]
        to_act = engine.to_act(state) if self.status == "playing" else frozenset()

        def acting(member: Member) -> bool:
            return member.seat is not None and member.seat in to_act

        refs = engine_facts(engine).refs
        views = self._views()
        for member in [m for m in self.members if not acting(m)] + [m for m in self.members if acting(m)]:
            if member is skip:
                continue
            view, old = views(member.seat), member.view
            hide = redacted is not None and member.seat != actor
            if hide and not redacted and old == view:
                continue
            legal = self.legal_for(member.seat) if acting(member) else []
            wire = member.peer.protocol
            resend = wire < 2 or tuple(legal) != self.sent_legal.get(member)
            self.sent_legal[member] = tuple(legal)
            shown = redacted if hide and redacted is not None else events
            ops = diff(old, view) if old is not None else [["set", [], view]]
            if wire >= 2:
                if engine.restated_events:
                    shown = [e for e in shown if e.get("type") not in engine.restated_events]
                edit = legal_change(member, legal, {}) if wire >= 3 and resend else None
                sent = legal if resend and edit is None else None
                frame = encode(compact_patch_frame(self.id, member.version, compact_ops(ops, refs, view), shown, sent, edit))
            else:
                frame = encode(patch_frame(self.id, member.version, member.version + 1, ops, shown, legal))
            member.view, member.version = view, member.version + 1
            if wire >= 3 and legal and resend:
                base = joined_legal(legal)  # a plain str: never the flagged base's fast path
                member.legal_base = None if base is None else str(base)
            member.peer.push(frame)


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
@pytest.mark.parametrize("seed", range(6))
def test_every_member_gets_the_plain_frames(game: str, rules: str, players: int, seed: int) -> None:
    deadline = 600.0 if seed % 2 else None
    fast = play(Room, game, rules, players, seed, steps=150, deadline=deadline)
    plain = play(PlainRoom, game, rules, players, seed, steps=150, deadline=deadline)
    assert sorted(fast) == sorted(plain)
    for name, frames in plain.items():
        assert len(fast[name]) == len(frames), name
        for i, (got, want) in enumerate(zip(fast[name], frames, strict=True)):
            assert got == want, f"{name}'s frame {i}: {msgpack.unpackb(got, raw=False, strict_map_key=False)!r} " \
                                f"!= {msgpack.unpackb(want, raw=False, strict_map_key=False)!r}"
    # The sessions did what they are for: patches to several members, on every protocol.
    assert sum(len(frames) for frames in plain.values()) > 20


class CheckedRoom(Room):
    """The room part kept from the last one is `room_info()` exactly, at every change."""

    parts = 0
    hinted = 0
    turned = 0  # parts copied from the last one with only `to_act` new (a move's turn passed)

    def _room_part(self, state: Any, seat_sets: frozenset[Seat] | None = None,
                   changed: list[Any] | None = None) -> dict[str, Any]:
        if seat_sets is not None:  # what publish hands it: the state's own seats to act
            assert seat_sets == self.engine.to_act(state)
        part = super()._room_part(state, seat_sets, changed)
        plain = self.room_info()
        assert part == plain and msgpack.packb(part) == msgpack.packb(plain)
        assert [type(v) for v in part.values()] == [type(v) for v in plain.values()]
        if changed:  # diff_view's premise: the same keys, and only `keys` not the same objects
            prev, keys = changed
            assert prev.keys() == part.keys() and all(type(k) is str for k in prev)
            assert list(keys) == [k for k in part if part[k] is not prev[k]]  # in the part's order
            CheckedRoom.hinted += 1
            CheckedRoom.turned += keys is views._TO_ACT
        CheckedRoom.parts += 1
        return part

    def compact(self, force: bool = False) -> bool:
        packed = super().compact(force)
        assert not packed or self._seats_seen is None  # an idle room keeps no seats part
        return packed


@pytest.mark.parametrize(("game", "rules", "players"), CASES)
def test_the_room_part_is_room_info(game: str, rules: str, players: int) -> None:
    CheckedRoom.parts = CheckedRoom.hinted = CheckedRoom.turned = 0
    for seed in range(3):
        play(CheckedRoom, game, rules, players, seed, steps=100, deadline=600.0 if seed % 2 else None)
    assert CheckedRoom.parts > 30
    # publish's own calls in a room without hidden information
    assert CheckedRoom.hinted > 10 or get_engine(game, rules).info.hidden_information
    assert CheckedRoom.turned > 10 or get_engine(game, rules).info.hidden_information


class BaseCountingRoom(Room):
    """Counts the protocol-3 members whose legal list publish kept as their base's entries
    (`views.AS_BASE`, no hash) and those of them sent nothing new (an unchanged list)."""

    kept = 0
    unchanged = 0

    def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None:
        self.expand_views()  # (publish's own first step) the bases as publish sees them
        before = {id(m): (m.legal_hash, m.version, m.legal_base) for m in self.members}
        super().publish(events, skip)
        for m in self.members:
            was = before.get(id(m))
            if m.legal_hash == AS_BASE and was is not None and m.version != was[1]:
                BaseCountingRoom.kept += 1
                BaseCountingRoom.unchanged += was[0] == AS_BASE and m.legal_base is was[2]


def test_giants_sessions_keep_lists_as_bases_and_pass_unchanged_ones() -> None:
    """The frames test's GIANTS sessions (placements GI-12..GI-17: long lists, edited)
    go through publish's unhashed lists: one kept as the base's entries, and one compared
    with the base and found unchanged (not resent, as the hash found it before)."""
    BaseCountingRoom.kept = BaseCountingRoom.unchanged = 0
    for seed in range(6):
        play(BaseCountingRoom, "giants", "standard", 2, seed, steps=150, deadline=None)
    assert BaseCountingRoom.kept > 20 and BaseCountingRoom.unchanged > 0


class SeatCountingRoom(Room):
    """Counts the hidden-information publishes whose members each hold a seat of their own
    (`publish` keeps no frame or diff for another member then) and those where a seat has
    two connections or several spectators watch (frames and diffs shared)."""

    alone = 0
    shared = 0

    def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None:
        if self.engine.info.hidden_information and self.members:
            if len({m.seat for m in self.members}) == len(self.members):
                SeatCountingRoom.alone += 1
            else:
                SeatCountingRoom.shared += 1
        super().publish(events, skip)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_hidden_rooms_send_the_plain_frames_with_one_member_a_seat_or_more(players: int) -> None:
    """GIANTS (GI-8, GI-28: each seat's view its own) with members alone on their seat and
    with second connections and spectators: every peer gets the plain room's bytes, and
    both kinds of publish happen (the first keeps no frame or diff for another member)."""
    SeatCountingRoom.alone = SeatCountingRoom.shared = 0
    for seed in range(4):
        fast = play(SeatCountingRoom, "giants", "standard", players, 200 + seed, steps=200,
                    deadline=600.0 if seed % 2 else None)
        plain = play(PlainRoom, "giants", "standard", players, 200 + seed, steps=200,
                     deadline=600.0 if seed % 2 else None)
        assert fast == plain
    assert SeatCountingRoom.alone > 20 and SeatCountingRoom.shared > 20


def test_lists_written_as_lines_send_the_plain_frames_as_bases_and_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Giantslayer's white lists reach publish as text (`Engine.legal_lines`) and are
    made lists only for a member that needs one (protocol 1, an edit, a base). With
    EDIT_FROM lowered so that they are long enough to keep and edit, every peer still
    gets the plain room's bytes, and each of those uses happened."""
    made: list[str] = []
    real = publish.lines_list

    def counted(text: str) -> list[str]:
        made.append(text)
        return real(text)

    for module in (publish, legal_lists):
        monkeypatch.setattr(module, "EDIT_FROM", 256)
    monkeypatch.setattr(publish, "lines_list", counted)
    for seed in range(4):
        fast = play(Room, "giantslayer", "standard", 2, seed, steps=150)
        plain = play(PlainRoom, "giantslayer", "standard", 2, seed, steps=150)
        assert fast == plain
    assert len(made) > 20
