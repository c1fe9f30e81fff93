"""Games that end before the rules end them: resign, abort, agreed draws, and the one
write path every such ending takes (`RoomEndings.end_game`).

`end_game` is THE way to finish a room for a reason other than the rules: the
requests below use it, and so do rooms that expire or are abandoned (server/lifecycle).
The stored and shown `outcome` keeps its usual shape `{scores, winners, reason,
detail}`; `reason` is the engine's own code when the rules ended the game ("escape",
"three_towers", ...) and one of ENDINGS otherwise, with `seat` naming who resigned or
aborted when a seat did. The ending is appended to the room's action log as
`{v, seat, end, ts}` (no `action` key): restore and replays skip it, so the log still
replays through the engine, and the replay's outcome says how it ended.

Draw offers live in memory only (`draw_offer`, shown as `room.draw_offer`): an offer
lapses when any action is played, when the offering seat withdraws it, and when the
room is restored on another node or after a restart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engines.base import Seat
from server.errors import RequestError
from server.seats import NO_SEATS

if TYPE_CHECKING:
    from server.metrics import Metrics
    from server.seats import Candidate, Member, Peer

# Reasons a game ends other than by its rules (the stable values of outcome.reason).
RESIGNED = "resigned"
DRAW_AGREED = "draw_agreed"
ABORTED = "aborted"
ABANDONED = "abandoned"
EXPIRED = "expired"
ENDINGS = (RESIGNED, DRAW_AGREED, ABORTED, ABANDONED, EXPIRED)


class RoomEndings:
    """Mixin for Room: ending a game early. Room supplies the attributes declared here."""

    if not TYPE_CHECKING:  # mypy would refuse the mixin's assignments to Room's slots
        __slots__ = ()  # Room's attributes are slots (memory per room)

    id: str
    meta: dict[str, Any]
    status: str
    actions: int
    version: int
    draw_offer: Seat | None

    lock: asyncio.Lock
    metrics: Metrics
    closing: bool

    if TYPE_CHECKING:  # provided by Room, RoomViews and RoomPublish; no import of server.room here
        def _candidate(self, **changes: Any) -> Candidate: ...
        async def _commit(self, cand: Candidate) -> None: ...
        def member_of(self, peer: Peer) -> Member | None: ...
        def publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None: ...
        def _after_change(self) -> None: ...
        def next_version(self, peer: Any) -> int: ...

    async def end_game(
        self,
        reason: str,
        *,
        scores: Sequence[float],
        winners: Sequence[Seat],
        detail: str,
        seat: Seat | None = None,
        events: Sequence[dict[str, Any]] = (),
    ) -> list[dict[str, Any]]:
        """Finish the room with `reason` (one of ENDINGS); the caller holds the lock.

        Persists the outcome and the log entry in one commit (raises RequestError if
        Redis refused; the room is then unchanged) and returns the events to publish:
        `events` then `{"type": "finished", "outcome": ...}`. The caller publishes them
        (`self.publish(...)`) and calls `self._after_change()`.
        """
        outcome: dict[str, Any] = {
            "scores": [float(s) for s in scores],
            "winners": list(winners),
            "reason": reason,
            "detail": detail,
        }
        if seat is not None:
            outcome["seat"] = seat
        cand = self._candidate(
            status="finished",
            outcome=outcome,
            actions=self.actions + 1,
            deadline=None,
            answered=NO_SEATS,
            log_entry={"v": self.version + 1, "seat": seat, "end": reason, "ts": time.time()},
        )
        await self._commit(cand)
        self.draw_offer = None
        self.metrics.rooms_finished[self.meta["game"], reason] += 1
        return [*events, {"type": "finished", "outcome": outcome}]

    # -- requests -------------------------------------------------------------------

    def _seated(self, peer: Peer, started: bool = True) -> tuple[Member, Seat]:
        """The one guard of every seat request (act, resign, abort, draws): the caller's
        member if it holds a seat of a room where it may still act, else the request's
        error. Always checked in this order, with these codes and messages, so the same
        condition gets the same answer whichever request met it: `not_in_room`,
        `not_seated`, `not_started` (only when the request needs a started game:
        `started=False` is `abort`, allowed in a waiting room), `game_over`,
        `shutting_down`. Returns (member, its seat)."""
        member = self.member_of(peer)
        if member is None:
            raise RequestError("not_in_room", f"you are not in room {self.id}")
        if member.seat is None:
            raise RequestError("not_seated", "spectators cannot do that: take a seat to play")
        if started and self.status == "waiting":
            raise RequestError("not_started", "the game has not started yet")
        if self.status == "finished":
            raise RequestError("game_over", "the game is over")
        if self.closing:
            raise RequestError("shutting_down", "the server is shutting down")
        return member, member.seat

    async def _finish(self, peer: Peer, req_id: Any, reason: str, **kwargs: Any) -> None:
        events = await self.end_game(reason, **kwargs)
        peer.send_ok(req_id, {"version": self.next_version(peer)})
        self.publish(events)
        self._after_change()

    async def resign(self, peer: Peer, req_id: Any) -> None:
        """Give up: every other seat shares the win."""
        async with self.lock:
            await self._resign(peer, req_id)

    async def _resign(self, peer: Peer, req_id: Any) -> None:
        _, seat = self._seated(peer)
        players = self.meta["players"]
        await self._finish(
            peer, req_id, RESIGNED,
            scores=[0.0 if s == seat else 1.0 for s in range(players)],
            winners=[s for s in range(players) if s != seat],
            detail=f"seat {seat} resigned",
            seat=seat,
            events=[{"type": "resigned", "seat": seat}],
        )  # fmt: skip

    async def abort(self, peer: Peer, req_id: Any) -> None:
        """End the game with no result, allowed while fewer actions than seats were played."""
        async with self.lock:
            await self._abort(peer, req_id)

    async def _abort(self, peer: Peer, req_id: Any) -> None:
        _, seat = self._seated(peer, started=False)
        players = self.meta["players"]
        if self.actions >= players:
            raise RequestError(
                "abort_too_late",
                f"a game can be aborted only during its first {players} moves; resign instead",
            )
        await self._finish(
            peer, req_id, ABORTED,
            scores=[0.0] * players, winners=[], detail=f"seat {seat} aborted the game", seat=seat,
            events=[{"type": "aborted", "seat": seat}],
        )  # fmt: skip

    async def offer_draw(self, peer: Peer, req_id: Any) -> None:
        """Offer a draw, or accept the opponent's standing offer (two-player games only)."""
        async with self.lock:
            await self._offer_draw(peer, req_id)

    async def _offer_draw(self, peer: Peer, req_id: Any) -> None:
        _, seat = self._seated(peer)
        if self.meta["players"] != 2:
            raise RequestError("draw_not_allowed", "draws by agreement need a two-player game")
        if self.draw_offer == seat:
            raise RequestError("draw_not_allowed", "you have already offered a draw")
        if self.draw_offer is not None:
            await self._finish(
                peer, req_id, DRAW_AGREED,
                scores=[0.5, 0.5], winners=[0, 1], detail="draw by agreement",
                events=[{"type": "draw_accepted", "seat": seat}],
            )  # fmt: skip
            return
        await self._offer_changed(peer, req_id, seat, {"type": "draw_offered", "seat": seat})

    async def decline_draw(self, peer: Peer, req_id: Any) -> None:
        """Decline the opponent's draw offer, or withdraw your own."""
        async with self.lock:
            await self._decline_draw(peer, req_id)

    async def _decline_draw(self, peer: Peer, req_id: Any) -> None:
        _, seat = self._seated(peer)
        if self.draw_offer is None:
            raise RequestError("no_draw_offer", "there is no draw offer to decline")
        await self._offer_changed(peer, req_id, None, {"type": "draw_declined", "seat": seat})

    async def _offer_changed(self, peer: Peer, req_id: Any, offer: Seat | None, event: dict[str, Any]) -> None:
        # The offer is shown in every view (room.draw_offer): a versioned change, so it
        # is committed like any other, although the offer itself is not stored.
        await self._commit(self._candidate())
        self.draw_offer = offer
        peer.send_ok(req_id, {"version": self.next_version(peer)})
        self.publish([event])
