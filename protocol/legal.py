"""Protocol 3's legal edits: a seat's new legal list as changes to its previous one.

A seat's legal list (every action it may send, in notation) is long — dozens in
Giantslayer, hundreds in GIANTS — and from one turn of the seat to its next most of it
stays: sending it whole was most of the bytes of a GIANTS patch. A protocol-3 patch may
carry `legal_edit` instead of `legal`: splices that turn the seat's *base* — the last
non-empty legal list it received, from a snapshot's `legal`, a patch's `legal` or an
earlier edit — into the new list. An empty list (`"legal": []`, the seat need not act)
is sent as such and does not replace the base; a snapshot resets it.

    [[index, count, *actions], ...]   applied in order: remove `count` entries at
                                      `index`, insert `actions` there; each index refers
                                      to the list as the splices before it left it

`legal_edit` (server side) computes the splices or says the list is better sent whole;
`apply_legal_edit` (client side) applies them. See docs/protocol.md, section 6.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.errors import PatchError

Splice = list[Any]


def legal_edit(base: Sequence[str], new: Sequence[str]) -> list[Splice] | None:
    """The splices turning `base` into `new`, or None when `new` should be sent whole.

    None when the edit would not be smaller than the list itself, or when the actions
    both lists share are not in the same order (or a list repeats an action): the
    engines list actions in a fixed order, so that only happens across phases, where
    the lists have little in common anyway. The work in Python is per *changed* entry
    (a seat's next list is mostly its last one): the set differences, the index
    lookups and the final check that the splices give `new` all run at C speed.
    """
    at_new = dict(zip(new, range(len(new)), strict=True))  # action -> index, built at C speed
    at_base = dict(zip(base, range(len(base)), strict=True))
    if len(at_new) != len(new) or len(at_base) != len(base):
        return None
    return _edit(base, new, at_base, at_new, 0, len(new), sum(map(len, new)))


def _edit(base: Sequence[str], new: Sequence[str], at_base: dict[str, int], at_new: dict[str, int],
          offset: int, count: int, chars: int) -> list[Splice] | None:
    # legal_edit's splices for a run of the lists (`base` and `new` between the same
    # kept entries; `offset` of them before it), judged against the whole new list
    # (`count` entries of `chars` characters). Neither part repeats an entry.
    gone = at_base.keys() - at_new.keys()
    fresh = at_new.keys() - at_base.keys()
    if 2 * len(fresh) > count:
        return None  # mostly new actions: the list itself is about as short
    # Entries kept in both lists split the changes into gaps: gap g lies after the g-th
    # kept entry. A removed base entry at i lies in gap i - (entries removed before it),
    # an added entry at new position j in gap j - (entries added before it). One splice
    # per gap, in gap order; its index is g plus the entries the splices before it put in.
    removed = sorted(map(at_base.__getitem__, gone))
    added = sorted(map(at_new.__getitem__, fresh))
    splices = _splices(removed, added, new, len(base) + 1, 0)
    out = list(base)
    for splice in splices:
        out[splice[0]:splice[0] + splice[1]] = splice[2:]
    if out != new:
        return None  # the kept entries changed order
    cost = 4 * len(splices) + sum(map(len, fresh)) + 2 * len(fresh)
    if cost >= chars + 2 * count:
        return None
    if offset:
        for splice in splices:
            splice[0] += offset
    return splices


def legal_edit_joined(base: str, new: Sequence[str], sep: str, text: str | None = None,
                      distinct: bool = False, plain: bool = False) -> list[Splice] | None:
    """`legal_edit(base.split(sep), new)`, the same splices or None, for a base kept as
    one joined str (the server's per-member base).

    A seat's next list mostly differs from its last in one run of entries (a figure's
    placements gone, a few added): the entries both lists begin and end with are found
    on the joined texts, by halving searches whose comparisons run at C speed, and only
    what lies between them is split; one run of changes needs no indexing at all, and
    changes spread over the list are worked out between those ends only. A repeated
    entry, or `sep` inside an entry of `new`, goes to `legal_edit`.

    `text` is `sep.join(new)` when the caller has it (one join, not two). `distinct`
    says the caller knows `base.split(sep)` repeats no entry (an edit was computed to
    it, which legal_edit gives only for such lists): then entries that are only removed
    — one run, or two around a kept block — are counted on the joined texts, not split
    and hashed (a GIANTS seat's placements of a figure gone: ~300,000 instructions
    less), with the same splices. `plain` says the caller knows `new` repeats no entry
    and none holds `sep` (`Engine.plain_notation`): then neither is checked.
    """
    if not new:
        return legal_edit(base.split(sep), new)
    if text is None:
        text = sep.join(new)
    if distinct:
        edit = _one_run(base, text, new, sep, plain)
        if edit is not _OTHER:
            return edit
    # Both lists with a separator at each end: every entry lies between two seps.
    a, b = f"{sep}{base}{sep}", f"{sep}{text}{sep}"
    k, j = _ends(a, b, sep)
    ja = j - len(b) + len(a)
    if distinct:
        edit = _removals(a, b, k, j, ja, len(new), sep, plain)
        if edit is not _OTHER:
            return edit
    distinct_new = set(new)
    if not plain and (len(distinct_new) != len(new) or sep in "".join(new)):
        return legal_edit(base.split(sep), new)  # repeated entries (None), or ambiguous
    p = b.count(sep, 0, k)  # entries before k: the same in both
    added = new[p:p + b.count(sep, k, j)]
    cut = a[k + 1:ja].split(sep) if ja > k else []
    # base is new's first p entries, `cut`, new's last ones; new is those with `added`
    # between. Every kept entry outside the run keeps its place.
    chars = len(text) - len(new) + 1
    shared = distinct_new.intersection(cut)
    if not shared:  # one run: all of `cut` gone, all of `added` fresh
        if len(set(cut)) != len(cut):
            return None  # the base repeats an entry
        if not cut and not added:
            return []
        if 2 * len(added) > len(new):
            return None
        cost = 4 + sum(map(len, added)) + 2 * len(added)
        return [[p, len(cut), *added]] if cost < chars + 2 * len(new) else None
    if len(shared) == len(added):
        # Maybe all of `added` is kept: one block of the run, entries gone on both sides
        # of it (a GIANTS seat's placements of two kinds gone). Found on the joined text.
        block = sep.join(added)
        at = a.find(f"{sep}{block}{sep}", k, ja + 1)
        if at >= 0:
            rest = a[k + 1:at].split(sep) if at > k else []
            before = len(rest)
            end = at + len(block) + 1
            if end < ja:
                rest += a[end + 1:ja].split(sep)
            if len(set(rest)) == len(rest) and distinct_new.isdisjoint(rest):
                splices: list[Splice] = [[p, before]] if before else []
                if len(rest) > before:
                    splices.append([p + len(added), len(rest) - before])
                return splices if 4 * len(splices) < chars + 2 * len(new) else None
    # Unless the base repeats an entry (None too), `shared` lies in `added`, and the
    # rest of `added` is fresh.
    if 2 * (len(added) - len(shared)) > len(new):
        return None  # mostly new actions
    return _edit_shared(cut, added, shared, p, len(new), chars)


def _edit_shared(cut: Sequence[str], added: Sequence[str], shared: set[str], offset: int, count: int,
                 chars: int) -> list[Splice] | None:
    # legal_edit_joined's run (`cut` of the base, `added` of the new list, which repeats
    # no entry) when `shared`, the entries of the new list found in `cut`, is neither
    # none nor all of `added`: `_edit`'s splices, from which entries are kept (a flag
    # per entry, at C speed) instead of each list's index by entry, the changed ones
    # found flag by flag (`_falses`), so only they cost Python work (changes spread over
    # a Giantslayer white list: ~half the instructions). The runs without their changes
    # must be the same list (kept in the same order, none twice): then the splices give
    # `added`, so `_edit`'s final check is not needed.
    in_cut = list(map(shared.__contains__, cut))
    in_added = list(map(shared.__contains__, added))
    # A shared entry outside `added` (then also one of the ends'), a kept entry twice or
    # moved, or a removed one twice: the base repeats an entry or changed order (None).
    if len(added) != count and sum(in_added) != len(shared):  # (all of the new list: shared lies in it)
        return None
    removed = _falses(in_cut, len(cut) - sum(in_cut))  # ascending, as `_edit` sorts them
    fresh = _falses(in_added, len(added) - len(shared))
    gone = list(map(cut.__getitem__, removed))
    if len(set(gone)) != len(gone):
        return None
    kept_cut, kept_added = list(cut), list(added)  # each run without its changes
    for i in reversed(removed):
        del kept_cut[i]
    for i in reversed(fresh):
        del kept_added[i]
    if kept_cut != kept_added:
        return None
    splices = _splices(removed, fresh, added, len(cut) + 1, offset)
    cost = 4 * len(splices) + sum(map(len, map(added.__getitem__, fresh))) + 2 * len(fresh)
    return None if cost >= chars + 2 * count else splices


def _splices(removed: list[int], put: list[int], new: Sequence[str], end: int, offset: int) -> list[Splice]:
    # The splices that remove the base's entries at `removed` and put the new list's
    # entries at `put` (both ascending), one a gap (see `_edit`), indexes plus `offset`;
    # `end` is past every gap.
    splices: list[Splice] = []
    inserted = r = a = 0
    nr, na = len(removed), len(put)
    cut_at = removed[0] if nr else end
    put_at = put[0] if na else end
    while r < nr or a < na:
        gap = cut_at if cut_at < put_at else put_at
        splice: Splice = [gap + inserted + offset, 0]
        while cut_at == gap:
            splice[1] += 1
            r += 1
            cut_at = removed[r] - r if r < nr else end
        while put_at == gap:
            splice.append(new[put[a]])
            inserted += 1
            a += 1
            put_at = put[a] - a if a < na else end
        splices.append(splice)
    return splices


def _falses(flags: list[bool], count: int) -> list[int]:
    # The indexes of the `count` False entries of `flags`, ascending: one `index` call
    # each (a scan at C speed, by identity), where a pass over every entry costs a call
    # an entry.
    out: list[int] = []
    i = -1
    find = flags.index
    for _ in range(count):
        i = find(False, i + 1)
        out.append(i)
    return out


_OTHER = object()  # _removals' answer for a change it does not work out


def _one_run(base: str, text: str, new: Sequence[str], sep: str, plain: bool = False) -> Any:
    # legal_edit_joined's answer when the new list (`new`, joined in `text`) is the base
    # (joined in `base`, repeating no entry) with one run of entries removed, or the
    # base itself; _OTHER for any other change (two runs: `_removals`), or `sep` inside
    # an entry of the new list. Worked out on the texts as they are (no padded copies):
    # the entries both begin with, by probes at the new list's first and last entry
    # before a halving search, then one test that the rest of `text` ends `base` with
    # one run of whole entries before it. Then the run's entries are distinct and none
    # is in the new list, the new list (the base's other entries) repeats none, and
    # legal_edit's answer is one splice at the run (or none), counted as seps.
    lb, lt = len(base), len(text)
    if lt >= lb:
        return [] if text == base and (plain or text.count(sep) == len(new) - 1) else _OTHER
    if base.startswith(text) and base[lt] == sep:
        start = lt + 1  # all of the new list begins the base: the run is its end
    else:
        e = text.find(sep)  # the new list's first entry ends there
        if e < 0 or not base.startswith(text[:e + 1]):
            start = 0  # the first entries differ
        else:
            m = text.rfind(sep)  # its last entry starts after m (m >= e)
            if m == e or base.startswith(text[:m + 1]):
                start = m + 1  # all entries but the last begin the base
            else:  # the common prefix ends between e + 1 and m: base[:lo] == text[:lo]
                lo, hi = e + 1, min(lb, m)
                while lo < hi:
                    if hi - lo < 64 and text.find(sep, lo, hi) < 0:
                        break  # no sep where the prefix can end: the same entries begin both
                    mid = (lo + hi + 1) // 2
                    if base.startswith(text[lo:mid], lo):
                        lo = mid
                    else:
                        hi = mid - 1
                start = text.rfind(sep, 0, lo) + 1
    count = len(new)
    if start > lt:  # the run is the base's end, after its sep at lt
        removed, p = base.count(sep, lt), count
    else:
        # The run: base[start:start + d], whole entries each with its sep after it; the
        # rest of the base is the rest of the new list.
        d = lb - lt
        if base[start + d - 1] != sep or not base.endswith(text[start:] if start else text):
            return _two_runs(base, text, new, sep, start, plain)
        removed = base.count(sep, start, start + d)
        # The entries before the run: counted on the shorter side of it
        p = text.count(sep, 0, start) if 2 * start <= lt else count - 1 - text.count(sep, start)
    if not plain and sep in "".join(new):  # (memchr) the seps of `text` would not be its entries' bounds
        return _OTHER
    return [[p, removed]] if lt - count + 1 + 2 * count > 4 else None


def _two_runs(base: str, text: str, new: Sequence[str], sep: str, start: int, plain: bool = False) -> Any:
    # _one_run's answer when the run is not one: two runs gone around a kept block (a
    # GIANTS seat's placements of two kinds of figure gone), or _OTHER. `start`: where
    # the entries both begin with end (an entry's start in both). The entries both end
    # with (at least the last) by a halving search, then the new list's entries between
    # found as one block of the base's, at entry bounds.
    lb, lt = len(base), len(text)
    m = text.rfind(sep)
    if m < start or not base.endswith(text[m:]):
        return _OTHER  # the last entries differ (or no block between the ends)
    # Longest common suffix of base and text[start:], from the last entry on: base and
    # text end with the same lo characters throughout
    lo, hi = lt - m, min(lb, lt) - start
    while lo < hi:
        if hi - lo < 64 and text.find(sep, lt - hi, lt - lo) < 0:
            break  # no sep where the suffix can start: the same entries end both
        mid = (lo + hi + 1) // 2
        if base.endswith(text[lt - mid:lt - lo], 0, lb - lo):
            lo = mid
        else:
            hi = mid - 1
    s = text.find(sep, lt - lo)  # the sep before the entries both end with (s <= m)
    if s < start:
        return _OTHER
    # The kept entries (text[start:s]) must be one block of the base between the two
    # runs: their first entry is at one place of the base (it repeats no entry), found
    # with a sep each side, and the block compared there.
    e = text.find(sep, start)  # the first kept entry's end (e <= s)
    ye = s + 1 + lb - lt  # where the common end starts in the base
    at = base.find(f"{sep}{text[start:e + 1]}", start, ye)
    size = s + 2 - start  # the block with a sep each side
    if at < 0 or at + size > ye or (s > e and not base.startswith(text[e + 1:s + 1], at + e + 2 - start)):
        return _OTHER  # entries added (or moved)
    if not plain and sep in "".join(new):  # (memchr) the seps of `text` would not be its entries' bounds
        return _OTHER
    before = base.count(sep, start, at + 1)
    after = base.count(sep, at + size, ye)
    count = len(new)
    p = text.count(sep, 0, start) if 2 * start <= lt else count - 1 - text.count(sep, start)
    kept = text.count(sep, start, s + 1)
    splices: list[Splice] = [[p, before]] if before else []
    if after:
        splices.append([p + kept, after])
    return splices if 4 * len(splices) < lt - count + 1 + 2 * count else None


def _removals(a: str, b: str, k: int, j: int, ja: int, count: int, sep: str, plain: bool = False) -> Any:
    # legal_edit_joined's answer when the new list (`count` entries, joined in `b`) only
    # removes entries from the base (`a`) — one run, or two around a kept block — for a
    # base that repeats no entry; _OTHER for any other change, or `sep` inside an entry
    # of the new list. Then the run's entries are distinct and none is in the new list
    # (each is at one place of the base), and the new list (the base's other entries)
    # repeats none either: legal_edit's checks all hold, and the splices need only the
    # number of entries at each place, counted as seps. (k, j, ja: `_ends`.)
    kept = b.count(sep, k, j)  # the new list's entries between the shared ends
    if kept:  # they must be one block of the base's run: found on the joined text
        at = a.find(b[k:j + 1], k, ja + 1)
        if at < 0:
            return _OTHER  # entries added (or moved)
        before, after = a.count(sep, k, at), a.count(sep, at + j - k, ja)
    else:
        before, after = a.count(sep, k, ja), 0
    p = b.count(sep, 0, k)  # entries before k: the same in both
    if not plain and p + kept + b.count(sep, j) != count + 1:
        return _OTHER  # a sep inside an entry: the joined text reads as other entries
    splices: list[Splice] = [[p, before]] if before else []
    if after:
        splices.append([p + kept, after])
    return splices if 4 * len(splices) < len(b) - 1 - count + 2 * count else None


def _ends(a: str, b: str, sep: str) -> tuple[int, int]:
    # Where the entries both joined lists begin and end with stop: (k, j), a sep of `b`
    # before which it and `a` hold the same entries, and one of `b` (at or after k)
    # after which they do (`a`'s is at j - len(b) + len(a)). Both texts start and end
    # with sep; the longest common prefix and suffix are found by halving searches.
    lo, hi = 1, min(len(a), len(b))  # a[:lo] == b[:lo] holds throughout (the leading sep)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    k = b.rfind(sep, 0, lo)  # a sep both share: the entries before it are the same
    # Longest common suffix of what follows k (so the two never overlap).
    la, lb = len(a), len(b)
    if lb <= la and a.endswith(b[k:]):
        return k, k  # all of b after k ends a too: one run gone (the common case), one test
    lo, hi = 1, min(la, lb) - k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.endswith(b[lb - mid:lb - lo], 0, la - lo):
            lo = mid
        else:
            hi = mid - 1
    return k, b.find(sep, lb - lo)  # the first sep of the common suffix


def apply_legal_edit(base: Sequence[str], splices: Any) -> list[str]:
    """`base` with `splices` applied (a new list; `base` is left as it was).

    Raises PatchError when the edit is malformed or does not fit `base` (an index or a
    count past its end): the client then asks for a resync, as for a patch whose ops
    do not fit its view.
    """
    if type(splices) is not list:
        raise PatchError("legal_edit is not a list")
    out = list(base)
    for splice in splices:
        if (
            type(splice) is not list
            or len(splice) < 2
            or type(splice[0]) is not int
            or type(splice[1]) is not int
            or not 0 <= splice[0] <= len(out)
            or not 0 <= splice[1] <= len(out) - splice[0]
            or not all(type(a) is str for a in splice[2:])
        ):
            raise PatchError(f"legal_edit splice {splice!r} does not fit a list of {len(out)}")
        index, count = splice[0], splice[1]
        out[index:index + count] = splice[2:]
    return out
