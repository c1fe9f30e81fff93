"""Instructions per move of the room's own work, in-process and deterministic (callgrind).

`bench/server.py --callgrind` counts the whole server, but with games ending at random
points of its 20 s window and batching that depends on the machine its figure moves by
±3%: more than most single steps of the hot path. This runs the same code without
sockets or Redis, the same moves every time, so two runs of a revision agree to 0.1%:

- `room` (default): `Room.act` end to end — the seat guard, parse, apply, the
  candidate, `_commit` with a store that answers at once, the lifecycle left out —
  then `publish` to two seats and a spectator (protocol 3; frames are encoded, not
  sent), over scripted random games played out before measuring (in a child process: no
  engine table of parsed notation starts out holding the measured moves), new rooms made
  (snapshots included, equal views shared as the members' joins leave them:
  `share_equal_view`; until session 21 each member kept its own copy, so each room's
  first move diffed three old views) as games end.
- `request`: `decode_client` of an `act` frame (unpacked, checked, validated).
- `handle`: `Connection.handle` of the same frame (the frame budget's charge, the
  decode, the dispatch) up to a stub room's `act`, which returns at once.
- `receive`: the bytes of a masked client `act` frame fed to a real websockets
  `ServerConnection`'s `data_received` (websockets' parser, the hand-over to the
  connection's task, its wake-up) through `Connection.run` (awaited two coroutines down
  in the handler's task, as websockets' handler and the server's await it) and `handle` to a stub room's
  `act`, one loop turn per frame, each frame handed over by a callback of the loop (as
  a socket's would be); the asyncio loop's turns count too (`--loop`).
- `output`: what a Giantslayer move's frames cost in `Connection.push` and `flush` (the
  room part's peers keep nothing): the actor's `ok` (20 bytes) and patch with its
  legal list (300), two more patches (111), each connection flushed once, websockets'
  own `ServerConnection` on a transport that keeps nothing; through the server's own flush scheduling
  (since session 22: the pushes under `Room.act`'s hold, `GiantsServer.flush_promised`
  set, so each connection's first push appends it to `dirty`, no `schedule_flush`
  call, and the hold's `flush_now` writes them; then the actor's handler's
  `flush_now`, which finds nothing left. Until session 22 no hold: the first push's
  `schedule_flush` made a `call_soon`, and the scheduled `_flush` at the end of the
  turn found nothing left, called here as the loop would, the loop's dispatch of it
  and the extra turn of the loop it made not counted: ~580 instructions a turn under
  uvloop, and an `epoll_pwait` system call). Runs in a loop (`--loop`) that never
  turns while counting.
- `commit`: `Store.commit` through `GroupSender` and `CommitPipe` (the arguments, the
  RESP packing, one reply parsed and resolved), on a transport that keeps nothing; the
  asyncio loop's turns count too, and so does the /metrics hook told of each batch
  answered (`Metrics.observe_batch`, as server.app installs it). Each commit runs in a task of its own, with two
  `asyncio.sleep(0)` turns of the measuring coroutine: about 46,000 instructions of the
  figure under uvloop are that scaffolding (a task made, stepped and awaited, two extra
  turns), not the commit.
- `commit-awaited`: the same commits as the server makes them, awaited by one
  long-lived task (the act's) with no task or turn of the bench's own: the commit,
  the sender's flush at the end of the turn, the reply read in the next turn (the
  transport hands it back with `call_soon`, as a socket's reading callback would) and
  the task's wake-up; so three loop turns a commit, each of them counted in full,
  where a loaded server shares its turns with other work.

    python bench/move_instructions.py                 # room path, Giantslayer, 400 moves
    python bench/move_instructions.py --game tara --moves 300
    python bench/move_instructions.py --game causeway --rules spellstone
    python bench/move_instructions.py --game tara --deadline 30 --loop uvloop   # rooms with a move deadline
    python bench/move_instructions.py --part commit --moves 2000
    python bench/move_instructions.py --part commit --moves 2000 --loop uvloop   # the server's loop
    python bench/move_instructions.py --part commit-awaited --moves 2000 --loop uvloop
    python bench/move_instructions.py --part request --moves 5000
    python bench/move_instructions.py --part handle --moves 5000
    python bench/move_instructions.py --part output --moves 5000
    python bench/move_instructions.py --part receive --moves 5000 --loop uvloop

Compare revisions by running it from each checkout with the same arguments. The
measured run has PYTHONHASHSEED=0 unless the environment sets it: with str hashes
randomised, the request, handle and output parts moved by 1-1.5% between runs (dict and
set probes); with a fixed seed two runs agree exactly.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.registry import get_engine
from protocol.codec import decode_client, encode
from protocol.packer import ok_version
from server.commit_pipe import CommitPipe
from server.metrics import Metrics
from server.room import Room
from server.seats import Member, SeatState
from server.store import Store

WARMUP = 100  # moves (or commits) before counting starts


class Peer:
    def __init__(self) -> None:
        self.name, self.protocol, self.frames = "p", 3, 0

    def push(self, frame: bytes) -> None:
        self.frames += 1

    def send_ok(self, req_id: Any, data: dict[str, Any]) -> None:
        self.push(encode({"type": "ok", "id": req_id, "data": data}))

    def send_ok_version(self, req_id: Any, version: int) -> None:  # what Connection's does
        self.push(ok_version(req_id, version))


class AnsweringStore:
    # Store.commit's own parameters, so the room's call binds them as it binds the real
    # one's (a `*args` or `**fields` catch-all would count a tuple or dict instead).
    async def commit(self, room_id: str, expected: int, version: int, fence: int, status: str, seats: Any,
                     deadline: Any, outcome: Any, actions: int, log_entry: Any = None, snapshot: Any = None,
                     now: float = 0.0, answered: Any = (), start_key: str = "", hidden: int = 0,
                     before: Any = None, move_seconds: float = 0.0) -> None:
        return None


def count_on() -> None:
    if os.environ.get("MOVE_INSTRUCTIONS_CG"):
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)


def count_off() -> None:
    """Stop counting once the measured loop ends: the interpreter's shutdown is no part
    of a move (counted until session 13: ~27 million instructions a run, ~68,000 of a
    400-move room figure)."""
    if os.environ.get("MOVE_INSTRUCTIONS_CG"):
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)


def server_gc() -> None:
    """The cyclic collector as the server runs it once restored (server.app): what exists
    now frozen, collections rarer. Every part calls it once its set-up is done: under
    the default thresholds, objects a part keeps on purpose (the output part's flush
    callbacks, scheduled on a loop that never turns while counting) made the collector
    run full passes over the process's heap, ~4,800 instructions a move of the output
    part that the server, its callbacks run and freed every turn, never pays."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def make_scripts(game: str, rules: str | None) -> list[list[tuple[int, str]]]:
    """The games' actions: 60 random games played out."""
    engine = get_engine(game, rules)
    rng = random.Random(5)
    scripts: list[list[tuple[int, str]]] = []
    for seed in range(60):
        state, acts = engine.new_game(2, {}, seed), []
        while engine.outcome(state) is None:
            seat = sorted(engine.waiting_for(state))[0]  # not a seat that already sent its bid
            text = rng.choice(engine.legal_notation(state, seat))
            acts.append((seat, text))
            state = engine.apply(state, seat, engine.parse_action(state, seat, text)).state
        scripts.append(acts)
    return scripts


