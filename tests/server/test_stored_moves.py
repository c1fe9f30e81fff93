"""A plain move stores its log entry and nothing else (server.store's commit script):
the room hash keeps the version and action count of the room's last other write, and
a restore counts the entries past it. What Redis holds must still be the whole room,
for rooms stored before this layout too, and the commit's guards must hold for a move
as they do for any write: sent twice it is in once, settled as not applied it never
gets in, a fenced or stale writer writes nothing."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError as RedisConnectionError

from engines.base import GameError
from engines.registry import get_engine
from protocol.packer import packb
from server.commit_pipe import CommitPipe, _pack_python, pack
from server.metrics import Metrics
from server.room import Room
from server.seats import SeatState
from server.store import StaleWriteError, StorageUnavailable, Store, move_command, next_write_id
from tests.server.capture_transport import CaptureTransport
from tests.server.test_stored_fields import stored_as_live

pytestmark = pytest.mark.redis


async def stored(store: Store, room_id: str) -> tuple[dict[bytes, bytes], list[bytes]]:
    """The room's hash and its whole log, as Redis holds them."""
    return await store.redis.hgetall(store.k_room(room_id)), await store.redis.lrange(store.k_log(room_id), 0, -1)


async def test_a_move_appends_its_entry_only_and_the_room_restores_whole(redis_url, key_prefix) -> None:
    """A room stored by the previous layout (every write set the hash's version and
    action count) takes moves that leave its hash byte for byte as it was; every
    snapshot writes the hash again; after each move the stored room is the live one,
    and a room restored from it plays on to the same state."""
    engine = get_engine("giantslayer")
    store = Store(redis_url, key_prefix)
    try:
        meta = {"game": "giantslayer", "rules": engine.info.rules, "players": 2, "options": {}, "seed": 6,
                "private": False, "password": None, "created": 0.0}
        seats = [SeatState("a", "x" * 16).to_store(), SeatState("b", "y" * 16).to_store()]
        assert await store.create_room("moves1", meta, seats) == 1
        # The previous layout: the start, then two moves, each writing the whole hash.
        await store.commit("moves1", expected=0, version=1, fence=1, status="playing", seats=seats,
                           deadline=None, outcome=None, actions=0)
        state = engine.new_game(2, {}, 6)
        rng = random.Random(6)
        for actions in (1, 2):
            seat = sorted(engine.waiting_for(state))[0]
            text = rng.choice(engine.legal_notation(state, seat))
            state = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
            await store.commit("moves1", expected=actions, version=actions + 1, fence=1, status="playing",
                               seats=None, deadline=None, outcome=None, actions=actions,
                               log_entry={"v": actions + 1, "seat": seat, "action": text, "ts": 1.0})
        record = await store.load_room("moves1")
        assert record is not None and record.moves_in_log == 0 and record.version == 3
        room = Room.restore(record, engine, store, Metrics(), snapshot_every=5)
        hash_written = (await stored(store, "moves1"))[0]
        for _ in range(7):  # actions 3..9: a snapshot at the 5th
            seat = sorted(engine.waiting_for(room.state))[0]
            text = rng.choice(engine.legal_notation(room.state, seat))
            cand = room._candidate(
                state=engine.apply(room.state, seat, engine.parse_action(room.state, seat, text)).state,
                actions=room.actions + 1,
                log_entry={"v": room.version + 1, "seat": seat, "action": text, "ts": 2.0},
            )
            if cand.actions % room.snapshot_every == 0:
                cand.snapshot = engine.snapshot(cand.state)
            async with room.lock:
                await room._commit(cand)
            hash_now, log_now = await stored(store, "moves1")
            assert len(log_now) == room.actions
            if cand.snapshot is None:
                assert hash_now == hash_written  # the entry was all it wrote
                assert room.logged > 0
            else:
                assert int(hash_now[b"version"]) == room.version and int(hash_now[b"actions"]) == room.actions
                assert room.logged == 0
                hash_written = hash_now
            record = await store.load_room("moves1")
            stored_as_live(record, room)
            assert record is not None and record.moves_in_log == room.logged
        assert room.version == 10 and room.logged == 4
        again = Room.restore(record, engine, store, Metrics(), snapshot_every=5)
        assert engine.snapshot(again.state) == engine.snapshot(room.state)
        assert (again.version, again.actions, again.logged) == (10, 9, 4)
    finally:
        await store.close()


