"""Hidden information: every member's patch diffed with the parts all members see
diffed once (`SplitDiffs`), for `RoomPublish.publish` (server.publish).

An engine declares that the first `Engine.view_shared_start` entries of its views are
the same for every seat; each member's ops are then the shared entries' ops (worked out
once a change) and its own entries' ops, checked against leaking another seat's data,
and exactly `diff_compact` of its own old and new views (tests/server/test_split_diffs.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engines.base import Seat
from protocol.compact import SET, Shared, _Inexpressible, _walk
from protocol.compact_view import _walk_keys
from protocol.patch import _PLAIN, _WHOLE_CHECK
from server.wire import diff_compact


class _Unsplit(Exception):
    """A diff the split cannot take (another shape, a whole container sent): diff it whole."""


class _Rekeyed(Exception):
    """`_entry_ops`' two maps do not hold the same key objects in the same order."""


# One changed entry of a view's top map: (its position, its key, its ops, what it adds to
# the map's count of direct changes, as protocol.compact's walk counts them).
_Segment = tuple[int, str, list[list[Any]], int]


def _entry_ops(old: dict[Any, Any], new: dict[Any, Any], ck: Any, refs: Mapping[str, int],
               out: list[_Segment]) -> None:
    """protocol.compact's walk of a top map (`_walk_part(old, new, [ck], ..., top=True)`,
    maps of one length), one segment per changed entry. Raises _Rekeyed unless both
    maps hold the same key objects in the same order (checked entry by entry as it
    walks: `out` may then hold some segments, to drop), _Unsplit if a key has no
    compact form. (One loop over both maps' keys and values: checking the keys first
    with `all(map(is_, ...))` and finding the changed entries with `compress`,
    `enumerate` and `map` made four iterators and called `is_`/`is_not` per entry.)"""
    i = -1
    for ok, k, w, v in zip(old, new, old.values(), new.values()):  # noqa: B905 (the same lengths)
        i += 1
        if ok is not k:
            raise _Rekeyed
        if w is v:
            continue
        if type(k) is not str:
            raise _Unsplit
        ckey = refs.get(k, k)
        if type(v) in _PLAIN:
            if type(w) is not type(v) or w != v:
                out.append((i, k, [[SET, ck, ckey, v]], 1))
            continue
        ops: list[list[Any]] = []
        try:
            got = _walk(w, v, [ck, ckey], refs, ops)
        except _Inexpressible:
            raise _Unsplit from None
        if ops:
            out.append((i, k, ops, got))


def _own_ops(old: dict[Any, Any], new: dict[Any, Any], ck: Any, refs: Mapping[str, int],
             start: int) -> tuple[list[list[Any]], int] | None:
    """The same walk of the entries from position `start` on (`old` and `new` of one
    length): their ops and direct count, None if none. Raises _Unsplit unless both maps
    hold the same keys there, in the same order.

    The few entries past `start` (a view's own: GIANTS' `you`, `ahu`, `screen`,
    `my_bid`) are read from the maps' ends (`reversed`), and the changed ones (mostly
    none) walked in the maps' order afterwards. Skipping the shared entries instead
    (two `islice`, each made with its arguments parsed, zipped `strict`: a keyword
    parsed) cost ~4,400 instructions a call more (bench/move_instructions.py)."""
    ro, rn = reversed(old.items()), reversed(new.items())
    changed: list[tuple[str, Any, Any]] | None = None
    for _ in range(len(new) - start):
        (k, w), (key, v) = next(ro), next(rn)
        if k is not key and k != key:
            raise _Unsplit
        if w is not v:
            if changed is None:
                changed = []
            changed.append((key, w, v))
    if changed is None:
        return None
    ops: list[list[Any]] = []
    direct = 0
    for key, w, v in reversed(changed):  # in the maps' order
        if type(key) is not str:
            raise _Unsplit
        ckey = refs.get(key, key)
        if type(v) in _PLAIN:
            if type(w) is not type(v) or w != v:
                ops.append([SET, ck, ckey, v])
                direct += 1
            continue
        try:
            direct += _walk(w, v, [ck, ckey], refs, ops)
        except _Inexpressible:
            raise _Unsplit from None
    return (ops, direct) if ops else None