def room_part(moves: int, game: str, rules: str | None = None, deadline: float | None = None,
              loop: str = "asyncio") -> None:
    if deadline:  # the room arms its deadline's timer on the running loop: run the moves inside one
        if loop == "uvloop":
            import uvloop
            uvloop.install()

        async def inside_loop() -> None:
            room_moves(moves, game, rules, deadline)

        asyncio.run(inside_loop())
    else:
        room_moves(moves, game, rules, None)


def room_moves(moves: int, game: str, rules: str | None, deadline: float | None) -> None:
    engine = get_engine(game, rules)
    # Chosen before counting, in another process: playing them out here would leave
    # the engines' bounded tables (parsed notation) holding every move measured below.
    out = subprocess.run([sys.executable, __file__, "--scripts", "--game", game, *(["--rules", rules] if rules else [])],
                         capture_output=True, text=True, check=True).stdout
    scripts = [[(int(seat), str(text)) for seat, text in acts] for acts in json.loads(out)]
    metrics = Metrics()

    def new_room(seed: int) -> tuple[Room, list[Peer]]:
        meta = {"game": engine.info.name, "rules": engine.info.rules, "players": 2, "options": {}, "seed": seed,
                "private": False, "password": None, "created": 0.0, "deadline": deadline}
        room = Room(f"room{seed}", engine, meta, engine.new_game(2, {}, seed), AnsweringStore(), metrics)  # type: ignore[arg-type]
        room.seats = [SeatState(f"n{s}", f"t{s}") for s in range(2)]
        room.status = "playing"
        peers = [Peer(), Peer(), Peer()]
        room.members = [Member(peers[0], 0), Member(peers[1], 1), Member(peers[2], None)]
        for member in room.members:
            room.send_snapshot(member)
            # as a join or a watch does once the others are told (server.membership): members
            # whose views are equal hold one object, so a room's first move diffs one old view
            room.share_equal_view(member)
        return room, peers

    server_gc()
    games, room, peers = 0, *new_room(0)
    for done in range(moves + WARMUP):
        if done == WARMUP:
            count_on()
        while room.status != "playing":
            games += 1
            room, peers = new_room(games % len(scripts))
        seat, text = scripts[games % len(scripts)][room.actions]
        act = room.act(peers[seat], 0, text, room.members[seat].version)  # type: ignore[arg-type]
        try:
            act.send(None)  # nothing waits: the lock is free and the store answers at once
        except StopIteration:
            continue
        raise RuntimeError("Room.act waited")
    count_off()


