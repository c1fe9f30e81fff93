"""The lobby's listing source: which live ids exist on every node, and each room's
summary, for `list_rooms` pages.

`Lobby` (server.lobby) inherits this. `server.listing` owns the order, the cursor and
the bounds of a page; this half supplies what it pages over: the live room ids of every
node (read from Redis at most once per `listing.LIVE_IDS_SECONDS` however many clients
list, plus the rooms this node took since), this node's rooms summarized from memory,
other nodes' and finished rooms from their stored hashes (`stored_summary`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from server import listing
from server.room import Room
from server.store import Store, unpack


class LobbyListing:
    """Mixin for Lobby: one page of the listing. Lobby supplies the attributes declared here."""

    store: Store
    rooms: dict[str, Room]
    _listed: tuple[float, list[str]]
    _listing: asyncio.Future[list[str]] | None
    _adopted: list[str]

    async def _listed_ids(self) -> list[str]:
        """The live ids of every node (sorted), cached briefly; one read at a time."""
        stamp, ids = self._listed
        if time.monotonic() - stamp < listing.LIVE_IDS_SECONDS:
            return ids
        if self._listing is not None:
            return await asyncio.shield(self._listing)
        fut: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        self._listing = fut
        try:
            adopted = len(self._adopted)
            ids = sorted(await self.store.live_room_ids())
            self._listed = (time.monotonic(), ids)
            del self._adopted[:adopted]  # those are in Redis's set by now
            fut.set_result(ids)
            return ids
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            self._listing = None

    async def list(
        self, game: str | None, include_finished: bool, limit: int, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of public rooms of every node (server.listing) and the cursor of
        the next page, or None. Bounded work: at most `listing.SCAN` rooms looked at."""
        at = listing.parse_cursor(cursor)
        rooms: list[dict[str, Any]] = []
        if at.phase == listing.LIVE:
            listed = await self._listed_ids()
            live = sorted({*listed, *self._adopted}) if self._adopted else listed

            async def summarize(chunk: list[str]) -> list[dict[str, Any] | None]:
                # This node's rooms from memory, other nodes' from their stored hashes.
                remote = dict(await self.store.room_summaries_raw([i for i in chunk if i not in self.rooms]))
                out: list[dict[str, Any] | None] = []
                for room_id in chunk:
                    room = self.rooms.get(room_id)
                    if room is not None:
                        summary = room.summary() if not room.meta["private"] and room.status != "finished" else None
                    else:
                        fields = remote.get(room_id)
                        summary = stored_summary(room_id, fields) if fields is not None else None
                        if summary is not None and summary["status"] == "finished":
                            summary = None
                    if summary is not None and game is not None and summary["game"] != game:
                        summary = None
                    out.append(summary)
                return out

            rooms, next_cursor, done = await listing.live_page(live, at.after, limit, summarize)
            if not done or not include_finished:
                return rooms, next_cursor
            at = listing.Cursor(listing.FINISHED)
        want = limit - len(rooms)
        if want == 0:
            return rooms, at.text()
        scan = listing.finished_scan(want)
        ids = await self.store.finished_room_ids(scan, start=at.offset)
        rows = dict(await self.store.room_summaries_raw(ids))
        offset = at.offset
        for room_id in ids:
            offset += 1
            fields = rows.get(room_id)
            summary = stored_summary(room_id, fields) if fields is not None else None
            if summary is None or (game is not None and summary["game"] != game):
                continue
            rooms.append(summary)
            if len(rooms) == limit:
                break
        if len(ids) < scan and offset == at.offset + len(ids):
            return rooms, None  # no finished room left to read
        return rooms, listing.Cursor(listing.FINISHED, offset=offset).text()


def stored_summary(room_id: str, fields: dict[str, bytes]) -> dict[str, Any] | None:
    """A RoomSummary from a room's stored hash (rooms of other nodes, finished rooms);
    None for a private room. Connection flags are not stored: only bots show connected."""
    if "meta" not in fields:
        return None  # expired (past the retention period) or never written
    meta = unpack(fields["meta"])
    if meta["private"]:
        return None
    return {
        "room": room_id,
        "game": meta["game"],
        "rules": meta["rules"],
        "players": meta["players"],
        "status": fields["status"].decode(),
        "seats": [
            {"seat": i, "name": s.get("name"), "connected": s.get("bot") is not None, "bot": s.get("bot")}
            for i, s in enumerate(unpack(fields["seats"]))
        ],
        "private": False,
        "password": meta["password"] is not None,
        "spectators": 0,
        "created": meta["created"],
        "outcome": unpack(fields["outcome"]) if fields.get("outcome") and fields["status"] == b"finished" else None,
    }

