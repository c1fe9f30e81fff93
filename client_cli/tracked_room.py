"""One room as a client sees it: the view kept current from snapshot + patches.

`TrackedRoom` is owned and updated by `client_cli.client.Client` (from its reader
task, one frame at a time); callers read it and wait on it:

    room = await client.join(room_id)
    while legal := await room.wait_turn():      # [] once the game is finished
        await client.act(room.id, pick(room.game, legal))
    print(room.outcome)

Views are never modified in place (patches are applied copy-on-write), so a view a
caller holds stays as it was when read.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol import ErrorCode, PatchError, apply_legal_edit, apply_patch, expand_ops

RECENT_EVENTS = 256  # events kept per room for late readers (renderers, logs)


class ClientError(Exception):
    """Base of every error the client library raises."""


class RequestFailed(ClientError):
    """The server answered a request with `error`.

    `code` is the stable wire code (an `ErrorCode` when this library knows it, else
    the raw string from a newer server); `message` is for people; `detail` is the
    error's detail map ({} when absent).
    """

    def __init__(
        self, request: str, code: str, message: str, detail: dict[str, Any] | None
    ) -> None:
        super().__init__(f"{request}: {code}: {message}")
        try:
            self.code: ErrorCode | str = ErrorCode(code)
        except ValueError:
            self.code = code
        self.request = request
        self.message = message
        self.detail: dict[str, Any] = detail or {}


class ConnectionLost(ClientError):
    """The connection dropped while the request was in flight: it may or may not have
    taken effect. The client reconnects on its own (if enabled); look at the room's
    view before retrying an action."""


class ClientClosed(ClientError):
    """The client was closed (or could not reconnect); create a new one."""


class RoomLost(ClientError):
    """The client lost this room for good (e.g. its token was refused after a
    reconnect, or the room no longer exists); `reason` holds the server's error."""

    def __init__(self, room: str, reason: BaseException | None) -> None:
        super().__init__(f"room {room} was lost: {reason}")
        self.room = room
        self.reason = reason


@dataclass(frozen=True)
class Update:
    """What `Client.updates()` yields: one change of one tracked room.

    `kind` is "snapshot", "patch" or "lost"; `events` are the patch's events (empty for
    a snapshot). Read the new state from `room`.
    """

    room: TrackedRoom
    kind: str
    version: int | None
    events: tuple[dict[str, Any], ...] = ()


