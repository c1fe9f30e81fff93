"""Who is in a room: joining a seat, watching, resuming by token, leaving, starting,
and the replay of a finished room (`RoomMembership`, a mixin of `server.room.Room`).

Every request here follows the room's one write path (`Room._commit`, under the
room's lock) when it changes what is stored — a seat taken or freed, a seat's
connection coming or going, the start — and answers its requester exactly once. The
room's own move path (`Room.act`) and the write path stay in `server.room`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from typing import TYPE_CHECKING, Any

from engines.base import Engine, Seat
from server import passwords
from server.errors import RequestError
from server.limits import GuessLimiter
from server.seats import Member, Peer, SeatState, derive_token, hash_secret, replay_data
from server.store import Store

if TYPE_CHECKING:
    from server.seats import Candidate

log = logging.getLogger("giants.room")


class RoomMembership:
    """Mixin for Room: membership requests. Room supplies the attributes declared here."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    id: str
    engine: Engine
    meta: dict[str, Any]
    state: Any
    status: str
    seats: list[SeatState]
    members: list[Member]
    outcome: dict[str, Any] | None
    store: Store
    lock: asyncio.Lock
    closing: bool
    start_key: str
    guesses: GuessLimiter
    _opened: set[str] | None

    if TYPE_CHECKING:  # provided by Room, RoomViews and RoomPublish; no import of server.room here
        def _candidate(self, **changes: Any) -> Candidate: ...
        async def _commit(self, cand: Candidate) -> None: ...
        def _after_change(self) -> None: ...
        def _deadline_after(
            self, state: Any, status: str, continuing: bool, now: float | None = None
        ) -> float | None: ...
        def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None: ...
        def send_snapshot(self, member: Member) -> None: ...
        def share_equal_view(self, member: Member) -> None: ...

    def member_of(self, peer: Peer) -> Member | None:
        for member in self.members:
            if member.peer is peer:
                return member
        return None

    def has_member(self, peer: Peer) -> bool:
        return self.member_of(peer) is not None

    def member_seat(self, peer: Peer) -> tuple[bool, Seat | None]:
        """(is a member, its seat): what the relay tells a member's node after a request."""
        member = self.member_of(peer)
        return (member is not None, member.seat if member is not None else None)

    async def check_password(self, password: str | None) -> None:
        """Raise bad_password unless `password` opens this room (too_many_guesses after
        repeated misses). scrypt runs in a thread: call it *before* taking the lock."""
        if self.meta["password"] is not None and self._opened is None:
            self._opened = set()  # made only for rooms with a password (memory per room)
        await passwords.require(
            password, self.meta["password"], self.meta.get("salt", ""), self.guesses, f"room:{self.id}", self._opened or set()
        )

    async def join(
        self, peer: Peer, req_id: Any, seat: Seat | None, password: str | None, key: str | None = None
    ) -> None:
        """Take a seat; reply ok {room, seat, token}, then a snapshot, then patches.

        The join that takes the last seat of an autostart room also starts it, in the
        same write. With a request `key` a retried join is answered like the first
        one: if that one was stored, the same seat and token again (derive_token).
        """
        await self.check_password(password)
        async with self.lock:
            token = derive_token(self.id, key) if key is not None else secrets.token_urlsafe(24)
            digest = hash_secret(token)
            if key is not None:
                held = self._seat_of(digest)
                if held is not None:
                    await self._attach(peer, req_id, held, {"room": self.id, "seat": held, "token": token})
                    return
            if self.status != "waiting":
                raise RequestError("already_started", "the game has started; watch it or resume your seat")
            if seat is None:
                free = [i for i, s in enumerate(self.seats) if not s.taken]
                if not free:
                    raise RequestError("room_full", "every seat is taken")
                seat = free[0]
            elif not 0 <= seat < len(self.seats):
                message = f"seat must be 0..{len(self.seats) - 1} in this room"
                raise RequestError(
                    "bad_message",
                    f"invalid join message: {message}",
                    {"type": "join", "fields": [{"field": "seat", "error": "out_of_range", "message": message}]},
                )
            elif self.seats[seat].taken:
                raise RequestError("seat_taken", f"seat {seat} is taken")
            old = self.member_of(peer)
            if old is not None and old.seat is not None:
                raise RequestError("seat_taken", f"you already hold seat {old.seat} in this room")
            cand = self._candidate()
            cand.seats[seat] = SeatState(peer.name, digest)
            starting = bool(self.meta.get("autostart", True)) and all(s.taken for s in cand.seats)
            if starting:
                cand.status = "playing"
                cand.deadline = self._deadline_after(self.state, "playing", False)
            if old is not None:
                self.members.remove(old)
            member = Member(peer, seat)
            self.members.append(member)
            try:
                await self._commit(cand)
            except RequestError:
                if member in self.members:  # else the room was lost meanwhile (see _attach)
                    self.members.remove(member)
                    if old is not None:
                        self.members.append(old)
                raise
            peer.send_ok(req_id, {"room": self.id, "seat": seat, "token": token})
            self.send_snapshot(member)
            events: list[dict[str, Any]] = [{"type": "joined", "seat": seat, "name": peer.name}]
            if starting:
                events.append({"type": "started"})
            self.publish(events, skip=member)
            self.share_equal_view(member)
            self._after_change()

    def _seat_of(self, token_hash: str) -> Seat | None:
        return next(
            (i for i, s in enumerate(self.seats)
             if s.token_hash is not None and hmac.compare_digest(s.token_hash, token_hash)),
            None,
        )

    async def start(self, peer: Peer, req_id: Any, key: str | None = None) -> None:
        """Start a full room; with a request `key`, a retried start that was stored
        answers ok again instead of already_started."""
        async with self.lock:
            member = self.member_of(peer)
            if member is None:
                raise RequestError("not_in_room", f"you are not in room {self.id}")
            if member.seat is None:
                raise RequestError("not_seated", "only a seated player can start the game")
            key_hash = hash_secret(key, "start:") if key is not None else ""
            if self.status != "waiting":
                if key_hash and self.start_key and hmac.compare_digest(self.start_key, key_hash):
                    peer.send_ok(req_id, {})
                    return
                raise RequestError("already_started", "the game has already started")
            if not all(s.taken for s in self.seats):
                raise RequestError("not_started", "every seat must be filled before the start")
            await self._start(key_hash)
            peer.send_ok(req_id, {})

    async def autostart_if_full(self) -> None:
        """Start a room whose seats are all filled already (bots only) — one created
        before rooms like it were stored as playing from the start."""
        async with self.lock:
            if self.status == "waiting" and self.meta.get("autostart", True) and all(s.taken for s in self.seats):
                await self._start()

    async def _autostart_quietly(self) -> None:
        try:
            await self.autostart_if_full()
        except RequestError as exc:  # the failed write scheduled the room's recovery
            log.warning("room %s: start not stored: %s", self.id, exc.message)

    async def _start(self, start_key: str = "") -> None:
        cand = self._candidate(status="playing", start_key=start_key)
        cand.deadline = self._deadline_after(self.state, "playing", False)
        await self._commit(cand)
        self.publish([{"type": "started"}])
        self._after_change()

    async def watch(self, peer: Peer, req_id: Any, password: str | None) -> None:
        await self.check_password(password)
        async with self.lock:
            if self.member_of(peer) is not None:
                raise RequestError("seat_taken", "you are already in this room")
            member = Member(peer, None)
            self.members.append(member)
            peer.send_ok(req_id, {"room": self.id})
            self.send_snapshot(member)

    async def resume(self, peer: Peer, req_id: Any, token: str) -> None:
        """Reattach a seat by its token from any connection (a finished room too: the
        seat gets the final snapshot with the outcome)."""
        async with self.lock:
            seat = self._seat_of(hash_secret(token))
            if seat is None:
                raise RequestError("bad_token", "that token does not hold a seat in this room")
            await self._attach(peer, req_id, seat, {"room": self.id, "seat": seat})

    async def _attach(self, peer: Peer, req_id: Any, seat: Seat, reply: dict[str, Any]) -> None:
        """Make `peer` the member holding `seat` (caller holds the lock), reply, snapshot."""
        old = self.member_of(peer)
        if old is not None:
            self.members.remove(old)
        was_connected = any(m.seat == seat for m in self.members)
        member = Member(peer, seat)
        self.members.append(member)
        if not was_connected and not self.closing and self.status != "finished":
            # The seat's `connected` flag flips: a versioned change, persisted first.
            try:
                await self._commit(self._candidate())
            except RequestError:
                # A room found owned by another node (fence moved on) has already handed
                # its members, this one included, to the relay for the new owner.
                if member in self.members:
                    self.members.remove(member)
                raise
        peer.send_ok(req_id, reply)
        self.send_snapshot(member)
        if not was_connected and self.status != "finished":
            self.publish([{"type": "joined", "seat": seat, "name": self.seats[seat].name}], skip=member)
            self.share_equal_view(member)

    async def reattach(self, entries: list[tuple[Peer, Seat | None]]) -> None:
        """Members moved here from this room's previous owner (failover, hand-over).

        Nodes vouch for them (they were members there), so no token is asked. Each new
        member gets a snapshot; seats that come back connected are one versioned change.
        """
        async with self.lock:
            fresh = [
                Member(peer, seat)
                for peer, seat in entries
                if self.member_of(peer) is None and (seat is None or 0 <= seat < len(self.seats))
            ]
            if not fresh or self.closing:
                return
            before = {m.seat for m in self.members if m.seat is not None}
            back = sorted({m.seat for m in fresh if m.seat is not None} - before)
            self.members.extend(fresh)
            for member in fresh:
                self.send_snapshot(member)
            if back:
                try:
                    await self._commit(self._candidate())
                except RequestError:
                    log.warning("room %s: could not record reattached seats", self.id)
                    return
                self.publish([{"type": "joined", "seat": s, "name": self.seats[s].name} for s in back])

    async def resync(self, peer: Peer, req_id: Any) -> None:
        async with self.lock:
            member = self.member_of(peer)
            if member is None:
                raise RequestError("not_in_room", f"you are not in room {self.id}")
            peer.send_ok(req_id, {})
            self.send_snapshot(member)

    async def leave(self, peer: Peer, explicit: bool = True) -> bool:
        """Detach a connection (leave request or disconnect); False if it was not a member.

        Before the start an explicit leave frees the seat; afterwards the seat stays
        reserved for its token.
        """
        async with self.lock:
            member = self.member_of(peer)
            if member is None:
                return False
            self.members.remove(member)
            seat = member.seat
            if seat is not None and not self.closing and not any(m.seat == seat for m in self.members):
                event = {"type": "left", "seat": seat}
                if explicit and self.status == "waiting":
                    cand = self._candidate()
                    cand.seats[seat] = SeatState()
                    try:
                        await self._commit(cand)
                        self.publish([event])
                    except RequestError:
                        log.warning("room %s: could not free seat %s", self.id, seat)
                else:
                    await self._connection_changed(event)
            self._after_change()
            return True

    async def _connection_changed(self, event: dict[str, Any]) -> None:
        """A seat's `connected` flag went false: a versioned change like any other
        (not in a finished room, which is never written again)."""
        if self.closing or self.status == "finished":
            return
        try:
            await self._commit(self._candidate())
        except RequestError:
            log.warning("room %s: could not record a connection change", self.id)
            return
        self.publish([event])

    async def replay(self, password: str | None = None) -> dict[str, Any]:
        """The finished game's replay; a password room's needs its password."""
        await self.check_password(password)
        if self.status != "finished":
            raise RequestError("not_finished", "replays are available once the game is over")
        return await replay_data(self.store, self.id, self.meta, self.outcome)
