"""What members see: RoomView construction, snapshots, the room part of a view, the
key tables, and idle rooms' views kept packed.

Filter first, diff second: each member's RoomView is built from
`engine.view(state, seat)` (computed once per seat per change) and diffed against the
view that member last received (`server.publish`), so hidden data never reaches a patch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engines.base import Engine, Seat
from protocol.packer import packb
from server.legal_lists import (
    joined_legal,
    open_legal,
)
from server.packing import (
    deflate,
    dictionaries,
    inflate,
    pack_view,
    share_initial,
    unpack_view,
)
from server.seats import Member, SeatState
from server.wire import (
    encode,
    key_refs,
    key_table,
    snapshot_frame,
)

NO_LEGAL: list[str] = []  # shared and never mutated
_NONE = object()  # a room part entry no view holds
NO_SEATS_LIST: list[Seat] = []  # shared and never mutated
# Sorted seat lists by seat set (`to_act`, `answered` in the room part): shared by every
# room and never mutated, so an unchanged entry is the last view's very object.
_SEAT_LISTS: dict[frozenset[Seat], list[Seat]] = {frozenset(): NO_SEATS_LIST}
_SEAT_LISTS_MAX = 512


def seat_list(seats: frozenset[Seat]) -> list[Seat]:
    """`sorted(seats)`, one list per distinct set (bounded table; never mutate it)."""
    found = _SEAT_LISTS.get(seats)
    if found is None:
        if len(_SEAT_LISTS) >= _SEAT_LISTS_MAX:
            _SEAT_LISTS.clear()
            _SEAT_LISTS[frozenset()] = NO_SEATS_LIST
        found = _SEAT_LISTS[seats] = sorted(seats)
    return found
PACKED_NO_LEGAL = packb(NO_LEGAL)  # an idle member's list as a patch sends it whole
_TO_ACT = ("to_act",)  # `_room_part`'s changed keys when only the turn moved
# Member.legal_hash of a list whose entries are its member's base (`legal_base`, joined;
# hidden-information rooms): no hash is -1 (CPython keeps it for errors), so no list's.
AS_BASE = -1


class EngineFacts:
    """What a room reads of its engine's class on every change, read once per class
    (`engine_facts`; a room keeps its engine's as `facts`): read on the engine, an
    attribute its class holds costs ~300 instructions (the interpreter does not
    specialise it), a slot of this ~30.

    `keys` is protocol 2's key table (sent in its snapshots) and `refs` its key ->
    reference map, built from the engine's static `view_keys`, never from a view: the
    same for every member of every room of the game, so it reveals nothing. The rest
    are the engine's `info.hidden_information`, `lines_notation`, `restated_events` and
    `writes_view_ops`."""

    __slots__ = ("hidden", "keys", "lines", "refs", "restated", "writes")

    def __init__(self, engine: Engine) -> None:
        self.keys = list(key_table(engine.view_keys()))
        self.refs = key_refs(self.keys)
        self.hidden = engine.info.hidden_information
        self.lines = engine.lines_notation
        self.restated = engine.restated_events
        self.writes = engine.writes_view_ops


_FACTS: dict[type, EngineFacts] = {}  # by engine class (static per game and rule set)


def engine_facts(engine: Engine) -> EngineFacts:
    """The room's `EngineFacts` for `engine` (one object per engine class)."""
    facts = _FACTS.get(type(engine))
    if facts is None:
        facts = _FACTS[type(engine)] = EngineFacts(engine)
    return facts


class RoomViews:
    """Mixin for Room: the read side. Room supplies the attributes declared here."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    id: str
    engine: Engine
    facts: EngineFacts  # `engine_facts(engine)`
    meta: dict[str, Any]
    state: Any
    _state: Any  # what `state` reads (Room: packed while idle)
    status: str
    seats: list[SeatState]
    members: list[Member]
    version: int
    actions: int
    hidden: int
    deadline: float | None
    outcome: dict[str, Any] | None
    answered: frozenset[Seat]
    draw_offer: Seat | None
    lock: Any
    # Set by every send (publish, snapshot); the idle sweep clears it, and a room still
    # clear at the next sweep keeps its members' last views packed (`compact_views`).
    touched: bool
    # (seat list, seats members hold, seats_data()) as last built (`_seats_part`)
    _seats_seen: tuple[list[SeatState], set[Seat | None], list[dict[str, Any]]] | None
    # Hidden information: the views the last change handed out, by seat (`SplitDiffs`);
    # None when there are none.
    _hidden_sent: dict[Seat | None, Any] | None
    packed: bool  # some member's view is packed: expand before diffing against it
    compacted: bool  # compact_views ran and nothing was sent since: nothing left to pack

    @property
    def to_act(self) -> list[Seat]:
        if self.status != "playing":
            return []
        return sorted(self.engine.to_act(self.state))

    def seats_data(self) -> list[dict[str, Any]]:
        connected = {m.seat for m in self.members}  # spectators add None, which no seat index is
        return [
            {
                "seat": i,
                "name": s.name,
                "connected": s.bot is not None or i in connected,
                "bot": s.bot,
            }
            for i, s in enumerate(self.seats)
        ]

    def room_info(self) -> dict[str, Any]:
        meta, status = self.meta, self.status
        playing = status == "playing"  # `to_act` inlined: this runs on every change
        return {
            "id": self.id,
            "game": meta["game"],
            "rules": meta["rules"],
            "players": meta["players"],
            "status": status,
            "seats": self.seats_data(),
            "to_act": sorted(self.engine.to_act(self.state)) if playing else [],
            "deadline": self.deadline,
            "answered": sorted(self.answered) if playing else [],
            "draw_offer": self.draw_offer,
        }

    def summary(self) -> dict[str, Any]:
        """The lobby's RoomSummary for this room."""
        return {
            "room": self.id,
            "game": self.meta["game"],
            "rules": self.meta["rules"],
            "players": self.meta["players"],
            "status": self.status,
            "seats": self.seats_data(),
            "private": self.meta["private"],
            "password": self.meta["password"] is not None,
            "spectators": sum(1 for m in self.members if m.seat is None),
            "created": self.meta["created"],
            "outcome": self.outcome if self.status == "finished" else None,
        }

    def legal_for(self, seat: Seat | None) -> list[str]:
        """The seat's legal actions in notation now ([] for spectators and idle seats).

        Computed on each call, not kept with the room (a list is ~1.2 KiB a room in
        Giantslayer, more in Causeway): a change computes it once per acting seat
        (`publish` shares it between that seat's frames); joins and resyncs recompute.
        """
        if seat is None or self.status != "playing":
            return NO_LEGAL
        engine, state = self.engine, self.state
        return engine.legal_notation(state, seat) if seat in engine.to_act(state) else NO_LEGAL

    def _room_part(self, state: Any, seat_sets: frozenset[Seat] | None = None,
                   changed: list[Any] | None = None) -> dict[str, Any]:
        """`room_info()` built from the room part members last got: that very dict when
        nothing in it changed, its copy with the new `to_act` when only that did (a
        move's usual change), else a new one holding its unchanged entries' objects, so
        the diff passes them (or the whole part) by identity. Every entry has one type
        per key (ints never bools, floats never ints), so == is exact here.

        The seats entry is kept in `_seats_seen` with the seat list and the set of seats
        members hold it was built from (a move changes neither; dropped when the idle
        sweep packs the views): SeatStates are replaced, never changed in place, and so
        is a room's seat list (server.room_storage). `seat_sets` is
        `engine.to_act(state)` when the caller has it (playing rooms only).

        `changed`, when given, gets what `diff_view` needs to walk only the entries that
        changed: the room part the members' views were first found to hold, then the keys
        (in the part's order) whose objects differ from its; nothing when that part is
        not one this room built (its keys or its room's id and meta entries differ)."""
        prev: Any = None
        members = self.members
        for member in members:
            old = member.view
            if type(old) is dict:
                prev = old["room"]
                break
        status = self.status
        if status == "playing":  # `to_act` inlined: this runs on every change
            if seat_sets is None:
                seat_sets = self.engine.to_act(state)
            to_act = _SEAT_LISTS.get(seat_sets)
            if to_act is None:
                to_act = seat_list(seat_sets)
            seat_sets = self.answered
            answered = _SEAT_LISTS.get(seat_sets) if seat_sets else NO_SEATS_LIST
            if answered is None:
                answered = seat_list(seat_sets)
        else:
            to_act = answered = NO_SEATS_LIST
        connected: set[Seat | None] = set()  # members' seats (a loop: a comprehension's own frame costs more)
        for member in members:
            connected.add(member.seat)
        seen, seat_states = self._seats_seen, self.seats
        if seen is not None and seen[0] is seat_states and seen[1] == connected:
            seats = seen[2]
        else:
            seats = [{"seat": i, "name": s.name, "connected": s.bot is not None or i in connected, "bot": s.bot}
                     for i, s in enumerate(seat_states)]
            if type(prev) is dict and prev.get("seats") == seats:  # rebuilt equal
                seats = prev["seats"]
            self._seats_seen = (seat_states, connected, seats)
        deadline, offer = self.deadline, self.draw_offer
        if type(prev) is dict and len(prev) == 10:
            try:
                # Lists of ints, and a float or None (its type checked: 1 == 1.0)
                moved = not (to_act is prev["to_act"] or to_act == prev["to_act"])
                if not moved:
                    to_act = prev["to_act"]
                same = True
                if answered is prev["answered"] or answered == prev["answered"]:
                    answered = prev["answered"]
                else:
                    same = False
                was = prev["deadline"]
                if was is not deadline:
                    if type(was) is type(deadline) and was == deadline:
                        deadline = was
                    else:
                        same = False
                if same and seats is prev["seats"] and prev["status"] == status:
                    was = prev["draw_offer"]
                    if was is offer or (type(was) is type(offer) and was == offer):
                        if not moved:
                            if changed is not None:
                                changed += (prev, ())
                            return prev  # the room's id and meta entries never change
                        # A move's usual change: the turn passed. Every entry prev's own
                        # object but `to_act` (the same content as the part built whole).
                        part = prev.copy()
                        part["to_act"] = to_act
                        if changed is not None:
                            changed += (prev, _TO_ACT)
                        return part
            except KeyError:  # not a room part this room built: build it whole
                pass
        meta = self.meta
        part = {
            "id": self.id,
            "game": meta["game"],
            "rules": meta["rules"],
            "players": meta["players"],
            "status": status,
            "seats": seats,
            "to_act": to_act,
            "deadline": deadline,
            "answered": answered,
            "draw_offer": offer,
        }
        if changed is not None and type(prev) is dict and len(prev) == 10:
            try:  # every key of `part` read from `prev`: the same ten keys
                if (prev["id"] is part["id"] and prev["game"] is part["game"] and prev["rules"] is part["rules"]
                        and prev["players"] is part["players"]):
                    keys = []  # the others, in the part's order
                    if prev["status"] is not status:
                        keys.append("status")
                    if prev["seats"] is not seats:
                        keys.append("seats")
                    if prev["to_act"] is not to_act:
                        keys.append("to_act")
                    if prev["deadline"] is not deadline:
                        keys.append("deadline")
                    if prev["answered"] is not answered:
                        keys.append("answered")
                    if prev["draw_offer"] is not offer:
                        keys.append("draw_offer")
                    changed += (prev, keys)
            except KeyError:
                pass
        return part

    def _views(self, state: Any = None, seat_sets: frozenset[Seat] | None = None,
               changed: list[Any] | None = None) -> Callable[[Seat | None], dict[str, Any]]:
        """A per-change cache: each distinct RoomView is built once. `seat_sets` and
        `changed` are `_room_part`'s (publish's: who acts, and what changed in the part).

        Without hidden information every seat sees what a spectator sees (the
        conformance suite checks it), so one view object serves every member and the
        diff against it is computed once per distinct previous view. With hidden
        information each seat gets its own view and all spectators share one.
        """
        if state is None:  # publish passes the room's state, read once
            state = self.state
        info = self._room_part(state, seat_sets, changed)
        engine, outcome = self.engine, self.outcome
        # Before the first action the game views share their parts with the game's
        # template (server.packing.share_initial: memory per new room).
        presets = dictionaries(engine, self.meta["players"]) if self.actions == 0 else None
        if not engine.info.hidden_information:
            game = engine.view(state, None)
            shared = {"room": info, "game": game if presets is None else share_initial(game, presets.game(None)),
                      "outcome": outcome}
            return lambda seat: shared
        cache: dict[Seat | None, dict[str, Any]] = {}

        def get(seat: Seat | None) -> dict[str, Any]:
            view = cache.get(seat)
            if view is None:
                game = engine.view(state, seat)
                if presets is not None:
                    game = share_initial(game, presets.game(seat))
                view = cache[seat] = {"room": info, "game": game, "outcome": outcome}
            return view

        return get

    def compact_views(self, force: bool = False) -> bool:
        """Keep each member's last view as packed bytes (equal views share one), and
        its protocol-3 legal base deflated.

        The lobby's idle sweep calls this for every room every `pack_after` seconds; a room
        sent nothing since the previous call is idle and is compacted now (True), one
        that was (or is mid-change) is left alone. A busy room never pays for it; an
        idle one pays one pack now and one unpack at its next change
        (`expand_views`). `force` compacts a room sent something lately too (tests);
        a room mid-change (its lock held) never is.
        """
        if self.lock.locked() or (self.touched and not force):
            self.touched = False
            return False
        if self.compacted:  # the sweeps pass idle rooms again and again (the new-room sweep every 0.5 s)
            return True
        members = self.members
        presets = dictionaries(self.engine, self.meta["players"])
        olds = [m.view for m in members]  # alive until the loop ends: the cache keys on id()
        packed: dict[int, bytes] = {}
        distinct: list[bytes] = []
        for member, view in zip(members, olds, strict=True):
            if type(view) is not dict:
                continue
            data = packed.get(id(view))
            if data is None:
                data = pack_view(view, presets.view)
                # Separately built but equal views (a joiner's snapshot and the others'
                # patch) end up as one bytes object.
                data = next((d for d in distinct if d == data), data)
                if data not in distinct:
                    distinct.append(data)
                packed[id(view)] = data
            member.view = data
            self.packed = True
        for member in members:
            base = member.legal_base
            if base is not None:
                member.packed_base, member.legal_base = deflate(base.encode(), presets.legal), None
                self.packed = True
        del olds
        self.compacted = True
        self._seats_seen = self._hidden_sent = None  # memory per idle room: the views are packed now
        return True

    def expand_views(self) -> None:
        """Unpack the members' packed views (one object per distinct view) before
        anything compares or diffs against them; a no-op unless compacted."""
        if not self.packed:
            return
        self.packed = self.compacted = False
        members = self.members
        presets = dictionaries(self.engine, self.meta["players"])
        olds = [m.view for m in members]
        unpacked: dict[int, dict[str, Any]] = {}
        for member, data in zip(members, olds, strict=True):
            if type(data) is bytes:
                view = unpacked.get(id(data))
                if view is None:
                    view = unpacked[id(data)] = unpack_view(data, presets.view)
                member.view = view
            packed_base = member.packed_base
            if packed_base is not None:
                member.legal_base, member.packed_base = inflate(packed_base, presets.legal).decode(), None
        del olds

    def share_equal_view(self, member: Member) -> None:
        """After a change sent `member` a snapshot and the others a patch (a join, a
        seat coming back), keep one object for equal views: the snapshot's own copy of
        the document the others now hold goes (Giantslayer: ~2.3 KiB a room until the
        idle sweep packs it). Equal content only, so nobody holds another's view."""
        view = member.view
        if type(view) is not dict:
            return
        room = view["room"]
        for other in self.members:
            if other is not member and type(other.view) is dict and other.view is not view:
                if other.view == view:
                    member.view = other.view
                    return
                if other.view["room"] is not room and other.view["room"] == room:
                    # Hidden information: the views differ, their room parts need not.
                    member.view = {**view, "room": other.view["room"]}
                    return

    def next_version(self, peer: Any) -> int:
        """The version of the patch `peer` is sent next (what its `ok` carries): versions
        are per member (GI-8), so never the room's own counter."""
        for member in self.members:
            if member.peer is peer:
                return member.version + 1
        return self.version - self.hidden

    def send_snapshot(self, member: Member) -> None:
        view = self._views()(member.seat)
        # Versions are per member (GI-8): a new member starts at the count of changes
        # everyone could see; an existing one (resync, reload) keeps its own sequence
        # (the snapshot replaces its view whole, and its next patch follows on).
        if member.version < 0:
            member.version = self.version - self.hidden
        self.expand_views()  # a packed legal base must not come back over the new one
        member.view = view
        self.touched, self.compacted = True, False
        legal = self.legal_for(member.seat)
        # the hash publish compares the member's next list with (each kind of room its own)
        member.legal_hash = hash(tuple(legal)) if self.engine.info.hidden_information else open_legal(legal)[1]
        member.legal_base = joined_legal(legal, plain=self.engine.plain_notation)  # a snapshot resets the base of legal edits
        keys = self.facts.keys if member.peer.protocol >= 2 else None
        member.peer.push(encode(snapshot_frame(self.id, member.version, member.seat, view, legal, keys)))