@dataclass
class Before:
    """A room's fields as stored (`Store.commit`'s `before`), for a room in play."""

    actions: int
    logged: int
    status: str = "playing"
    deadline: float | None = None
    outcome: dict[str, Any] | None = None
    answered: frozenset[int] = field(default_factory=frozenset)
    start_key: str = ""
    hidden: int = 0


async def test_a_move_sent_twice_is_in_once_settled_one_way_and_a_fenced_one_writes_nothing(
    redis_url, key_prefix
) -> None:
    """The commit script's guards for a plain move, as the store sends it."""
    store = Store(redis_url, key_prefix)
    # Every commit reaches Redis through its sender's `add` (a plain move as the RESP of
    # its EVALSHA, `move_command`; any other write as the command's tuple).
    submit = store._commits.add
    sent: list[Any] = []
    lose = ""  # "write": neither the write nor its reply arrives; "reply": only the reply is lost

    async def recording(command: Any) -> Any:
        sent.append(command)
        if lose == "write":
            raise RedisConnectionError("the write never arrived")
        result = await submit(command)
        if lose == "reply":
            raise RedisConnectionError("the reply was lost")
        return result

    store._commits.add = recording  # type: ignore[assignment,method-assign]

    async def move(version: int, fence: int = 1, logged: int | None = None, action: str = "") -> bool:
        """The move to `version` (one action per version after the start)."""
        actions = version - 1
        return await store.commit(
            "twice", expected=version - 1, version=version, fence=fence, status="playing", seats=None,
            deadline=None, outcome=None, actions=actions, answered=frozenset(),
            log_entry={"v": version, "seat": version % 2, "action": action or f"m{version}", "ts": 1.0},
            before=Before(actions=actions - 1, logged=version - 2 if logged is None else logged),
        )

    try:
        assert await store.create_room("twice", {"game": "x"}, [{}, {}]) == 1
        await store.commit("twice", expected=0, version=1, fence=1, status="playing", seats=None,
                           deadline=None, outcome=None, actions=0)
        assert await move(2) is True
        # The guards and the entry, nothing for the hash: EVALSHA, its sha, 2, two keys, five arguments.
        assert sent[-1].startswith(b"*10\r\n$7\r\nEVALSHA\r\n")
        assert int(await submit(sent[-1])) == 1  # the same move again: already in
        assert len((await stored(store, "twice"))[1]) == 1
        lose = "write"
        with pytest.raises(StorageUnavailable):  # settled: not applied, and never will be
            await move(3)
        lose = ""
        before = await stored(store, "twice")
        assert int(await submit(sent[-1])) == -4  # its copy arrives late: refused
        assert await stored(store, "twice") == before
        lose = "reply"
        assert await move(3) is True  # settled: applied
        lose = ""
        record = await store.load_room("twice")
        assert record is not None and (record.version, record.actions, record.moves_in_log) == (3, 2, 2)
        assert [e["v"] for e in record.log_tail] == [2, 3]
        # A writer whose count or hash version lags the room's is refused and leaves
        # nothing behind (its entry is taken out again).
        before = await stored(store, "twice")
        with pytest.raises(StaleWriteError):
            await move(3, action="another")
        with pytest.raises(StaleWriteError):
            await move(4, logged=1)
        assert await stored(store, "twice") == before
        fence = await store.acquire("twice")  # another node takes the room over
        before = await stored(store, "twice")
        with pytest.raises(StaleWriteError):
            await move(4)
        assert await stored(store, "twice") == before
        assert await move(4, fence=fence) is True
        record = await store.load_room("twice")
        assert record is not None and (record.version, record.actions) == (4, 3)
        assert [e["v"] for e in record.log_tail] == [2, 3, 4]
    finally:
        await store.close()


