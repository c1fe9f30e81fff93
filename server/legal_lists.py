"""Protocol 3's legal edits on the server side: what a member's base is, and the edit.

A member speaking protocol 3 may get its seat's changed legal list as `legal_edit`, the
splices from the last non-empty list it was sent (`protocol.legal`, docs/protocol.md
section 6). The room keeps that base per member as one joined str (`Member.legal_base`):
a list of a hundred strings costs several KiB, the joined str a tenth of it. The base
is the member's own (its seat's lists only), so an edit tells it nothing of another seat.

Only long lists are edited: a list under EDIT_FROM bytes is sent whole and no base is
kept for it (no memory either). Editing lists of 1–2 KB (Giantslayer's white lists,
Causeway's barrier lists) cost more than it saved: ~14,500 instructions a Giantslayer
move (`bench/move_instructions.py`, room part 287,654 with EDIT_FROM at 1,024 against
273,244 at 2,048) for ~200 bytes more in the frames that carry such a list (median
patch frame unchanged, `bench/server.py --patches`). No Giantslayer, Causeway or Tara
list seen in random full games reached 2 KB, so in practice GIANTS' long lists
(2–22 KB) are the ones edits are for.

A base is kept DistinctBase when its entries are known to be distinct: a GIANTS seat's
next list then mostly loses a run of placements, and that edit is counted on the joined
texts (`legal_edit_joined(distinct=True)`: ~150,000 instructions for ~430,000). Each list
is joined once per publish, for its edits and the next base alike.
"""

from __future__ import annotations

from typing import Any

from engines.base import FixedNotation, NotationList, Seat
from protocol.packer import packb
from server.seats import Member
from server.wire import legal_edit_joined

LEGAL_SEP = "\n"  # joins a Member.legal_base (no action's notation holds a line break)
EDIT_FROM = 2048  # about the packed bytes of a legal list worth editing (see the docstring)
# A list sent whole from this many characters is checked for repeats (its next edit may
# then take legal_edit_joined's fast path). GIANTS' long lists (4-22 KB) lose entries
# from one turn to the next; Giantslayer's and Causeway's (1-2 KB) mostly gain some
# too, where the check would not pay (+0.35..0.6% a move when every list was checked).
CHECK_FROM = 4096
EMPTY_HASH = hash(())  # Member.legal_hash of an empty legal list


def open_legal(legal: list[str]) -> tuple[bytes | None, int]:
    """A legal list's packed bytes (`packb(legal)`; None for an empty list) and its
    `Member.legal_hash` in a room without hidden information (`_publish_open`,
    `send_snapshot`): the hash of those bytes (EMPTY_HASH for an empty list), which are
    equal exactly when the lists are. The caller sends the bytes when the hash is not
    the member's last one: the list is packed once, for both. (Hidden-information rooms
    hash `tuple(legal)` instead: their long lists mostly go as edits, never packed.)
    Hashing the bytes rather than the entries: a Giantslayer white list of 130 entries
    ~1,500 instructions, not ~11,000 (its packing, a join, is needed to send it anyway)."""
    if not legal:
        return None, EMPTY_HASH
    packed = packb(legal) if type(legal) is list else pack_legal(legal)  # (an exact list's packb: no call more)
    return packed, hash(packed)


