"""`--workers N`: tell a relayed member that its room lives on a sibling worker (`moved`).

A connection that named no room in its URL (the lobby, a client creating then joining)
or whose room moved later (a graceful hand-over, a failover) lands on any worker and
is served through the relay when a sibling owns its room: every request and frame over
Redis, CPU on both workers. When this worker learns that all of a connection's rooms
are owned by one other node that this machine's gate can hand connections to (a
sibling: its hand-over socket is in our directory, server.handover), it sends the
connection one advisory, `{"type": "moved", "room": <one of them>}`. A client that
follows it opens a new connection naming that room (`?room=<id>`), is handed to the
owner, takes its seats and rooms back there and closes this one; one that ignores it
keeps being served through the relay (docs/protocol.md, "moved").

It is sent only to connections that said protocol 4 or later in `hello`; once per
owner per connection (the room moving on to yet another worker advises again); never
with `--workers 1` or between nodes of different machines (no hand-over there: a plain
load balancer picks the node and a hint cannot help); not when the connection's rooms
are spread over several nodes or one of them is local (one connection can be on one
worker only); not toward a sibling that lately failed to take a handed connection
(the client would only land here again).

    advisor = MoveAdvisor(handover.routes_to, relay.remotes, metrics.registry)
    advisor.consider(conn)   # after a join, watch, resume or leave, and when a room moves
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter

from server.relay_handles import RemoteRoom
from server.wire import MOVED_SINCE, encode

log = logging.getLogger("giants.moved")


class Advisable(Protocol):
    """A client connection of this node (server.connection.Connection), as advised."""

    id: str
    version: int  # what `hello` chose
    advised: str | None  # the node last advised, if any

    @property
    def rooms(self) -> Mapping[str, Any]: ...

    def push(self, frame: bytes) -> None: ...


class MoveAdvisor:
    """Decides and sends the `moved` advisories of one worker; see the module docstring."""

    def __init__(self, routes_to: Callable[[str], bool], remotes: Mapping[str, RemoteRoom],
                 registry: CollectorRegistry) -> None:
        self.routes_to = routes_to  # whether this machine's gate hands connections to that node
        self.remotes = remotes  # rooms owned elsewhere that local connections are in (server.relay)
        self.sent = Counter(
            "giants_moved_advised",
            "`moved` advisories sent: connections told that all their rooms live on one sibling worker.",
            registry=registry,
        )

    def owner(self, conn: Advisable) -> tuple[str, str] | None:
        """(the one node owning all of `conn`'s rooms, a room of them) when that node is
        another one; None if a room is local, the owners differ or one is unknown."""
        owner: str | None = None
        first = ""
        for room_id in conn.rooms:
            remote = self.remotes.get(room_id)
            if remote is None or remote.owner is None or (owner is not None and remote.owner != owner):
                return None
            if owner is None:
                owner, first = remote.owner, room_id
        return (owner, first) if owner is not None else None

    def consider(self, conn: Advisable) -> None:
        """Advise `conn` to reconnect at its rooms' owner if it should be (at most once
        per owner); cheap when it should not: called only when its rooms change."""
        if conn.version < MOVED_SINCE or not conn.rooms:
            return
        found = self.owner(conn)
        if found is None or found[0] == conn.advised:
            return
        owner, room = found
        if not self.routes_to(owner):
            return
        conn.advised = owner
        self.sent.inc()
        log.debug("advising connection %s to reconnect for room %s (owner %s)", conn.id, room, owner)
        conn.push(encode({"type": "moved", "room": room}))