async def test_a_log_the_hash_does_not_account_for_is_refused_at_restore(redis_url, key_prefix) -> None:
    """The entries past the hash's count must be the versions after the hash's, one
    each: a log that lost or gained an entry is not restored as if nothing happened."""
    engine = get_engine("giantslayer")
    store = Store(redis_url, key_prefix)
    try:
        meta = {"game": "giantslayer", "rules": engine.info.rules, "players": 2, "options": {}, "seed": 2,
                "private": False, "password": None, "created": 0.0}
        assert await store.create_room("gap", meta, [{}, {}]) == 1
        await store.commit("gap", expected=0, version=1, fence=1, status="playing", seats=None,
                           deadline=None, outcome=None, actions=0)
        state = engine.new_game(2, {}, 2)
        for version in (2, 3):
            seat = sorted(engine.waiting_for(state))[0]
            text = engine.legal_notation(state, seat)[0]
            state = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
            await store.commit("gap", expected=version - 1, version=version, fence=1, status="playing",
                               seats=None, deadline=None, outcome=None, actions=version - 1, answered=frozenset(),
                               log_entry={"v": version, "seat": seat, "action": text, "ts": 1.0},
                               before=Before(actions=version - 2, logged=version - 2))
        record = await store.load_room("gap")
        assert record is not None and record.version == 3
        Room.restore(record, engine, store, Metrics(), snapshot_every=50)
        first = await store.redis.lpop(store.k_log("gap"))  # an entry lost
        record = await store.load_room("gap")
        assert record is not None
        with pytest.raises(GameError, match="not versions up to"):
            Room.restore(record, engine, store, Metrics(), snapshot_every=50)
        await store.redis.lpush(store.k_log("gap"), first)
        await store.redis.rpush(store.k_log("gap"), (await store.redis.lindex(store.k_log("gap"), -1)))  # one twice
        record = await store.load_room("gap")
        assert record is not None
        with pytest.raises(GameError, match="not versions up to"):
            Room.restore(record, engine, store, Metrics(), snapshot_every=50)
    finally:
        await store.close()


async def test_a_move_deadline_is_derived_from_the_move_and_restores_exactly(server_factory, client_factory) -> None:
    """In a room with a move deadline each move sets a new one (its time plus the
    seconds per move): the move still writes its log entry only, and the stored room,
    read back after every move and after the server stopped, has the live deadline to
    the bit."""
    server = await server_factory()
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer", deadline=600))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    live = server.lobby.rooms[room]
    store = server.store
    await alice.wait_for(lambda: live.status == "playing")
    hash_written = (await stored(store, room))[0]
    clients = {0: alice, 1: bob}
    rng = random.Random(4)
    deadlines = set()
    for _ in range(6):
        seat = live.to_act[0]
        action = rng.choice(live.engine.legal_notation(live.state, seat))
        version = (await clients[seat].ok("act", room=room, action=action))["version"]
        async with live.lock:
            assert live.version == version and live.logged > 0
            assert (await stored(store, room))[0] == hash_written  # the entry was all it wrote
            stored_as_live(await store.load_room(room), live)
            deadlines.add(live.deadline)
    assert len(deadlines) == 6 and None not in deadlines
    last = live.deadline
    await server.stop()
    again = await server_factory()
    restored = again.lobby.rooms[room]
    assert restored.deadline == last and restored.version == version and restored.logged == 6


