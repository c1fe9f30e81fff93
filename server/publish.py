"""What members are sent after a change: every member's patch, its own view diffed
against the view it last received (filter first, diff second: hidden data never
reaches a patch). `RoomPublish` is the mixin of `Room` that sends them; the views,
snapshots and key tables it sends are `server.views`', and in hidden-information
games each member's ops come from `server.split_diffs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engines.base import Engine, NotationList, Seat
from protocol.packer import packb
from server.legal_lists import (
    EDIT_FROM,
    EMPTY_HASH,
    LEGAL_SEP,
    join_legal,
    joined_legal,
    legal_change,
    lines_list,
    open_legal,
    open_lines,
    pack_legal,
    with_legal,
)
from server.packing import PackedState, dictionaries, share_initial
from server.seats import NO_SEATS, Member
from server.split_diffs import SplitDiffs
from server.views import AS_BASE, NO_LEGAL, PACKED_NO_LEGAL, EngineFacts, RoomViews
from server.wire import (
    compact_patch_frame,
    diff,
    diff_compact,
    diff_view,
    encode,
    patch_body,
    patch_bytes,
    patch_frame,
    patch_head,
)


class RoomPublish(RoomViews):
    """Mixin for Room: `publish`, the per-move send (Room supplies the attributes
    `RoomViews` declares)."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None:
        """Send every member its patch: its own view diffed against what it last got.

        Members who need no legal list go first (the one who just acted among them), so
        computing the next actor's legal actions never delays the other patches. Ops are
        computed once per (old view, new view) pair, their protocol-2 form once per pair
        too, and frames once per identical content and protocol version; in a
        perfect-information room the packed ops, act and events once per pair too, each
        member's frame its own head, version and legal list around them; in a
        hidden-information room, those of the members none of whose own view entries
        changed (one ops list, `SplitDiffs.common`) once per kind of events shown.
        """
        if self.packed:
            self.expand_views()
        self.touched, self.compacted = True, False
        engine, state = self.engine, self._state  # `state` (Room's property) without its call
        if type(state) is PackedState:
            state = self.state
        facts = self.facts
        if not facts.hidden:
            self._publish_open(events, skip, engine, state, facts)
            return
        to_act = engine.to_act(state) if self.status == "playing" else NO_SEATS
        room: list[Any] = []  # the room part's change (`_room_part`), when known
        views = self._views(state, to_act or None, room)
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
        restated = facts.restated
        compact_shown: dict[bool, list[dict[str, Any]]] = {}
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
        splits = SplitDiffs(facts.refs, {}, self._hidden_sent, engine.view_shared_start, room)
        plain = engine.plain_notation
        # Members share a view only with members of their seat (each seat's view is its
        # own object, the spectators' one): with one member a seat, no frame or diff of
        # one member is another's, so none is kept for the others
        seats_held = {member.seat for member in ordered}
        alone = len(seats_held) == len(ordered)
        handed: dict[Seat | None, Any] = {}  # the views handed out (kept for the next change)
        bodies: dict[bool, tuple[int, bytes]] = {}  # patch_body of `splits.common` by `hide`
        prefix = b""  # patch_head, once a change
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
            if alone:  # no other member's view is this one's: nothing to share
                key, frame = None, None
            else:
                variant = ("legal", seat) if acting else ("actor",) if redacted is not None and not hide else None
                key = (id(old), id(view), version, variant, wire, resend, id(base))  # (a base's text unhashed)
                frame = frames.get(key)
            if frame is None:
                if wire >= 2:
                    if alone:  # the diff in protocol 2's form (old None: the whole view)
                        compact = splits.ops(seat, old, view)
                    else:
                        pair = (id(old), id(view))
                        cached = compact_cache.get(pair)
                        if cached is None:  # the diff in protocol 2's form (old None: the whole view)
                            cached = compact_cache[pair] = splits.ops(seat, old, view)
                        compact = cached
                    shown = compact_shown.get(hide)
                    if shown is None:
                        shown = redacted if hide and redacted is not None else events
                        if restated:
                            shown = [e for e in shown if e.get("type") not in restated]
                        compact_shown[hide] = shown
                    edit = legal_change(member, legal, edits, plain) if base is not None else None
                    if compact is splits.common:  # the ops of every member none of whose own entries changed
                        # packed with the events once for the members who get both
                        body = bodies.get(hide)
                        if body is None:
                            body = bodies[hide] = patch_body(compact, shown)
                        prefix = prefix or patch_head(self.id)
                        if not resend or edit is not None:
                            frame = patch_bytes(prefix, version, body, None, edit)
                        elif type(legal) is NotationList:  # its runs packed once for all
                            frame = patch_bytes(prefix, version, body, None, None, pack_legal(legal))
                        else:
                            frame = patch_bytes(prefix, version, body, legal)
                    elif resend and edit is None and type(legal) is NotationList:  # its runs packed once for all
                        frame = with_legal(compact_patch_frame(self.id, version, compact, shown, None), legal)
                    else:
                        sent = legal if resend and edit is None else None
                        frame = encode(compact_patch_frame(self.id, version, compact, shown, sent, edit))
                else:
                    pair = (id(old), id(view))
                    ops = ops_cache.get(pair)
                    if ops is None:
                        ops = ops_cache[pair] = diff(old, view) if old is not None else [["set", [], view]]
                    shown = redacted if hide and redacted is not None else events
                    frame = encode(patch_frame(self.id, version, version + 1, ops, shown, legal))
                if key is not None:
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

    def _publish_open(self, events: list[dict[str, Any]], skip: Member | None, engine: Engine, state: Any,
                      facts: EngineFacts) -> None:
        """`publish` in a room without hidden information: every member's new view is one
        object (`_views`' shared one, built inline), so the ops, act and events are packed
        once per old view (`patch_body`) and each member's frame is its own head, version
        and legal list around them (`patch_bytes`); the members sent no list share a frame
        at the same old view and version. Same frames, same order, same member
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
        frames: dict[tuple[int, int], bytes] = {}  # the frames of members sent no list
        # each acting seat's list (or the text `engine.legal_lines` wrote it as, until a
        # member needs the list) and its `open_legal` hash
        legals: dict[Seat | None, tuple[list[str] | str, int]] = {}
        packs: dict[Seat | None, bytes] = {None: PACKED_NO_LEGAL}  # packb of each seat's legal list (None: idle seats')
        edits: dict[tuple[Seat | None, str], Any] = {}
        ops_cache: dict[int, list[Any]] | None = None
        shown: list[dict[str, Any]] | None = None  # the events protocol 2 sends
        prefix = b""
        last_old: Any = bodies  # the last body's old view (none yet: an object no member holds)
        last_body: Any = None
        for member in ordered:
            if member is skip:
                continue
            seat = member.seat
            legal: list[str] | str
            packed: bytes | None
            if seat in to_act:
                found = legals.get(seat)
                if found is None:  # `legal_for`, whose checks `to_act` has made
                    if facts.lines and (lines := engine.legal_lines(state, seat)) is not None:
                        # packed from the text; the list made only for a member that needs it
                        legal = lines[0]
                        packed, legal_hash = open_lines(legal, lines[1])
                    else:
                        legal = engine.legal_notation(state, seat)
                        packed, legal_hash = open_legal(legal)  # packed once, hashed and sent
                    if packed is not None:
                        packs[seat] = packed
                    found = legals[seat] = (legal, legal_hash)
                legal, legal_hash = found
            else:
                legal, legal_hash, seat = NO_LEGAL, EMPTY_HASH, None  # frames alike for every idle member
            old, version, peer = member.view, member.version, member.peer
            wire = peer.protocol
            # Protocol 2 sends a legal list only when it differs from the member's last one;
            # protocol 3 may send the change from the member's last non-empty list.
            if wire >= 2:
                key: tuple[int, int] | None
                listed = legal_hash != member.legal_hash  # its list (or an edit of it) goes in the frame
                if listed:
                    # its seat's list, from its own base: a frame seldom another's (a seat's
                    # second connection), so none is looked for (a key hashed, a frame kept)
                    base = member.legal_base if wire >= 3 else None
                    key = frame = None
                else:  # the frame depends on the old view and the version only
                    key = (id(old), version)
                    frame = frames.get(key)
                if frame is None:
                    body = last_body if old is last_old else bodies.get(id(old))  # (members mostly share one)
                    if body is None:  # the ops, act and events packed once for all who see them
                        if shown is None:
                            restated = facts.restated
                            # the view's change already says it (Engine.restated_events)
                            shown = [e for e in events if e.get("type") not in restated] if restated else events
                        refs = facts.refs
                        if not room:
                            compact = diff_compact(old, view, refs)
                        elif facts.writes and (written := engine.view_ops(state, refs, refs["game"])):
                            # the engine's own ops of the game map (a member whose last view does not
                            # hold their base, seldom if ever: its game map walked whole)
                            compact = diff_view(old, view, refs, room[0], room[1], (), written)
                        else:
                            compact = diff_view(old, view, refs, room[0], room[1], engine.view_edits(state))
                        body = bodies[id(old)] = patch_body(compact, shown)
                        last_old, last_body = old, body
                        prefix = prefix or patch_head(self.id)
                    if not listed:  # the member's list is unchanged: none sent
                        frame = patch_bytes(prefix, version, body, None)
                    else:
                        if base is None:
                            edit = None
                        else:
                            if isinstance(legal, str):
                                legal = lines_list(legal)
                                legals[seat] = (legal, legal_hash)
                            edit = legal_change(member, legal, edits, engine.plain_notation)
                        if edit is None:  # the list whole, packed once a seat
                            packed = packs.get(seat)
                            if packed is None:
                                # (never a text: its packed bytes are in `packs` from the start)
                                packed = packs[seat] = packb(legal) if type(legal) is list else pack_legal(legal)  # type: ignore[arg-type]
                            frame = patch_bytes(prefix, version, body, None, None, packed)
                        else:
                            frame = patch_bytes(prefix, version, body, None, edit)
                    if key is not None:
                        frames[key] = frame
                # Each member's sequence moves only on changes it is sent (GI-8).
                member.view, member.version = view, version + 1
                if listed:
                    member.legal_hash = legal_hash
                    if wire >= 3 and legal:
                        packed = packs.get(seat)
                        # A list whose packed bytes say it is under EDIT_FROM gets no base
                        # (joined_legal's own test, without joining it): its joined text
                        # plus a separator an entry is at most len(packed) + len(legal) - 1.
                        # (A list still a text: len(legal) is more than its entries, so
                        # the test holds for the list too; else joined_legal decides.)
                        if packed is not None and len(packed) + len(legal) <= EDIT_FROM:
                            member.legal_base = None
                        else:
                            if isinstance(legal, str):
                                legal = lines_list(legal)
                                legals[seat] = (legal, legal_hash)
                            member.legal_base = joined_legal(legal, edits, seat, engine.plain_notation)  # an empty list leaves the base
            else:
                if isinstance(legal, str):
                    legal = lines_list(legal)
                    legals[seat] = (legal, legal_hash)
                if ops_cache is None:
                    ops_cache = {}
                ops = ops_cache.get(id(old))
                if ops is None:
                    ops = ops_cache[id(old)] = diff(old, view) if old is not None else [["set", [], view]]
                frame = encode(patch_frame(self.id, version, version + 1, ops, events, legal))
                member.view, member.version, member.legal_hash = view, version + 1, legal_hash
            peer.push(frame)
