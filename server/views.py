"""What members see: RoomView construction, snapshots and per-member patches.

Filter first, diff second: each member's RoomView is built from
`engine.view(state, seat)` (computed once per seat per change) and diffed against the
view that member last received, so hidden data never reaches a patch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engines.base import Engine, Seat
from server.seats import Member, SeatState
from server.wire import diff, encode


class RoomViews:
    """Mixin for Room: the read side. Room supplies the attributes declared here."""

    id: str
    engine: Engine
    meta: dict[str, Any]
    state: Any
    status: str
    seats: list[SeatState]
    members: list[Member]
    version: int
    deadline: float | None
    outcome: dict[str, Any] | None

    @property
    def to_act(self) -> list[Seat]:
        if self.status != "playing":
            return []
        return sorted(self.engine.to_act(self.state))

    def seats_data(self) -> list[dict[str, Any]]:
        connected = {m.seat for m in self.members if m.seat is not None}
        return [
            {
                "seat": i,
                "name": s.name,
                "connected": s.bot is not None or i in connected,
                "bot": s.bot,
            }
            for i, s in enumerate(self.seats)
        ]

    def room_info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "game": self.meta["game"],
            "rules": self.meta["rules"],
            "players": self.meta["players"],
            "status": self.status,
            "seats": self.seats_data(),
            "to_act": self.to_act,
            "deadline": self.deadline,
            "version": self.version,
        }

    def summary(self) -> dict[str, Any]:
        """The lobby's RoomSummary for this room."""
        return {
            "room": self.id,
            "game": self.meta["game"],
            "rules": self.meta["rules"],
            "players": self.meta["players"],
            "status": self.status,
            "seats": self.seats_data(),
            "private": self.meta["private"],
            "password": self.meta["password"] is not None,
            "spectators": sum(1 for m in self.members if m.seat is None),
            "created": self.meta["created"],
        }

    def legal_for(self, seat: Seat | None) -> list[str]:
        if seat is None or self.status != "playing" or seat not in self.engine.to_act(self.state):
            return []
        state = self.state
        fmt = self.engine.format_action
        return [fmt(state, a) for a in self.engine.legal_actions(state, seat)]

    def _views(self) -> Callable[[Seat | None], tuple[dict[str, Any], list[str]]]:
        """A per-change cache: each seat's view and legal list are computed once."""
        info = self.room_info()
        cache: dict[Seat | None, tuple[dict[str, Any], list[str]]] = {}

        def get(seat: Seat | None) -> tuple[dict[str, Any], list[str]]:
            hit = cache.get(seat)
            if hit is None:
                view = {"room": info, "game": self.engine.view(self.state, seat), "outcome": self.outcome}
                hit = cache[seat] = (view, self.legal_for(seat))
            return hit

        return get

    def send_snapshot(self, member: Member) -> None:
        view, legal = self._views()(member.seat)
        member.view, member.version = view, self.version
        member.peer.push(
            encode(
                {
                    "type": "snapshot",
                    "room": self.id,
                    "version": self.version,
                    "seat": member.seat,
                    "view": view,
                    "legal": legal,
                }
            )
        )

    def _publish(self, events: list[dict[str, Any]], skip: Member | None = None) -> None:
        """Send every member its patch: its own view diffed against what it last got."""
        views = self._views()
        frames: dict[tuple[Seat | None, int], bytes] = {}
        for member in self.members:
            if member is skip:
                continue
            view, legal = views(member.seat)
            key = (member.seat, member.version)
            frame = frames.get(key)
            if frame is None:
                ops = diff(member.view, view) if member.view is not None else [["set", [], view]]
                frame = frames[key] = encode(
                    {
                        "type": "patch",
                        "room": self.id,
                        "from": member.version,
                        "to": self.version,
                        "ops": ops,
                        "events": events,
                        "legal": legal,
                    }
                )
            member.view, member.version = view, self.version
            member.peer.push(frame)
