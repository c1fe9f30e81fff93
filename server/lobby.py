"""This node's live rooms: create, find, list (all nodes), take over, hand over, evict.

The router asks the lobby for a local room by id (`find`), creates rooms through it
(a new room is owned by the node that received create_room), and lists them (the
listing source is `server.lobby_listing`, inherited; restore is `server.restore`); each
Room then handles its own requests under its own lock. Ownership goes through the
node's leases (server.node): `take_over` acquires a room's lease (fence bump) and
restores it from Redis; `lost` drops a room another node took; `hand_over_all` gives
every room up on a graceful shutdown.

Restore runs while the server already listens: `list_live` reads the ids first (so a
request for a room not restored yet waits for it), `restore_pending` then takes them
over a few at a time, retrying transient Redis failures with backoff. A room whose
stored log cannot be replayed is quarantined: logged, counted in /metrics, left in
Redis untouched, and answered with `storage_unavailable` (never `no_such_room`, which
would make clients forget it). Finished rooms are loaded on demand (read-only), so a
seat that missed the final move can resume and get the final snapshot.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from engines import registry
from engines.base import Engine, GameError
from protocol.messages import CreateRoom, is_room_id
from server import seat_bots
from server.cancellation import cancel_and_wait, checkpoint
from server.errors import RequestError
from server.lifecycle import Lifecycle
from server.limits import GuessLimiter
from server.lobby_listing import LobbyListing
from server.metrics import Metrics
from server.node import Node
from server.passwords import hash_password_async
from server.passwords import require as require_password
from server.restore import LobbyRestore, RestoreCollector
from server.room import Room
from server.seats import NO_OUTPUT, Output, Peer, SeatState, hash_secret, replay_data
from server.store import StorageUnavailable, Store, backoff_delays, is_transient

log = logging.getLogger("giants.lobby")

ROOM_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no look-alikes: easy to read out


ROOM_ID_LEN = 8


def new_room_id() -> str:
    return "".join(secrets.choice(ROOM_ID_ALPHABET) for _ in range(ROOM_ID_LEN))


def keyed_room_id(key: str, attempt: int) -> str:
    """The room id a create with request key `key` tries at `attempt`: the same on a
    retry, so a retried create finds the room its first attempt stored."""
    digest = int.from_bytes(hashlib.sha256(f"giants-create\0{key}\0{attempt}".encode()).digest()[:8], "big")
    chars = []
    for _ in range(ROOM_ID_LEN):
        digest, index = divmod(digest, len(ROOM_ID_ALPHABET))
        chars.append(ROOM_ID_ALPHABET[index])
    return "".join(chars)



T = TypeVar("T")


async def in_slices(items: list[T], budget: float) -> AsyncIterator[T]:
    """`items` one by one, letting the event loop run (moves, other rooms) after about
    `budget` seconds of the caller's work (checked every 8 items), so a pass over many
    rooms is many short turns of the loop instead of one long one."""
    clock = time.perf_counter
    end = clock() + budget
    for n, item in enumerate(items, 1):
        yield item
        if n % 8 == 0 and clock() > end:
            await asyncio.sleep(0)
            end = clock() + budget

class Lobby(LobbyListing, LobbyRestore):
    """Every live room of this node, by id."""

    def __init__(
        self,
        store: Store,
        metrics: Metrics,
        snapshot_every: int = 50,
        max_rooms: int = 10_000,
        bots: seat_bots.SeatBots | None = None,
        node: Node | None = None,
        max_replacements: int = 20,
    ) -> None:
        self.max_replacements = max_replacements
        # One bound method each, handed to every room: `room.on_idle = self._evict`
        # would make a new 64-byte method object per room.
        self._on_idle = self._evict
        self._on_lost = self._room_lost
        self._on_change: tuple[Lifecycle, Callable[[Any], None]] | None = None
        self.store = store
        self.bots = bots or seat_bots.default_service()
        self.metrics = metrics
        self.snapshot_every = snapshot_every
        self.max_rooms = max_rooms
        self.node = node or Node(store, "standalone")
        self.rooms: dict[str, Room] = {}
        self.fresh: set[Room] = set()  # rooms nobody has acted in yet (compact_new_rooms)
        self.creating = 0  # creations in flight: they count against max_rooms
        self.over_limit = 0  # rooms not taken over because this node was full
        # The live room ids of every node, sorted, read from Redis at most once per
        # listing.LIVE_IDS_SECONDS however many clients list (server.listing).
        self._listed: tuple[float, list[str]] = (0.0, [])
        self._listing: asyncio.Future[list[str]] | None = None
        self._adopted: list[str] = []  # rooms this node took since that read
        self.loaded = False  # every listed live room restored (or quarantined, or elsewhere)
        self.listed = asyncio.Event()  # the live ids are known (requests may wait on them)
        self.pending: dict[str, asyncio.Future[Room | None]] = {}  # listed, not restored yet
        self.quarantined: dict[str, str] = {}  # room id -> why it cannot be replayed
        self.restore_retries = 0  # transient failures retried during restore
        self.restore_concurrency = 8
        self._loading: dict[str, asyncio.Future[Room | None]] = {}  # finished rooms on demand
        metrics.registry.register(RestoreCollector(self))
        self.closing = False  # shutting down: take nothing over
        # Set by the app to the relay: a room was taken over here / moved away from here.
        self.on_adopted: Callable[[str], Awaitable[None]] | None = None
        self.on_moved: Callable[[str, list[tuple[Peer, int | None]]], None] | None = None
        self._taking: dict[str, asyncio.Future[Room | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.default_deadline: float | None = None  # for rooms created without a deadline
        self.lifecycle: Lifecycle | None = None  # set by the app: rooms that end
        self.guesses = GuessLimiter()  # wrong room passwords, per room (the app sets the limits)
        self.output: Output = NO_OUTPUT  # set by the app to the server: it writes the rooms' frames

    def _adopt(self, room: Room) -> Room:
        room.on_idle = self._on_idle
        room.bot_service = self.bots
        room.on_lost = self._on_lost
        room.max_replacements = self.max_replacements
        room.guesses = self.guesses
        room.output = self.output
        lifecycle = self.lifecycle
        if lifecycle is not None:
            if self._on_change is None or self._on_change[0] is not lifecycle:
                self._on_change = (lifecycle, lifecycle.changed)
            room.on_change = self._on_change[1]
            lifecycle.adopted(room)
        self.rooms[room.id] = room
        if room.actions == 0:
            self.fresh.add(room)
        self.node.own(room.id, room.fence)
        if room.logged and not self.store.plain_moves:
            self._spawn(room.write_hash())  # a live earlier node could not restore it as stored
        self._adopted.append(room.id)  # listed before the next read of the live ids
        if len(self._adopted) > 1000:
            self._listed = (0.0, [])  # read the ids again rather than grow this list
        return room

    def _evict(self, room: Room) -> None:
        # A finished room nobody watches lives on in Redis only (replay reads it there).
        if self.rooms.get(room.id) is room and not room.members:
            del self.rooms[room.id]
            if room.id in self.node.rooms:
                self._spawn(self.node.release(room.id))

    async def compact_idle_views(self, budget: float) -> int:
        """One pass of the idle sweep (the app runs it every `pack_after` seconds): rooms
        sent nothing since the previous pass keep their members' last views and their
        engine state packed (Room.compact). After about `budget` seconds of work it
        lets the loop run (moves, other rooms) before going on, so a pass over many
        rooms is many short turns. Returns how many rooms it compacted."""
        compacted = 0
        async for room in in_slices(list(self.rooms.values()), budget):
            if room.compact():
                compacted += 1
        return compacted

    async def compact_new_rooms(self, budget: float) -> int:
        """One pass of the new-room sweep (the app runs it every NEW_ROOM_SWEEP
        seconds): rooms nobody has acted in yet are packed at the first pass after
        their last change (Room.compact), not after `pack_after` like playing rooms.
        They have no move rhythm to protect (their first action pays one unpack), and
        a burst of new rooms would otherwise hold their unpacked views and states for
        10-20 s, memory the process keeps afterwards (docs/performance.md). A room
        leaves the set at its first action or when this node no longer holds it; the
        work is sliced like `compact_idle_views`. Returns how many rooms it packed."""
        compacted = 0
        fresh = self.fresh
        async for room in in_slices(list(fresh), budget):
            if room.actions or self.rooms.get(room.id) is not room:
                fresh.discard(room)
            elif room.compact():
                compacted += 1
        return compacted

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
        """Acquire, load and restore, retrying while Redis is away (acquire and load are
        redone together: a fence bumped by an attempt whose reply was lost is read back
        by the next one); a room that cannot be replayed is quarantined. None when
        this node holds `max_rooms` rooms (the slot is reserved before any await, so
        concurrent restores cannot overshoot it either)."""
        if len(self.rooms) + self.creating >= self.max_rooms:
            self.over_limit += 1
            return None
        self.creating += 1
        try:
            return await self._take_over_reserved(room_id)
        finally:
            self.creating -= 1

    async def _take_over_reserved(self, room_id: str) -> Room | None:
        delays = backoff_delays(float("inf"), first=0.1, cap=5.0)
        while True:
            checkpoint()  # a cancel lost in the last attempt (server.cancellation)
            try:
                fence = await self.node.acquire(room_id)
                if fence is None:
                    return None
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
                break
            except Exception as exc:
                if is_transient(exc) and not self.closing:
                    self.restore_retries += 1
                    log.warning("room %s: not readable yet (%r); retrying", room_id, exc)
                    await asyncio.sleep(next(delays))
                    continue
                # Keep the lease's TTL running out rather than releasing at once: other
                # nodes would only fail on the same data in a tight loop.
                log.error("room %s cannot be restored and is quarantined (left in Redis as it is): %r", room_id, exc)
                self.quarantined[room_id] = f"{type(exc).__name__}: {exc}"
                return None
        room.fence = fence
        self._adopt(room)
        room.start_timers()
        log.info("node %s took room %s over (fence %d)", self.node.id, room_id, fence)
        return room

    def write_hashes(self) -> None:
        """A node of an earlier version is live (`Node.on_earlier`): write the hash of
        every room here whose last moves are log entries only, so that node could take
        any of them over (a rollback); the writes run in the background."""
        for room in list(self.rooms.values()):
            if room.logged:
                self._spawn(room.write_hash())

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
        # Not a member whose join was refused with the room (its seat is not stored):
        # that join is run again at the new owner.
        members = [(m.peer, m.seat) for m in room.members if m.seat is None or room.seats[m.seat].taken]
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

    def counts_against_quota(self, room_id: str) -> bool:
        """Whether a room still counts against its creator's quota: live here, not finished."""
        room = self.rooms.get(room_id)
        return room is not None and room.status != "finished"

    def counts(self) -> Counter[tuple[str, str]]:
        """Live rooms of this node by (status, game), for /metrics."""
        return Counter((room.status, room.meta["game"]) for room in self.rooms.values())

    # -- requests -------------------------------------------------------------------

    def find(self, room_id: str) -> Room | None:
        """This node's live room `room_id` in memory, or None (no waiting: the relay)."""
        return self.rooms.get(room_id)

    def get(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            raise RequestError("no_such_room", f"there is no live room {room_id!r}")
        return room

    async def create(self, msg: CreateRoom) -> Room:
        """Create a room from a create_room request; raises RequestError with the engine's
        code, or `server_full` when this node holds `max_rooms` rooms (creations in
        flight included, so concurrent requests cannot overshoot the limit)."""
        if len(self.rooms) + self.creating >= self.max_rooms:
            raise RequestError("server_full", "this server has as many rooms as it may hold; try again later")
        self.creating += 1
        try:
            return await self._create(msg)
        finally:
            self.creating -= 1

    async def _create(self, msg: CreateRoom) -> Room:
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
            # scrypt with its own salt (server.passwords); "salt" stays for old rooms'
            # sha256 hashes, which still verify.
            "password": await hash_password_async(password) if password else None,
            "salt": salt,
            "created": time.time(),
            "deadline": deadline,
            "autostart": msg.autostart,
        }
        state = engine.new_game(players, options, seed)
        # With a request key the ids tried and the creation key are the same on every
        # retry: a create whose first attempt was stored finds that room (result 2).
        ckey = hash_secret(msg.key, "create:") if msg.key else secrets.token_hex(16)
        stored = [s.to_store() for s in seats]
        for attempt in range(5):
            room_id = keyed_room_id(msg.key, attempt) if msg.key else new_room_id()
            try:
                result = await self.store.create_room(
                    room_id, meta, stored, self.node.id, self.node.lease_ms, ckey=ckey
                )
            except StorageUnavailable as exc:
                raise RequestError(
                    "storage_unavailable",
                    "storage is unreachable; the room may or may not exist: retry with the same key",
                    {"outcome": "unknown"},
                ) from exc
            if result == 2:
                existing = await self.open(room_id)
                if existing is None:
                    raise RequestError("storage_unavailable", f"room {room_id} exists but cannot be loaded now; try again")
                return existing
            if result == 1:
                break
        else:
            raise RequestError("internal_error", "could not allocate a room id")
        room = Room(room_id, engine, meta, state, self.store, self.metrics, self.snapshot_every)
        room.seats = seats
        return self._adopt(room)

    async def replay(self, room_id: str, password: str | None = None) -> dict[str, Any]:
        """A finished room's replay, from memory or (after eviction/restart) from Redis;
        a password room's needs its password (bad_password, too_many_guesses)."""
        if not is_room_id(room_id):
            raise RequestError("no_such_room", f"there is no room {room_id!r}")
        room = self.rooms.get(room_id)
        if room is not None:
            return await room.replay(password)
        record = await self.store.load_room(room_id)
        if record is None:
            raise RequestError("no_such_room", f"there is no room {room_id!r}")
        meta = record.meta
        await require_password(password, meta["password"], meta.get("salt", ""), self.guesses, f"room:{room_id}", set())
        if record.status != "finished":
            raise RequestError("not_finished", "replays are available once the game is over")
        return await replay_data(self.store, room_id, record.meta, record.outcome)

    async def stop_tasks(self) -> None:
        """Shutdown, after the hand-over: end every task this lobby and its rooms still
        run, and return once they have ended."""
        self.closing = True
        for room in list(self.rooms.values()):
            await room.stop_tasks()
        await cancel_and_wait(list(self._tasks))

    async def close(self) -> None:
        self.closing = True
        for room in list(self.rooms.values()):
            await room.close()
