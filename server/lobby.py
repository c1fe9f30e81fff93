"""The rooms registry: create, find, list, restore on start, evict finished rooms.

The connection handler asks the lobby for a room by id (`get`), creates rooms through
it, and lists them; each Room then handles its own requests under its own lock.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import Counter
from typing import Any

from engines import registry
from engines.base import Engine, GameError
from protocol.messages import CreateRoom
from server import seat_bots
from server.errors import RequestError
from server.metrics import Metrics
from server.room import Room
from server.seats import SeatState, hash_secret, replay_data
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
    ) -> None:
        self.store = store
        self.bots = bots or seat_bots.default_service()
        self.metrics = metrics
        self.snapshot_every = snapshot_every
        self.max_rooms = max_rooms
        self.rooms: dict[str, Room] = {}
        self.loaded = False

    def _adopt(self, room: Room) -> Room:
        room.on_idle = self._evict
        room.bot_service = self.bots
        self.rooms[room.id] = room
        return room

    def _evict(self, room: Room) -> None:
        # A finished room nobody watches lives on in Redis only (replay reads it there).
        if self.rooms.get(room.id) is room and not room.members:
            del self.rooms[room.id]

    def counts(self) -> Counter[tuple[str, str]]:
        """Live rooms of this node by (status, game), for /metrics."""
        return Counter((room.status, room.meta["game"]) for room in self.rooms.values())

    # -- restore --------------------------------------------------------------------

    async def restore_all(self) -> int:
        """Load every unfinished room from Redis and take it over (bump its fence).

        Returns how many were restored; a room that fails to load is logged and left
        in Redis untouched for an operator to inspect.
        """
        restored = 0
        for room_id in await self.store.live_room_ids():
            try:
                record = await self.store.load_room(room_id)
                if record is None:
                    continue
                if record.status == "finished":
                    # Finished, but the node died before moving it out of rooms:live.
                    await self.store.mark_finished(room_id, time.time())
                    continue
                engine = registry.get_engine(record.meta["game"], record.meta["rules"])
                room = Room.restore(record, engine, self.store, self.metrics, self.snapshot_every)
                room.fence = await self.store.acquire(room_id)
            except Exception:
                log.exception("could not restore room %s", room_id)
                continue
            self._adopt(room)
            room.start_timers()
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
        deadline = msg.deadline
        if deadline is not None and not 0 < deadline <= 86_400:
            raise RequestError("bad_options", "deadline must be between 0 and 86400 seconds")
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
            if await self.store.create_room(room_id, meta, [s.to_store() for s in seats]):
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
        if include_finished:
            live = set(self.rooms)
            ids = [i for i in await self.store.finished_room_ids() if i not in live]
            for room_id, fields in await self.store.room_summaries_raw(ids):
                meta = unpack(fields["meta"])
                if meta["private"] or (game is not None and meta["game"] != game):
                    continue
                rooms.append(
                    {
                        "room": room_id,
                        "game": meta["game"],
                        "rules": meta["rules"],
                        "players": meta["players"],
                        "status": "finished",
                        "seats": [
                            {"seat": i, "name": s.get("name"), "connected": False, "bot": s.get("bot")}
                            for i, s in enumerate(unpack(fields["seats"]))
                        ],
                        "private": False,
                        "password": meta["password"] is not None,
                        "spectators": 0,
                        "created": meta["created"],
                    }
                )
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
        for room in list(self.rooms.values()):
            await room.close()
