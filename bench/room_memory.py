"""Where a room's memory goes: tracemalloc and an object walk inside a real server.

    python bench/room_memory.py                        # Giantslayer, 300 rooms
    python bench/room_memory.py --game causeway/quick --rooms 200
    python bench/room_memory.py --moves 20             # rooms after 20 moves each
    python bench/room_memory.py --no-trace --rooms 500 # RSS and allocators as bench/server.py sees them
    python bench/room_memory.py --pack-after 0         # rooms never packed: what a new room holds unpacked

Runs `giants serve` (embedded Redis in a temp dir) as a subprocess with tracemalloc on,
then does what `bench/server.py --memory-only` does for its "per room" figure: helloed
connections first, a baseline, then rooms created and both seats joined (and, with
--moves, that many random legal moves played in each), idle. At the baseline and at
the end the server dumps (on SIGUSR1) a tracemalloc snapshot and an object walk of
every live `Room`, and this script prints, per room:

- the RSS growth (what bench/server.py reports; with tracemalloc on, its own memory
  too) and the traced growth beside it;
- the allocators' growth: pymalloc's blocks in use, its free blocks and unused pools
  (with --no-trace only: tracemalloc hides pymalloc), glibc's heap; and the cyclic
  garbage a full collection finds;
- the traced growth by the first frame inside this repository (which line allocated);
- the walk: bytes reachable from one room only, by room attribute, by member field,
  by view part and by object type (objects reachable from two rooms or more, such as
  interned strings, the engine or the store, are shared and not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import gc
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import types
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

# -- server side (runs inside the `giants serve` subprocess) -------------------------

STOP_TYPES = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.CodeType,
              types.MethodType, types.FrameType)


def _slot(room: Any, name: str) -> Any:
    """A slot's value, None if unset, without unpacking anything (reading a packed
    room's `state` property would unpack it; its slot is `_state`)."""
    try:
        return object.__getattribute__(room, name)
    except AttributeError:
        return None


def _walk_room(room: Any, owners: dict[int, set[int]], stop: set[int]) -> dict[str, set[int]]:
    """Object ids reachable from each of the room's slots (not through shared services)."""
    reach: dict[str, set[int]] = {}
    slots = [s for cls in type(room).__mro__ for s in getattr(cls, "__slots__", ())]
    for slot in slots:
        value = _slot(room, slot)
        if value is None or id(value) in stop:
            continue
        seen: set[int] = set()
        todo = [value]
        while todo:
            obj = todo.pop()
            i = id(obj)
            if i in seen or i in stop or isinstance(obj, STOP_TYPES):
                continue
            if hasattr(obj, "push") and hasattr(obj, "send_ok") and obj is not value:
                continue  # a member's peer: the connection's memory, not the room's
            seen.add(i)
            owners[i].add(id(room))
            todo.extend(gc.get_referents(obj))
        reach[slot] = seen
    return reach


