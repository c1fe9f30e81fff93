"""Protocol version 2's compact patches: integer op codes and a per-room key table.

A version-2 snapshot carries `keys`, the room's key table: a list of strings, static for
the game and rule set (the room's own keys, then the engine's `view_keys`), so it tells
a member nothing about anybody's view. In a version-2 patch each op is one flat list,

    [0, *path, value]   set (an empty path replaces the whole view)
    [1, *path]          del
    [2, *path, n]       trunc
    [3, *path, value]   push

and a path element is a list index (an int >= 0), a map key written out (a str, or an
int >= 0 for a map with int keys), or a *key reference*: a negative int -1 - i that
stands for `keys[i]`. Values are sent as they are (never abbreviated). A view with a
map key that none of these can express (a negative int, a bool, bytes, ...) is sent as
one root `set`: correct, only larger. See docs/protocol.md, section 6.

`compact_ops` (server side) turns `protocol.patch.diff` output into version-2 ops, and
`diff_compact` gives both in one walk (the server's per-move path; `protocol.compact_view`
walks less when the caller knows what changed); `expand_ops` (client side) turns them
back, so `apply_patch` serves both versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, count
from operator import is_, is_not
from typing import Any, Final

from protocol.errors import PatchError
from protocol.packer import packer as _packer
from protocol.patch import (
    _PLAIN,
    _SEQ,
    _WHOLE_CHECK,
    Op,
    _key_of,
    _same_fast,
    diff,
    same,
)

SET: Final = 0
DEL: Final = 1
TRUNC: Final = 2
PUSH: Final = 3
_CODES: Final[dict[str, int]] = {"set": SET, "del": DEL, "trunc": TRUNC, "push": PUSH}
_KINDS: Final = ("set", "del", "trunc", "push")


# The RoomView's own keys (docs/protocol.md section 5). The ones a move changes come
# first: references -1..-32 pack in one byte, -33..-128 in two.
ROOM_KEYS_HEAD: Final = ("room", "game", "to_act", "answered", "deadline", "draw_offer", "status",
                         "seats", "connected", "outcome")
ROOM_KEYS_TAIL: Final = ("id", "rules", "players", "name", "bot", "seat", "scores", "winners",
                         "reason", "detail", "extra")


def key_table(game_keys: Iterable[str]) -> tuple[str, ...]:
    """The key table of a room whose engine lists `game_keys` (`Engine.view_keys`).

    The room's frequent keys, then the game's in its order, then the rest of the room's;
    each key once (its first place wins). Build it once per game and rule set.
    """
    seen: dict[str, None] = {}
    for key in (*ROOM_KEYS_HEAD, *game_keys, *ROOM_KEYS_TAIL):
        seen.setdefault(key, None)
    return tuple(seen)


def key_refs(keys: Sequence[str]) -> dict[str, int]:
    """key -> its reference (-1 - index): what `compact_ops` looks keys up in."""
    return {key: -1 - i for i, key in enumerate(keys)}


def compact_ops(ops: Sequence[Op], refs: Mapping[str, int], new: Any) -> list[list[Any]]:
    """`diff(old, new)`'s ops in the version-2 form, keys replaced by references.

    `new` is the view the ops lead to: if some path holds a key the compact form cannot
    express, the whole view is sent as one root set instead. Values are shared with
    `new`; encode the result before changing it.
    """
    out: list[list[Any]] = []
    for op in ops:
        enc: list[Any] = [_CODES[op[0]]]
        for key in op[1]:
            kind = type(key)
            if kind is str:
                enc.append(refs.get(key, key))
            elif kind is int and key >= 0:
                enc.append(key)
            else:  # reads as a reference (negative int) or is no str/int at all
                return [[SET, new]]
        if len(op) > 2:
            enc.append(op[2])
        out.append(enc)
    return out


def expand_ops(ops: Any, keys: Sequence[str]) -> list[Op]:
    """Version-2 ops back in the `protocol.patch` form, references resolved.

    Raises PatchError for anything malformed (not a list, an unknown code, a reference
    outside `keys`): the client then asks for a resync, as for an op that does not fit.
    """
    if type(ops) is not list:
        raise PatchError("ops is not a list")
    count = len(keys)
    out: list[Op] = []
    for op in ops:
        if type(op) is not list or not op or type(op[0]) is not int or not 0 <= op[0] <= PUSH:
            raise PatchError(f"malformed op {op!r}")
        code = op[0]
        if code == DEL:
            raw, arg = op[1:], None
        else:
            if len(op) < 2:
                raise PatchError(f"malformed op {op!r}")
            raw, arg = op[1:-1], op[-1]
        path: list[Any] = []
        for key in raw:
            if type(key) is int and key < 0:
                if -key > count:
                    raise PatchError(f"key reference {key} outside the key table of {count}")
                key = keys[-1 - key]
            path.append(key)
        out.append([_KINDS[code], path] if code == DEL else [_KINDS[code], path, arg])
    return out



_SHORT: Final = 16  # lists shorter than this are scanned for changes in the walk's loop


class _Inexpressible(Exception):
    """A changed entry's key has no compact form (compact_ops sends the whole view)."""


