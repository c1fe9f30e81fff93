"""Cancellation that Python 3.11 loses, and how the server's loops end anyway.

On Python 3.11 `asyncio.wait_for` returns the awaited call's result instead of raising
CancelledError when the cancellation lands in the loop pass in which that call
completes (fixed in 3.12). redis-py sends every command through `wait_for` when a
socket timeout is set, as the store's is, so any Redis call may swallow a
`task.cancel()`: the task carries on as if nothing happened, although
`task.cancelling()` still counts the request. A loop that carries on that way never
ends, and whoever waits for it — a shutdown, pytest's session teardown — waits forever.

- `checkpoint()`: call it at the top of every pass of a long-running loop; it raises
  CancelledError when the task was asked to stop and the request got lost on the way.
- `cancel_and_wait(tasks)`: stop tasks and wait until each has ended, cancelling again
  any that lost its cancellation. The caller's own cancellation is never swallowed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

RECANCEL_AFTER = 0.5  # seconds a cancelled task has to end before it is cancelled again


def checkpoint() -> None:
    """Raise CancelledError if the current task has been cancelled (and carries on)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel `tasks` and return once every one has ended (their outcomes are not
    raised: the caller has decided they stop). Raises CancelledError if the caller is
    cancelled meanwhile; the tasks are cancelled all the same."""
    every = list(tasks)
    pending = {task for task in every if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=RECANCEL_AFTER)
    for task in every:
        if not task.cancelled():
            task.exception()  # retrieved: a failure on the way out is not logged as lost