def alloc_stats() -> dict[str, int]:
    """Bytes by allocator: pymalloc's blocks in use and free, its unused pools, and
    glibc malloc's in-use and free heap (objects over 512 B), before any walk."""
    import ctypes
    import re

    with tempfile.TemporaryFile("w+") as fh:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(fh.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        fh.seek(0)
        text = fh.read()

    stats: dict[str, int] = {}

    def grab(pattern: str) -> int:
        found = re.search(pattern + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else 0

    for line in text.splitlines():  # the size-class table: class, size, pools, in use, free
        cols = line.split()
        if len(cols) == 5 and all(c.isdigit() for c in cols):
            stats[f"class {int(cols[1]):4d} B: in use"] = int(cols[1]) * int(cols[3])
            stats[f"class {int(cols[1]):4d} B: free"] = int(cols[1]) * int(cols[4])
    stats |= {"pymalloc in use": grab(r"# bytes in allocated blocks"),
             "pymalloc free blocks": grab(r"# bytes in available blocks"),
             "pymalloc unused pools": grab(r"unused pools \* 16384 bytes")}

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                  "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
        stats.update({"malloc in use": info.uordblks, "malloc free": info.fordblks, "malloc mmapped": info.hblkhd})
    except (OSError, AttributeError):
        pass
    return stats


def _walk_all(walk: dict[str, Any]) -> None:
    """Fill `walk` with the object walk of every live Room."""
    from server.room import Room

    rooms = [o for o in gc.get_objects() if isinstance(o, Room)]
    walk["rooms"] = len(rooms)
    if rooms:
        r0 = rooms[0]
        # Services every room shares: never count what is behind them.
        stop = {id(getattr(r0, n)) for n in ("engine", "store", "metrics", "bot_service", "guesses",
                                            "on_change", "on_idle", "on_lost")}
        stop |= {id(r) for r in rooms}
        owners: dict[int, set[int]] = defaultdict(set)
        objects: dict[int, Any] = {}
        reaches = []
        for room in rooms:
            reach = _walk_room(room, owners, stop)
            reaches.append(reach)
        for room in rooms:
            for o in gc.get_referents(room):
                objects[id(o)] = o
        # id -> object for everything walked (second pass to get the objects back)
        every = {i for reach in reaches for s in reach.values() for i in s}
        for obj in gc.get_objects():
            objects[id(obj)] = obj
            for ref in gc.get_referents(obj):
                if id(ref) in every:
                    objects[id(ref)] = ref

        def size(i: int) -> int:
            obj = objects.get(i)
            return sys.getsizeof(obj) if obj is not None else 0

        by_slot: Counter[str] = Counter()
        by_type: Counter[str] = Counter()
        count_type: Counter[str] = Counter()
        shared_by_slot: Counter[str] = Counter()
        own_total = 0
        for room, reach in zip(rooms, reaches, strict=True):
            own_total += sys.getsizeof(room)
            for slot, ids in reach.items():
                for i in ids:
                    if len(owners[i]) == 1:
                        s = size(i)
                        by_slot[slot] += s
                        by_type[type(objects.get(i)).__name__] += s
                        count_type[type(objects.get(i)).__name__] += 1
                    else:
                        shared_by_slot[slot] += 1
        # The members' parts, each object counted once per room (members may share a view).
        parts: Counter[str] = Counter()

        def own(obj: Any, seen: set[int]) -> int:
            total = 0
            todo = [obj]
            while todo:
                o = todo.pop()
                if id(o) in seen or isinstance(o, STOP_TYPES) or len(owners.get(id(o), ())) > 1:
                    continue
                seen.add(id(o))
                total += sys.getsizeof(o)
                todo.extend(gc.get_referents(o))
            return total

        for room in rooms:
            seen_views: set[int] = set()
            seen_parts: dict[str, set[int]] = defaultdict(set)
            for m in room.members:
                parts["member.view (distinct views)"] += own(m.view, seen_views)
                if isinstance(m.view, dict):
                    for key, part in m.view.items():
                        parts[f"  view[{key!r}]"] += own(part, seen_parts[key])
            state = _slot(room, "_state")
            if state is None:  # a checkout from before the packed state
                state = _slot(room, "state")
            packed = getattr(room, "state_is_packed", lambda: False)()
            parts["state (packed)" if packed else "state"] += own(state, set())
            parts["meta"] += own(room.meta, set())
        n = len(rooms)
        walk.update(
            room_object=own_total / n,
            by_slot={k: v / n for k, v in by_slot.most_common()},
            by_type={k: (v / n, count_type[k] / n) for k, v in by_type.most_common(25)},
            shared_refs={k: v / n for k, v in shared_by_slot.most_common()},
            parts={k: v / n for k, v in parts.items()},
            members=sum(len(r.members) for r in rooms) / n,
            status=Counter(r.status for r in rooms),
            versions=Counter(r.version for r in rooms).most_common(3),
        )


def dump(path: str, walk_rooms: bool = True) -> None:
    """Write a tracemalloc snapshot and the object walk of every live Room to `path`."""
    before = alloc_stats()
    t0 = time.perf_counter()
    gc.set_debug(gc.DEBUG_SAVEALL)
    collected = gc.collect()
    gc.set_debug(0)
    collect_ms = (time.perf_counter() - t0) * 1e3
    tracked = len(gc.get_objects())
    garbage = Counter(type(o).__qualname__ for o in gc.garbage)
    garbage_bytes = sum(sys.getsizeof(o) for o in gc.garbage)
    samples = {}
    for o in gc.garbage:
        name = type(o).__qualname__
        if name not in samples:
            samples[name] = repr(o)[:300]
    if os.environ.get("ROOM_MEMORY_CYCLES"):
        ids = {id(o) for o in gc.garbage}
        with open(path + ".cycles", "w") as fh:
            shown: Counter[str] = Counter()
            for o in gc.garbage:
                name = type(o).__qualname__
                if shown[name] >= 2:
                    continue
                shown[name] += 1
                refs = [r for r in gc.get_referrers(o) if id(r) in ids]
                fh.write(f"{name} {repr(o)[:120]}\n")
                if type(o).__name__ == "coroutine":
                    fh.write(f"   code {o.cr_code.co_filename}:{o.cr_code.co_firstlineno} frame {o.cr_frame}\n")
                for r in refs:
                    fh.write(f"   <- {type(r).__qualname__} {repr(r)[:200]}\n")
    gc.garbage.clear()
    gc.collect()
    allocs = alloc_stats()
    allocs["pymalloc in use before gc.collect()"] = before["pymalloc in use"]
    allocs["objects gc.collect() freed"] = collected
    snap = tracemalloc.take_snapshot() if tracemalloc.is_tracing() else None
    walk: dict[str, Any] = {"allocs": allocs, "garbage": garbage.most_common(30),
                            "garbage_bytes": garbage_bytes, "samples": samples,
                            "collect_ms": collect_ms, "tracked": tracked}
    if walk_rooms:  # not at the baseline: the walk's garbage would be reused by the rooms measured
        _walk_all(walk)
    gc.collect()  # the walk's own cycles (its id -> object map holds everything): never into the next dump
    with open(path + ".snap", "wb") as fh:
        pickle.dump(snap, fh)
    with open(path + ".json", "w") as fh:
        json.dump(walk, fh, indent=1, default=str)
    with open(path + ".rss", "w") as fh:
        fh.write(Path("/proc/self/status").read_text())


def serve(argv: list[str]) -> int:
    out = os.environ["ROOM_MEMORY_DUMP"]
    step = [0]

    def on_signal(signum: int, frame: Any) -> None:
        step[0] += 1
        if step[0] == 1 and os.environ.get("ROOM_MEMORY_TRACE") == "1":
            # the baseline: trace only what is allocated from here on
            tracemalloc.start(int(os.environ.get("ROOM_MEMORY_FRAMES", "8")))
        dump(f"{out}.{step[0]}", walk_rooms=step[0] > 2)
        Path(f"{out}.{step[0]}.done").write_text("")

    signal.signal(signal.SIGUSR1, on_signal)
    from client_cli.cli import main

    return int(main(["serve", *argv]) or 0)


# -- client side ----------------------------------------------------------------------

def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def request_dump(pid: int, out: str, step: int) -> tuple[int, Any, dict[str, Any]]:
    rss = rss_kib(pid)
    os.kill(pid, signal.SIGUSR1)
    done = Path(f"{out}.{step}.done")
    while not done.exists():
        await asyncio.sleep(0.05)
    with open(f"{out}.{step}.snap", "rb") as fh:
        snap = pickle.load(fh)
    walk = json.loads(Path(f"{out}.{step}.json").read_text())
    return rss, snap, walk


async def drive(url: str, pid: int, out: str, rooms: int, moves: int, game: str, rules: str | None) -> None:
    from protocol import PROTOCOL_VERSION

    create: dict[str, Any] = {"type": "create_room", "id": 2, "game": game, "players": 2}
    if rules:
        create["rules"] = rules
    conns = 2 * rooms + 2
    sockets = [await connect(url, compression=None, max_size=2**22) for _ in range(conns)]
    replies: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue() for _ in sockets]
    legal: list[list[str]] = [[] for _ in sockets]
    versions: list[int] = [0 for _ in sockets]

    async def reader(k: int) -> None:
        async for frame in sockets[k]:
            msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
            if msg["type"] in ("ok", "error"):
                replies[k].put_nowait(msg)
            elif msg["type"] in ("snapshot", "patch"):
                if msg.get("legal") is not None:
                    legal[k] = msg["legal"]
                versions[k] = msg.get("to", msg.get("version", 0))

    readers = [asyncio.ensure_future(reader(k)) for k in range(conns)]
    for ws, q in zip(sockets, replies, strict=True):
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION}))
        await q.get()

    async def make_room(a: int) -> None:
        await sockets[a].send(msgpack.packb(create))
        room = (await replies[a].get())["data"]["room"]
        for j in (a, a + 1):
            await sockets[j].send(msgpack.packb({"type": "join", "id": 3, "room": room}))
            await replies[j].get()
        rng = random.Random(a)
        for _ in range(moves):
            await asyncio.sleep(0.05)
            acting = [j for j in (a, a + 1) if legal[j]]
            if not acting:
                break
            j = acting[0]
            await sockets[j].send(msgpack.packb({"type": "act", "id": 4, "room": room,
                                                 "action": rng.choice(legal[j])}))
            reply = await replies[j].get()
            if reply["type"] != "ok":
                break

    await make_room(0)  # warm: one-time work (imports, tables) before the baseline
    await asyncio.sleep(0.5)
    await request_dump(pid, out, 1)  # tracing starts here
    await asyncio.sleep(1.0)
    rss0, snap0, walk0 = await request_dump(pid, out, 2)
    started = time.perf_counter()
    if moves:  # rooms made one after another (as bench/server.py does), moves played together
        await asyncio.gather(*(make_room(2 + 2 * i) for i in range(rooms)))
    else:
        for i in range(rooms):
            await make_room(2 + 2 * i)
    made = time.perf_counter() - started
    await asyncio.sleep(1.0)
    rss1, snap1, walk = await request_dump(pid, out, 3)
    n = walk["rooms"]
    diff = snap1.compare_to(snap0, "traceback") if snap0 is not None and snap1 is not None else []
    traced = sum(d.size_diff for d in diff)
    print(f"{game}{'/' + rules if rules else ''}: {rooms} rooms, {moves} moves each; live rooms {n}, "
          f"members/room {walk.get('members')}, status {walk.get('status')}, versions {walk.get('versions')}")
    print(f"rooms made in {made:.2f} s, then 1 s idle")
    print(f"RSS growth      {(rss1 - rss0) / rooms:8.2f} KiB per room (with tracemalloc: its own memory too)")
    if diff:
        print(f"traced growth   {traced / rooms / 1024:8.2f} KiB per room")
    print("allocators (growth, bytes per room; with --trace, pymalloc is not seen and 'malloc' has "
          "tracemalloc's own overhead):")
    for k, v in walk["allocs"].items():
        grown = (v - walk0["allocs"].get(k, 0)) / rooms
        if not k.startswith("class ") or abs(grown) >= 48:
            print(f"  {grown:8.0f}  {k}")
    here = str(ROOT)
    by_line: Counter[str] = Counter()
    for d in diff:
        where = next((f for f in reversed(d.traceback) if f.filename.startswith(here) and "/bench/" not in f.filename),
                     d.traceback[0])
        name = where.filename.replace(here + "/", "")
        by_line[f"{name}:{where.lineno}"] += d.size_diff
    if diff:
        print("traced growth by the first line in this repository (bytes per room):")
    for line, size in by_line.most_common(30):
        if abs(size) / rooms >= 16:
            print(f"  {size / rooms:8.0f}  {line}")
    print(f"cyclic garbage gc.collect() found: {walk['garbage_bytes'] / rooms:.0f} B per room (getsizeof; the full "
          f"collection took {walk['collect_ms']:.0f} ms, {walk['tracked']} objects tracked), by type (per room):")
    for name, count in walk["garbage"]:
        print(f"  {count / rooms:8.2f}  {name}   e.g. {walk['samples'][name][:150]}")
    print(f"walk: the Room object {walk['room_object']:.0f} B; reachable from one room only, by attribute (B):")
    for k, v in walk["by_slot"].items():
        print(f"  {v:8.0f}  {k}")
    print("  by part:")
    for k, v in walk["parts"].items():
        print(f"  {v:8.0f}  {k}")
    print("  by type (B, objects):")
    for k, (v, c) in walk["by_type"].items():
        print(f"  {v:8.0f}  {c:6.1f}  {k}")
    for ws in sockets:
        await ws.close()
    await asyncio.gather(*readers, return_exceptions=True)


