"""The links between sibling workers that carry handed-over connections (server.handover).

Each worker listens on a Unix SOCK_SEQPACKET socket (`Inbox`); a worker that hands a
connection to a sibling connects to it once (`Sibling`) and sends, per connection, one
message: the bytes read so far and the socket's file descriptor (SCM_RIGHTS). The
receiver reads every link's messages as they come (at most PER_WAKE per link per
wake-up, so a burst does not hold its loop), and after each read it acknowledges on the
same link how many it has taken so far, before anything else happens to them: the
connections then go through the receiver's admission like any it accepted itself.

Why not datagrams: the kernel queues at most `net.unix.max_dgram_qlen` (10) datagrams
to an unconnected receiver, so in a reconnect storm (bench/storm.py) the senders waited
on each other ten at a time, one loop turn of each worker per ten, and hundreds waited
past their one second and were served through the relay. A connected pair of sockets
has no such count, only the sender's buffer; the depth of the queue is the sender's own
count of connections sent and not yet acknowledged (DEPTH), and a sender that finds it
full waits its turn, in order, for as long as the sibling keeps acknowledging: it gives
up only when the sibling has acknowledged nothing for STALL seconds (stopped, wedged).

    inbox = Inbox(path, adopt)     # adopt(head, conn) for each connection received
    inbox.start()                  # bind, listen
    sibling = Sibling.connect(path)
    sent = await sibling.send(head, fd, alive)   # raises TimeoutError (stalled), OSError (gone)
    sibling.close(); inbox.stop()
"""

from __future__ import annotations

import array
import asyncio
import collections
import logging
import socket
import struct
from collections.abc import Callable

log = logging.getLogger("giants.handover")

# Bytes of a connection's head the receiver reads at most (server.handover sends no more).
HEAD_LIMIT = 4096
# Connections a sender has sent on one link and the sibling has not acknowledged yet.
DEPTH = 256
# Messages read from one link per wake-up of the receiver's loop (then it acknowledges).
PER_WAKE = 64
# Seconds a sibling may acknowledge nothing while a sender waits for room on its link.
STALL = 2.0
# The sender's socket buffer: DEPTH connections with ordinary heads (~0.5 KB, 1.3 KB
# in the kernel each) fit; the kernel caps it at net.core.wmem_max. If it fills anyway
# (long heads), senders wait for it to drain, under the same STALL rule.
SEND_BUFFER = 1 << 20
ACK = struct.Struct("<Q")  # the receiver's count of connections taken on this link so far