def open_lines(text: str, width: int) -> tuple[bytes, int]:
    """`open_legal` of the list an engine wrote as `text` (`Engine.legal_lines`: each
    entry `width` ASCII characters after a line break), without the list: each line
    break becomes the entry's fixstr header, the same bytes as `pack_legal` of the
    list (one replace instead of a join of every entry: ~15,000 instructions a
    Giantslayer White turn with the list's own making). The caller makes the list
    (`lines_list`) only for a member that needs it."""
    packed = _array_head(len(text) // (width + 1)) + text.encode("latin-1").replace(b"\n", _FIXSTR_BYTES[width])
    return packed, hash(packed)


def lines_list(text: str) -> list[str]:
    """The list `Engine.legal_lines` wrote as `text` (each entry after a line break)."""
    return text[1:].split(LEGAL_SEP)


def list_bytes(legal: list[str]) -> int:
    """About the packed size of `legal` (each short str has a 1-2 byte header).

    The characters are counted by joining the list: a C loop that only copies, where
    `sum(map(len, legal))` makes a call and an int per entry (about 39,000 instructions
    for a 100-entry Giantslayer list, once a move; the join is a tenth of it)."""
    return len("".join(legal)) + 2 * len(legal)


class DistinctBase(str):
    """A base whose entries are known to be distinct and free of LEGAL_SEP: checked when
    its (long) list was sent whole, or an edit that only removed entries turned a base
    into it (legal_edit gives none to a list that repeats an entry). The next edit from
    it counts removed entries on the joined texts instead of splitting and hashing them
    (`legal_edit_joined(distinct=True)`). The type is the flag, so it stays with the str
    wherever views.py keeps or replaces the base (no field to keep in step, no memory);
    a base packed and unpacked with an idle room comes back a plain str (unflagged)."""

    __slots__ = ()


def joined_legal(legal: list[str], cache: dict[Any, Any] | None = None, seat: Seat | None = None,
                 plain: bool = False) -> str | None:
    """The base to keep for a member just sent `legal`: the list as one str, or None when
    it is too short to be edited next time or an action holds LEGAL_SEP.

    With publish's `cache` (and the member's seat), the text `legal_change` joined for
    the seat's list is reused, flagged DistinctBase when an edit to it was computed.
    `plain`: the engine's lists repeat no entry and hold no LEGAL_SEP
    (`Engine.plain_notation`), so neither is checked (GIANTS' first list of a placement
    round, ~450 entries sent whole: ~150,000 instructions)."""
    text = cache.get((seat, None)) if cache else None  # (empty: no edit was computed)
    if text is None:
        text = join_legal(legal)
    elif type(text) is DistinctBase:
        return text  # long (it was edited) and checked
    # list_bytes(legal), from the joined text: one join, not two
    if len(text) + len(legal) + 1 < EDIT_FROM or (not plain and text.count(LEGAL_SEP) != len(legal) - 1):
        return None
    if len(text) < CHECK_FROM:
        return text
    # A list this long sent whole is mostly edited next, by removals (GIANTS: 44 of 45
    # such lists): checking it for repeats now (~60,000 instructions for 260 entries)
    # spares that edit ~280,000.
    if plain or len(set(legal)) == len(legal):
        text = DistinctBase(text)
        if cache is not None:  # the seat's other connections get this very base (publish keys on it)
            cache[seat, None] = text
    return text


def legal_change(member: Member, legal: list[str], cache: dict[Any, Any], plain: bool = False) -> Any:
    """Protocol 3: `legal_edit`'s splices from the member's base to `legal`, or None to
    send `legal` whole (no base, a short list, or the edit is not smaller). Cached per
    seat and base object: the seat's other connections with that base share it. The list
    is joined once per publish (`cache[seat, None]`, which `joined_legal` then keeps as
    the member's next base). `plain`: as joined_legal's."""
    base = member.legal_base
    if base is None:
        return None
    seat = member.seat
    key = (seat, id(base))  # not the base's text: hashing kilobytes costs more than an edit's lookups
    found = cache.get(key)
    if found is not None and found[0] is base:
        return found[1]
    text = cache.get((seat, None))
    if text is None:
        text = cache[seat, None] = join_legal(legal)
    if len(text) + len(legal) + 1 < EDIT_FROM:  # list_bytes(legal), from the joined text
        edit = None
    else:
        edit = legal_edit_joined(base, legal, LEGAL_SEP, text, type(base) is DistinctBase, plain)
        if edit is not None and type(text) is not DistinctBase and all(len(splice) == 2 for splice in edit):
            # Only removals: `legal` is some of the base's entries, so none holds
            # LEGAL_SEP, and none repeats (legal_edit would have given None). (A list
            # that gained entries is not flagged: its next change likely adds some too,
            # where the flag does not help.)
            cache[seat, None] = DistinctBase(text)
    cache[key] = (base, edit)  # the base kept with its edit: its id is its own while the cache lives
    return edit


# An engine's kept runs (NotationList.runs' tuples), joined and packed once: id(run) ->
# (the run itself, held so that its id stays its own; its entries joined with LEGAL_SEP;
# its entries packed, without the array's header). Bounded: emptied when full.
_RUNS: dict[int, tuple[tuple[str, ...], str, bytes]] = {}
_RUNS_MAX = 4096
_LEGAL_KEY = packb("legal")


def _run(run: tuple[str, ...]) -> tuple[tuple[str, ...], str, bytes]:
    found = _RUNS.get(id(run))
    if found is None or found[0] is not run:
        if len(_RUNS) >= _RUNS_MAX:
            _RUNS.clear()
        found = _RUNS[id(run)] = (run, LEGAL_SEP.join(run), packb(run)[_header_size(len(run)):])
    return found


def _header_size(n: int) -> int:
    # the length of a msgpack array's header (`_array_head`)
    return 1 if n < 16 else 3 if n < 0x10000 else 5


def join_legal(legal: list[str]) -> str:
    """`LEGAL_SEP.join(legal)`; a NotationList's kept runs are joined once for all."""
    if type(legal) is not NotationList:
        return LEGAL_SEP.join(legal)
    return LEGAL_SEP.join([_run(run)[1] if type(run) is tuple else LEGAL_SEP.join(run)
                           for run in legal.runs if run])


def _array_head(n: int) -> bytes:
    # a msgpack array's header: fixarray, array 16, array 32
    return bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big") if n < 0x10000 else b"\xdd" + n.to_bytes(4, "big")


# A fixstr's header (0xa0 | length) as a latin-1 character, by length (FixedNotation's widths)
_FIXSTR_MARKS = [chr(0xA0 | width) for width in range(32)]
_FIXSTR_BYTES = [bytes((0xA0 | width,)) for width in range(32)]  # the same, packed


def pack_legal(legal: list[str]) -> bytes:
    """`packb(legal)`; a NotationList's kept runs are packed once for all, and a
    FixedNotation's entries in one join: each is its fixstr header (one byte, the same
    for all) and its ASCII characters, so the entries joined with that byte as a
    latin-1 character, one more in front, are their packed bytes (~260 instructions an
    entry for msgpack, ~10 for the join)."""
    if type(legal) is FixedNotation:
        if not legal:
            return _array_head(0)
        mark = _FIXSTR_MARKS[legal.width]
        # (`join` copies a list subclass item by item first, a list's slice at once)
        return _array_head(len(legal)) + (mark + mark.join(legal[:])).encode("latin-1")
    if type(legal) is not NotationList:
        return packb(legal)
    return b"".join([_array_head(len(legal)), *[_run(run)[2] if type(run) is tuple else packb(run)[_header_size(len(run)):]
                                                for run in legal.runs if run]])


def with_legal(frame: dict[str, Any], legal: list[str]) -> bytes:
    """`encode({**frame, "legal": legal})` (a patch without its legal list, which goes
    last; fewer than 15 entries), with `legal` packed by `pack_legal`."""
    data = packb(frame)
    return b"".join((bytes((data[0] + 1,)), data[1:], _LEGAL_KEY, pack_legal(legal)))
