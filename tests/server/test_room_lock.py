"""`RoomLock` (server.room) takes a free lock without `acquire`'s coroutine and frees its
waiter deque once nobody waits: it must grant the lock in exactly the order, and at the
same loop turns, as `asyncio.Lock` does, cancelled waiters included."""

from __future__ import annotations

import asyncio
import random

import pytest

from server.room import RoomLock


async def _schedule(lock: asyncio.Lock, seed: int) -> list[tuple[int, str]]:
    """Tasks that take the lock, hold it some loop turns and release it; some are
    cancelled while they wait or while they hold it. The log of who got it when."""
    rng = random.Random(seed)
    log: list[tuple[int, str]] = []
    turn = 0

    async def user(name: str, hold: int) -> None:
        try:
            async with lock:
                log.append((turn, f"{name} in"))
                for _ in range(hold):
                    await asyncio.sleep(0)
                log.append((turn, f"{name} out"))
        except asyncio.CancelledError:
            log.append((turn, f"{name} cancelled"))
            raise

    tasks: list[asyncio.Task[None]] = []
    for turn in range(60):
        roll = rng.random()
        if roll < 0.3:
            tasks.append(asyncio.get_running_loop().create_task(user(f"t{len(tasks)}", rng.randrange(4))))
        elif roll < 0.4 and tasks:
            rng.choice(tasks).cancel()
        log.append((turn, f"locked {lock.locked()} waiting {len(lock._waiters or ())}"))
        await asyncio.sleep(0)
    await asyncio.gather(*tasks, return_exceptions=True)
    assert not lock.locked()
    return log


@pytest.mark.parametrize("seed", range(30))
def test_room_lock_grants_as_asyncio_lock(seed: int) -> None:
    assert asyncio.run(_schedule(RoomLock(), seed)) == asyncio.run(_schedule(asyncio.Lock(), seed))


def test_room_lock_frees_its_waiters() -> None:
    async def main() -> None:
        lock = RoomLock()
        async with lock:
            waiter = asyncio.get_running_loop().create_task(lock.acquire())
            await asyncio.sleep(0)
            assert lock._waiters
        await waiter
        lock.release()
        assert lock._waiters is None and not lock.locked()
        with pytest.raises(RuntimeError):
            lock.release()

    asyncio.run(main())
