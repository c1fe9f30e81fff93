"""This node's live rooms: create, find, list (all nodes), take over, hand over, evict.

The router asks the lobby for a local room by id (`find`), creates rooms through it
(a new room is owned by the node that received create_room), and lists them; each
Room then handles its own requests under its own lock. Ownership goes through the
node's leases (server.node): `take_over` acquires a room's lease (fence bump) and
restores it from Redis; `lost` drops a room another node took; `hand_over_all` gives
every room up on a graceful shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from engines import registry
from engines.base import Engine, GameError
from protocol.messages import CreateRoom
from server import seat_bots
from server.errors import RequestError
from server.metrics import Metrics
from server.node import Node
from server.room import Room
from server.seats import Peer, SeatState, hash_secret, replay_data
from server.store import Store, unpack

log = logging.getLogger("giants.lobby")

ROOM_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no look-alikes: easy to read out


def new_room_id() -> str:
    return "".join(secrets.choice(ROOM_ID_ALPHABET) for _ in range(8))


class Lobby:
    """Every live room of this node, by id."""

    def __init__(
        self,
        store: Store,
        metrics: Metrics,
        snapshot_every: int = 50,
        max_rooms: int = 10_000,
        bots: seat_bots.SeatBots | None = None,
        node: Node | None = None,
    ) -> None:
        self.store = store
        self.bots = bots or seat_bots.default_service()
        self.metrics = metrics
        self.snapshot_every = snapshot_every
        self.max_rooms = max_rooms
        self.node = node or Node(store, "standalone")
        self.rooms: dict[str, Room] = {}
        self.loaded = False
        self.closing = False  # shutting down: take nothing over
        # Set by the app to the relay: a room was taken over here / moved away from here.
        self.on_adopted: Callable[[str], Awaitable[None]] | None = None
        self.on_moved: Callable[[str, list[tuple[Peer, int | None]]], None] | None = None
        self._taking: dict[str, asyncio.Future[Room | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.default_deadline: float | None = None  # for rooms created without a deadline

    def _adopt(self, room: Room) -> Room:
        room.on_idle = self._evict
        room.bot_service = self.bots
        room.on_lost = self._room_lost
        self.rooms[room.id] = room
        self.node.own(room.id, room.fence)
        return room

    def _evict(self, room: Room) -> None:
        # A finished room nobody watches lives on in Redis only (replay reads it there).
        if self.rooms.get(room.id) is room and not room.members:
            del self.rooms[room.id]
            self._spawn(self.node.release(room.id))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- ownership --------------------------------------------------------------------

    async def take_over(self, room_id: str) -> Room | None:
        """Own the room if nobody holds its lease: fence bump, restore, timers, announce.

        None if another node holds it, it is not live, or it fails to restore (logged;
        the data stays in Redis for inspection). Concurrent calls share one attempt.
        """
        room = self.rooms.get(room_id)
        if room is not None or self.closing:
            return room
        pending = self._taking.get(room_id)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[Room | None] = asyncio.get_running_loop().create_future()
        self._taking[room_id] = fut
        try:
            room = await self._take_over(room_id)
            fut.set_result(room)
        except BaseException as exc:
            fut.set_result(None)
            if not isinstance(exc, Exception):
                raise
            log.exception("could not take room %s over", room_id)
            room = None
        finally:
            del self._taking[room_id]
        if room is not None and self.on_adopted is not None:
            await self.on_adopted(room_id)
        return room

    async def _take_over(self, room_id: str) -> Room | None:
        if len(self.rooms) >= self.max_rooms:
            return None
        fence = await self.node.acquire(room_id)
        if fence is None:
            return None
        try:
            record = await self.store.load_room(room_id)
            if record is None:
                await self.node.release(room_id)
                return None
            if record.status == "finished":
                # Finished, but its node died before moving it out of rooms:live.
                await self.store.mark_finished(room_id, time.time())
                await self.node.release(room_id)
                return None
            engine = registry.get_engine(record.meta["game"], record.meta["rules"])
            room = Room.restore(record, engine, self.store, self.metrics, self.snapshot_every)
        except Exception:
            # Keep the lease's TTL running out rather than releasing at once: other
            # nodes would only fail on the same data in a tight loop.
            log.exception("could not restore room %s", room_id)
            return None
        room.fence = fence
        self._adopt(room)
        room.start_timers()
        log.info("node %s took room %s over (fence %d)", self.node.id, room_id, fence)
        return room

    async def owner(self, room_id: str) -> str | None:
        """The node holding the room's lease (None: nobody; it may be taken over)."""
        return await self.node.owner(room_id)

    async def take_over_many(self, room_ids: list[str]) -> None:
        for room_id in room_ids:
            await self.take_over(room_id)

    async def lost(self, room_id: str) -> None:
        """The node's lease renewal found the room owned elsewhere: drop it here."""
        room = self.rooms.get(room_id)
        if room is not None:
            room.closing = True
            self._room_lost(room)

    def _room_lost(self, room: Room) -> None:
        """Another node owns the room now (fence moved on): stop it, move its members."""
        if self.rooms.get(room.id) is not room:
            return
        del self.rooms[room.id]
        self.node.disown(room.id)
        self.node.lost += 1
        self._spawn(room.close())
        members = [(m.peer, m.seat) for m in room.members]
        room.members = []
        if self.on_moved is not None:
            self.on_moved(room.id, members)

    async def hand_over_all(self, to: Callable[[str], Awaitable[None]] | None) -> int:
        """Graceful shutdown: stop each room after its in-flight change, release its
        lease and ask `to` (another node) to take it now. Returns how many moved."""
        self.closing = True
        while self._taking:  # a take-over under way finishes first, then is handed on
            await asyncio.sleep(0.01)
        moved = 0
        for room in list(self.rooms.values()):
            await room.close()  # waits for the in-flight change; then refuses new ones
            self.rooms.pop(room.id, None)
            if room.status == "finished":
                await self.node.release(room.id)
                continue
            await self.node.release(room.id)
            if to is not None:
                try:
                    await to(room.id)
                except Exception:
                    log.warning("room %s: hand-over message failed; its lease is free anyway", room.id)
            moved += 1
        return moved

    def counts(self) -> Counter[tuple[str, str]]:
        """Live rooms of this node by (status, game), for /metrics."""
        return Counter((room.status, room.meta["game"]) for room in self.rooms.values())

    # -- restore --------------------------------------------------------------------

    async def restore_all(self) -> int:
        """Take over every unfinished room no live node holds (restore from Redis).

        Rooms other nodes own stay theirs. Returns how many were restored; a room that
        fails to load is logged and left in Redis untouched for an operator to inspect.
        """
        restored = 0
        for room_id in await self.store.live_room_ids():
            if await self.take_over(room_id) is not None:
                restored += 1
        self.loaded = True
        log.info("restored %d room(s)", restored)
        return restored

    # -- requests -------------------------------------------------------------------

    def find(self, room_id: str) -> Room | None:
        """This node's live room `room_id`, or None (the router then asks the relay)."""
        return self.rooms.get(room_id)

    def get(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            raise RequestError("no_such_room", f"there is no live room {room_id!r}")
        return room

    async def create(self, msg: CreateRoom) -> Room:
        """Create a room from a create_room request; raises RequestError with the engine's code."""
        if len(self.rooms) >= self.max_rooms:
            raise RequestError("internal_error", "this server is at its room limit; try later")
        try:
            engine: Engine = registry.get_engine(msg.game, msg.rules)
            players = msg.players or engine.info.min_players
            options = engine.validate_options(players, msg.options or {})
        except GameError as exc:
            raise RequestError(exc.code, exc.message) from exc
        seats = [SeatState() for _ in range(players)]
        for key, bot in (msg.bots or {}).items():
            try:
                seat = int(key)
            except (TypeError, ValueError):
                raise RequestError("bad_options", f"bots: seat {key!r} is not a number") from None
            if not 0 <= seat < players:
                raise RequestError("bad_options", f"bots: seat {seat} is not in 0..{players - 1}")
            if not isinstance(bot, str):
                raise RequestError("bad_options", f"bots: seat {seat} needs a bot name")
            bot = seat_bots.check_spec(bot, engine.info.name, engine.info.rules, seat, players, options, self.bots.limits)
            seats[seat] = SeatState(f"bot:{bot.split(',')[0]}", None, bot)
        # No deadline given: the server's default (--default-deadline); 0 asks for none.
        deadline = msg.deadline if msg.deadline is not None else self.default_deadline
        if deadline is not None and not 0 <= deadline <= 86_400:
            raise RequestError("bad_options", "deadline must be between 0 and 86400 seconds")
        deadline = deadline or None
        password = msg.password
        salt = secrets.token_hex(8)
        seed = secrets.randbits(62)
        meta: dict[str, Any] = {
            "game": engine.info.name,
            "rules": engine.info.rules,
            "players": players,
            "options": options,
            "seed": seed,
            "private": msg.private,
            "password": hash_secret(password, salt) if password else None,
            "salt": salt,
            "created": time.time(),
            "deadline": deadline,
            "autostart": msg.autostart,
        }
        state = engine.new_game(players, options, seed)
        for _ in range(5):
            room_id = new_room_id()
            stored = [s.to_store() for s in seats]
            if await self.store.create_room(room_id, meta, stored, self.node.id, self.node.lease_ms):
                break
        else:
            raise RequestError("internal_error", "could not allocate a room id")
        room = Room(room_id, engine, meta, state, self.store, self.metrics, self.snapshot_every)
        room.seats = seats
        return self._adopt(room)

    async def list(self, game: str | None, include_finished: bool) -> list[dict[str, Any]]:
        rooms = [
            room.summary()
            for room in self.rooms.values()
            if not room.meta["private"] and (game is None or room.meta["game"] == game)
            and (include_finished or room.status != "finished")
        ]
        local = set(self.rooms)
        # Rooms other nodes own: read from their hashes in Redis (one pipeline).
        ids = [i for i in await self.store.live_room_ids() if i not in local]
        if include_finished:
            ids += [i for i in await self.store.finished_room_ids() if i not in local]
        for room_id, fields in await self.store.room_summaries_raw(ids):
            summary = stored_summary(room_id, fields)
            if summary is None or (game is not None and summary["game"] != game):
                continue
            if include_finished or summary["status"] != "finished":
                rooms.append(summary)
        return rooms

    async def replay(self, room_id: str) -> dict[str, Any]:
        """A finished room's replay, from memory or (after eviction/restart) from Redis."""
        room = self.rooms.get(room_id)
        if room is not None:
            return await room.replay()
        record = await self.store.load_room(room_id)
        if record is None:
            raise RequestError("no_such_room", f"there is no room {room_id!r}")
        if record.status != "finished":
            raise RequestError("not_finished", "replays are available once the game is over")
        return await replay_data(self.store, room_id, record.meta, record.outcome)

    async def close(self) -> None:
        self.closing = True
        for room in list(self.rooms.values()):
            await room.close()


def stored_summary(room_id: str, fields: dict[str, bytes]) -> dict[str, Any] | None:
    """A RoomSummary from a room's stored hash (rooms of other nodes, finished rooms);
    None for a private room. Connection flags are not stored: only bots show connected."""
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
    }
