"""`RoomLock` (server.room) takes a free lock without `acquire`'s coroutine and frees its
waiter deque once nobody waits: it must grant the lock in exactly the order, and at the
same loop turns, as `asyncio.Lock` does, cancelled waiters included."""

from __future__ import annotations

import asyncio
import random

import pytest

from server.room import RoomLock
from tests.server.memory_room import MemoryPeer, two_seat_room


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


class _GatedStore:
    """A store whose commits wait for the test to let them through."""

    def __init__(self) -> None:
        self.gates: list[asyncio.Future[None]] = []

    async def commit(self, room_id: str, *args: object, **fields: object) -> bool:
        gate = asyncio.get_running_loop().create_future()
        self.gates.append(gate)
        await gate
        return True


def test_act_takes_and_frees_the_room_lock_as_async_with_does() -> None:
    """`Room.act` takes and releases the room's lock without RoomLock's calls: a move
    waits behind a holder, the next waiter is woken when a move ends, and a lock nobody
    waits for is left free with no waiter deque."""
    async def main() -> None:
        store = _GatedStore()
        room, peers = two_seat_room("lockroom", store, 3)
        engine = room.engine
        log: list[str] = []

        def move() -> tuple[MemoryPeer, str]:
            seat = sorted(engine.to_act(room.state))[0]
            return peers[seat], engine.legal_notation(room.state, seat)[0]

        # A move with the lock free: taken, and freed with no deque once it ends.
        peer, text = move()
        first = asyncio.get_running_loop().create_task(room.act(peer, 1, text, None))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        assert room.lock.locked() and len(store.gates) == 1

        async def holder() -> None:
            async with room.lock:
                log.append("holder in")
                await asyncio.sleep(0)
            log.append("holder out")

        waiting = asyncio.get_running_loop().create_task(holder())
        await asyncio.sleep(0)
        assert room.lock._waiters  # the holder waits for the move
        store.gates[0].set_result(None)
        await first
        assert room.lock.locked() and "holder out" not in log  # handed on to the waiter, not freed
        await waiting
        assert log == ["holder in", "holder out"]
        assert not room.lock.locked() and room.lock._waiters is None
        # A move behind a holder waits for it, then runs and frees the lock.
        async with room.lock:
            peer, text = move()
            second = asyncio.get_running_loop().create_task(room.act(peer, 2, text, None))  # type: ignore[arg-type]
            await asyncio.sleep(0)
            assert len(store.gates) == 1 and room.lock._waiters
        await asyncio.sleep(0)
        assert len(store.gates) == 2
        store.gates[1].set_result(None)
        await second
        assert not room.lock.locked() and room.lock._waiters is None
        assert room.actions == 2 and [len(p.oks) for p in peers] in ([1, 1], [2, 0], [0, 2])

    asyncio.run(main())
