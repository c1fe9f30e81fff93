"""What the relay's check of a frame post's answer costs per message, counted alone.

`server.relay_channels.Resending` adds a done-callback to every frame post (a post
nobody received is sent again). This creates N futures and resolves them, with or
without that callback on each; run it under callgrind for both modes and two N, and
take the difference per message:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/relay_post_callback.py 0 20000
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/relay_post_callback.py 0 40000
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/relay_post_callback.py 1 20000
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/relay_post_callback.py 1 40000

(instructions per message = (I refs at 40000 - I refs at 20000) / 20000, per mode).
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loop import run_main
from server.commit_pipe import GroupSender
from server.relay_channels import Resending


class Checked(Resending):
    broadcast = "all"

    def _route(self, channel: str) -> tuple[str, GroupSender]:
        raise AssertionError("nothing is lost here")


async def main(with_callback: bool, count: int) -> None:
    channels = Checked()
    loop = asyncio.get_running_loop()
    started = time.thread_time()
    futures = []
    for _ in range(count):
        fut = loop.create_future()
        if with_callback:
            fut.add_done_callback(functools.partial(channels._posted, None, "inbox", b"frame"))  # type: ignore[arg-type]
        futures.append(fut)
    for fut in futures:
        fut.set_result(1)  # one receiver: nothing to send again
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    print(f"callback {with_callback}: {(time.thread_time() - started) / count * 1e6:.2f} us CPU per message")


if __name__ == "__main__":
    run_main(main(sys.argv[1] == "1", int(sys.argv[2])))