class SplitDiffs:
    """Each member's compact ops in a hidden-information room, exactly
    `diff_compact(old, new, refs)`'s, with what every member sees diffed once.

    A RoomView is {"room", "game", "outcome"}, one room part and one outcome in every
    view `_views` builds for a change; and an engine may build its game views of one
    state so that their first `start` entries are the same keys and the very objects in
    every seat's view (`view_shared_start`; GIANTS: all but the viewer's own `you`,
    `ahu`, `screen` and `my_bid`, which come last; tests/engines/giants/
    test_giants_views.py checks it). Publish keeps the views it handed out
    (`RoomViews._hidden_sent`), so a member whose old view is the one the last change
    handed to its seat holds that same start as every such member.

    The first such member's diff (the reference) is walked as protocol.compact walks
    it, each changed entry's ops kept apart; another's is the reference's ops of the
    room part, of the game entries before `start` and of the outcome, and its own game
    entries walked from there for it alone. A walk's ops depend only on the pair walked
    and its path: the same ops in the same order as its whole diff
    (tests/server/test_publish_frames.py, tests/server/test_split_diffs.py). Nothing
    of one member's own entries reaches another's ops: the reference's ops of an entry
    go to a member only if its old and new views hold the reference's very objects
    there (checked, entry by entry). A member for whom any of this fails, or whose diff
    would weigh sending a whole map (`_whole_compact`), is diffed whole. Every member
    none of whose own entries changed gets one list object (`common`: the room part's,
    the shared entries' and the outcome's ops), which publish packs once.
    """

    __slots__ = ("common", "games", "gen", "head", "old", "prefix", "refs", "room", "root_direct", "shared", "start",
                 "tail")

    def __init__(self, refs: Mapping[str, int], shared: Shared, gen: dict[Seat | None, Any] | None,
                 start: int, room: Sequence[Any] = ()) -> None:
        self.refs, self.shared, self.start = refs, shared, start
        # `_room_part`'s `changed`: the room part the old views were found to hold and the
        # keys whose objects the new one replaced (in its order); none when not known
        self.room: Sequence[Any] = room if len(room) == 2 else (None, ())
        self.gen: dict[Seat | None, Any] = gen if gen is not None and start > 0 else {}  # the last change's
        self.old: dict[str, Any] | None = None  # the reference pair (None: none yet)
        self.head: list[list[Any]] = []  # the room part's ops
        self.tail: list[list[Any]] = []  # the outcome's
        self.games: list[_Segment] = []  # the reference's changed game entries
        self.root_direct = 0  # the root's count of direct changes (the game's walk adds none)
        # The ops of the entries before `start`, their direct count, and per entry the
        # objects the reference's old and new game views hold there
        self.prefix: tuple[list[list[Any]], int, list[tuple[str, Any, Any]]] | None = None
        # The ops of a member none of whose own entries changed (the room part's, the
        # shared entries' and the outcome's): one list, handed to every such member
        self.common: list[list[Any]] | None = None

    def ops(self, seat: Seat | None, old: Any, new: Any) -> list[list[Any]]:
        """`diff_compact(old, new, refs)`, for a member of `seat`."""
        try:
            if self.gen.get(seat) is not old:
                raise _Unsplit
            if self.old is None:
                self._reference(old, new)
            return self._member(old, new)
        except _Unsplit:
            return diff_compact(old, new, self.refs, self.shared)

    def _reference(self, old: Any, new: Any) -> None:
        # The root walk (`_walk_root`) of the first member's pair, its entries' ops kept.
        if not (type(old) is dict and type(new) is dict and old is not new and len(old) == len(new) == 3):
            raise _Unsplit
        (a, b, c), (x, y, z) = old, new  # the same three key objects in the same order
        if not (a is x and b is y and c is z and "room" in new and "game" in new and "outcome" in new):
            raise _Unsplit
        og, ng = old["game"], new["game"]
        if not (type(og) is dict and type(ng) is dict and len(og) == len(ng) >= self.start):
            raise _Unsplit  # (and unless both hold the same key objects in the same order: below)
        refs = self.refs
        head: list[list[Any]] = []
        tail: list[list[Any]] = []
        games: list[_Segment] = []
        direct, after = 0, False
        part, changed = self.room
        for k, v in new.items():
            w = old[k]
            if k == "game":
                after = True
                if w is not v:
                    try:
                        _entry_ops(w, v, refs.get(k, k), refs, games)
                    except _Rekeyed:
                        raise _Unsplit from None
                continue
            if w is v:
                continue
            ck = refs.get(k, k)
            ops = tail if after else head
            if w is part and k == "room":  # the part `_room_part` built the new one from: its changed keys only
                try:
                    direct += _walk_keys(w, v, changed, [ck], refs, ops)
                except _Inexpressible:
                    raise _Unsplit from None
                continue
            if type(v) in _PLAIN:
                if type(w) is not type(v) or w != v:
                    ops.append([SET, ck, v])
                    direct += 1
                continue
            segments: list[_Segment] | None = None
            if type(w) is dict and type(v) is dict and len(w) == len(v):
                segments = []
                try:
                    _entry_ops(w, v, ck, refs, segments)
                except _Rekeyed:  # walked whole below
                    segments = None
            if segments is not None:
                start = len(ops)
                for segment in segments:
                    ops += segment[2]
                if len(ops) - start >= _WHOLE_CHECK and 2 * sum(seg[3] for seg in segments) >= len(v):
                    raise _Unsplit  # `_whole_compact` decides: the whole diff does
                continue
            try:
                direct += _walk(w, v, [ck], refs, ops)
            except _Inexpressible:
                raise _Unsplit from None
        # The entries before `start` (every member's), each with the objects a member's
        # old and new game views must hold there to be given their ops
        pre: list[list[Any]] = []
        pre_direct = 0
        guards: list[tuple[str, Any, Any]] = []
        for i, key, part, got in games:
            if i < self.start:
                pre += part
                pre_direct += got
                guards.append((key, og[key], ng[key]))
        self.head, self.tail, self.root_direct = head, tail, direct
        self.games, self.prefix = games, (pre, pre_direct, guards)
        self.old = old

    def _member(self, old: Any, new: Any) -> list[list[Any]]:
        # Both old views are the last change's (`gen`: one `_views` call's) and both new
        # ones this change's, so each pair's room parts and outcomes are one object.
        og, ng = old["game"], new["game"]
        ops: list[list[Any]]
        if og is ng:  # nothing of its game view changed (then the walk never looks in it)
            ops, game_direct = [], 0
        elif old is self.old:  # the reference itself: every entry its own
            ops, game_direct = [], 0
            start, shared = self.start, True
            for segment in self.games:
                ops += segment[2]
                game_direct += segment[3]
                if segment[0] >= start:
                    shared = False
            if shared:  # none of its own entries changed: the shared ops, as below
                return self._common(game_direct, len(ng))
        else:
            if len(og) != len(ng):
                raise _Unsplit
            assert self.prefix is not None
            ops, game_direct, guards = self.prefix
            try:
                for key, w, v in guards:  # its views hold the reference's objects there
                    if og[key] is not w or ng[key] is not v:
                        raise _Unsplit
            except KeyError:
                raise _Unsplit from None
            own = _own_ops(og, ng, self.refs.get("game", "game"), self.refs, self.start)
            if own is None:  # none of its own entries changed: the ops every such member gets
                return self._common(game_direct, len(ng))
            ops = ops + own[0]  # its own entries, walked for it alone
            game_direct += own[1]
        if len(ops) >= _WHOLE_CHECK and 2 * game_direct >= len(ng):
            raise _Unsplit  # `_whole_compact` decides: the whole diff does
        head, tail = self.head, self.tail
        if head or tail:
            ops = [*head, *ops, *tail]
            if len(ops) >= _WHOLE_CHECK and 2 * self.root_direct >= 3:
                raise _Unsplit  # the root's `_whole_compact`
        return ops

    def _common(self, game_direct: int, size: int) -> list[list[Any]]:
        """The ops of a member whose own game entries are unchanged, its game view `size`
        entries long: the room part's, the shared entries' (`prefix`, `game_direct`
        direct changes among them) and the outcome's ops, one list object for every such
        member (publish packs it once for all of them). The whole-map checks are
        `_member`'s, made for this member's own view size."""
        pre = self.prefix[0]  # type: ignore[index]
        if len(pre) >= _WHOLE_CHECK and 2 * game_direct >= size:
            raise _Unsplit  # `_whole_compact` decides: the whole diff does
        ops = self.common
        if ops is None:
            head, tail = self.head, self.tail
            ops = [*head, *pre, *tail] if head or tail else pre
            if len(ops) >= _WHOLE_CHECK and 2 * self.root_direct >= 3:
                raise _Unsplit  # the root's `_whole_compact`
            self.common = ops
        return ops
