"""Protocol 3's legal edits on the server side: what a member's base is, and the edit.

A member speaking protocol 3 may get its seat's changed legal list as `legal_edit`, the
splices from the last non-empty list it was sent (`protocol.legal`, docs/protocol.md
section 6). The room keeps that base per member as one joined str (`Member.legal_base`):
a list of a hundred strings costs several KiB, the joined str a tenth of it. The base
is the member's own (its seat's lists only), so an edit tells it nothing of another seat.
"""

from __future__ import annotations

from typing import Any

from engines.base import Seat
from server.seats import Member
from server.wire import legal_edit

LEGAL_SEP = "\n"  # joins a Member.legal_base (no action's notation holds a line break)


def joined_legal(legal: list[str]) -> str | None:
    """A non-empty legal list as one str (a Member.legal_base); None when it is empty or
    an action holds LEGAL_SEP (its next list is then sent whole)."""
    text = LEGAL_SEP.join(legal)
    return text if legal and text.count(LEGAL_SEP) == len(legal) - 1 else None


def legal_change(member: Member, legal: list[str], cache: dict[tuple[Seat | None, str], Any]) -> Any:
    """Protocol 3: `legal_edit`'s splices from the member's base to `legal`, or None to
    send `legal` whole (no base, or the edit is not smaller). Cached per (seat, base):
    the seat's other connections with the same base share it."""
    base = member.legal_base
    if base is None or not legal:
        return None
    key = (member.seat, base)
    if key not in cache:
        cache[key] = legal_edit(base.split(LEGAL_SEP), legal)
    return cache[key]
