"""The echo reference of bench/server.py: a bare `websockets` server that echoes each
frame, run as a subprocess on the same event loop kind as the server (`ECHO_SERVER`,
its loop's name as its argument), and the round trips measured against it at the same
rate over the same number of connections (`echo_phase`)."""

from __future__ import annotations

import asyncio
import random
import time

import msgpack
from loadgen import CLIENTS
from readings import cpu_seconds, pct
from websockets.asyncio.client import ClientConnection

ECHO_SERVER = """
import asyncio, sys
from websockets.asyncio.server import serve
async def echo(ws):
    async for m in ws:
        await ws.send(m)
async def main():
    async with serve(echo, "127.0.0.1", 0, compression=None) as s:
        print("listening on ws://127.0.0.1:%d" % s.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()
if sys.argv[1] == "uvloop":
    import uvloop
    uvloop.run(main())
else:
    asyncio.run(main())
"""


async def echo_run(url: str, conns: int, rate: float, duration: float, client: str = "lean") -> list[float]:
    """Round trips to a bare echo server: `conns` connections sharing `rate` messages/s."""
    rtts: list[float] = []
    interval = conns / rate
    payload = msgpack.packb({"type": "act", "id": 0, "room": "abcdefgh", "action": "a5-b5"})
    end = time.perf_counter() + duration
    sockets = [await CLIENTS[client](url, compression=None) for _ in range(conns)]

    async def one(ws: ClientConnection) -> None:
        next_at = time.perf_counter() + random.random() * interval
        while time.perf_counter() < end:
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            next_at = max(next_at + interval, time.perf_counter() - interval)
            t0 = time.perf_counter()
            await ws.send(payload)
            await ws.recv()
            rtts.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(ws) for ws in sockets))
    for ws in sockets:
        await ws.close()
    return rtts


async def echo_phase(echo_url: str, echo_pid: int, conns: int, rate: float, duration: float,
                     client: str = "lean") -> tuple[float, float, float]:
    """Echo p50 ms, p99 ms and server CPU µs per round trip."""
    cpu0 = cpu_seconds(echo_pid)
    rtts = await echo_run(echo_url, conns, rate, duration, client)
    cpu = cpu_seconds(echo_pid) - cpu0
    return pct(rtts, 50) * 1e3, pct(rtts, 99) * 1e3, 1e6 * cpu / max(1, len(rtts))
