"""The asyncio client library: a connection to a Giants Table server and its rooms.

    async with Client("ws://127.0.0.1:8765", name="ann") as client:
        room_id = (await client.create_room("giantslayer", bots={"1": "random"}))["room"]
        room = await client.join(room_id)           # a TrackedRoom, snapshot already in
        while legal := await room.wait_turn():      # [] once the game is finished
            await client.act(room_id, legal[0])     # returns once the view shows it
        print(room.outcome)

Every request gets an id and a future resolved by the matching `ok` (its data is
returned) or `error` (RequestFailed carrying the stable code). Snapshots and patches
keep each tracked room's view current; a version gap or a patch that does not apply
triggers a resync by itself. When the connection drops, the client reconnects with
backoff, says hello again, resumes each seat with its token and re-watches spectated
rooms; requests made meanwhile wait for the new connection (client_cli.connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

from client_cli.connection import CLIENT_NAME, Connection
from client_cli.seat_store import SeatStore
from client_cli.tracked_room import (
    ClientClosed,
    ClientError,
    ConnectionLost,
    RequestFailed,
    RoomLost,
    TrackedRoom,
    Update,
)
from protocol import (
    Abort,
    Act,
    CreateRoom,
    DeclineDraw,
    ErrorCode,
    Join,
    Leave,
    ListRooms,
    OfferDraw,
    Replay,
    Resign,
    Resume,
    Resync,
    Start,
    Watch,
)
from protocol import messages as msgs

__all__ = [
    "CLIENT_NAME",
    "Client",
    "ClientClosed",
    "ClientError",
    "ConnectionLost",
    "RequestFailed",
    "RoomLost",
    "SeatStore",
    "TrackedRoom",
    "Update",
    "result_text",
]

LIST_RETRIES = 5  # rate_limited answers in a row a paged listing waits out
LIST_RETRY_WAIT = 0.5  # seconds: a default page costs 6 tokens, refilled at 50 a second

log = logging.getLogger("giants.client")

# Errors after which a room cannot be taken back by reconnecting: stop tracking it.
_FATAL_ON_RESTORE = {ErrorCode.BAD_TOKEN, ErrorCode.NO_SUCH_ROOM, ErrorCode.BAD_PASSWORD}


def result_text(outcome: dict[str, Any] | None, seat: int | None) -> str:
    """A finished game's result for `seat` in a word or two: "won", "lost", "draw",
    "aborted", ... with how it ended when not by the rules ("won (resigned)")."""
    if not outcome:
        return ""
    reason = str(outcome.get("reason", ""))
    if reason in ("aborted", "abandoned", "expired"):
        return reason
    winners = list(outcome.get("winners") or [])
    if seat is None:
        word = "draw" if len(winners) != 1 else f"seat {winners[0]} won"
    elif seat in winners:
        word = "won" if len(winners) == 1 else "draw" if len(winners) == len(outcome.get("scores") or []) else "shared win"
    else:
        word = "lost"
    return f"{word} ({reason})" if reason in ("resigned", "draw_agreed") else word


KEYED_ATTEMPTS = 5  # tries of a create/join/start whose answer was lost


def new_request_key() -> str:
    """128 random bits: the key that makes a retried create/join/start safe."""
    return secrets.token_urlsafe(16)


class Client(Connection):
    """A connection (see `Connection` for the settings) plus the rooms it follows.

    `rooms` maps a room id to its TrackedRoom for every room joined, watched or
    resumed on this client; `updates()` streams their changes.

    With `seats` (a SeatStore, e.g. `SeatStore.default()`) the client keeps every seat
    token it gets in that per-user file and takes seats back by itself: `join` of a
    room where the file holds a seat resumes it instead (the seat you asked for, or
    the one held when you asked for none). Without it, tokens live in memory only.
    """

    def __init__(self, url: str, *, seats: SeatStore | None = None, **kwargs: Any) -> None:
        self.seat_store = seats
        super().__init__(url, **kwargs)

    def _setup(self) -> None:
        self.rooms: dict[str, TrackedRoom] = {}
        self._subscribers: list[asyncio.Queue[Update | None]] = []
        self._stored_status: dict[str, str] = {}  # room -> status last written to the store

    def _room_hint(self) -> str | None:
        """After a drop, one of the rooms being taken back (the one a `moved` advisory
        named, if any); at first, `room`."""
        if self.hint_room in self.rooms:
            return self.hint_room
        return next(iter(self.rooms), None) or self.hint_room

    def _remember(self, room: TrackedRoom) -> None:
        """Keep the seat's token, game and status in the seat store (if any).

        Called after a join or resume and whenever a seated room's status changes; the
        file is rewritten only then, never per move.
        """
        if self.seat_store is None or room.token is None or room.seat is None:
            return
        info = room.info
        status = str(info.get("status", ""))
        if self._stored_status.get(room.id) == status:
            return
        self._stored_status[room.id] = status
        try:
            self.seat_store.save(
                self.url, room.id, room.seat, room.token, game=str(info.get("game", "")),
                rules=str(info.get("rules", "")), name=self.name or "", status=status,
                result=result_text(room.outcome, room.seat) if status == "finished" else "",
            )
        except OSError as exc:  # a read-only home must not stop the game
            log.warning("could not save the seat token of room %s: %s", room.id, exc)

    def _unremember(self, room_id: str) -> None:
        if self.seat_store is None:
            return
        self._stored_status.pop(room_id, None)
        try:
            self.seat_store.forget(self.url, room_id)
        except OSError as exc:
            log.warning("could not update the seat store: %s", exc)

    # -- pushes -----------------------------------------------------------------------

    def _on_push(self, msg: msgs.Snapshot | msgs.Patch | msgs.Closing | msgs.Moved) -> None:
        if isinstance(msg, msgs.Snapshot):
            room = self.rooms.get(msg.room)
            if room is not None:
                room.apply_snapshot(msg.version, msg.seat, msg.view, msg.legal, msg.keys)
                self._remember(room)
                self._publish(Update(room, "snapshot", msg.version))
        elif isinstance(msg, msgs.Patch):
            self._on_patch(msg)

    def _on_patch(self, msg: msgs.Patch) -> None:
        room = self.rooms.get(msg.room)
        if room is None:
            return
        result = room.apply_patch(msg.from_, msg.to, msg.ops, msg.events, msg.legal, msg.legal_edit)
        if result == "applied":
            self._remember(room)
            self._publish(Update(room, "patch", msg.to, tuple(msg.events)))
        elif result == "gap":
            log.info(
                "room %s: patch %s->%s does not fit version %s; resyncing",
                room.id, msg.from_, msg.to, room.version,
            )
            room.mark_resyncing()
            self._spawn(self._resync_quietly(room.id))

    async def _resync_quietly(self, room_id: str) -> None:
        # A failed resync is retried by the next gap or by the reconnect's restore.
        with contextlib.suppress(ClientError, TimeoutError):
            await self.resync(room_id)

    # -- reconnection -----------------------------------------------------------------

    async def _restore(self) -> None:
        """Resume every seat with its token and watch every spectated room again."""
        for room in list(self.rooms.values()):
            room.resyncing = True  # keep showing the old view until the new snapshot
            if room.token is not None:
                msg: Resume | Watch = Resume(id=self.new_id(), room=room.id, token=room.token)
            else:
                msg = Watch(id=self.new_id(), room=room.id, password=room.password)
            try:
                await self._request(msg, wait_connected=False)
            except RequestFailed as exc:
                if exc.code not in _FATAL_ON_RESTORE:
                    raise
                log.warning("room %s cannot be taken back: %s", room.id, exc)
                if room.token is not None:
                    self._unremember(room.id)
                self._forget(room, exc)

    def _on_give_up(self, exc: BaseException) -> None:
        for room in list(self.rooms.values()):
            self._forget(room, exc)

    def _on_close(self) -> None:
        for queue in self._subscribers:
            queue.put_nowait(None)  # ends every updates() iterator

    def _forget(self, room: TrackedRoom, reason: BaseException | None) -> None:
        self.rooms.pop(room.id, None)
        room.mark_lost(reason)
        self._publish(Update(room, "lost", room.version))

    # -- lobby and rooms --------------------------------------------------------------

    async def list_rooms(
        self, game: str | None = None, include_finished: bool = False, max_rooms: int | None = None
    ) -> list[dict[str, Any]]:
        """RoomSummary maps of the public rooms (docs/protocol.md, section 5), every page
        of the listing in order (live rooms first, then finished ones if asked), or the
        first `max_rooms` of them."""
        rooms: list[dict[str, Any]] = []
        cursor: str | None = None
        refused = 0
        while True:
            try:
                rooms_page, cursor = await self.list_rooms_page(game, include_finished, cursor)
            except RequestFailed as exc:
                # Each page costs tokens (docs/protocol.md section 9): a long listing
                # may run the bucket dry. Not carried out: wait for tokens, ask again.
                if exc.code != "rate_limited" or refused >= LIST_RETRIES:
                    raise
                refused += 1
                await asyncio.sleep(LIST_RETRY_WAIT)
                continue
            refused = 0
            rooms.extend(rooms_page)
            if cursor is None or (max_rooms is not None and len(rooms) >= max_rooms):
                return rooms if max_rooms is None else rooms[:max_rooms]

    async def list_rooms_page(
        self, game: str | None = None, include_finished: bool = False, cursor: str | None = None,
        limit: int | None = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the listing: (rooms, the cursor of the next page or None at the end).
        A page may hold fewer than `limit` rooms while the cursor is not None."""
        data = await self._request(
            ListRooms(id=self._new_id(), game=game, include_finished=include_finished, cursor=cursor, limit=limit)
        )
        next_cursor = data.get("next")
        return list(data.get("rooms") or []), next_cursor if isinstance(next_cursor, str) and next_cursor else None

    async def create_room(
        self,
        game: str,
        *,
        rules: str | None = None,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        private: bool = False,
        password: str | None = None,
        bots: dict[str, str] | None = None,
        deadline: float | None = None,
        autostart: bool = True,
    ) -> dict[str, Any]:
        """Create a room; return `{room, summary}`. It does not seat you: `join` next."""
        key = new_request_key()
        return await self._keyed(
            lambda: CreateRoom(
                id=self._new_id(), game=game, rules=rules, players=players, options=options, private=private,
                password=password, bots=bots, deadline=deadline, autostart=autostart, key=key,
            )
        )

    async def _keyed(self, make: Callable[[], Any], on_ok: Any = None) -> dict[str, Any]:
        """Send a request carrying a request key; if its answer is lost (the connection
        dropped, it timed out) or the server says storage_unavailable, send it again
        with the same key once reconnected: the server answers a retry of a stored
        request like the first attempt, so nothing is created or taken twice."""
        delay = 0.2
        for attempt in range(KEYED_ATTEMPTS):
            try:
                return await self._request(make(), on_ok=on_ok)
            except (ConnectionLost, TimeoutError) as exc:
                if attempt == KEYED_ATTEMPTS - 1:
                    raise
                log.info("no answer to a keyed request (%s); retrying with its key", exc)
            except RequestFailed as exc:
                if exc.code != ErrorCode.STORAGE_UNAVAILABLE or attempt == KEYED_ATTEMPTS - 1:
                    raise
                log.info("server storage unavailable; retrying with the same key")
            await asyncio.sleep(delay)
            delay = min(5.0, delay * 2)
        raise AssertionError("unreachable")

    async def join(
        self, room: str, seat: int | None = None, password: str | None = None
    ) -> TrackedRoom:
        """Take a seat (first free one by default); return the room once its snapshot is in.

        The seat's token is kept in `TrackedRoom.token` for reconnects (and in the seat
        store, if the client has one). When the store already holds a seat in this
        room (that `seat`, if given), the seat is resumed instead of joined again.
        """
        if self.seat_store is not None:
            held = self.seat_store.find(self.url, room, seat)
            if held is not None:
                try:
                    return await self.resume(room, held.token)
                except RequestFailed as exc:
                    if exc.code not in (ErrorCode.BAD_TOKEN, ErrorCode.NO_SUCH_ROOM):
                        raise
                    self._unremember(room)  # stale: the room is gone or the seat was freed

        def on_ok(data: dict[str, Any]) -> None:
            self.rooms[room] = TrackedRoom(
                room, seat=data.get("seat"), token=data.get("token"), password=password
            )

        key = new_request_key()
        await self._keyed(
            lambda: Join(id=self._new_id(), room=room, seat=seat, password=password, key=key), on_ok=on_ok
        )
        return await self._synced(room)

    async def watch(self, room: str, password: str | None = None) -> TrackedRoom:
        """Follow a room as a spectator; return it once its snapshot is in."""

        def on_ok(data: dict[str, Any]) -> None:
            self.rooms[room] = TrackedRoom(room, password=password)

        await self._request(Watch(id=self._new_id(), room=room, password=password), on_ok=on_ok)
        return await self._synced(room)

    async def resume(self, room: str, token: str) -> TrackedRoom:
        """Take back a seat with its token (from an earlier join, on any connection)."""

        def on_ok(data: dict[str, Any]) -> None:
            tracked = self.rooms.get(room)
            if tracked is None:
                tracked = self.rooms[room] = TrackedRoom(room)
            tracked.seat, tracked.token, tracked.resyncing = data.get("seat"), token, True

        await self._request(Resume(id=self._new_id(), room=room, token=token), on_ok=on_ok)
        return await self._synced(room)

    async def _synced(self, room: str) -> TrackedRoom:
        tracked = self.rooms[room]
        await tracked.wait_for(lambda r: r.synced, self.request_timeout)
        return tracked

    async def leave(self, room: str) -> None:
        """Leave a room (before the start this frees the seat); stop tracking it."""
        await self._request(Leave(id=self._new_id(), room=room))
        tracked = self.rooms.get(room)
        if tracked is not None:
            if tracked.token is not None and tracked.info.get("status") == "waiting":
                self._unremember(room)  # leaving before the start frees the seat
            self._forget(tracked, None)

    async def start(self, room: str) -> None:
        """Start a room created with autostart=False (all seats must be taken)."""
        key = new_request_key()
        await self._keyed(lambda: Start(id=self._new_id(), room=room, key=key))

    async def act(self, room: str, action: str, *, guard: bool = False) -> int:
        """Play `action` (game notation) in `room`; return the room's new version.

        Returns after the server stored the action AND the tracked view shows it.
        With `guard=True` the current view version is sent along, so the action is
        refused with stale_version if the room moved on meanwhile. Raises
        RequestFailed with the engine's or server's code (illegal_action,
        not_your_turn, bad_notation, stale_version, ...).
        """
        tracked = self.rooms.get(room)
        version = tracked.version if guard and tracked is not None else None
        settling = False

        def on_ok(data: dict[str, Any]) -> None:
            # Until its patch is in, a `moved` advisory waits (client_cli.connection).
            nonlocal settling
            settling = True
            self._settling += 1

        try:
            data = await self._request(
                Act(id=self._new_id(), room=room, action=action, version=version), on_ok=on_ok
            )
            new_version = int(data["version"])
            if tracked is not None and tracked.lost is None:
                try:
                    await tracked.wait_version(new_version, timeout=5.0)
                except TimeoutError:
                    # The patch should follow the ok at once; if it did not, fetch a snapshot.
                    tracked.mark_resyncing()
                    await self.resync(room)
                    await tracked.wait_version(new_version, timeout=self.request_timeout)
        finally:
            if settling:
                self._settling -= 1
        return new_version

    async def resign(self, room: str) -> int:
        """Give up the game in `room`; return the room's new version (the outcome follows)."""
        return int((await self._request(Resign(id=self._new_id(), room=room)))["version"])

    async def abort(self, room: str) -> int:
        """End the game in `room` without a result (only during its first moves)."""
        return int((await self._request(Abort(id=self._new_id(), room=room)))["version"])

    async def offer_draw(self, room: str) -> int:
        """Offer a draw, or accept the opponent's standing offer (two-player games)."""
        return int((await self._request(OfferDraw(id=self._new_id(), room=room)))["version"])

    async def decline_draw(self, room: str) -> int:
        """Decline the opponent's draw offer, or withdraw your own."""
        return int((await self._request(DeclineDraw(id=self._new_id(), room=room)))["version"])

    async def resync(self, room: str) -> None:
        """Ask for a fresh snapshot of `room` (done automatically on a version gap)."""
        tracked = self.rooms.get(room)
        if tracked is not None:
            tracked.resyncing = True
        await self._request(Resync(id=self._new_id(), room=room))

    async def replay(self, room: str) -> dict[str, Any]:
        """The action log of a finished room: {game, rules, players, options, seed, actions, outcome}."""
        return await self._request(Replay(id=self._new_id(), room=room))

    # -- change notifications ---------------------------------------------------------

    def room(self, room: str) -> TrackedRoom:
        """The tracked room (KeyError if not joined, watched or resumed)."""
        return self.rooms[room]

    def _publish(self, update: Update) -> None:
        for queue in self._subscribers:
            queue.put_nowait(update)

    async def updates(self) -> AsyncIterator[Update]:
        """Yield every change of every tracked room, in order, until the client closes.

        Each iteration sees the room already updated; a slow consumer only delays
        itself (updates queue up for it).
        """
        queue: asyncio.Queue[Update | None] = asyncio.Queue()
        self._subscribers.append(queue)
        try:
            while not self._closed:
                update = await queue.get()
                if update is None:
                    return
                yield update
        finally:
            self._subscribers.remove(queue)
