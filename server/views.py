"""What members see: RoomView construction, snapshots and per-member patches.

Filter first, diff second: each member's RoomView is built from
`engine.view(state, seat)` (computed once per seat per change) and diffed against the
view that member last received, so hidden data never reaches a patch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engines.base import Engine, NotationList, Seat
from protocol.packer import packb
from server.legal_lists import (
    EDIT_FROM,
    LEGAL_SEP,
    join_legal,
    joined_legal,
    legal_change,
    with_legal,
)
from server.packing import (
    PackedState,
    deflate,
    dictionaries,
    inflate,
    pack_view,
    share_initial,
    unpack_view,
)
from server.seats import NO_SEATS, Member, SeatState
from server.split_diffs import SplitDiffs
from server.wire import (
    compact_patch_frame,
    diff,
    diff_compact,
    diff_view,
    encode,
    key_refs,
    key_table,
    patch_body,
    patch_bytes,
    patch_frame,
    patch_head,
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
EMPTY_HASH = hash(())  # Member.legal_hash of an empty legal list
PACKED_NO_LEGAL = packb(NO_LEGAL)  # an idle member's list as a patch sends it whole
_TO_ACT = ("to_act",)  # `_room_part`'s changed keys when only the turn moved
# Member.legal_hash of a list whose entries are its member's base (`legal_base`, joined;
# hidden-information rooms): no hash is -1 (CPython keeps it for errors), so no list's.
AS_BASE = -1
# Protocol 2's key table per engine class (static per game and rule set): (keys, refs).
_TABLES: dict[type, tuple[list[str], dict[str, int]]] = {}


def key_tables(engine: Engine) -> tuple[list[str], dict[str, int]]:
    """The room's key table (sent in protocol-2 snapshots) and its key -> reference map.

    Built from the engine's static `view_keys`, never from a view: it is the same for
    every member of every room of the game, so it reveals nothing.
    """
    table = _TABLES.get(type(engine))
    if table is None:
        keys = list(key_table(engine.view_keys()))
        table = _TABLES[type(engine)] = (keys, key_refs(keys))
    return table


class RoomViews:
    """Mixin for Room: the read side. Room supplies the attributes declared here."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    id: str
    engine: Engine
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
        connected = {m.seat for m in members}
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

    def _views(self, state: Any = None) -> Callable[[Seat | None], dict[str, Any]]:
        """A per-change cache: each distinct RoomView is built once.

        Without hidden information every seat sees what a spectator sees (the
        conformance suite checks it), so one view object serves every member and the
        diff against it is computed once per distinct previous view. With hidden
        information each seat gets its own view and all spectators share one.
        """
        if state is None:  # publish passes the room's state, read once
            state = self.state
        info = self._room_part(state)
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
        member.legal_hash = hash(tuple(legal))
        member.legal_base = joined_legal(legal, plain=self.engine.plain_notation)  # a snapshot resets the base of legal edits
        keys = key_tables(self.engine)[0] if member.peer.protocol >= 2 else None
        member.peer.push(encode(snapshot_frame(self.id, member.version, member.seat, view, legal, keys)))

    def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None:
        """Send every member its patch: its own view diffed against what it last got.

        Members who need no legal list go first (the one who just acted among them), so
        computing the next actor's legal actions never delays the other patches. Ops are
        computed once per (old view, new view) pair, their protocol-2 form once per pair
        too, and frames once per identical content and protocol version; in a
        perfect-information room the packed ops, act and events once per pair too, each
        member's frame its own head, version and legal list around them.
        """
        if self.packed:
            self.expand_views()
        self.touched, self.compacted = True, False
        engine, state = self.engine, self._state  # `state` (Room's property) without its call
        if type(state) is PackedState:
            state = self.state
        if not engine.info.hidden_information:
            self._publish_open(events, skip, engine, state)
            return
        views = self._views(state)
        # In a hidden-information game an action's text may be secret (a sealed bid):
        # only the seat that acted sees it; everyone else learns only that it acted
        # (and whatever the engine's public events and their own views say).
        redacted: list[dict[str, Any]] | None = None
        actor: Seat | None = None
        if events and events[0].get("type") == "action":
            head = dict(events[0])
            public = head.pop("public", None)
            actor = head["seat"]
            events = [head, *events[1:]]
            shown_head = [] if public is None else [{"type": "action", "seat": actor, "action": public}]
            redacted = [*shown_head, *events[1:]]
        # What protocol 2 sends of them, by `hide` (made on first use): the view's change
        # already says the restated ones (Engine.restated_events)
        restated = engine.restated_events
        compact_shown: dict[bool, list[dict[str, Any]]] = {}
        to_act = engine.to_act(state) if self.status == "playing" else NO_SEATS
        ordered: list[Member] = []
        acting_members: list[Member] = []
        for member in self.members:  # the order `sorted` by "is to act" gives, without a key call each
            (acting_members if member.seat in to_act else ordered).append(member)  # None is in no seat set
        ordered += acting_members
        ops_cache: dict[tuple[int, int], list[Any]] = {}
        compact_cache: dict[tuple[int, int], list[Any]] = {}
        frames: dict[tuple[int, int, int, tuple[Any, ...] | None, int, bool, int], bytes] = {}
        legal_cache: dict[Seat, list[str]] = {}
        edits: dict[Any, Any] = {}  # legal_change's and joined_legal's
        # Each seat's view is its own, but the parts every member sees are diffed once:
        # the ops of those that are the same objects in the members' old views (the last
        # change's, kept in `_hidden_sent`) and new ones are worked out once (`SplitDiffs`),
        # and what else the views share, once per pair of parts (`subdiffs`).
        splits = SplitDiffs(key_tables(engine)[1], {}, self._hidden_sent, engine.view_shared_start)
        plain = engine.plain_notation
        handed: dict[Seat | None, Any] = {}  # the views handed out (kept for the next change)
        # The caches key on (id(old view), id(new view), ...). Every old view is held by its
        # member when the loop starts, so no two share an id, and one freed in the loop
        # (its member got the new view) can give its id only to an object allocated
        # since, never to an old view; the new views are held by `views` until the end.
        # So do the frames on id(legal base): a member's base is the one it held when the
        # loop started until its frame is made (a seat's connections share one object).
        for member in ordered:
            if member is skip:
                continue
            seat = member.seat
            view = views(seat)
            old = member.view
            hide = redacted is not None and seat != actor
            if hide and not redacted and old == view:
                # Nothing this member may see changed (a replaced sealed bid): send nothing,
                # not even a version bump, so it cannot tell that anything happened. Its
                # legal list cannot have changed either: it depends only on its own view.
                continue
            acting = seat in to_act  # None is in no seat set
            if acting:
                legal = legal_cache.get(seat)  # type: ignore[arg-type]
                if legal is None:  # `legal_for`, whose checks `acting` has made
                    legal = legal_cache[seat] = engine.legal_notation(state, seat)  # type: ignore[index, arg-type]
            else:
                legal = NO_LEGAL
            wire, version = member.peer.protocol, member.version
            # Protocol 2 sends a legal list only when it differs from the member's last one.
            was: int | None = member.legal_hash
            legal_hash: int | None
            if not legal:
                legal_hash = EMPTY_HASH
                resend = wire < 2 or was != EMPTY_HASH
            elif wire < 3 or (was != AS_BASE and was != EMPTY_HASH):
                legal_hash = hash(tuple(legal))
                resend = wire < 2 or legal_hash != was
            else:  # protocol 3, a list after none, or after one kept as the base: no hash
                legal_hash, resend = None, True  # (hashed below if it leaves no base)
                if was == AS_BASE:  # the last list is the base's entries: compare the texts
                    # (the base's entries hold no LEGAL_SEP, joined_legal's check; with the
                    # same text and count of entries neither do this list's: the same list)
                    text = edits.get((seat, None))
                    if text is None:
                        text = edits[seat, None] = join_legal(legal)  # (legal_change's join)
                    last = member.legal_base
                    if text == last and (plain or text.count(LEGAL_SEP) == len(legal) - 1):
                        legal_hash, resend = AS_BASE, False
            # Protocol 3 may send the change from the member's last non-empty list.
            base = member.legal_base if wire >= 3 and resend else None
            # Members with equal old and new views share a frame unless they need their
            # own legal list or (the actor) the unredacted events.
            variant = ("legal", seat) if acting else ("actor",) if redacted is not None and not hide else None
            key = (id(old), id(view), version, variant, wire, resend, id(base))  # (a base's text unhashed)
            frame = frames.get(key)
            if frame is None:
                pair = (id(old), id(view))
                if wire >= 2:
                    compact = compact_cache.get(pair)
                    if compact is None:  # the diff in protocol 2's form (old None: the whole view)
                        compact = compact_cache[pair] = splits.ops(seat, old, view)
                    shown = compact_shown.get(hide)
                    if shown is None:
                        shown = redacted if hide and redacted is not None else events
                        if restated:
                            shown = [e for e in shown if e.get("type") not in restated]
                        compact_shown[hide] = shown
                    edit = legal_change(member, legal, edits, plain) if base is not None else None
                    if resend and edit is None and type(legal) is NotationList:  # its runs packed once for all
                        frame = with_legal(compact_patch_frame(self.id, version, compact, shown, None), legal)
                    else:
                        sent = legal if resend and edit is None else None
                        frame = encode(compact_patch_frame(self.id, version, compact, shown, sent, edit))
                else:
                    ops = ops_cache.get(pair)
                    if ops is None:
                        ops = ops_cache[pair] = diff(old, view) if old is not None else [["set", [], view]]
                    shown = redacted if hide and redacted is not None else events
                    frame = encode(patch_frame(self.id, version, version + 1, ops, shown, legal))
                frames[key] = frame
            # Each member's sequence moves only on changes it is sent (GI-8).
            if wire >= 3 and legal and resend:
                member.legal_base = kept = joined_legal(legal, edits, seat, plain)  # an empty list leaves the base
                if legal_hash is None:
                    legal_hash = hash(tuple(legal)) if kept is None else AS_BASE
            member.view, member.version, member.legal_hash = view, version + 1, legal_hash
            handed[seat] = view
            member.peer.push(frame)
        # The views of a room yet to play share parts with its template instead (`_views`)
        self._hidden_sent = handed if handed and self.actions else None

    def _publish_open(self, events: list[dict[str, Any]], skip: Member | None, engine: Engine, state: Any) -> None:
        """`publish` in a room without hidden information: every member's new view is one
        object (`_views`' shared one, built inline), so the ops, act and events are packed
        once per old view (`patch_body`) and each member's frame is its own head, version
        and legal list around them (`patch_bytes`); frames are shared by members at the
        same old view, version and legal list. Same frames, same order, same member
        updates as the general loop (tests/server/test_publish_frames.py)."""
        to_act = engine.to_act(state) if self.status == "playing" else NO_SEATS
        game = engine.view(state, None)
        if self.actions == 0:  # the game view shares its parts with the game's template
            game = share_initial(game, dictionaries(engine, self.meta["players"]).game(None))
        room: list[Any] = []  # the room part's change (`diff_view`), when known
        view = {"room": self._room_part(state, to_act or None, room), "game": game, "outcome": self.outcome}
        members = self.members
        ordered = members
        if to_act:  # acting members go last (their legal lists are computed)
            ordered = []
            acting: list[Member] = []
            for member in members:
                (acting if member.seat in to_act else ordered).append(member)  # None is in no seat set
            ordered += acting
        # The caches key on id(old view): every old view is held by its member when the
        # loop starts, so no two share an id, and one freed in the loop (its member got
        # the new view) can give its id only to an object allocated since, never to an
        # old view; the new view is held by `view` until the end.
        bodies: dict[int, Any] = {}
        frames: dict[tuple[Any, ...], bytes] = {}
        legals: dict[Seat, tuple[list[str], int]] = {}
        packs: dict[Seat | None, bytes] = {None: PACKED_NO_LEGAL}  # packb of each seat's legal list (None: idle seats')
        edits: dict[tuple[Seat | None, str], Any] = {}
        ops_cache: dict[int, list[Any]] | None = None
        shown: list[dict[str, Any]] | None = None  # the events protocol 2 sends
        prefix = b""
        for member in ordered:
            if member is skip:
                continue
            seat = member.seat
            if seat in to_act:
                found = legals.get(seat)
                if found is None:  # `legal_for`, whose checks `to_act` has made
                    legal = engine.legal_notation(state, seat)
                    found = legals[seat] = (legal, hash(tuple(legal)) if legal else EMPTY_HASH)
                legal, legal_hash = found
            else:
                legal, legal_hash, seat = NO_LEGAL, EMPTY_HASH, None  # frames alike for every idle member
            old, version, peer = member.view, member.version, member.peer
            wire = peer.protocol
            # Protocol 2 sends a legal list only when it differs from the member's last one;
            # protocol 3 may send the change from the member's last non-empty list.
            if wire >= 2:
                key: tuple[Any, ...]
                if legal_hash != member.legal_hash:
                    base = member.legal_base if wire >= 3 else None
                    key = (id(old), version, seat, wire, base)
                else:
                    base, key = None, (id(old), version, seat, wire)
                frame = frames.get(key)
                if frame is None:
                    body = bodies.get(id(old))
                    if body is None:  # the ops, act and events packed once for all who see them
                        if shown is None:
                            restated = engine.restated_events
                            # the view's change already says it (Engine.restated_events)
                            shown = [e for e in events if e.get("type") not in restated] if restated else events
                        refs = key_tables(engine)[1]
                        compact = (diff_view(old, view, refs, room[0], room[1], engine.view_edits(state)) if room
                                   else diff_compact(old, view, refs))
                        body = bodies[id(old)] = patch_body(compact, shown)
                        prefix = prefix or patch_head(self.id)
                    if len(key) == 4:  # the member's list is unchanged: none sent
                        frame = patch_bytes(prefix, version, body, None)
                    else:
                        edit = legal_change(member, legal, edits) if base is not None else None
                        if edit is None:  # the list whole, packed once a seat
                            packed = packs.get(seat)
                            if packed is None:
                                packed = packs[seat] = packb(legal)
                            frame = patch_bytes(prefix, version, body, None, None, packed)
                        else:
                            frame = patch_bytes(prefix, version, body, None, edit)
                    frames[key] = frame
                # Each member's sequence moves only on changes it is sent (GI-8).
                member.view, member.version = view, version + 1
                if len(key) == 5:
                    member.legal_hash = legal_hash
                    if wire >= 3 and legal:
                        packed = packs.get(seat)
                        # A list whose packed bytes say it is under EDIT_FROM gets no base
                        # (joined_legal's own test, without joining it): its joined text
                        # plus a separator an entry is at most len(packed) + len(legal) - 1.
                        if packed is not None and len(packed) + len(legal) <= EDIT_FROM:
                            member.legal_base = None
                        else:
                            member.legal_base = joined_legal(legal, edits, seat)  # an empty list leaves the base
            else:
                if ops_cache is None:
                    ops_cache = {}
                ops = ops_cache.get(id(old))
                if ops is None:
                    ops = ops_cache[id(old)] = diff(old, view) if old is not None else [["set", [], view]]
                frame = encode(patch_frame(self.id, version, version + 1, ops, events, legal))
                member.view, member.version, member.legal_hash = view, version + 1, legal_hash
            peer.push(frame)