@settings(max_examples=300, deadline=None)
@given(
    prefix=st.text(max_size=12).filter(lambda p: "{" not in p and "}" not in p),
    room_id=st.text(min_size=1, max_size=10),
    guards=st.tuples(st.integers(-5, 10**12), st.integers(0, 10**9), st.integers(1, 10**6)),
    wid=st.text(alphabet="0123456789abcdef", min_size=1, max_size=24),
    entry=st.one_of(st.binary(min_size=1, max_size=300), st.binary(min_size=1000, max_size=1100)),
    sha=st.sampled_from(["a" * 40, "0123456789abcdef0123456789abcdef01234567", "short"]),
)
def test_a_plain_moves_command_is_written_as_pack_writes_it(prefix, room_id, guards, wid, entry, sha) -> None:
    """`move_command` writes a plain move's EVALSHA in one piece: the bytes
    `commit_pipe.pack` makes of the command, or None (then the command is sent as it
    is) when a key is not ASCII, an argument 1 KiB or longer, or the sha not 40 digits."""
    keys = [f"{prefix}room:{{{room_id}}}", f"{prefix}room:{{{room_id}}}:log"]
    args = [*guards, wid, entry]
    written = move_command(sha, keys, args)
    if (prefix + room_id).isascii() and len(sha) == 40 and len(entry) < 1024:
        assert written == pack([("EVALSHA", sha, 2, *keys, *args)]) == _pack_python([("EVALSHA", sha, 2, *keys, *args)])
    else:
        assert written is None


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.text(max_size=12).filter(lambda p: "{" not in p and "}" not in p),
    room_ids=st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=3),
    # Below and past BULK_INTS (the guards' kept RESP), and a hash version below 0.
    guards=st.tuples(st.integers(0, 2100) | st.integers(0, 10**12), st.integers(0, 2100) | st.integers(0, 10**9),
                     st.integers(1, 2100) | st.integers(1, 10**6)),
    logged=st.integers(0, 60),
    actions=st.lists(st.one_of(st.text(max_size=40), st.text(min_size=1000, max_size=1100)), min_size=1, max_size=4),
    shas=st.lists(st.sampled_from(["a" * 40, "0123456789abcdef0123456789abcdef01234567", "short"]), min_size=1, max_size=2),
)
def test_the_bytes_a_plain_move_is_written_as_are_what_pack_makes_of_it(prefix, room_ids, guards, logged, actions,
                                                                         shas) -> None:
    """`Store.commit` writes a plain move's EVALSHA in one piece from the room's head it
    keeps (`move_head`) and the move's arguments: the same bytes `commit_pipe.pack`
    (and the plain Python packer) makes of the command, through moves of several rooms
    (the kept heads reused), a changed script sha (the heads made again), keys that are
    not ASCII and entries of 1 KiB or more (sent as the plain command)."""
    expected, count, fence = guards

    async def run() -> None:
        store = Store("redis://127.0.0.1:1/0", prefix=prefix)  # never connects: the pipe is ours
        pipe = CommitPipe(5.0)
        pipe.transport = capture = CaptureTransport()  # type: ignore[assignment]
        store._commits._pipe = pipe
        for turn, action in enumerate(actions):
            store._commit.sha = shas[turn % len(shas)]
            room_id = room_ids[turn % len(room_ids)]
            before = SimpleNamespace(status="playing", deadline=None, outcome=None, actions=count + turn,
                                     answered=frozenset(), start_key="", hidden=0, logged=logged)
            entry = {"v": expected + turn + 1, "seat": turn % 2, "action": action, "ts": 1.5 + turn}
            wid = next_write_id()
            with patch("server.store.next_write_id", lambda wid=wid: wid):
                task = asyncio.ensure_future(store.commit(
                    room_id, expected=expected + turn, version=expected + turn + 1, fence=fence, status="playing",
                    seats=None, deadline=None, outcome=None, actions=count + turn + 1, log_entry=entry,
                    answered=frozenset(), before=before))
                await asyncio.sleep(0)  # the commit waits for its reply
                await asyncio.sleep(0)  # the sender's flush wrote the batch
            pipe.data_received(b":1\r\n")
            assert await task is True  # a plain move
            command = ("EVALSHA", store._commit.sha, 2, store.k_room(room_id), store.k_log(room_id),
                       expected + turn - logged, count + turn, fence, wid, packb(entry))
            assert capture.written[-1] == pack([command]) == _pack_python([command])
            in_one_piece = bool(store._move_heads.get(room_id)) and len(command[-1]) < 1024
            assert in_one_piece == ((prefix + room_id).isascii() and len(store._commit.sha) == 40
                                    and len(command[-1]) < 1024)
            assert move_command(store._commit.sha, [command[3], command[4]], list(command[5:])) == (
                capture.written[-1] if in_one_piece else None)
        assert len(capture.written) == len(actions)

    asyncio.run(run())


