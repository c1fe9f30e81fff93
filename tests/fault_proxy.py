"""A TCP proxy in front of a real Redis that injects the faults of a flaky network.

    proxy = FaultProxy(redis_url)
    url = await proxy.start()               # redis://127.0.0.1:<port>/<db>: hand it to the server
    proxy.drop_reply(b"EVALSHA")            # the next matching command runs; its reply never comes
    proxy.drop_command(b"EVALSHA")          # the next matching command never reaches Redis
    proxy.stall()                           # hold all traffic (both ways) until release()
    await proxy.close_all(refuse=True)      # cut every connection, refuse new ones until reopen()
    await proxy.stop()

A connection hit by `drop_reply` swallows everything Redis sends on it from then on, and
one hit by `drop_command` forwards nothing more: either way the client waits for a reply
that never comes until its socket timeout fires (redis-py then drops the connection), as
on a network that lost a packet for good. Other connections are untouched. Matching looks
for a byte string in what the client sent in one read (a command or a pipeline): the
commit script's sha, a key, a command name.

Faults are recorded in `triggered` (kind, match) so a test can wait until one happened.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from urllib.parse import urlparse


@dataclass
class _Rule:
    kind: str  # "drop_reply" | "drop_command"
    match: bytes
    count: int


@dataclass(eq=False)
class _Pair:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    swallow_replies: bool = False
    swallow_commands: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class FaultProxy:
    """See the module docstring."""

    def __init__(self, upstream_url: str) -> None:
        parsed = urlparse(upstream_url)
        self.db = parsed.path.lstrip("/") or "0"
        if parsed.scheme == "unix":
            self.unix_path: str | None = parsed.path
            self.db = "0"
            self.host, self.port = "", 0
        else:
            self.unix_path = None
            self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 6379
        self.rules: list[_Rule] = []
        self.pairs: set[_Pair] = set()
        self.triggered: list[tuple[str, bytes]] = []
        self.refusing = False
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._changed = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self.url = ""

    # -- lifecycle ------------------------------------------------------------------

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"redis://127.0.0.1:{port}/{self.db}"
        return self.url

    async def stop(self) -> None:
        self.release()
        if self._server is not None:
            self._server.close()
        await self.close_all()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    # -- faults ---------------------------------------------------------------------

    def drop_reply(self, match: bytes, count: int = 1) -> None:
        """The next `count` client writes containing `match` reach Redis; no reply returns."""
        self.rules.append(_Rule("drop_reply", match, count))

    def drop_command(self, match: bytes, count: int = 1) -> None:
        """The next `count` client writes containing `match` never reach Redis."""
        self.rules.append(_Rule("drop_command", match, count))

    def clear(self) -> None:
        """Forget the rules not triggered yet (connections already hit stay hit)."""
        self.rules.clear()

    def stall(self) -> None:
        """Hold every byte in both directions (queued, not lost) until `release()`."""
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    async def close_all(self, refuse: bool = False) -> None:
        """Cut every open connection; with `refuse`, new ones are closed at once until
        `reopen()` (Redis looks down)."""
        self.refusing = refuse
        for pair in list(self.pairs):
            self._cut(pair)

    def reopen(self) -> None:
        self.refusing = False

    async def wait_triggered(self, n: int = 1, timeout: float = 10.0) -> None:
        """Wait until at least `n` faults have been applied."""

        async def waiter() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.triggered) >= n)

        await asyncio.wait_for(waiter(), timeout)

    # -- plumbing -------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.close()
            return
        try:
            if self.unix_path is not None:
                up_reader, up_writer = await asyncio.open_unix_connection(self.unix_path)
            else:
                up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        pair = _Pair(writer, up_writer)
        self.pairs.add(pair)
        loop = asyncio.get_running_loop()
        pair.tasks = [
            loop.create_task(self._pump(reader, pair, upstream=True)),
            loop.create_task(self._pump(up_reader, pair, upstream=False)),
        ]

    def _rule_for(self, data: bytes) -> _Rule | None:
        for rule in self.rules:
            if rule.count > 0 and rule.match in data:
                rule.count -= 1
                if rule.count == 0:
                    self.rules.remove(rule)
                return rule
        return None

    async def _note(self, kind: str, match: bytes) -> None:
        async with self._changed:
            self.triggered.append((kind, match))
            self._changed.notify_all()

    async def _pump(self, reader: asyncio.StreamReader, pair: _Pair, upstream: bool) -> None:
        """Copy one direction; `upstream` is client -> Redis."""
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await self._flowing.wait()
                if upstream:
                    rule = None if pair.swallow_commands else self._rule_for(data)
                    if rule is not None:
                        await self._note(rule.kind, rule.match)
                        if rule.kind == "drop_command":
                            pair.swallow_commands = True
                        else:
                            pair.swallow_replies = True
                    if pair.swallow_commands:
                        continue
                    pair.upstream.write(data)
                    await pair.upstream.drain()
                else:
                    if pair.swallow_replies:
                        continue
                    pair.client.write(data)
                    await pair.client.drain()
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            self._cut(pair)

    def _cut(self, pair: _Pair) -> None:
        if pair not in self.pairs:
            return
        self.pairs.discard(pair)
        for writer in (pair.client, pair.upstream):
            with contextlib.suppress(Exception):
                writer.close()
        current = asyncio.current_task()
        for task in pair.tasks:
            if task is not current:
                task.cancel()