class Sibling:
    """This worker's link to one sibling's Inbox: see the module docstring."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.sent = 0  # connections sent on this link
        self.taken = 0  # how many of them the sibling acknowledged
        self.granted = 0  # places given to senders that have not sent yet
        self.heard = self.loop.time()  # the last acknowledgement (or first send into an empty queue)
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self.writable: asyncio.Future[None] | None = None
        self.closed = False
        self.loop.add_reader(sock.fileno(), self._read)

    @classmethod
    def connect(cls, path: str) -> Sibling:
        """A link to the Inbox at `path`; OSError if there is none (FileNotFoundError: no
        such socket, ConnectionRefusedError: its worker died)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            sock.setblocking(False)
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        return cls(sock)

    async def send(self, head: bytes, fd: int, alive: Callable[[], bool]) -> bool:
        """Send `head` and the descriptor `fd`; False if `alive()` turned false while
        this sender waited for its place (the client went away: `fd` may be stale).

        Raises TimeoutError if the sibling acknowledged nothing for STALL seconds while
        this sender waited, OSError if the link broke (the sibling died or stopped)."""
        if self.waiting or self._free() <= 0:
            await self._place()
        else:
            self.granted += 1
        try:
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]
            while True:
                if self.closed:
                    raise ConnectionResetError("the sibling closed the hand-over link")
                if not alive():
                    return False
                if self.sent == self.taken:
                    self.heard = self.loop.time()  # STALL counts from the oldest unacknowledged
                try:
                    # (socket.send_fds would do, but CPython 3.11-3.12 drop its flags.)
                    self.sock.sendmsg([head], rights, socket.MSG_NOSIGNAL)
                except BlockingIOError:  # the kernel's buffer is full (long heads)
                    await self._unless_stalled(self._writable())
                    continue
                self.sent += 1
                return True
        finally:
            self.granted -= 1
            self._pump()

    def close(self) -> None:
        """Close the link; senders waiting on it fail (OSError)."""
        if self.closed:
            return
        self.closed = True
        self.loop.remove_reader(self.sock.fileno())
        if self.writable is not None and not self.writable.done():
            self.loop.remove_writer(self.sock.fileno())
            self.writable.set_result(None)
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(ConnectionResetError("the hand-over link closed"))
        self.sock.close()

    def _free(self) -> int:
        return DEPTH - (self.sent - self.taken) - self.granted

    async def _place(self) -> None:
        """Wait, in arrival order, for a place in the sibling's queue."""
        future = self.loop.create_future()
        self.waiting.append(future)
        try:
            await self._unless_stalled(future)
        except BaseException:
            if future.done() and not future.cancelled() and future.exception() is None:
                self.granted -= 1  # given a place meanwhile: it goes to the next one
                self._pump()
            else:
                future.cancel()
                if future in self.waiting:
                    self.waiting.remove(future)
            raise

    def _pump(self) -> None:
        """Give the free places to the senders waiting longest."""
        while self.waiting and self._free() > 0:
            future = self.waiting.popleft()
            if not future.done():
                self.granted += 1
                future.set_result(None)

    async def _unless_stalled(self, future: asyncio.Future[None]) -> None:
        """Wait for `future`; TimeoutError once the sibling acknowledged nothing for STALL s."""
        while not future.done():
            left = self.heard + STALL - self.loop.time()
            if left <= 0:
                raise TimeoutError(f"the sibling took no connection for {STALL:g} s")
            await asyncio.wait([future], timeout=left)
        future.result()

    def _writable(self) -> asyncio.Future[None]:
        if self.writable is None or self.writable.done():
            self.writable = future = self.loop.create_future()
            fd = self.sock.fileno()

            def ready() -> None:
                self.loop.remove_writer(fd)
                if not future.done():
                    future.set_result(None)

            self.loop.add_writer(fd, ready)
        return self.writable

    def _read(self) -> None:
        """The sibling's acknowledgements (its count taken so far); EOF: it closed."""
        while not self.closed:
            try:
                data = self.sock.recv(64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:  # the sibling stopped or died: senders fail, the next one reconnects
                self.close()
                return
            if len(data) == ACK.size:
                taken = ACK.unpack(data)[0]
                if self.taken < taken <= self.sent:
                    self.taken = taken
                    self.heard = self.loop.time()
                    self._pump()


Adopt = Callable[[bytes, list[int], int], None]


class Inbox:
    """The receiving end: a listening SOCK_SEQPACKET socket and the links siblings open
    to it. `adopt(head, fds, flags)` gets each message (it owns the descriptors)."""

    def __init__(self, path: str, adopt: Adopt) -> None:
        self.path = path
        self.adopt = adopt
        self.sock: socket.socket | None = None
        self.links: dict[socket.socket, int] = {}  # link -> connections taken on it
        self.unsent: set[socket.socket] = set()  # links whose last acknowledgement waits for room

    def start(self) -> None:
        """Bind and listen (OSError if the path cannot be bound)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.setblocking(False)
            sock.bind(self.path)
            sock.listen(64)
        except OSError:
            sock.close()
            raise
        self.sock = sock
        asyncio.get_running_loop().add_reader(sock.fileno(), self._accept)

    def stop(self) -> None:
        """Close the listening socket and every link (their senders see EOF)."""
        loop = asyncio.get_running_loop()
        sock, self.sock = self.sock, None
        if sock is not None:
            loop.remove_reader(sock.fileno())
            sock.close()
        for link in list(self.links):
            self._drop(link)

    def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while self.sock is not None:
            try:
                link, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("hand-over socket: %s", exc)
                return
            link.setblocking(False)
            self.links[link] = 0
            loop.add_reader(link.fileno(), self._receive, link)

    def _receive(self, link: socket.socket) -> None:
        took = 0
        while took < PER_WAKE:
            try:
                head, fds, flags, _ = socket.recv_fds(link, HEAD_LIMIT, 4)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                log.debug("hand-over link: %s", exc)
                head, fds, flags = b"", [], 0
            if not head and not fds:  # the sibling closed its end (or the link broke)
                self._drop(link)
                return
            took += 1
            self.adopt(head, fds, flags)
        if took:
            self.links[link] += took
            self._acknowledge(link)

    def _acknowledge(self, link: socket.socket) -> None:
        """Tell the sibling how many connections this link delivered so far."""
        if link not in self.links:
            return
        loop = asyncio.get_running_loop()
        try:
            link.send(ACK.pack(self.links[link]), socket.MSG_NOSIGNAL)
        except BlockingIOError:  # the sibling is not reading: send the count when it does
            if link not in self.unsent:
                self.unsent.add(link)
                loop.add_writer(link.fileno(), self._acknowledge, link)
            return
        except OSError:
            return  # broken: the reader sees it
        if link in self.unsent:
            self.unsent.discard(link)
            loop.remove_writer(link.fileno())

    def _drop(self, link: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(link.fileno())
        if link in self.unsent:
            self.unsent.discard(link)
            loop.remove_writer(link.fileno())
        self.links.pop(link, None)
        link.close()
