"""Paging of the lobby listing: what one `list_rooms` request may cost.

A listing is read in pages of at most `limit` rooms. Live rooms (waiting and playing,
on every node) come first, ordered by room id: keyset paging, the cursor is the last
id looked at, so rooms created or ended meanwhile never shift a page and no room is
skipped or repeated. Then, when finished rooms are asked for, finished rooms newest
first (the cursor is an offset: a game finishing meanwhile can repeat one room on the
next page). One request looks at no more than `SCAN` rooms (summaries read in chunks),
so a page may hold fewer rooms than `limit` while `next` is not null (private or
other-game rooms were skipped); a client continues until `next` is null.

The lobby supplies the source (which ids exist, how to summarize a chunk of them);
this module owns the order, the cursor and the bounds. The cursor is opaque to
clients: `live:<room id>` or `finished:<offset>`.
"""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from server.errors import RequestError

LIVE, FINISHED = "live", "finished"


@dataclass(frozen=True)
class Cursor:
    """Where a page starts: the phase and, in it, the last key sent or the offset."""

    phase: str = LIVE
    after: str | None = None  # live phase: the last room id sent
    offset: int = 0  # finished phase: how many finished ids were read already

    def text(self) -> str:
        return f"{LIVE}:{self.after}" if self.phase == LIVE else f"{FINISHED}:{self.offset}"


def parse_cursor(text: str | None) -> Cursor:
    """Read a client's cursor; RequestError bad_message if it is not one we made."""
    if text is None:
        return Cursor()
    phase, sep, rest = text.partition(":")
    if sep and phase == LIVE and rest:
        return Cursor(LIVE, rest)
    if sep and phase == FINISHED and rest.isascii() and rest.isdigit() and len(rest) <= 9:
        return Cursor(FINISHED, offset=int(rest))
    raise RequestError(
        "bad_message",
        "cursor is not the `next` of an earlier list_rooms reply",
        {"type": "list_rooms", "fields": [{"field": "cursor", "error": "bad_cursor", "message": "unknown cursor"}]},
    )


SCAN = 400  # most rooms one request looks at (summaries built or read from Redis)
LIVE_IDS_SECONDS = 1.0  # how stale the other nodes' live room ids may be in a listing
CHUNK = 100  # rooms summarized per step (one Redis pipeline for other nodes' rooms)

Summarize = Callable[[list[str]], Awaitable[list[dict[str, Any] | None]]]


async def live_page(
    ids: list[str], after: str | None, limit: int, summarize: Summarize
) -> tuple[list[dict[str, Any]], str | None, bool]:
    """One page of live rooms from `ids` (sorted), after the id `after`.

    `summarize(chunk)` returns a RoomSummary, or None for a room not to list, for each
    id of a sorted chunk. Returns (rooms, cursor, done): `done` when no live room is
    left after this page (the listing moves on to finished rooms, if asked).
    """
    todo = ids[bisect.bisect_right(ids, after):] if after is not None else ids
    rooms: list[dict[str, Any]] = []
    start, end = 0, min(len(todo), SCAN)
    while start < end:
        # The first chunk is the page itself (filters usually pass most rooms).
        chunk = todo[start : min(start + (limit if start == 0 else CHUNK), end)]
        start += len(chunk)
        for room_id, summary in zip(chunk, await summarize(chunk), strict=True):
            if summary is None:
                continue
            rooms.append(summary)
            if len(rooms) == limit:
                done = room_id == todo[-1]
                return rooms, (None if done else Cursor(LIVE, room_id).text()), done
    if len(todo) > SCAN:
        return rooms, Cursor(LIVE, todo[SCAN - 1]).text(), False
    return rooms, None, True


def finished_scan(want: int) -> int:
    """How many finished ids one request reads from Redis to fill `want` slots:
    bounded, so a listing of mostly private or other-game rooms stays cheap."""
    return min(4 * want, SCAN)
