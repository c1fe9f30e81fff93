"""One live room: engine state, seats, members; applies changes one at a time.

Every change (join, leave, start, action, timeout, a seat's connection coming or going)
runs under the room's lock and follows the same order: validate, apply in memory as
a candidate, persist to Redis (version-guarded, one round trip), adopt the candidate,
acknowledge the requester, then send each member a patch computed by filtering first
(its RoomView from `engine.view(state, seat)`) and diffing second (against the view it
last received). A failed persist leaves the room exactly as it was.

The write path itself is `server.room_storage` (`RoomStorage`), the deadline timer and
bots `server.room_tasks` (`RoomTasks`); the read side `server.views`, membership
`server.membership`, early endings `server.endings` — all mixins of `Room`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from engines.base import Engine, GameError, Seat
from engines.bots.base import Bot
from server import seat_bots
from server.endings import RoomEndings
from server.errors import RequestError
from server.limits import GuessLimiter
from server.membership import RoomMembership
from server.metrics import Metrics
from server.packing import PackedState, dictionaries, pack_state, unpack_state
from server.publish import RoomPublish
from server.room_storage import RoomStorage
from server.room_tasks import RoomTasks
from server.seats import NO_OUTPUT, NO_SEATS, Member, Output, Peer, SeatState
from server.store import (
    RoomRecord,
    Store,
)
from server.views import engine_facts

_NO_GUESSES = GuessLimiter()
NO_REPLACEMENTS: Mapping[Seat, int] = MappingProxyType({})  # rooms built without a lobby (tests, tools)

# Rooms' equal `options` dicts, kept once (a one-key dict is 184 B a room): read only,
# like all of `meta`. Bounded: options are the engines' validated few, but a node must
# not grow without end on whatever combinations clients choose.
_OPTIONS: dict[tuple[tuple[str, type, Any], ...], dict[str, Any]] = {}
_OPTIONS_MAX = 256


def _shared_options(options: dict[str, Any]) -> dict[str, Any]:
    try:
        # The types too: 1, 1.0 and True are equal keys but not the same option.
        key = tuple((name, type(value), value) for name, value in sorted(options.items()))
        found = _OPTIONS.get(key)
    except TypeError:  # an unhashable value (a list): keep the room's own
        return options
    if found is None:
        if len(_OPTIONS) >= _OPTIONS_MAX:
            return options
        found = _OPTIONS[key] = dict(options)
    return found


def lean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """The room's metadata as kept in memory: without what only its defaults say.

    Redis keeps it all; in memory a room without a password needs no "salt" (it only
    verifies old sha256 password hashes) and `autostart` is read with a default of
    True. Ten keys or fewer make a 272-byte dict instead of a 464-byte one. Equal
    `options` dicts are one object for all rooms (`_shared_options`).
    """
    lean = {
        key: value
        for key, value in meta.items()
        if not (key == "salt" and meta.get("password") is None) and not (key == "autostart" and value is True)
    }
    if isinstance(lean.get("options"), dict):
        lean["options"] = _shared_options(lean["options"])
    return lean


class RoomLock(asyncio.Lock):
    """`asyncio.Lock` that frees its waiter deque (~0.6 KiB) once nobody waits.

    asyncio makes the deque on the first contended acquire and keeps it for the lock's
    life; most rooms sit idle most of the time, so the room lets it go again.
    """

    _locked: bool  # asyncio.Lock's own flag (untyped there)

    async def __aenter__(self) -> None:
        # `acquire`'s own first test (free, nobody waiting) without its coroutine: a room's
        # lock is taken once a change, and almost always free.
        if not self._locked and not self._waiters:
            self._locked = True
            return
        await self.acquire()

    def release(self) -> None:
        waiters = self._waiters
        if self._locked and not waiters:  # nobody to wake up (`release` would find none)
            self._locked = False
            self._waiters = None
            return
        super().release()
        waiters = self._waiters
        if waiters is not None and not waiters:
            self._waiters = None


class Room(RoomStorage, RoomTasks, RoomPublish, RoomEndings, RoomMembership):
    """A live room. Create with `Room.create` or `Room.restore`; never share across nodes."""

    # Slots, not an instance dict: with this many attributes the dict alone was ~1.8 KiB
    # a room. A new attribute must be listed here (assigning it otherwise raises).
    __slots__ = (
        "_failures",
        "_hidden_sent",
        "_opened",
        "_recovering",
        "_rng",
        "_seats_seen",
        "_state",
        "_tasks",
        "_timer",
        "_timer_for",
        "actions",
        "answered",
        "bot_players",
        "bot_running",
        "bot_service",
        "closing",
        "compacted",
        "deadline",
        "draw_offer",
        "engine",
        "facts",
        "fence",
        "guesses",
        "hidden",
        "id",
        "life",
        "lock",
        "logged",
        "max_replacements",
        "members",
        "meta",
        "metrics",
        "on_change",
        "on_idle",
        "on_lost",
        "outcome",
        "output",
        "packed",
        "replacements",
        "seats",
        "snapshot_every",
        "start_key",
        "status",
        "store",
        "touched",
        "unsure",
        "version",
    )

    def __init__(
        self,
        room_id: str,
        engine: Engine,
        meta: dict[str, Any],
        state: Any,
        store: Store,
        metrics: Metrics,
        snapshot_every: int = 50,
    ) -> None:
        self.id = room_id
        self.engine = engine
        self.facts = engine_facts(engine)
        self.meta = lean_meta(meta)
        self._state: Any = state  # or a PackedState while idle: read it as `state`
        self.store = store
        self.metrics = metrics
        self.snapshot_every = max(1, snapshot_every)
        self.version = 0
        self.fence = 1
        self.status = "waiting"
        self.seats = [SeatState() for _ in range(meta["players"])]
        self.outcome: dict[str, Any] | None = None
        self.actions = 0
        self.deadline: float | None = None
        # Seats that already acted in the current simultaneous step. They stay in
        # to_act (a GIANTS bid may be replaced until the last one is in), so bots and
        # deadlines consult this to know who still has to answer.
        self.answered: frozenset[Seat] = NO_SEATS
        # Changes only their actor could see (GI-8: a replaced sealed bid). A new member's
        # version starts at version - hidden, so no snapshot counts them.
        self.hidden = 0
        # Plain moves stored since the last write of the room's hash (server.store: a
        # move appends its log entry only); the commit's guard needs it.
        self.logged = 0
        # Replacements each seat made in the current simultaneous step (bounded).
        # Shared and read-only until a seat replaces an action (copied then): most steps
        # have none, and an empty dict a room (and a new one each step) is memory and work.
        self.replacements: Mapping[Seat, int] = NO_REPLACEMENTS
        self.max_replacements = 20
        self.guesses = _NO_GUESSES  # the server's wrong-password limiter (set by the lobby)
        self._opened: set[str] | None = None  # sha256 of passwords verified (password rooms)
        # Set by the lobby: told after every stored change (server.lifecycle).
        self.on_change: Callable[[Any], None] | None = None
        self.life: dict[str, float] = {}  # lifecycle timestamps (server.lifecycle)
        self.draw_offer: Seat | None = None  # a seat's standing draw offer (server.endings)
        self.members: list[Member] = []
        self.touched = False  # sent something since the last idle sweep (server.views)
        self._seats_seen = None  # the room part's last seats entry (server.views)
        self._hidden_sent = None  # hidden information: the last change's views by seat (server.views)
        self.packed = False  # some member's last view is packed (server.views)
        self.compacted = False  # nothing sent since the views were last packed (server.views)
        self.lock = RoomLock()
        self.closing = False
        self.on_idle: Callable[[Room], None] | None = None  # lobby evicts finished rooms
        self.on_lost: Callable[[Room], None] | None = None  # another node owns it now
        self._timer: asyncio.TimerHandle | None = None
        self._timer_for = 0.0  # the deadline the pending `_timer` goes off for (server.room_tasks)
        self._tasks: set[asyncio.Task[None]] | None = None  # made by the first _spawn
        self._rng: random.Random | None = None  # 2.5 KiB: made when a bot first needs it
        # seat -> bot object, built on first use (None, not an empty dict, in rooms without one)
        self.bot_players: dict[Seat, Bot] | None = None
        self.bot_running = False
        self.bot_service = seat_bots.default_service()  # the lobby hands each room the server's
        self.output: Output = NO_OUTPUT  # the lobby hands each room the server (its flushes)
        # hash of the request key of the start (a retried start with it answers ok)
        self.start_key = ""
        # True after a write whose outcome stayed unknown: memory may lag Redis, so
        # the room reloads before its next write (the recovery task does it as soon
        # as Redis answers, then re-arms the deadline and the bots).
        self.unsure = False
        self._recovering = False
        self._failures = 0  # consecutive failed writes: spaces out recovery attempts

    @property
    def state(self) -> Any:
        """The engine state. While the room is idle it is kept packed (`compact`); the
        first read unpacks it, so every reader (moves, deadlines, bots, resyncs,
        snapshots, reloads, handovers) sees the real state, and a room whose state is
        in place pays one type test."""
        state = self._state
        if type(state) is PackedState:
            state = self._state = unpack_state(self.engine, state, dictionaries(self.engine, self.meta["players"]).state)
        return state

    @state.setter
    def state(self, value: Any) -> None:
        self._state = value

    def state_is_packed(self) -> bool:
        """Whether the engine state is packed now (tests, bench/room_memory.py)."""
        return type(self._state) is PackedState

    def compact(self, force: bool = False) -> bool:
        """The idle sweep's call (every `pack_after` seconds for every room): a room sent
        nothing since the previous call keeps its members' last views packed
        (`compact_views`) and its engine state too, as the engine's own snapshot
        (msgpack, deflated against a constant of the game: server.packing); True then.

        A busy room (sent something since, mid-change, or a bot thinking) is left as
        it is; an idle one pays one pack now and one unpack at its next read of
        `state` (any read: `state` is a property). `force` packs a room sent
        something lately too (tests); a room mid-change never is.

        A room nobody has acted in yet (waiting for players, or just started) is
        packed at any sweep's call after its last change, idle across a whole period
        or not, and the new-room sweep calls it every 0.5 s (Lobby.compact_new_rooms):
        it has no move rhythm to protect, and a burst of new rooms otherwise holds
        its unpacked views and states for 10-20 s, memory the process keeps after
        they are packed (memory per room, docs/performance.md). Its first action
        pays one unpack."""
        if not self.compact_views(force or self.actions == 0):
            return False
        state = self._state
        if type(state) is not PackedState and not self.bot_running:
            self._state = pack_state(self.engine, state, dictionaries(self.engine, self.meta["players"]).state)
        return True

    @property
    def rng(self) -> random.Random:
        """Randomness for server-run bots (fallback moves); made on first use."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    # -- construction ---------------------------------------------------------------

    @classmethod
    def restore(
        cls,
        record: RoomRecord,
        engine: Engine,
        store: Store,
        metrics: Metrics,
        snapshot_every: int,
    ) -> Room:
        """Rebuild a room from Redis: snapshot (or a new game) + the log tail replayed.

        Raises GameError if the stored log no longer replays or does not add up with
        the hash and the snapshot (the caller logs and skips the room; the data stays
        in Redis for inspection).
        """
        tail = record.log_tail
        if record.snapshot_n + len(tail) != record.actions:
            raise GameError(f"room {record.room_id}: log has {record.actions} actions, the snapshot counts {record.snapshot_n}")
        # The moves stored in the log only (after the hash's last write) carry the
        # versions after the hash's, one each: a log that lost or gained entries the
        # hash does not account for is refused.
        moved = record.moves_in_log
        versions = list(range(record.version - moved + 1, record.version + 1))
        if moved < 0 or moved > len(tail) or [e.get("v") for e in tail[len(tail) - moved:]] != versions:
            raise GameError(f"room {record.room_id}: the log's last {moved} entries are not versions up to {record.version}")
        meta = record.meta
        if record.snapshot_state is not None:
            state = engine.restore(record.snapshot_state)
        else:
            state = engine.new_game(meta["players"], meta["options"], meta["seed"])
        for entry in tail:
            if "action" not in entry:
                continue  # an ending (resign, abort, ...): no engine action (server.endings)
            action = engine.parse_action(state, entry["seat"], entry["action"])
            state = engine.apply(state, entry["seat"], action).state
        room = cls(record.room_id, engine, meta, state, store, metrics, snapshot_every)
        room.version = record.version
        room.fence = record.fence
        room.status = record.status
        room.seats = [SeatState.from_store(s) for s in record.seats]
        room.outcome = record.outcome
        room.actions = record.actions
        room.deadline = record.deadline
        room.answered = frozenset(record.answered)
        room.start_key = record.start_key
        room.hidden = record.hidden
        room.logged = record.moves_in_log
        return room

    def _step_after(self, seat: Seat, before: frozenset[Seat], after: frozenset[Seat]) -> frozenset[Seat] | None:
        """The answered set if `seat`'s action continues a simultaneous step, else None.

        The step continues while two or more seats are to act, no new seat joined, and
        someone has still not answered; once everyone answered, an unchanged to_act set
        is a new step (the engine resolved the old one).
        """
        if len(before) > 1 and len(after) > 1 and after <= before:
            answered = self.answered | {seat}
            if not after <= answered:
                return answered
        return None

    def pending(self) -> list[Seat]:
        """Seats to act that have not answered in this step (all of them if none left)."""
        to_act = self.to_act
        return [s for s in to_act if s not in self.answered] or to_act

    def _deadline_after(self, state: Any, status: str, continuing: bool, now: float | None = None) -> float | None:
        """Deadline for the step after a change: kept while a simultaneous step continues,
        else `now` (the change's log entry's timestamp: a stored plain move's deadline is
        derived from it, server.store) plus the room's seconds per move."""
        seconds = self.meta.get("deadline")
        if not seconds or status != "playing" or not self.engine.to_act(state):
            return None
        if continuing and self.deadline is not None:
            return self.deadline
        return (time.time() if now is None else now) + float(seconds)

    async def apply_action(
        self, seat: Seat, action: Any, extra: list[dict[str, Any]], to_act: frozenset[Seat] | None = None,
    ) -> list[dict[str, Any]]:
        """Apply, persist and adopt one engine action (caller holds the lock).

        `to_act` is `engine.to_act(state)` when the caller has it. Raises RequestError
        with the engine's code (illegal_action says why) or internal_error; returns the
        events to publish.
        """
        engine, state = self.engine, self._state  # `state` without its property's call
        if type(state) is PackedState:
            state = self.state
        try:
            transition = engine.apply(state, seat, action)
        except GameError as exc:
            raise RequestError(exc.code, exc.message) from exc
        notation = engine.format_action(state, action)
        new_state = transition.state
        result = engine.outcome(new_state)
        status = "finished" if result is not None else "playing"
        actions = self.actions + 1
        head: dict[str, Any] = {"type": "action", "seat": seat, "action": notation}
        hidden = False
        if self.facts.hidden:
            # What the other seats may learn of it (GIANTS: a sealed bid is "bid", a
            # replaced one nothing at all); views.publish strips this before sending.
            head["public"] = engine.public_action(state, seat, action)
            # Seen by its actor only (GI-8): it must not count anywhere public.
            hidden = head["public"] is None and not extra and not transition.events
        events = [head, *extra, *transition.events]
        if to_act is None:
            to_act = engine.to_act(state)
        # `_step_after` is None unless two seats or more were to act
        step = self._step_after(seat, to_act, engine.to_act(new_state)) if len(to_act) > 1 else None
        now = time.time()
        if result is not None:
            events.append({"type": "finished", "outcome": result.to_data()})
        replaced = seat in self.answered and step is not None
        # `_commit` of the Candidate these fields make, without building it (a move's cost)
        await self._commit_fields(
            new_state,
            status,
            self.seats,  # a move keeps every seat: the room's own list (nothing to store)
            result.to_data() if result is not None else None,
            actions,
            self._deadline_after(new_state, status, step is not None, now) if self.meta.get("deadline") else None,
            {"v": self.version + 1, "seat": seat, "action": notation, "ts": now},
            engine.snapshot(new_state) if actions % self.snapshot_every == 0 else None,
            step or NO_SEATS,
            self.hidden + 1 if hidden else self.hidden,
            self.start_key,
        )
        if not hidden:
            # Any move answers a draw offer, but not one nobody else can see (GI-8):
            # the offer vanishing from everyone's view would give the replacement away.
            self.draw_offer = None
        if step is None:
            self.replacements = NO_REPLACEMENTS  # the step is over: a new one starts afresh
        elif replaced:
            self.replacements = {**self.replacements, seat: self.replacements.get(seat, 0) + 1}
        if not hidden:
            applied, game = self.metrics.actions_applied, self.meta["game"]  # a plain dict (server.metrics)
            applied[game] = applied.get(game, 0) + 1
        if result is not None:
            self.metrics.rooms_finished[self.meta["game"], "rules"] += 1
        return events

    # -- requests: act here; joining, watching, leaving in server.membership ----------

    async def act(self, peer: Peer, req_id: Any, text: str, version: int | None) -> None:
        """Apply a seated member's action; reply ok {version} after it is persisted."""
        started = time.perf_counter()
        # `async with self.lock` without RoomLock's `__aenter__` and asyncio's `__aexit__`
        # coroutines (two a move): the same test, the same release.
        lock: RoomLock = self.lock  # type: ignore[assignment]  # what __init__ makes
        if lock._locked or lock._waiters:
            await lock.acquire()
        else:
            lock._locked = True
        try:
            for member in self.members:  # `_seated`'s checks when they pass; it raises their error
                if member.peer is peer:
                    seat = member.seat
                    break
            else:
                seat = None
            if seat is None or self.status != "playing" or self.closing:
                member, seat = self._seated(peer)  # the guard every seat request shares
            # Compare with what this member was last shown: in hidden-information games
            # a change another member cannot see sends it nothing and moves no version.
            if version is not None and version != member.version:
                raise RequestError(
                    "stale_version",
                    f"you acted on version {version} but the last one you were sent is {member.version}; resync",
                    {"version": member.version},
                )
            engine, state = self.engine, self._state  # `state` without its property's call
            if type(state) is PackedState:
                state = self.state
            to_act = engine.to_act(state)
            if seat not in to_act:
                raise RequestError("not_your_turn", f"seat {seat} is not to act now")
            if seat in self.answered and self.replacements.get(seat, 0) >= self.max_replacements:
                raise RequestError(
                    "too_many_changes",
                    f"you may change your action at most {self.max_replacements} times in one step",
                    {"limit": self.max_replacements},
                )
            try:
                action = engine.parse_action(state, seat, text)
            except GameError as exc:
                raise RequestError(exc.code, exc.message) from exc
            events = await self.apply_action(seat, action, [], to_act)
            output = self.output  # the reply and patches: written at the end, none scheduled (Output)
            held, output.flush_promised = output.flush_promised, True
            try:
                # `next_version(peer)`: this member's, unless it left meanwhile
                peer.send_ok_version(req_id, member.version + 1 if member in self.members else self.next_version(peer))
                self.publish(events)
                self._after_change()
            finally:
                output.flush_promised = held
                output.flush_now()
        finally:
            # `lock.release()` without its call when nobody waits (RoomLock.release's own
            # test; tests/server/test_room_lock.py checks act against `async with`)
            if lock._waiters:
                lock.release()
            else:
                lock._locked = False
                lock._waiters = None
        self.metrics.action_latency.observe(time.perf_counter() - started)
