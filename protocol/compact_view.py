"""`diff_view`: the compact diff of a view (`protocol.compact.diff_compact`'s ops, op for
op) when the caller knows what changed: which entries of the room part, and which
indexes or keys of the game map's lists and maps the engine rewrote (`Engine.view_edits`).
The walks here look at those only and hand everything else to `protocol.compact`'s walk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import lt
from typing import Any

from protocol.compact import (
    DEL,
    PUSH,
    SET,
    TRUNC,
    _ckey,
    _Inexpressible,
    _walk,
    _whole_compact,
    compact_ops,
    diff_compact,
)
from protocol.patch import _PLAIN, _WHOLE_CHECK, diff


def diff_view(old: Any, new: dict[str, Any], refs: Mapping[str, int], part: Any, changed: Sequence[str],
              edits: Sequence[tuple[Any, Any, Sequence[Any]]] = (),
              written: tuple[Any, list[list[Any]]] | None = None) -> list[list[Any]]:
    """`diff_compact(old, new, refs)` when the caller knows what its `room` entry changed:
    the same ops, op for op, with no look at the entries it did not.

    `new` is a map with str keys (a RoomView: room, game, outcome) whose `room` entry
    is a map with the same keys as `part`, in any order, every entry the same object as
    `part`'s but those named in `changed` (in `new["room"]`'s order). When `old` is a
    map with `new`'s keys and `part` is its room entry, the room part's walk looks at
    `changed` only; anything else is diffed as `diff_compact` does. (The entries not
    named are the same objects, so the walk would find nothing there: the ops are the
    same, and so is the choice of one whole `set` made on them.)

    `edits` are the engine's (`Engine.view_edits`): a list or map of the `game` map that
    is an edit's value where the old game map holds its base is walked at the edit's
    indexes (and past the shorter length) or keys only (`_walk_at`, `_walk_keys_at`),
    and so is the `game` map itself when it is the last edit's value, made from the old
    one (`_walk_map_edited`: its entries still walked by their own edits).

    `written` is the engine's own diff of the `game` map (`Engine.view_ops`): (base,
    ops), the ops the walk would give where the old map holds `base` there; they are
    taken as they are (and count nothing towards a whole `set` of `new`).
    """
    if type(old) is not dict or len(old) != len(new) or old.get("room") is not part:
        return diff_compact(old, new, refs)
    cops: list[list[Any]] = []
    direct = 0
    try:
        if written is not None and len(changed) == 1 and len(new) == 3:
            # A move's usual change in a RoomView (room, game, outcome: the loop below's
            # order): one room part entry, the game map as the engine wrote it, the
            # outcome the same object. Its ops are the loop's, and count nothing.
            room, game, other = new
            if (room == "room" and game == "game" and old.get("game") is written[0]
                    and old.get(other, old) is new[other]):
                n = changed[0]
                if _set_entry(old[room][n], new[room][n], refs.get(room, room), n, refs, cops):
                    cops += written[1]
                    return cops
        # _walk's dict walk, as either of its paths goes: `old` has `new`'s keys (as
        # many, each found), so there is nothing to delete and the entries come in
        # `new`'s order.
        for k, v in new.items():
            w = old[k]  # KeyError: another set of keys (diff_compact's walk then)
            if w is v:
                continue
            ck = refs.get(k, k)  # a str key (the caller's promise; checked for the room part)
            if type(v) in _PLAIN:
                if type(w) is not type(v) or w != v:
                    cops.append([SET, ck, v])
                    direct += 1
                continue
            if w is part and type(k) is str:
                # a move's usual change (`to_act`), _walk_keys' without its walk
                if len(changed) == 1 and _set_entry(part[changed[0]], v[changed[0]], ck, changed[0], refs, cops):
                    continue
                direct += _walk_keys(w, v, changed, [ck], refs, cops)
            elif written is not None and w is written[0] and k == "game":
                cops += written[1]
            elif edits and k == "game":
                base, value, at = edits[-1]
                if value is v and base is w and type(w) is dict and type(v) is dict and len(w) == len(v):
                    # _walk_edited's own first case (the game map itself the last edit's
                    # value, made from the old one), without its call
                    direct += _walk_map_edited(w, v, at, [ck], refs, cops, edits)
                else:
                    direct += _walk_edited(w, v, [ck], refs, cops, edits)
            else:
                direct += _walk(w, v, [ck], refs, cops)
    except KeyError:
        return diff_compact(old, new, refs)
    except _Inexpressible:
        return compact_ops(diff(old, new), refs, new)
    if len(cops) >= _WHOLE_CHECK and 2 * direct >= len(new):
        _whole_compact([], new, refs, cops, 0, 0)
    return cops


def _set_entry(x: Any, y: Any, ck: Any, n: str, refs: Mapping[str, int], cops: list[list[Any]]) -> bool:
    # _walk_keys of a map (at `ck`, under the root) whose one changed key `n` went from
    # x to y, when y is a plain value or a one-entry list of one (a turn passing:
    # `to_act` [a] -> [b], set by its entry): its op if any, which counts 0 (one op: no
    # whole `set` to weigh). False, nothing done: another kind of entry, to walk.
    if x is y:
        return True
    if type(y) is list and type(x) is list and len(y) == 1 and len(x) == 1 and type(y[0]) in _PLAIN:
        x, y = x[0], y[0]
        if type(x) is not type(y) or x != y:
            cops.append([SET, ck, refs.get(n, n), 0, y])
        return True
    if type(y) in _PLAIN:
        if type(x) is not type(y) or x != y:
            cops.append([SET, ck, refs.get(n, n), y])
        return True
    return False


def _walk_keys(old: Any, new: Any, keys: Sequence[str], cpath: list[Any],
               refs: Mapping[str, int], cops: list[list[Any]]) -> int:
    # _walk of two maps with the same keys whose entries are the same objects but for
    # `keys` (in `new`'s order): its dict walk over those only.
    start, direct = len(cops), 0
    for k in keys:
        v = new[k]
        w = old[k]
        if w is v:
            continue
        ck = refs.get(k, k)
        if type(v) in _PLAIN:
            if type(w) is not type(v) or w != v:
                cops.append([SET, *cpath, ck, v])
                direct += 1
            continue
        if type(v) is list and type(w) is list and len(v) == 1 and len(w) == 1 and type(v[0]) in _PLAIN:
            # _walk of two one-entry lists (a turn passing: `to_act` [a] -> [b]), inlined:
            # its entry set when it differs, nothing pushed or cut (it counts 0)
            x, y = w[0], v[0]
            if type(x) is not type(y) or x != y:
                cops.append([SET, *cpath, ck, 0, y])
            continue
        direct += _walk(w, v, [*cpath, ck], refs, cops)
    if len(cops) - start < _WHOLE_CHECK or 2 * direct < len(new):
        return 0
    return _whole_compact(cpath, new, refs, cops, start, 0)


def _walk_edited(old: Any, new: Any, cpath: list[Any], refs: Mapping[str, int], cops: list[list[Any]],
                 edits: Sequence[tuple[Any, Any, Sequence[Any]]]) -> int:
    # _walk of a map whose entries may be edits' values where `old` holds their bases:
    # its dict walk (the same key objects in the same order; else _walk does it), those
    # entries walked by _walk_at.
    if type(old) is not dict or type(new) is not dict or old is new or len(old) != len(new):
        return _walk(old, new, cpath, refs, cops)
    base, value, at = edits[-1]  # the map itself an edit's value (the last edit): its `at` keys only
    if value is new and base is old:
        return _walk_map_edited(old, new, at, cpath, refs, cops, edits)
    start, direct = len(cops), 0
    for ok, k, w, v in zip(old, new, old.values(), new.values()):  # noqa: B905 (the same lengths)
        if ok is not k:
            del cops[start:]
            return _walk(old, new, cpath, refs, cops)
        if w is v:
            continue
        ck = refs.get(k, k) if type(k) is str else _ckey(k)
        if type(v) in _PLAIN:
            if type(w) is not type(v) or w != v:
                cops.append([SET, *cpath, ck, v])
                direct += 1
            continue
        for base, value, at in edits:
            if value is v and base is w:
                direct += _walk_at(w, v, at, [*cpath, ck], refs, cops)
                break
        else:
            direct += _walk(w, v, [*cpath, ck], refs, cops)
    if len(cops) - start < _WHOLE_CHECK or 2 * direct < len(new):
        return 0
    return _whole_compact(cpath, new, refs, cops, start, 0)


def _walk_map_edited(old: dict[Any, Any], new: dict[Any, Any], at: Sequence[Any], cpath: list[Any],
                     refs: Mapping[str, int], cops: list[list[Any]],
                     edits: Sequence[tuple[Any, Any, Sequence[Any]]]) -> int:
    # _walk_edited of two maps of as many entries where `new` holds old's very keys and
    # values but at the str keys in `at` (an edit's, in the maps' order): its walk over
    # those only, their entries walked by their own edits where they have one. Keys new
    # or gone (`at` may name them) go to the walk of the whole map instead.
    start, direct = len(cops), 0
    for k in at:
        try:
            v = new[k]
            w = old[k]
        except KeyError:  # new or gone
            del cops[start:]
            return _walk(old, new, cpath, refs, cops)
        if w is v:
            continue
        ck = refs.get(k, k)
        if type(v) in _PLAIN:
            if type(w) is not type(v) or w != v:
                cops.append([SET, *cpath, ck, v])
                direct += 1
            continue
        for base, value, entries in edits:
            if value is v and base is w:
                direct += _walk_at(w, v, entries, [*cpath, ck], refs, cops)
                break
        else:
            direct += _walk(w, v, [*cpath, ck], refs, cops)
    if len(cops) - start < _WHOLE_CHECK or 2 * direct < len(new):
        return 0
    return _whole_compact(cpath, new, refs, cops, start, 0)


def _walk_at(old: Any, new: Any, at: Sequence[Any], cpath: list[Any], refs: Mapping[str, int],
             cops: list[list[Any]]) -> int:
    # _walk of two lists where `new` holds old's very objects at every index below both
    # lengths but those in `at` (ascending, each once): its list walk over those only.
    # Only where every changed entry is plain (a str, an int, ...): then the ops are
    # _walk's, its `old == new` short cut included (equal lists of such entries give no
    # ops here either); anything else, _walk walks whole.
    if type(old) is not list or type(new) is not list:
        if type(old) is dict and type(new) is dict:
            return _walk_keys_at(old, new, at, cpath, refs, cops)
        return _walk(old, new, cpath, refs, cops)
    if not at and len(new) == len(old) + 1:  # one entry pushed, nothing rewritten (a quiet move's
        cops.append([PUSH, *cpath, new[-1]])  # text): one op, below _WHOLE_CHECK; it counts 1
        return 1
    start, direct, last = len(cops), 0, -1
    lo, ln = len(old), len(new)
    end = ln if ln < lo else lo
    for i in at:
        if i <= last:
            del cops[start:]  # not in order: the whole walk
            return _walk(old, new, cpath, refs, cops)
        last = i
        if i < end:  # below both lengths
            v = new[i]
            if type(v) not in _PLAIN:
                del cops[start:]  # a container: the whole walk
                return _walk(old, new, cpath, refs, cops)
            w = old[i]
            if w is not v and (type(w) is not type(v) or w != v):
                cops.append([SET, *cpath, i, v])
                direct += 1
        elif i < ln and type(new[i]) not in _PLAIN:  # a pushed container (past new's end: nothing, plain)
            del cops[start:]
            return _walk(old, new, cpath, refs, cops)
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


def _walk_keys_at(old: dict[Any, Any], new: dict[Any, Any], at: Sequence[Any], cpath: list[Any],
                  refs: Mapping[str, int], cops: list[list[Any]]) -> int:
    # _walk of two maps with str keys only where `new` holds old's very keys and values
    # but at the keys in `at` (which may be new, or gone from `new`): its dict walk over
    # those only, gone keys' `del`s first, as the walk's own order has them. `at` must
    # name them once each in the maps' order (checked on their places in `new`, and in
    # `old` for gone ones, when it names more than one), and the count of keys must add
    # up; anything else, _walk walks whole. Plain loops: `at` names a key or two.
    if len(at) == 1 and len(old) == len(new):  # one entry rewritten in place (a Tara hill)
        k = at[0]
        if type(k) is str and k in old and k in new:
            v = new[k]
            if type(v) in _PLAIN:  # its one op at most: below _WHOLE_CHECK, nothing counted
                w = old[k]
                if w is not v and (type(w) is not type(v) or w != v):
                    cops.append([SET, *cpath, refs.get(k, k), v])
                return 0
    gone: list[str] = []
    kept: list[str] = []
    count = len(old)
    for k in at:
        if type(k) is not str:
            return _walk(old, new, cpath, refs, cops)
        if k in new:
            kept.append(k)
            if k not in old:
                count += 1
        elif k in old:
            gone.append(k)
            count -= 1
        else:
            return _walk(old, new, cpath, refs, cops)
    if count != len(new) or not at:
        return _walk(old, new, cpath, refs, cops)
    if len(kept) > 1:  # in the maps' order?
        keys = list(new)
        places = [keys.index(k) for k in kept]
        if not all(map(lt, places[:-1], places[1:])):
            return _walk(old, new, cpath, refs, cops)
    start, direct = len(cops), 0
    if gone:
        if len(gone) > 1:
            keys = list(old)
            places = [keys.index(k) for k in gone]
            if not all(map(lt, places[:-1], places[1:])):
                return _walk(old, new, cpath, refs, cops)
        for k in gone:
            cops.append([DEL, *cpath, refs.get(k, k)])
            direct += 1
    for k in kept:
        v = new[k]
        if k not in old:
            cops.append([SET, *cpath, refs.get(k, k), v])
            direct += 1
            continue
        w = old[k]
        if w is v:
            continue
        if type(v) in _PLAIN:
            if type(w) is not type(v) or w != v:
                cops.append([SET, *cpath, refs.get(k, k), v])
                direct += 1
            continue
        direct += _walk(w, v, [*cpath, refs.get(k, k)], refs, cops)
    if len(cops) - start < _WHOLE_CHECK or 2 * direct < len(new):
        return 0
    return _whole_compact(cpath, new, refs, cops, start, 0)
