"""`RoomPublish._publish_open` (server.publish) gives a member no legal base, without joining its list, when
the list's packed bytes show it is under EDIT_FROM: exactly when `joined_legal` would
give None for it (protocol 3's bases, docs/protocol.md section 6)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.packer import packb
from server.legal_lists import EDIT_FROM, joined_legal

entries = st.text(max_size=12) | st.text(alphabet="abcdefgh12345678x-", min_size=1, max_size=8) | st.text(
    alphabet="éßø水", max_size=6)


@settings(max_examples=600, deadline=None)
@given(st.lists(entries, max_size=300))
def test_a_list_under_the_packed_bound_gets_no_base(legal: list[str]) -> None:
    if len(packb(legal)) + len(legal) <= EDIT_FROM:
        assert joined_legal(legal) is None


def test_the_bound_around_edit_from() -> None:
    """Lists of equal ASCII entries growing across EDIT_FROM: the skip never drops a base
    joined_legal keeps, and skips most lists it would refuse."""
    skipped = refused = 0
    for size in range(1, 12):
        for n in range(1, 1 + 2 * EDIT_FROM // (size + 2)):
            legal = [chr(97 + i % 26) * size for i in range(n)]
            skip = len(packb(legal)) + len(legal) <= EDIT_FROM
            base = joined_legal(legal)
            assert not (skip and base is not None)
            skipped += skip
            refused += base is None
    assert skipped > 0.9 * refused