class Transport:
    def write(self, data: bytes) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


class AnsweringTransport(Transport):
    """Answers each write (one commit) with `:1` in the next turn of the loop, as a
    socket's reading callback would be called once Redis replied."""

    pipe: CommitPipe

    def write(self, data: bytes) -> None:
        asyncio.get_running_loop().call_soon(self.pipe.data_received, b":1\r\n")


class Stored:
    """A room's fields as stored, read as `Store.commit` reads the room's (`Room`'s
    attributes are slots, reads the interpreter specialises; a SimpleNamespace's, the
    bench's until session 21, are generic look-ups: ~2,900 instructions a commit)."""

    __slots__ = ("actions", "answered", "deadline", "hidden", "logged", "outcome", "start_key", "status")

    def __init__(self) -> None:
        self.status, self.deadline, self.outcome, self.actions = "playing", None, None, 0
        self.answered, self.start_key, self.hidden, self.logged = frozenset(), "", 0, 0


async def commit_part(commits: int, awaited: bool = False) -> None:
    store = Store("redis://127.0.0.1:1/0", prefix="giants-bench:123:")  # never connects
    pipe = CommitPipe(5.0)
    pipe.transport = Transport()  # type: ignore[assignment]
    if awaited:
        answering = AnsweringTransport()
        answering.pipe = pipe
        pipe.transport = answering  # type: ignore[assignment]
    store._commits._pipe = pipe
    store._commit.sha = "0" * 40
    store.on_batch = Metrics().observe_batch  # as server.app installs it: /metrics counts each batch
    now = time.time()
    # As the room does: its fields as stored (its commit sends changed fields only)
    before = Stored()
    server_gc()
    for i in range(commits + WARMUP):
        before.actions = i
        before.logged = i % 50  # plain moves since the last snapshot (log-only revisions)
        if i == WARMUP:
            count_on()
        # As `RoomStorage._commit_fields` calls it: by position (no keyword or `**` dict)
        commit = store.commit("AbCdEf12", i, i + 1, 1, "playing", None, None, None, i + 1,
                              {"v": i + 1, "seat": i % 2, "action": "c3-d4", "ts": now}, None, 0.0,
                              frozenset(), "", 0, before, 0.0)  # type: ignore[arg-type]
        if awaited:  # in the act's own task
            await commit
            continue
        task = asyncio.ensure_future(commit)
        await asyncio.sleep(0)  # the task runs up to its wait
        await asyncio.sleep(0)  # the sender's flush writes the batch
        pipe.data_received(b":1\r\n")
        await task
    count_off()


def request_part(requests: int) -> None:
    frame = encode({"type": "act", "id": 12345, "room": "AbCdEfGh12", "action": "c3-d4", "version": 17})
    server_gc()
    for i in range(requests + WARMUP):
        if i == WARMUP:
            count_on()
        decode_client(frame)
    count_off()


class Host:
    """What the request and receive parts' connection reads of its server (the
    server's own is a class of plain attributes: its reads specialised, not a
    SimpleNamespace's generic look-ups); frames sent are not written."""

    def __init__(self, config: Any) -> None:
        self.config, self.metrics, self.router, self.shutting_down = config, Metrics(), None, False
        self.dirty: list[Any] = []
        self.flush_promised = False  # Host's (since session 22)

    def flush_now(self) -> None:
        pass

    def schedule_flush(self, conn: Any) -> None:
        pass