async def test_every_commit_batch_is_told_to_the_metrics_hook(redis_url, key_prefix) -> None:
    """`Store.on_batch` (the /metrics commit count and latency) hears of each batch the
    commits leave in, with its size and its round trip."""
    store = Store(redis_url, key_prefix)
    heard: list[tuple[int, float]] = []
    store.on_batch = lambda size, seconds: heard.append((size, seconds))
    try:
        assert await store.create_room("hook", {"game": "x"}, [{}, {}]) == 1
        await store.commit("hook", expected=0, version=1, fence=1, status="playing", seats=None,
                           deadline=None, outcome=None, actions=0)
        assert len(heard) == 1 and heard[0][0] == 1 and 0 < heard[0][1] < 5
        await store.commit("hook", expected=1, version=2, fence=1, status="playing", seats=None, deadline=None,
                           outcome=None, actions=1, log_entry={"v": 2, "seat": 0, "action": "a", "ts": 1.0})
        assert [size for size, _ in heard] == [1, 1]
    finally:
        await store.close()


async def test_a_commit_redis_does_not_know_the_script_of_loads_it_and_is_stored(redis_url, key_prefix) -> None:
    """Redis answers NOSCRIPT (its script cache lost, as after a restart): the write is
    run again once the script is loaded, a plain move as any other, and stored once.
    (The store is pointed at a sha Redis never had: no shared script cache is flushed.)"""
    store = Store(redis_url, key_prefix)
    try:
        assert await store.create_room("noscript", {"game": "x"}, [{}, {}]) == 1
        real = store._commit.sha or ""
        store._commit.sha = "f" * 40
        await store.commit("noscript", expected=0, version=1, fence=1, status="playing", seats=None,
                           deadline=None, outcome=None, actions=0)
        assert store._commit.sha == real  # loaded again
        store._commit.sha = "f" * 40
        assert await store.commit("noscript", expected=1, version=2, fence=1, status="playing", seats=None,
                                  deadline=None, outcome=None, actions=1, answered=frozenset(),
                                  log_entry={"v": 2, "seat": 0, "action": "a", "ts": 1.0},
                                  before=Before(actions=0, logged=0)) is True
        record = await store.load_room("noscript")
        assert record is not None and (record.version, record.actions, record.moves_in_log) == (2, 1, 1)
    finally:
        await store.close()



# What may make a write other than a plain move, or a plain move not written in one
# piece: `test_a_commit_writes_what_the_general_path_makes_of_it` applies up to two.
_TWISTS = ["status", "deadline", "outcome", "answered", "start_key", "hidden", "no move", "two actions", "snapshot",
           "seats", "no before", "long entry", "no entry", "room not ascii", "long room", "not plain_moves",
           "ts not float", "no ts", "move deadline", "large guards", "logged"]


@settings(max_examples=400, deadline=None)
@given(twists=st.lists(st.sampled_from(_TWISTS), max_size=2), stored=st.sampled_from([0, 1]),
       guards=st.tuples(st.integers(0, 2047), st.integers(0, 2047), st.integers(1, 2047)),
       large=st.tuples(st.integers(2048, 10**9), st.integers(0, 10**9), st.integers(1, 10**6)),
       logged=st.integers(1, 60), move_seconds=st.sampled_from([0.0, 30.0]))
