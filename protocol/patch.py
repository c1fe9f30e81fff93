"""The view diff/patch format: `diff(old, new)` -> ops, `apply_patch(old, ops)` -> new.

A view is plain msgpack data: maps, lists, str, bytes, int, float, bool, None. An op
is a list whose path is a list of map keys and list indices, applied in order:

    ["set", path, value]   set or replace the value at path ([] replaces the root)
    ["del", path]          delete a map key
    ["trunc", path, n]     truncate the list at path to length n
    ["push", path, value]  append value to the list at path

Equality is exact: 1, 1.0 and True are three different values here (Python's ==
conflates them, msgpack does not), and so are 0.0 and -0.0; NaN equals NaN. Tuples
count as lists, which is what they are on the wire.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from itertools import compress, count
from operator import is_, is_not
from typing import Any

from protocol.errors import PatchError
from protocol.packer import packer as _packer

Path = list[Any]
Op = list[Any]


class OpKind(StrEnum):
    SET = "set"
    DEL = "del"
    TRUNC = "trunc"
    PUSH = "push"


_SEQ = (list, tuple)
# Scalars whose == is exact once their types match (floats are not: 0.0 == -0.0).
_PLAIN = frozenset({str, int, bool, bytes, type(None)})
_WHOLE_CHECK = 4  # from this many ops in one container, compare with one "set"
_BY_IDENTITY = 8  # maps from this size look for changed entries at C speed


def same(a: Any, b: Any) -> bool:
    """Exact structural equality of two views (types compared, not just values)."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is not tb and not (ta in _SEQ and tb in _SEQ):
        return False
    if ta is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b or not same(v, b[k]):
                return False
        # keys compare with ==, so {1: x} and {True: x} look alike; check key types too
        return all(type(k) is type(k2) for k, k2 in zip(a, b, strict=True)) or _same_keys(a, b)
    if ta in _SEQ:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if ta is float:
        if a == b:
            return math.copysign(1.0, a) == math.copysign(1.0, b)
        return a != a and b != b  # both NaN
    return bool(a == b)