def handle_part(requests: int) -> None:
    from server.config import Config
    from server.connection import Connection

    class StubRoom:
        id = "AbCdEfGh12"

        async def act(self, conn: Any, req_id: Any, action: str, version: int | None) -> None:
            return None

    server = Host(Config())
    conn = Connection(SimpleNamespace(request=None, response=None), server)  # type: ignore[arg-type]
    conn.session = "s"
    conn.rooms[StubRoom.id] = StubRoom()  # type: ignore[assignment]
    conn.budget.bucket.rate = 1e12  # never out of tokens
    frame = encode({"type": "act", "id": 12345, "room": StubRoom.id, "action": "c3-d4", "version": 17})
    server_gc()
    for i in range(requests + WARMUP):
        if i == WARMUP:
            count_on()
        try:
            conn.handle(frame).send(None)
        except StopIteration:
            continue
        raise RuntimeError("Connection.handle waited")
    count_off()
    if server.metrics.errors:
        raise RuntimeError(f"errors: {dict(server.metrics.errors)}")


async def receive_part(requests: int) -> None:
    from websockets.asyncio.server import ServerConnection
    from websockets.frames import Frame, Opcode
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    from server.config import Config
    from server.connection import Connection

    acts = 0

    class StubRoom:
        id = "AbCdEfGh12"

        async def act(self, conn: Any, req_id: Any, action: str, version: int | None) -> None:
            nonlocal acts
            acts += 1

        async def leave(self, conn: Any, explicit: bool) -> None:
            pass

    class ReadTransport(Transport):  # what websockets' connection calls on its transport
        protocol: Any = None  # what data_received is called on

        def set_protocol(self, protocol: Any) -> None:
            self.protocol = protocol

        def pause_reading(self) -> None:
            raise RuntimeError("paused")

        def resume_reading(self) -> None:
            pass

        def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
            pass

        def get_write_buffer_size(self) -> int:
            return 0

    config = Config()
    protocol = ServerProtocol(max_size=config.hard_max_frame)
    protocol.receive_data(b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    request = protocol.events_received()[0]
    protocol.send_response(protocol.accept(request))  # the handshake is over: frames are parsed from now on
    protocol.data_to_send()
    assert protocol.state is State.OPEN
    ws = ServerConnection(protocol, None, ping_interval=None, ping_timeout=None, max_queue=64)  # type: ignore[arg-type]
    transport = ReadTransport()
    transport.protocol = ws
    super(ServerConnection, ws).connection_made(transport)  # type: ignore[arg-type]  # the connection's task below
    ws.request = request  # type: ignore[assignment]
    server = Host(config)
    conn = Connection(ws, server)  # type: ignore[arg-type]
    conn.session = "s"
    conn.rooms[StubRoom.id] = StubRoom()  # type: ignore[assignment]
    conn.budget.bucket.rate = 1e12  # never out of tokens
    payload = encode({"type": "act", "id": 12345, "room": StubRoom.id, "action": "c3-d4", "version": 17})
    frame = Frame(Opcode.BINARY, payload).serialize(mask=True)  # a client's frame is masked (any mask costs the same)
    async def server_handler() -> None:  # GiantsServer._handler: `await conn.run()`
        await conn.run()

    async def websockets_handler() -> None:  # websockets' conn_handler: `await handler(connection)`
        await server_handler()

    # As the server runs it: `run` two coroutines down in websockets' handler task (until
    # session 22 the bench's task ran `run` itself, a frame's wake-up two levels shorter).
    task = asyncio.ensure_future(websockets_handler())
    await asyncio.sleep(0)  # the task runs up to its first read
    server_gc()
    # Each frame handed over by a plain callback of the loop, as a socket's reading
    # callback hands its bytes over (uvloop calls `data_received` from C), not from a
    # coroutine of the bench's own: its task's step and `sleep(0)` each turn were
    # ~3,450 instructions of this part's figure until session 21.
    loop = asyncio.get_running_loop()
    finished = loop.create_future()
    fed = 0

    def feed() -> None:
        nonlocal fed
        if fed == WARMUP:
            count_on()
        if fed == requests + WARMUP:
            count_off()
            finished.set_result(None)
            return
        fed += 1
        transport.protocol.data_received(frame)
        loop.call_soon(feed)  # the next frame in the next turn, after the connection's task handled this one

    loop.call_soon(feed)
    await finished
    if acts != requests + WARMUP or server.metrics.errors or task.done():
        raise RuntimeError(f"{acts} acts, errors: {dict(server.metrics.errors)}")
    task.cancel()


async def output_part(moves: int) -> None:
    from websockets.asyncio.server import ServerConnection
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    from server.app import GiantsServer
    from server.config import Config
    from server.connection import Connection

    class WriteTransport(Transport):  # what websockets' connection and `push`/`flush` call
        def get_write_buffer_size(self) -> int:
            return 0

        def pause_reading(self) -> None:
            pass

        def resume_reading(self) -> None:
            pass

        def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
            pass

    def open_connection() -> ServerConnection:
        """websockets' own connection (a class of Python attributes, read as the
        server's are: not a SimpleNamespace's, whose reads the interpreter does not
        specialise), its sans-I/O protocol open, on a transport that keeps nothing."""
        protocol = ServerProtocol()
        protocol.state = State.OPEN  # a property
        ws = ServerConnection(protocol, None, ping_interval=None, ping_timeout=None)  # type: ignore[arg-type]
        super(ServerConnection, ws).connection_made(WriteTransport())  # type: ignore[arg-type]
        return ws

    from server import seats

    # Until session 22 a room's act held no flush (its pushes scheduled one): the same
    # file measures both trees.
    holding = hasattr(seats, "Output")

    class Server:  # the server's flush scheduling, as GiantsServer has it
        schedule_flush = GiantsServer.schedule_flush
        flush_now = GiantsServer.flush_now
        _flush = GiantsServer._flush
        _write = staticmethod(GiantsServer._write)

        def __init__(self) -> None:
            self.config, self.metrics, self.router = Config(), Metrics(), None
            self.dirty: list[Any] = []
            self._flush_scheduled = self.flush_promised = False  # until session 22, since
            self._flush_soon = self._flush

    server = Server()
    conns = []
    for _ in range(3):
        conns.append(Connection(open_connection(), server))  # type: ignore[arg-type]
    ok, legal, patch = b"o" * 20, b"l" * 300, b"p" * 111
    server_gc()
    for i in range(moves + WARMUP):
        if i == WARMUP:
            count_on()
        if holding:  # Room.act's hold, over the reply and the patches
            held, server.flush_promised = server.flush_promised, True
        try:
            conns[0].push(ok)
            conns[0].push(legal)
            conns[1].push(patch)
            conns[2].push(patch)
        finally:
            if holding:
                server.flush_promised = held
                server.flush_now()  # the frames written
        server.flush_now()  # the actor's handler, after `handle`
        if server.flush_promised if holding else server._flush_scheduled:
            server._flush()  # the end of the turn: what call_soon scheduled (the loop never turns here)
    count_off()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("room", "request", "handle", "output", "commit", "commit-awaited", "receive"),
                        default="room")
    parser.add_argument("--game", default="giantslayer")
    parser.add_argument("--rules", default=None, help="the game's rule set (default: its first)")
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="the commit, receive and output parts' event loop (the server's default is uvloop when installed); "
                             "the room part's with --deadline")
    parser.add_argument("--deadline", type=float, default=None,
                        help="room part: rooms with this move deadline in seconds (their timer on --loop's loop)")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)  # the run under valgrind
    parser.add_argument("--scripts", action="store_true", help=argparse.SUPPRESS)  # the games, as JSON
    args = parser.parse_args()
    if args.scripts:
        print(json.dumps(make_scripts(args.game, args.rules)))
        return
    if args.inside:
        if args.part == "room":
            room_part(args.moves, args.game, args.rules, args.deadline, args.loop)
        elif args.part == "request":
            request_part(args.moves)
        elif args.part == "handle":
            handle_part(args.moves)
        else:
            if args.loop == "uvloop":
                import uvloop
                uvloop.install()
            asyncio.run(receive_part(args.moves) if args.part == "receive"
                        else output_part(args.moves) if args.part == "output"
                        else commit_part(args.moves, awaited=args.part == "commit-awaited"))
        return
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
         sys.executable, __file__, "--inside", *sys.argv[1:]],
        capture_output=True, text=True, env={**os.environ, "MOVE_INSTRUCTIONS_CG": "1", "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}, check=False)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode or not found:
        sys.exit(out.stderr[-2000:])
    what = {"room": "move", "request": "request", "handle": "request", "output": "move", "commit": "commit",
            "commit-awaited": "commit", "receive": "request"}[args.part]
    name = args.game + (f"/{args.rules}" if args.rules else "")
    print(f"{args.part} part, {name if args.part == 'room' else 'one act'}: "
          f"{int(found.group(1)) / args.moves:,.0f} instructions per {what} ({args.moves} counted)")


if __name__ == "__main__":
    main()
