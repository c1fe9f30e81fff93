"""Where a move's time goes inside the server: one row of timestamps per move.

`bench/server.py --latency-split` starts the server through this module instead of
`python -m client_cli.cli`. Before the server starts, it wraps seven of the hot path's
functions so that each move (a `Room.act` reached from a frame) records, on the
monotonic clock shared by every process of the machine:

    data       the connection's `data_received` took the frame's bytes off the socket
               (`server.reading.Inbox`'s, then websockets' for what it leaves to it)
    handle     `Connection.handle` started on the frame (after the frame's parsing,
               the inbox's queue and the wake-up of the connection's task)
    act        `Room.act` started (after the frame budget, `decode_client`, dispatch)
    sent       `GroupSender._flush` wrote the batch holding the move's commit
    reply      `CommitPipe.data_received` read the commit's reply
    resumed    `Room._commit_fields` (a move's `_commit`) returned to the room (the task woken again)
    published  `Room.act` returned (publish: views, diffs, frames queued)
    written    `flush_now` wrote the room's frames

and, when the server exits, writes the rows to the file named on its command line.
`report` turns them into the seven intervals' medians, 90th percentiles and means.

The wrappers cost some CPU per move themselves (a few dictionary operations and clock
reads per step), so the intervals are a little longer than without them: compare
intervals with each other, and runs with each other, not with the round trip of a run
without `--latency-split`.

    python bench/server.py --latency-split --duration 10 --knee '' --memory-conns 0 --no-floor
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

STEPS = ("data", "handle", "act", "sent", "reply", "resumed", "published", "written")


def install(out: str) -> None:
    """Wrap the hot path's steps; the rows go to `out` when the process exits."""
    import websockets.asyncio.connection as ws_connection

    from server.app import GiantsServer
    from server.commit_pipe import CommitPipe, GroupSender
    from server.connection import Connection
    from server.room import Room

    now = time.monotonic
    current = asyncio.current_task
    rows: list[list[float]] = []
    open_rows: dict[Any, list[float]] = {}  # task -> its move's row
    by_future: dict[Any, list[float]] = {}  # a commit's future -> its move's row
    arrived: dict[int, float] = {}  # id(websockets connection) -> last bytes read

    data_received = ws_connection.Connection.data_received

    def w_data_received(self: Any, data: bytes) -> None:
        arrived[id(self)] = now()
        data_received(self, data)

    inbox: Any = None
    # The connection's reads come here first since session 15 (server.reading); an
    # earlier revision, measured for comparison, has none.
    with contextlib.suppress(ImportError):
        from server.reading import Inbox as inbox
    inbox_received = inbox.data_received if inbox is not None else None

    def w_inbox_received(self: Any, data: bytes) -> None:
        arrived[id(self.ws)] = now()
        inbox_received(self, data)  # type: ignore[misc]

    handle = Connection.handle

    async def w_handle(self: Connection, frame: Any) -> None:
        row = [arrived.get(id(self.ws), 0.0), now(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        open_rows[current()] = row
        await handle(self, frame)

    act = Room.act

    async def w_act(self: Room, *args: Any) -> None:
        row = open_rows.get(current())
        if row is not None:
            row[2] = now()
        await act(self, *args)
        if row is not None:
            row[6] = now()

    add = GroupSender.add

    def w_add(self: GroupSender, command: Any) -> Any:
        fut = add(self, command)
        row = open_rows.get(current())
        if row is not None:
            by_future[fut] = row
        return fut

    flush = GroupSender._flush

    def w_flush(self: GroupSender) -> None:
        t = now()
        for fut in self._futures:
            row = by_future.get(fut)
            if row is not None:
                row[3] = t
        flush(self)

    pipe_received = CommitPipe.data_received

    def w_pipe_received(self: CommitPipe, data: bytes) -> None:
        t = now()
        waiting = [fut for batch in self._batches if batch[2] is None for fut in batch[1]]
        pipe_received(self, data)
        for fut in waiting:
            if fut.done():
                row = by_future.pop(fut, None)
                if row is not None:
                    row[4] = t

    commit = Room._commit_fields  # a move's write (Room._commit calls it too)

    async def w_commit(self: Room, *fields: Any) -> None:
        await commit(self, *fields)
        row = open_rows.get(current())
        if row is not None:
            row[5] = now()

    flush_now = GiantsServer.flush_now

    def w_flush_now(self: GiantsServer) -> None:
        flush_now(self)
        row = open_rows.pop(current(), None)
        if row is not None and all(row[:7]):  # a move, every step seen
            row[7] = now()
            rows.append(row)

    ws_connection.Connection.data_received = w_data_received  # type: ignore[method-assign]
    if inbox is not None:
        inbox.data_received = w_inbox_received
    Connection.handle = w_handle  # type: ignore[method-assign]
    Room.act = w_act  # type: ignore[method-assign,assignment]
    GroupSender.add = w_add  # type: ignore[method-assign]
    GroupSender._flush = w_flush  # type: ignore[method-assign]
    CommitPipe.data_received = w_pipe_received  # type: ignore[method-assign]
    Room._commit_fields = w_commit  # type: ignore[method-assign,assignment]
    GiantsServer.flush_now = w_flush_now  # type: ignore[method-assign]

    def write() -> None:
        with open(out, "w") as f:
            for row in rows:
                f.write(" ".join(f"{t:.7f}" for t in row) + "\n")

    atexit.register(write)


def report(path: str, start: float, end: float) -> list[str]:
    """The intervals of the moves whose frame was handled between `start` and `end`
    (monotonic seconds), one line each: p50, p90 and mean in µs."""
    rows = []
    with open(path) as f:
        for line in f:
            row = [float(x) for x in line.split()]
            if start <= row[1] <= end and row == sorted(row):
                rows.append(row)
    if not rows:
        return ["latency split      no moves recorded in the measured phase"]
    lines = [f"latency split      {len(rows)} moves, µs inside the server (p50 / p90 / mean):"]
    for i in range(len(STEPS) - 1):
        gaps = sorted((row[i + 1] - row[i]) * 1e6 for row in rows)
        mean = sum(gaps) / len(gaps)
        lines.append(f"  {STEPS[i]:>9} -> {STEPS[i + 1]:<9} {gaps[len(gaps) // 2]:7.1f} {gaps[int(len(gaps) * 0.9)]:7.1f} {mean:7.1f}")
    total = sorted((row[-1] - row[0]) * 1e6 for row in rows)
    lines.append(f"  {'data':>9} -> {'written':<9} {total[len(total) // 2]:7.1f} {total[int(len(total) * 0.9)]:7.1f} "
                 f"{sum(total) / len(total):7.1f}")
    return lines


def main() -> int:
    """`latency_split.py OUT serve ...`: the server (`client_cli.cli`'s arguments) with the wrappers."""
    sys.path.insert(0, str(ROOT))
    install(sys.argv[1])
    from client_cli.cli import main as cli_main

    return cli_main(sys.argv[2:])


if __name__ == "__main__":
    raise SystemExit(main())