def _same_keys(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    # Slow path when the key orders differ: every key of a must exist in b with its type.
    kb = {(type(k), k) for k in b}
    return all((type(k), k) in kb for k in a)


def diff(old: Any, new: Any) -> list[Op]:
    """The ops that turn `old` into `new`; empty when they are the same view.

    Maps are diffed key by key, lists element by element with "trunc"/"push" for a
    length change, anything else is replaced with "set". When a container collects
    many ops and one "set" of the whole container packs smaller, that set is sent
    instead (a reset board costs one op, not one per cell). Values in the ops are
    shared with `new`, not copied: treat both as read-only afterwards, and encode the
    ops (`codec.encode`) before changing `new`.
    """
    ops: list[Op] = []
    _diff(old, new, [], ops)
    return ops


def _diff(old: Any, new: Any, path: Path, ops: list[Op]) -> int:
    # Appends the ops for old -> new to `ops`; returns how many of them are at `path`
    # itself (a whole "set", a "trunc", the "push"es): the parent's count of ops on its
    # own entries (`_whole`) adds them up as it goes, instead of a pass over the ops.
    if old is new:
        return 0
    to, tn = type(old), type(new)
    if to is dict and tn is dict:
        start, direct = len(ops), 0
        if len(new) >= _BY_IDENTITY and len(old) == len(new) and all(map(is_, old, new)):
            # The same key objects in the same order (a view built from the same literals):
            # only entries whose objects differ need a look, and finding them runs at C
            # speed. Same ops, in the same order, as the walk below. No whole `old == new`
            # first: the changed entries are found anyway, and a map that is only
            # rebuilt equal costs a look at each entry that is not the same object.
            for k, v in compress(new.items(), map(is_not, old.values(), new.values())):
                w = old[k]
                if type(v) in _PLAIN:  # exact once the types match (w of another type: a set)
                    if type(w) is not type(v) or w != v:
                        ops.append(["set", [*path, k], v])
                        direct += 1
                    continue
                direct += _diff(w, v, [*path, k], ops)
        else:
            if old == new and _same_fast(old, new):  # rebuilt equal: no walk at all
                return 0
            for k in old:
                if k not in new or (type(k) is not str and type(_key_of(new, k)) is not type(k)):
                    ops.append(["del", [*path, k]])
                    direct += 1
            for k, v in new.items():
                if k in old and (type(k) is str or type(_key_of(old, k)) is type(k)):
                    w = old[k]
                    if w is v:
                        continue
                    if type(v) in _PLAIN:  # exact once the types match (w of another type: a set)
                        if type(w) is not type(v) or w != v:
                            ops.append(["set", [*path, k], v])
                            direct += 1
                        continue
                    direct += _diff(w, v, [*path, k], ops)
                else:
                    ops.append(["set", [*path, k], v])
                    direct += 1
        if len(ops) - start < _WHOLE_CHECK or 2 * direct < len(new):
            return 0
        return _whole(path, new, ops, start, 0)
    if to in _SEQ and tn in _SEQ:
        if old == new and _same_fast(old, new):
            return 0
        start, direct = len(ops), 0
        lo, ln = len(old), len(new)
        # Only positions whose objects differ need a look; finding them runs at C
        # speed (a board of interned symbols is one pass, however large).
        for i in compress(count(), map(is_not, old, new)):
            w, v = old[i], new[i]
            if type(v) in _PLAIN:  # exact once the types match (w of another type: a set)
                if type(w) is not type(v) or w != v:
                    ops.append(["set", [*path, i], v])
                    direct += 1
                continue
            direct += _diff(w, v, [*path, i], ops)
        if ln < lo:
            ops.append(["trunc", path, ln])
            own = 1
        else:
            own = ln - lo
            for i in range(lo, ln):
                ops.append(["push", path, new[i]])
        if len(ops) - start < _WHOLE_CHECK or 2 * (direct + own) < len(new):
            return own
        return _whole(path, new, ops, start, own)
    if not same(old, new):
        ops.append(["set", path, new])
        return 1
    return 0


def _same_fast(a: Any, b: Any) -> bool:
    # Called only when a == b: Python's == already matched the shape and the values
    # but may have conflated 1/1.0/True or 0.0/-0.0. Equal msgpack bytes prove exact
    # equality (each of those values packs differently; packing runs at C speed, one
    # call per side); different bytes may only mean another key order, and the exact
    # slow check decides. A list of strings needs no packing: str.join accepts only
    # strings, so both joining means all are str, and == was exact.
    if type(a) is list and a and type(a[0]) is str:
        try:
            "".join(a)
            "".join(b)
            return True
        except TypeError:
            pass
    try:
        pack = _packer()
        if pack(a) == pack(b):
            return True
    except (TypeError, ValueError, OverflowError):
        pass
    return same(a, b)


def _whole(path: Path, new: Any, ops: list[Op], start: int, own: int) -> int:
    # Many small ops inside one container (a board reset, a new hand) can outweigh
    # replacing the container outright; send whichever packs smaller. The caller
    # comes here only with at least _WHOLE_CHECK ops (ops[start:]) of which at least
    # half the container's length are on its own entries (not deeper: nested
    # containers already chose between ops and a whole "set" for themselves), so
    # the common move costs no packing. Returns the count of ops at `path` after.
    try:
        whole = ["set", path, new]
        pack = _packer()
        if len(pack(whole)) < len(pack(ops[start:])):
            del ops[start:]
            ops.append(whole)
            return 1
    except (TypeError, ValueError, OverflowError):
        pass  # not msgpack-able as is (the caller's problem at encode time)
    return own


def _key_of(d: dict[Any, Any], k: Any) -> Any:
    # The key object stored in d that compares equal to k (1 and True collide in dicts).
    if type(k) is str:  # the overwhelmingly common case: no collision possible
        return k
    for key in d:
        if key == k:
            return key
    return k


def apply_patch(old: Any, ops: Sequence[Op], *, in_place: bool = False) -> Any:
    """Apply `ops` in order and return the new view.

    By default `old` is left untouched: only the containers along each op's path are
    copied (copy-on-write), everything else is shared with `old`. With `in_place=True`
    the containers of `old` are modified directly (faster; a client that owns its view
    uses it); the returned root must still be used, since a root "set" replaces it.
    Raises PatchError when an op is malformed or does not fit the view: the receiver
    should then ask for a resync.
    """
    root = old
    fresh: set[int] | None = None if in_place else set()
    for op in ops:
        root = _apply_one(root, op, fresh)
    return root


def _copy(node: Any, fresh: set[int] | None) -> Any:
    if fresh is None or id(node) in fresh:
        return node
    node = dict(node) if type(node) is dict else list(node)
    fresh.add(id(node))
    return node


def _child(parent: Any, key: Any, path: Path) -> Any:
    try:
        if type(parent) is dict:
            return parent[key]
        if type(parent) is list and type(key) is int and 0 <= key < len(parent):
            return parent[key]
    except (KeyError, TypeError):
        pass
    raise PatchError(f"path {path!r} does not exist in the view")


def _apply_one(root: Any, op: Any, fresh: set[int] | None) -> Any:
    if type(op) not in _SEQ or len(op) < 2 or type(op[1]) not in _SEQ:
        raise PatchError(f"malformed op {op!r}")
    kind, path = op[0], list(op[1])
    if kind == "set" and not path:
        if len(op) != 3:
            raise PatchError(f"malformed op {op!r}")
        return op[2]
    if kind not in ("set", "del", "trunc", "push"):
        raise PatchError(f"unknown op {kind!r}")
    # Walk to the target's parent (or to the target list for trunc/push), copying each
    # container on the way so the caller's original stays intact.
    walk = path if kind in ("trunc", "push") else path[:-1]
    if type(root) not in (dict, list) and (walk or kind in ("trunc", "push")):
        raise PatchError(f"path {path!r} does not exist in the view")
    root = _copy(root, fresh) if type(root) in (dict, list) else root
    node = root
    for i, key in enumerate(walk):
        child = _child(node, key, path[: i + 1])
        if type(child) in (dict, list):
            child = _copy(child, fresh)
            node[key] = child
        elif i < len(walk) - 1 or kind in ("trunc", "push"):
            raise PatchError(f"path {path!r} does not exist in the view")
        node = child
    if kind in ("trunc", "push"):
        if type(node) is not list:
            raise PatchError(f"{kind} at {path!r}: not a list")
        if kind == "push":
            if len(op) != 3:
                raise PatchError(f"malformed op {op!r}")
            node.append(op[2])
        else:
            n = op[2] if len(op) == 3 else None
            if type(n) is not int or not 0 <= n <= len(node):
                raise PatchError(f"trunc at {path!r}: bad length {n!r}")
            del node[n:]
        return root
    key = path[-1]
    if kind == "set":
        if len(op) != 3:
            raise PatchError(f"malformed op {op!r}")
        if type(node) is dict or (type(node) is list and type(key) is int and 0 <= key < len(node)):
            node[key] = op[2]
        else:
            raise PatchError(f"set at {path!r}: no such slot")
        return root
    # del
    if type(node) is not dict or key not in node:
        raise PatchError(f"del at {path!r}: no such key")
    del node[key]
    return root
