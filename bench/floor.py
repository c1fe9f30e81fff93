"""The I/O floor of a move: what any server of this design spends before game logic.

A move on our server is one frame in, one stored write acknowledged by Redis, and one
patch frame out to every member of the room (two seats and the spectators). This
module is a reference server that does exactly that and nothing else — no rules, no
views, no diff, no validation beyond msgpack decoding — on the same stack as
`giants serve`: `websockets` on the same event loop kind, the embedded redis-server
(`server.embedded_redis`, same fsync policy), and the server's own Redis channel for
stored writes (`server.commit_pipe.GroupSender`: one EVALSHA per move, batched per
loop turn). Its CPU per move is the floor under the server's, so

    server CPU per move = floor + what rooms, rules, views and diffs add

and the floor's own ratio to the echo server's CPU per round trip says how far the
echo ratio can fall at all on this stack.

    python bench/floor.py serve uvloop everysec     # the reference server (bench/server.py starts it)

`FloorRooms` is its load: `rooms` groups of (2 + spectators) connections; in each room
the seats take turns sending a ~100-byte msgpack action at the room's paced time and
the round trip ends when the sender's own frame comes back (as in bench/server.py).
"""

from __future__ import annotations

import asyncio
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# A move's stored write at its least: append the entry to the room's log, bump its
# version. (The real commit script also checks the fence and the version, and keeps
# the snapshot and the lobby index: that is part of what the floor leaves out.)
SCRIPT = "redis.call('RPUSH', KEYS[1], ARGV[1]) return redis.call('INCR', KEYS[2])"
# A patch frame of the median size of a protocol-3 Giantslayer patch (≈ 111 B).
PATCH = msgpack.packb({"t": "p", "r": "abcdefgh", "v": 12345,
                       "o": [[0, [7, 23], 1], [0, [7, 31], 0], [0, [7, 40], 17], [0, [5], [1]]],
                       "e": [{"type": "action", "seat": 1, "action": "e4-e5"}]})


async def serve(loop_name: str, fsync: str) -> None:
    import redis.asyncio as aioredis
    from websockets.asyncio.server import broadcast
    from websockets.asyncio.server import serve as ws_serve

    from server.commit_pipe import GroupSender
    from server.embedded_redis import EmbeddedRedis

    data = tempfile.TemporaryDirectory(prefix="giants-floor-")
    embedded = EmbeddedRedis(Path(data.name), fsync=fsync)
    client = aioredis.Redis.from_url(embedded.start())
    sha = await client.script_load(SCRIPT)
    sender = GroupSender(client, timeout=5.0)
    rooms: dict[bytes, list[Any]] = {}

    async def handler(ws: Any) -> None:
        room: bytes = await ws.recv()  # the first frame names the room
        members = rooms.setdefault(room, [])
        members.append(ws)
        log, version = b"floor:" + room + b":log", b"floor:" + room + b":v"
        try:
            async for frame in ws:
                msgpack.unpackb(frame)  # every input is decoded, as the server does
                await sender.call("EVALSHA", sha, 2, log, version, frame)
                broadcast(members, PATCH)
        finally:
            members.remove(ws)

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)  # bench/server.py's terminate()
    try:
        async with ws_serve(handler, "127.0.0.1", 0, compression=None) as server:
            port = server.sockets[0].getsockname()[1]
            print(f"listening on ws://127.0.0.1:{port}", flush=True)
            await stop.wait()
    finally:
        sender.close()
        embedded.stop()
        data.cleanup()


class FloorRooms:
    """The floor's load: `rooms` rooms of `per_room` connections (two seats and the
    spectators). `open()` connects them, `run(rate, duration)` paces the moves and
    returns the round trips (s), `close()` hangs up."""

    def __init__(self, connect: Callable[..., Any], url: str, rooms: int, per_room: int) -> None:
        self.connect, self.url, self.rooms, self.per_room = connect, url, rooms, per_room
        self.conns: list[list[Any]] = []
        self.waiting: list[list[asyncio.Future[None] | None]] = []

    async def open(self) -> None:
        for index in range(self.rooms):
            conns = [await self.connect(self.url, compression=None) for _ in range(self.per_room)]
            waiting: list[asyncio.Future[None] | None] = [None] * self.per_room
            for i, ws in enumerate(conns):
                await ws.send(b"room-%d" % index)
                ws.on_frame = self._reader(waiting, i)
            self.conns.append(conns)
            self.waiting.append(waiting)

    @staticmethod
    def _reader(waiting: list[asyncio.Future[None] | None], i: int) -> Callable[[bytes], None]:
        def on_frame(_frame: bytes) -> None:
            fut = waiting[i]
            if fut is not None and not fut.done():
                fut.set_result(None)
        return on_frame

    async def run(self, rate: float, duration: float) -> list[float]:
        interval = self.rooms / rate
        action = msgpack.packb({"type": "act", "id": 0, "room": "abcdefgh", "action": "a5-b5"})
        rtts: list[float] = []
        end = time.perf_counter() + duration
        loop = asyncio.get_running_loop()

        async def room_loop(conns: list[Any], waiting: list[asyncio.Future[None] | None]) -> None:
            next_at = time.perf_counter() + random.random() * interval
            turn = 0
            while time.perf_counter() < end:
                delay = next_at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                next_at = max(next_at + interval, time.perf_counter() - interval)
                seat = turn % 2
                turn += 1
                waiting[seat] = fut = loop.create_future()
                t0 = time.perf_counter()
                await conns[seat].send(action)
                await fut
                rtts.append(time.perf_counter() - t0)

        await asyncio.gather(*(room_loop(c, w) for c, w in zip(self.conns, self.waiting, strict=True)))
        return rtts

    async def close(self) -> None:
        for conns in self.conns:
            for ws in conns:
                await ws.close()


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"] or len(sys.argv) != 4:
        sys.exit("usage: python bench/floor.py serve LOOP FSYNC")
    if sys.argv[2] == "uvloop":
        import uvloop

        uvloop.run(serve(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(serve(sys.argv[2], sys.argv[3]))
