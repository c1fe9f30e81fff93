"""Room building blocks: seats, members, pending changes, secrets, replays.

`Room` (server.room) holds a list of SeatState and Member; a change is first built as
a Candidate and adopted only after Redis accepted it.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from engines.base import Seat
from server.store import Store

NO_SEATS: frozenset[Seat] = frozenset()  # shared: each empty frozenset() is 216 bytes


def hash_secret(secret: str, salt: str = "") -> str:
    """sha256 hex of a token or password; only hashes are stored."""
    return hashlib.sha256((salt + secret).encode()).hexdigest()


def derive_token(room_id: str, key: str) -> str:
    """The seat token of a join that carried request key `key`: the same on every retry,
    so a retried join whose first attempt was stored gets the same answer. The key is
    as secret as the token (clients pick 128 random bits; docs/protocol.md)."""
    digest = hashlib.sha256(f"giants-join\0{room_id}\0{key}".encode()).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode()


class Peer(Protocol):
    """What a room needs from a connection: push frames, answer requests.

    `protocol` is the version the client chose in `hello`: the room encodes the
    member's snapshots and patches for it (server.views).
    """

    name: str
    protocol: int

    def push(self, frame: bytes) -> None: ...

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None: ...

    def send_ok_version(self, req_id: Any, version: int) -> None:
        """`send_ok(req_id, {"version": version})`: a move's reply (protocol.packer.ok_version)."""


class Output(Protocol):
    """Where the members' frames are written (the server: server.app's GiantsServer).

    A room holds it over a synchronous stretch that ends with every frame it pushed
    written (a move's reply and patches): `held = output.flush_promised`, set it True,
    the pushes, then (in a `finally`) give it `held` back and call `flush_now`. Frames
    pushed while held are written by that `flush_now`, in the same turn of the loop,
    so no flush is scheduled for them (no `call_soon`, no extra turn of the loop and
    its system call).
    """

    # True while a flush of the frames queued is promised: the loop's, scheduled, or
    # a holder's `flush_now` to come; no connection's push schedules one then.
    flush_promised: bool

    def flush_now(self) -> None:
        """Write every frame queued so far."""


class _NoOutput:
    """A room outside a server (tests, benches): its peers write their own frames."""

    flush_promised = False

    def flush_now(self) -> None:
        pass


NO_OUTPUT: Output = _NoOutput()  # until the lobby hands the room the server's


@dataclass(slots=True)
class SeatState:
    name: str | None = None
    token_hash: str | None = None
    bot: str | None = None

    @property
    def taken(self) -> bool:
        return self.token_hash is not None or self.bot is not None

    def to_store(self) -> dict[str, Any]:
        return {"name": self.name, "token": self.token_hash, "bot": self.bot}

    @classmethod
    def from_store(cls, data: dict[str, Any]) -> SeatState:
        return cls(data.get("name"), data.get("token"), data.get("bot"))


@dataclass(eq=False, slots=True)
class Member:
    """One connection in one room: its seat (None = spectator) and what it last received.

    `view` is that last RoomView, packed to msgpack bytes while the room is idle
    (server.views: `compact_views`, `expand_views`).
    """

    peer: Peer
    seat: Seat | None
    view: dict[str, Any] | bytes | None = None
    version: int = -1
    # A hash of the legal list it was last sent (hash(tuple(...)); in a room without hidden
    # information that of its packed bytes, server.legal_lists.open_legal): protocol 2
    # resends a list only when it changed. A 64-bit hash, not the list, which the room does not keep (memory);
    # or AS_BASE (server.views, hidden-information rooms): the list is `legal_base`'s entries.
    legal_hash: int | None = None
    # Protocol 3: the last non-empty legal list it was sent, joined with LEGAL_SEP (one
    # compact str, not a list of them): the base its next `legal_edit` applies to.
    legal_base: str | None = None
    # legal_base deflated while the room is idle (then legal_base is None), like `view`.
    packed_base: bytes | None = None


@dataclass(slots=True)
class Candidate:
    """A change computed but not yet persisted; adopted only after Redis accepted it.

    `seats` may be the room's own list when the change keeps every seat (a move): the
    room adopts it as it is, and nothing changes a room's seat list in place."""

    state: Any
    status: str
    seats: list[SeatState]
    outcome: dict[str, Any] | None
    actions: int
    deadline: float | None
    log_entry: dict[str, Any] | None = None
    snapshot: Any = None
    answered: frozenset[Seat] = NO_SEATS
    hidden: int = 0
    start_key: str = ""  # hash of the request key of the start, kept with the room


async def replay_data(
    store: Store, room_id: str, meta: dict[str, Any], outcome: dict[str, Any] | None
) -> dict[str, Any]:
    """The replay of a finished room, read from its stored action log."""
    entries = await store.read_log(room_id)
    return {
        "game": meta["game"],
        "rules": meta["rules"],
        "players": meta["players"],
        "options": meta["options"],
        "seed": meta["seed"],
        # An ending's log entry (server.endings) has no action; the outcome says how it ended.
        "actions": [{"seat": e["seat"], "action": e["action"], "ts": e["ts"]} for e in entries if "action" in e],
        "outcome": outcome,
    }