def _ckey(key: Any) -> Any:
    # A map key that is not a str, in the compact form (as compact_ops writes it).
    if type(key) is int and key >= 0:
        return key
    raise _Inexpressible


# (id(old), id(new)) -> (old, new, compact path, its ops, _walk's count): see diff_compact
Shared = dict[tuple[int, int], tuple[Any, Any, list[Any], list[list[Any]], int]]


def diff_compact(old: Any, new: Any, refs: Mapping[str, int], shared: Shared | None = None) -> list[list[Any]]:
    """`compact_ops(diff(old, new), refs, new)`, in one walk: the same ops, op for op.

    `refs` is `key_refs(keys)`. The walk carries each container's compact path and
    writes the compact ops directly: no plain ops, no second pass over their paths. A
    key the compact form cannot hold (where an op would need it) sends the whole view,
    as compact_ops does.

    `shared` is for a change's diffs of several members' views in a game with hidden
    information (each seat's view its own, their parts shared): pass one empty dict to
    all of them and drop it after. It keeps the ops of the containers one and two levels
    below the root, so a later diff whose views hold the very same pair of containers
    at the same path (the room part, the board every seat sees) copies their ops
    instead of walking them again. A walk's ops depend only on its pair and its path,
    so the ops are the same, op for op; `shared` holds the pairs (their ids stay
    theirs while it lives).
    """
    cops: list[list[Any]] = []
    try:
        if shared is None:
            _walk(old, new, [], refs, cops)
        else:
            _walk_root(old, new, refs, cops, shared)
    except _Inexpressible:
        return compact_ops(diff(old, new), refs, new)
    return cops


def _walk_root(old: Any, new: Any, refs: Mapping[str, int], cops: list[list[Any]], shared: Shared) -> None:
    # _walk(old, new, [], ...) with its entries' walks looked up in / kept in `shared`.
    # Maps with the same key objects in the same order (views built from literals) are
    # walked here and in _walk_part entry by entry, as _walk's identity path does for
    # larger maps: the same ops as its other path (on equal maps it finds none).
    if type(old) is dict and type(new) is dict and old is not new and len(old) == len(new) and all(map(is_, old, new)):
        start, direct = len(cops), 0
        for k, v in compress(new.items(), map(is_not, old.values(), new.values())):
            w = old[k]
            ck = refs.get(k, k) if type(k) is str else _ckey(k)
            if type(v) in _PLAIN:
                if type(w) is not type(v) or w != v:
                    cops.append([SET, ck, v])
                    direct += 1
                continue
            direct += _walk_part(w, v, [ck], refs, cops, shared, True)
        if len(cops) - start >= _WHOLE_CHECK and 2 * direct >= len(new):
            _whole_compact([], new, refs, cops, start, 0)
    else:
        _walk(old, new, [], refs, cops)


def _walk_part(old: Any, new: Any, cpath: list[Any], refs: Mapping[str, int], cops: list[list[Any]],
               shared: Shared, top: bool) -> int:
    # _walk of a root entry (`top`) or of an entry of one, its ops copied from `shared`
    # or kept there.
    key = (id(old), id(new))
    hit = shared.get(key)
    if hit is not None and hit[0] is old and hit[1] is new and hit[2] == cpath:
        cops += hit[3]
        return hit[4]
    start = len(cops)
    if top and type(old) is dict and type(new) is dict and len(old) == len(new) and all(map(is_, old, new)):
        direct = 0
        for k, v in compress(new.items(), map(is_not, old.values(), new.values())):
            w = old[k]
            ck = refs.get(k, k) if type(k) is str else _ckey(k)
            if type(v) in _PLAIN:
                if type(w) is not type(v) or w != v:
                    cops.append([SET, *cpath, ck, v])
                    direct += 1
                continue
            if type(v) is dict:
                direct += _walk_part(w, v, [*cpath, ck], refs, cops, shared, False)
            else:  # a list (short, in a view's parts) walks about as fast as its ops are looked up
                direct += _walk(w, v, [*cpath, ck], refs, cops)
        got = 0
        if len(cops) - start >= _WHOLE_CHECK and 2 * direct >= len(new):
            got = _whole_compact(cpath, new, refs, cops, start, 0)
    else:
        got = _walk(old, new, cpath, refs, cops)
    shared[key] = (old, new, cpath, cops[start:], got)
    return got