def test_a_commit_writes_what_the_general_path_makes_of_it(twists, stored, guards, large, logged,
                                                          move_seconds) -> None:
    """`Store.commit` writes a plain move from its own short path (the fields compared
    once, the command in one piece): every write, plain or not, is written as the bytes
    `commit_pipe.pack` makes of the command `_write_args` (the general path, any write)
    gives, and is told plain exactly when that path says so. Plain moves (in rooms with
    and without move deadlines), and each thing that makes a write something else or
    keeps its command from being written in one piece, alone and two together."""
    expected, count, fence = large if "large guards" in twists else guards
    fields = [{"status": "playing", "deadline": None, "outcome": None, "answered": frozenset(), "start_key": "",
               "hidden": 0},
              {"status": "playing", "deadline": 130.5, "outcome": {"draw_offer": 1}, "answered": frozenset({1}),
               "start_key": "k", "hidden": 2}][stored]
    write = dict(fields)
    changed = {"status": "finished", "deadline": 999.0, "outcome": {"winner": 0}, "answered": frozenset({0}),
               "start_key": "j", "hidden": 3}
    for name in set(twists) & set(changed):
        write[name] = changed[name]
    ts: Any = 100.5
    if "ts not float" in twists:
        ts = 100
    seconds = 30.0 if "move deadline" in twists else move_seconds
    if seconds and "deadline" not in twists:
        write["deadline"] = ts + seconds  # derived from the move: plain, when all else is
    log_entry: dict[str, Any] | None = {"v": expected + 1, "seat": 0, "ts": ts,
                                        "action": "x" * 1100 if "long entry" in twists else "c3-d4"}
    if "no ts" in twists:
        del log_entry["ts"]
    if "no entry" in twists:
        log_entry = None
    before = (None if "no before" in twists else
              SimpleNamespace(**fields, actions=count, logged=logged if "logged" in twists else 0))
    room_id = "é-12" if "room not ascii" in twists else "r" * 1100 if "long room" in twists else "AbCdEf12"
    more = 0 if "no move" in twists else 2 if "two actions" in twists else 1

    async def run() -> None:
        store = Store("redis://127.0.0.1:1/0", prefix="giants-test:")  # never connects: the pipe is ours
        store.plain_moves = "not plain_moves" not in twists
        store._commit.sha = "0123456789abcdef0123456789abcdef01234567"
        pipe = CommitPipe(5.0)
        pipe.transport = capture = CaptureTransport()  # type: ignore[assignment]
        store._commits._pipe = pipe
        store.mark_finished = lambda *_: asyncio.sleep(0)  # type: ignore[method-assign,assignment]  # a lobby index
        wid = next_write_id()
        arguments = (room_id, expected, expected + 1, fence, write["status"],
                     [{"name": "a"}] if "seats" in twists else None, write["deadline"], write["outcome"],
                     count + more, log_entry, {"s": 1} if "snapshot" in twists else None, 1.0, write["answered"],
                     write["start_key"], write["hidden"], before, seconds)
        args, keys, move, entry = store._write_args(*arguments[:11], *arguments[12:], wid)  # type: ignore[arg-type]
        with patch("server.store.next_write_id", lambda: wid):
            task = asyncio.ensure_future(store.commit(*arguments))  # type: ignore[arg-type]
            await asyncio.sleep(0)  # the commit waits for its reply
            await asyncio.sleep(0)  # the sender's flush wrote the batch
        pipe.data_received(b":1\r\n")
        assert await task is move
        # Plain unless a twist changes what is stored (a deadline not derived from the
        # move included); the guards, the entry's size and the keys only change how.
        harmless = {"large guards", "long entry", "room not ascii", "long room", "logged", "move deadline"}
        assert move == (set(twists) <= (harmless if seconds else harmless | {"ts not float", "no ts"}))
        command = ("EVALSHA", store._commit.sha, len(keys), *keys, *args)
        assert capture.written == [pack([command])] == [_pack_python([command])]
        assert entry == (b"" if log_entry is None else packb(log_entry))

    asyncio.run(run())
