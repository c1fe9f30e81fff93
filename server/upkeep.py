"""A node's background upkeep: packing idle rooms, watching the embedded Redis.

`GiantsServer.start` spawns these as long-running tasks (and cancels them in `stop`):

    spawn(sweep_idle_views(lobby, config.pack_after))   # only when pack_after > 0
    spawn(sweep_new_rooms(lobby))
    spawn(supervise_redis(embedded, lambda: shutting_down, failed))   # embedded Redis only
    await check_persistence(store)                       # an external Redis: warn once
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from server.embedded_redis import EmbeddedRedis
from server.limits import redact_url
from server.lobby import Lobby
from server.store import Store

log = logging.getLogger("giants.server")
# Most seconds of packing in one turn of the loop (a sweep then lets moves in).
SWEEP_SLICE = 0.002
# Seconds between passes of the new-room sweep: rooms nobody has acted in yet are packed
# at the first pass after their last change (Lobby.compact_new_rooms).
NEW_ROOM_SWEEP = 0.5


async def sweep_idle_views(lobby: Lobby, period: float) -> None:
    """Every `period` (`--pack-after`) seconds, rooms untouched since the previous pass
    (idle for one to two periods) keep their members' last views and their state packed
    (memory per idle room: docs/performance.md); busy rooms are not touched. The pass
    yields to the loop every SWEEP_SLICE seconds of work, so packing thousands of rooms
    never holds up a move. Runs until cancelled."""
    while True:
        await asyncio.sleep(period)
        await lobby.compact_idle_views(SWEEP_SLICE)


async def sweep_new_rooms(lobby: Lobby) -> None:
    """Every NEW_ROOM_SWEEP seconds, rooms nobody has acted in yet are packed
    (Lobby.compact_new_rooms). Runs until cancelled; not started with `--pack-after 0`
    (never pack)."""
    while True:
        await asyncio.sleep(NEW_ROOM_SWEEP)
        await lobby.compact_new_rooms(SWEEP_SLICE)


async def supervise_redis(embedded: EmbeddedRedis, shutting_down: Callable[[], bool],
                          failed: asyncio.Event) -> None:
    """Restart the embedded Redis if it dies (it reloads its AOF; rooms in memory stay
    valid and writes meanwhile are settled or refused). If it will not come back, set
    `failed`: `giants serve` then stops and exits non-zero so a supervisor restarts it."""
    failures = 0
    while not shutting_down():
        await asyncio.sleep(0.5)
        if shutting_down() or embedded.alive():
            continue
        try:
            await asyncio.to_thread(embedded.restart)
            failures = 0
            log.warning("embedded Redis restarted; service resumes")
        except Exception as exc:
            failures += 1
            log.error("embedded Redis could not be restarted (%d): %s", failures, exc)
            if failures >= 3:
                log.critical("giving up on the embedded Redis; stopping so a supervisor can restart giants serve")
                failed.set()
                return


async def check_persistence(store: Store) -> None:
    """Warn when an external Redis keeps nothing on disk (a restart loses every room)."""
    try:
        aof, rdb = await store.persistence()
    except Exception as exc:
        log.info("could not read the Redis persistence settings (%s); make sure it persists", exc)
        return
    if not aof and not rdb:
        log.warning(
            "the Redis at %s has no persistence (appendonly no, no save points): a Redis restart "
            "loses every room; enable appendonly (see docs/operations.md)", redact_url(store.url)
        )
    elif not aof:
        log.warning(
            "the Redis at %s persists by snapshots only (appendonly no): a Redis crash loses the "
            "moves since the last snapshot; enable appendonly (see docs/operations.md)", redact_url(store.url)
        )