@dataclass(eq=False)
class TrackedRoom:
    """A joined, watched or resumed room: its current view, version and legal actions.

    `seat` is None for a spectator. `token` (seated only) is the secret that resumes
    the seat from any connection; the client reuses it after a reconnect.
    """

    id: str
    seat: int | None = None
    token: str | None = None
    password: str | None = None
    view: dict[str, Any] | None = None
    version: int | None = None
    legal: list[str] = field(default_factory=list)
    keys: tuple[str, ...] | None = None  # protocol 2 and 3: the key table of the last snapshot
    # Protocol 3: the last non-empty legal list received, what a `legal_edit` applies to.
    legal_base: list[str] = field(default_factory=list, repr=False)
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    resyncing: bool = False  # patches are ignored until the next snapshot
    lost: RoomLost | None = None
    resyncs: int = 0  # how many times a gap or a bad patch forced a resync
    _changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    # -- reading --------------------------------------------------------------------

    @property
    def synced(self) -> bool:
        """True once a snapshot arrived and no resync is pending."""
        return self.view is not None and not self.resyncing

    @property
    def info(self) -> dict[str, Any]:
        """The view's "room" part (status, seats, to_act, deadline, version)."""
        return (self.view or {}).get("room") or {}

    @property
    def game(self) -> Any:
        """The engine's view for this seat (or the spectator view)."""
        return (self.view or {}).get("game")

    @property
    def status(self) -> str | None:
        """ "waiting", "playing" or "finished" (None before the first snapshot)."""
        return self.info.get("status")

    @property
    def to_act(self) -> list[int]:
        return list(self.info.get("to_act") or [])

    @property
    def outcome(self) -> dict[str, Any] | None:
        return (self.view or {}).get("outcome")

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def my_turn(self) -> bool:
        """True when the server says this seat must act now (legal is non-empty)."""
        return bool(self.legal) and self.synced

    # -- waiting --------------------------------------------------------------------

    async def wait_for(
        self, predicate: Callable[[TrackedRoom], bool], timeout: float | None = None
    ) -> None:
        """Return once `predicate(self)` holds (checked after every change).

        Raises TimeoutError after `timeout` seconds, RoomLost if the room is lost.
        """
        async with asyncio.timeout(timeout):
            while True:
                if self.lost is not None:
                    raise self.lost
                if predicate(self):
                    return
                await self._changed.wait()

    async def wait_turn(self, timeout: float | None = None) -> list[str]:
        """Wait until this seat must act or the game is over; return the legal actions.

        An empty list means the game is finished: read `outcome`.
        """
        await self.wait_for(lambda r: r.my_turn or (r.synced and r.finished), timeout)
        return [] if self.finished else list(self.legal)

    async def wait_change(self, after: int | None = None, timeout: float | None = None) -> int:
        """Wait for a version newer than `after` (default: the current one); return it."""
        start = self.version if after is None else after
        await self.wait_for(
            lambda r: r.synced and r.version is not None and (start is None or r.version > start),
            timeout,
        )
        assert self.version is not None
        return self.version

    async def wait_version(self, version: int, timeout: float | None = None) -> None:
        """Wait until the tracked view has reached `version` (e.g. after an `act`)."""
        await self.wait_for(lambda r: r.synced and (r.version or 0) >= version, timeout)

    async def wait_finished(self, timeout: float | None = None) -> dict[str, Any] | None:
        """Wait for the end of the game; return the outcome."""
        await self.wait_for(lambda r: r.synced and r.finished, timeout)
        return self.outcome

    # -- updating (called by the Client's reader, in frame order) -------------------

    def _notify(self) -> None:
        # Wake every waiter, then start a fresh event for the next change.
        self._changed.set()
        self._changed = asyncio.Event()

    def apply_snapshot(
        self, version: int, seat: int | None, view: dict[str, Any], legal: list[str],
        keys: list[str] | None = None,
    ) -> None:
        """Take a snapshot; `keys` (protocol 2 and 3) is the key table its patches refer to."""
        self.view, self.version, self.seat, self.legal = view, version, seat, list(legal)
        self.legal_base = self.legal
        self.keys = None if keys is None else tuple(keys)
        self.resyncing = False
        self._notify()

    def apply_patch(
        self, from_: int, to: int, ops: list[Any], events: list[Any], legal: list[str] | None,
        legal_edit: list[Any] | None = None,
    ) -> str:
        """Apply one patch; return "applied", "old" (ignored) or "gap" (resync needed).

        `legal` None (protocol 2 and 3) keeps the legal list the seat already has, unless
        `legal_edit` (protocol 3) edits the last non-empty one."""
        if self.resyncing or self.version is None or self.view is None:
            return "old"  # a snapshot is on its way and will supersede this
        if from_ < self.version or to <= self.version:
            return "old"
        if from_ != self.version:
            return "gap"
        try:
            if self.keys is not None:  # protocol 2: compact ops with key references
                ops = expand_ops(ops, self.keys)
            view = apply_patch(self.view, ops)
            if legal is None and legal_edit is not None:
                legal = apply_legal_edit(self.legal_base, legal_edit)
        except PatchError:
            return "gap"
        if not isinstance(view, dict):
            return "gap"
        self.view, self.version = view, to
        if legal is not None:
            self.legal = list(legal)
            if self.legal:
                self.legal_base = self.legal
        self.events.extend(e for e in events if isinstance(e, dict))
        self._notify()
        return "applied"

    def mark_resyncing(self) -> None:
        self.resyncing = True
        self.resyncs += 1

    def mark_lost(self, reason: BaseException | None) -> None:
        self.lost = RoomLost(self.id, reason)
        self._notify()
