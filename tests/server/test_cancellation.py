"""The server's loops end when cancelled, even when Python loses the cancellation.

On Python 3.11 `asyncio.wait_for` drops a cancel that lands as the awaited call
completes, and redis-py sends every command under `wait_for`: a loop around Redis
calls then carried on, and whoever waited for it (a shutdown, pytest's session
teardown: seen as a hang after the last test) waited forever (server.cancellation).
"""

from __future__ import annotations

import asyncio

import pytest

from server.cancellation import cancel_and_wait, checkpoint


def cancel_as_it_completes(task: asyncio.Task[None], call: asyncio.Future[int]) -> None:
    """Complete the call `task` waits for and cancel `task` in the same loop pass:
    the moment Python 3.11's wait_for loses the cancellation in."""
    call.set_result(1)
    task.cancel()


async def started(calls: asyncio.Queue[asyncio.Future[int]]) -> asyncio.Future[int]:
    return await asyncio.wait_for(calls.get(), 5)


async def test_a_loop_that_checks_in_ends_though_its_cancel_was_lost() -> None:
    calls: asyncio.Queue[asyncio.Future[int]] = asyncio.Queue()
    passes = 0

    async def loop() -> None:  # the shape of the relay's sender, the node's renewals...
        nonlocal passes
        while True:
            checkpoint()
            passes += 1
            call = asyncio.get_running_loop().create_future()
            calls.put_nowait(call)
            await asyncio.wait_for(call, 5)  # what redis-py does around each command

    task = asyncio.create_task(loop())
    cancel_as_it_completes(task, await started(calls))
    await asyncio.wait([task], timeout=5)
    assert task.cancelled()
    assert passes == 1  # it did not start another pass


async def test_cancel_and_wait_ends_a_task_that_lost_its_cancel() -> None:
    calls: asyncio.Queue[asyncio.Future[int]] = asyncio.Queue()
    forever = asyncio.Event()

    async def carries_on() -> None:  # lost the cancel, then waits for what never comes
        call = asyncio.get_running_loop().create_future()
        calls.put_nowait(call)
        await asyncio.wait_for(call, 5)
        await forever.wait()

    task = asyncio.create_task(carries_on())
    call = await started(calls)
    stopping = asyncio.create_task(cancel_and_wait([task]))
    await asyncio.sleep(0)  # cancel_and_wait has cancelled it: now complete the call too
    call.set_result(1)
    await asyncio.wait_for(stopping, 10)
    assert task.cancelled()


@pytest.mark.redis
async def test_a_server_stops_while_redis_is_unreachable_and_leaves_no_task(
    fault_proxy, server_factory, client_factory
) -> None:
    """Redis goes away mid-game (the node's renewals, the lifecycle sweep, the relay's
    subscription and the room's recovery all retry): stop() still ends, and every task
    the server started has ended with it."""
    before = asyncio.all_tasks()
    server = await server_factory(redis_url=fault_proxy.url, lease_ttl=0.6, redis_timeout=1.0, shutdown_timeout=2.0)
    alice = await client_factory(server.url, "alice")
    bob = await client_factory(server.url, "bob")
    room = (await alice.ok("create_room", game="giantslayer", deadline=0.5))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await fault_proxy.close_all(refuse=True)
    await asyncio.sleep(1.5)  # the deadline's write fails: the room's recovery loop runs
    await alice.close()
    await bob.close()
    await asyncio.wait_for(server.stop(), 60)  # a guard against a hang, not a timing claim
    left = [t for t in asyncio.all_tasks() - before if t is not asyncio.current_task() and not t.done()]
    await asyncio.sleep(0)
    left = [t for t in left if not t.done()]
    assert not left, [(repr(t), [f"{f.f_code.co_filename}:{f.f_lineno}" for f in t.get_stack()]) for t in left]