def _walk(old: Any, new: Any, cpath: list[Any], refs: Mapping[str, int], cops: list[list[Any]]) -> int:
    # patch._diff, op for op, each op appended to `cops` in the compact form (`cpath` is
    # the plain path compacted). Returns what _diff returns.
    if old is new:
        return 0
    to, tn = type(old), type(new)
    if to is dict and tn is dict:
        start, direct = len(cops), 0
        if len(old) == len(new):
            # The same key objects in the same order (views built from the same literals,
            # of any size) are checked in the walk itself, entry by entry: one pass that
            # looks at both maps' keys and values at once costs less than finding the
            # changed entries at C speed after checking the keys (two passes, each a C
            # call per entry). Same ops, in the same order, as the walk below. A key that
            # is not the same object ends it: its ops so far are dropped, and the walk
            # below does the map from the start.
            for ok, k, w, v in zip(old, new, old.values(), new.values()):  # noqa: B905 (the same lengths)
                if ok is not k:
                    break
                if w is v:
                    continue
                ck = refs.get(k, k) if type(k) is str else _ckey(k)
                if type(v) in _PLAIN:
                    if type(w) is not type(v) or w != v:
                        cops.append([SET, *cpath, ck, v])
                        direct += 1
                    continue
                direct += _walk(w, v, [*cpath, ck], refs, cops)
            else:
                if len(cops) - start < _WHOLE_CHECK or 2 * direct < len(new):
                    return 0
                return _whole_compact(cpath, new, refs, cops, start, 0)
            del cops[start:]
            direct = 0
        if old == new and _same_fast(old, new):
            return 0
        for k in old:
            if k not in new or (type(k) is not str and type(_key_of(new, k)) is not type(k)):
                cops.append([DEL, *cpath, refs.get(k, k) if type(k) is str else _ckey(k)])
                direct += 1
        for k, v in new.items():
            if k in old and (type(k) is str or type(_key_of(old, k)) is type(k)):
                w = old[k]
                if w is v:
                    continue
                ck = refs.get(k, k) if type(k) is str else _ckey(k)
                if type(v) in _PLAIN:
                    if type(w) is not type(v) or w != v:
                        cops.append([SET, *cpath, ck, v])
                        direct += 1
                    continue
                direct += _walk(w, v, [*cpath, ck], refs, cops)
            else:
                cops.append([SET, *cpath, refs.get(k, k) if type(k) is str else _ckey(k), v])
                direct += 1
        if len(cops) - start < _WHOLE_CHECK or 2 * direct < len(new):
            return 0
        return _whole_compact(cpath, new, refs, cops, start, 0)
    if to in _SEQ and tn in _SEQ:
        if old == new and _same_fast(old, new):
            return 0
        start, direct = len(cops), 0
        lo, ln = len(old), len(new)
        # Positions whose objects differ: a short list is looked at in the loop itself
        # (setting up the C-level search costs more than a look at a few entries).
        for i in range(ln if ln < lo else lo) if ln < _SHORT else compress(count(), map(is_not, old, new)):
            w, v = old[i], new[i]
            if w is v:
                continue
            if type(v) in _PLAIN:
                if type(w) is not type(v) or w != v:
                    cops.append([SET, *cpath, i, v])
                    direct += 1
                continue
            direct += _walk(w, v, [*cpath, i], refs, cops)
        if ln < lo:
            cops.append([TRUNC, *cpath, ln])
            own = 1
        elif ln == lo:
            own = 0
        else:
            own = ln - lo
            for i in range(lo, ln):
                cops.append([PUSH, *cpath, new[i]])
        if len(cops) - start < _WHOLE_CHECK or 2 * (direct + own) < len(new):
            return own
        return _whole_compact(cpath, new, refs, cops, start, own)
    if not same(old, new):
        cops.append([SET, *cpath, new])
        return 1
    return 0


# id(refs) -> (refs, keys with keys[-1 - ref] the key of each ref, sizes with sizes[-1 -
# ref] its packed size): the few key tables a server has (one per game and rule set,
# static), inverted once each. Bounded.
_INVERTED: dict[int, tuple[Mapping[str, int], list[Any], list[int]]] = {}