async def main() -> int:
    faulthandler.dump_traceback_later(float(os.environ.get("ROOM_MEMORY_WATCHDOG", "1e9")))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="giantslayer", help="game or game/rules")
    parser.add_argument("--rooms", type=int, default=300)
    parser.add_argument("--moves", type=int, default=0, help="random legal moves per room before measuring")
    parser.add_argument("--no-trace", action="store_true",
                        help="no tracemalloc: RSS and allocator figures as the server has them without it")
    parser.add_argument("--pack-after", type=float, default=None,
                        help="the server's --pack-after (0: nothing is packed, so the figures are of unpacked "
                             "rooms: what each room holds until the new-room sweep packs it)")
    args = parser.parse_args()
    game, _, rules = args.game.partition("/")
    tmp = tempfile.mkdtemp(prefix="giants-roommem-")
    out = os.path.join(tmp, "dump")
    env = {**os.environ, "ROOM_MEMORY_DUMP": out, "ROOM_MEMORY_TRACE": "0" if args.no_trace else "1"}
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--port", "0", "--log-level", "warning", "--data-dir", tmp,
         "--key-prefix", f"roommem:{os.getpid()}:", "--rate", "1000", "--burst", "1000",
         "--max-connections-per-address", "0", "--max-rooms-per-address", "0",
         *([] if args.pack_after is None else ["--pack-after", str(args.pack_after)])],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env)
    assert proc.stdout is not None
    url = ""
    for line in proc.stdout:
        if "listening on" in line:
            url = line.split("listening on ")[1].split()[0]
            threading.Thread(target=lambda: Path(out + ".log").write_text(proc.stdout.read() if proc.stdout else ""), daemon=True).start()  # never block its prints
            break
    if not url:
        print("server did not start", file=sys.stderr)
        return 1
    try:
        await drive(url, proc.pid, out, args.rooms, args.moves, game, rules or None)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    time.sleep(0)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        sys.exit(serve(sys.argv[2:]))
    sys.exit(asyncio.run(main()))
