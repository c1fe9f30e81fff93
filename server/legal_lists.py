"""Protocol 3's legal edits on the server side: what a member's base is, and the edit.

A member speaking protocol 3 may get its seat's changed legal list as `legal_edit`, the
splices from the last non-empty list it was sent (`protocol.legal`, docs/protocol.md
section 6). The room keeps that base per member as one joined str (`Member.legal_base`):
a list of a hundred strings costs several KiB, the joined str a tenth of it. The base
is the member's own (its seat's lists only), so an edit tells it nothing of another seat.

Only long lists are edited. Computing an edit costs about twice what building a
Giantslayer list does (≈ 270k instructions a move when every list was edited,
`bench/server.py --callgrind`), while a list under EDIT_FROM bytes saves at most that
many bytes sent whole; so a shorter list is sent whole and no base is kept for it (no
memory either). GIANTS' lists (1–5 KB) are the ones edits are for.
"""

from __future__ import annotations

from typing import Any

from engines.base import Seat
from server.seats import Member
from server.wire import legal_edit_joined

LEGAL_SEP = "\n"  # joins a Member.legal_base (no action's notation holds a line break)
EDIT_FROM = 1024  # about the packed bytes of a legal list worth editing


def list_bytes(legal: list[str]) -> int:
    """About the packed size of `legal` (each short str has a 1-2 byte header).

    The characters are counted by joining the list: a C loop that only copies, where
    `sum(map(len, legal))` makes a call and an int per entry (about 39,000 instructions
    for a 100-entry Giantslayer list, once a move; the join is a tenth of it)."""
    return len("".join(legal)) + 2 * len(legal)


def joined_legal(legal: list[str]) -> str | None:
    """The base to keep for a member just sent `legal`: the list as one str, or None when
    it is too short to be edited next time or an action holds LEGAL_SEP."""
    text = LEGAL_SEP.join(legal)
    # list_bytes(legal), from the joined text: one join, not two
    if len(text) + len(legal) + 1 < EDIT_FROM:
        return None
    return text if text.count(LEGAL_SEP) == len(legal) - 1 else None


def legal_change(member: Member, legal: list[str], cache: dict[tuple[Seat | None, str], Any]) -> Any:
    """Protocol 3: `legal_edit`'s splices from the member's base to `legal`, or None to
    send `legal` whole (no base, a short list, or the edit is not smaller). Cached per
    (seat, base): the seat's other connections with the same base share it."""
    base = member.legal_base
    if base is None or list_bytes(legal) < EDIT_FROM:
        return None
    key = (member.seat, base)
    if key not in cache:
        cache[key] = legal_edit_joined(base, legal, LEGAL_SEP)
    return cache[key]