def _keys_of(refs: Mapping[str, int]) -> list[Any]:
    return _inverted(refs)[1]


def _inverted(refs: Mapping[str, int]) -> tuple[Mapping[str, int], list[Any], list[int]]:
    hit = _INVERTED.get(id(refs))
    if hit is not None and hit[0] is refs:
        return hit
    keys: list[Any] = [None] * max((-1 - ref for ref in refs.values()), default=-1)
    keys.append(None)
    for key, ref in refs.items():
        keys[-1 - ref] = key
    if len(_INVERTED) >= 64:
        _INVERTED.clear()
    hit = _INVERTED[id(refs)] = (refs, keys, [_packed_size(key) for key in keys])
    return hit


def _packed_size(key: Any) -> int:
    # The bytes msgpack packs a path element (a str or int key, an index) in, as
    # Packer(use_bin_type=True) writes it: its header and its data.
    if type(key) is str:
        n = len(key.encode())
        return n + (1 if n < 32 else 2 if n < 0x100 else 3 if n < 0x10000 else 5)
    if type(key) is int:
        if -32 <= key < 0x80:
            return 1
        if key < 0:
            return 2 if key >= -0x80 else 3 if key >= -0x8000 else 5 if key >= -0x80000000 else 9
        return 2 if key < 0x100 else 3 if key < 0x10000 else 5 if key < 0x100000000 else 9
    return len(_packer()(key))  # (no path holds another type: the walk's keys are str or int)


_KIND_SIZES: Final = (4, 4, 6, 5)  # each op kind's name packed ("set", "del", "trunc", "push")


def _whole_compact(cpath: list[Any], new: Any, refs: Mapping[str, int], cops: list[list[Any]],
                   start: int, own: int) -> int:
    # patch._whole's choice, made as it makes it: on the plain ops' packed sizes (rare:
    # a container with many of its entries changed). The plain ops are the compact
    # ones expanded back ([kind, [*path, *keys], value]): every one of them starts with
    # this container's path. Their size is summed from its parts (msgpack packs a
    # list as its header and its entries' bytes), the values packed in one list: the
    # plain ops are not built (a GIANTS screen's four ops: ~45,000 instructions for
    # building and packing them).
    _, keys, sizes = _inverted(refs)
    path = [keys[-1 - e] if type(e) is int and e < 0 else e for e in cpath]
    head = len(cpath) + 1
    size = 0  # the path's entries, packed
    for e in cpath:
        size += sizes[-1 - e] if type(e) is int and e < 0 else _packed_size(e)
    n = len(cops) - start
    total = 1 if n < 16 else 3 if n < 0x10000 else 5  # the list of ops' header
    try:
        whole = len(_packer()(["set", path, new]))
    except (TypeError, ValueError, OverflowError):
        return own  # not msgpack-able as is (the caller's problem at encode time)
    if type(new) is dict and whole < total + n * (7 + size):
        # Each op of a map's entry packs to at least 7 bytes besides the container's path:
        # its header, kind ("set", "del": 4 bytes or more), its path's header, the entry's
        # key and a value (a "del" has none, but a kind of 4 and a key of 2 or more: a str
        # key is 1 byte or more, a ref's, else an int of 1). The whole set is smaller.
        del cops[start:]
        cops.append([SET, *cpath, new])
        return 1
    values: list[Any] = []
    depth = len(path) - head
    for op in cops[start:]:
        code = op[0]
        end = len(op)
        if code != DEL:
            end -= 1
            values.append(op[-1])
        m = depth + end  # the op's path length
        # the op's header (2 or 3 entries), its kind, its path's header and the container's path
        total += 1 + _KIND_SIZES[code] + (1 if m < 16 else 3 if m < 0x10000 else 5) + size
        i = head
        while i < end:  # the op's own keys (a ref's size read, a small index's 1 byte)
            e = op[i]
            if type(e) is int and e < 0x80:
                total += sizes[-1 - e] if e < 0 else 1
            else:
                total += _packed_size(e)
            i += 1
    try:
        n = len(values)
        if whole < total + len(_packer()(values)) - (1 if n < 16 else 3 if n < 0x10000 else 5):
            del cops[start:]
            cops.append([SET, *cpath, new])
            return 1
    except (TypeError, ValueError, OverflowError):
        pass  # not msgpack-able as is (the caller's problem at encode time)
    return own
