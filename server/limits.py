"""Rate limits and per-address quotas: what one client may cost the server.

The connection charges every inbound frame to its `FrameBudget` before decoding it;
the app asks `AddressQuotas` before serving a new connection and the lobby before
creating a room. Everything here is plain bookkeeping (no I/O), so each check is a
few dictionary operations.

Addresses: an IPv4 client is one address; an IPv6 client is its /64 network (one
host usually holds a whole /64, so counting single IPv6 addresses would bound
nothing). Behind a reverse proxy every client arrives from the proxy's address: list
the proxy in `trusted_proxies` and the client's address is read from the
`X-Forwarded-For` header the proxy adds.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from server.errors import RequestError


class TokenBucket:
    """`rate` tokens per second up to `burst`; `take()` spends one if there is one."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


# FrameBudget.charge's verdicts, as module constants too: a class attribute read costs
# a look-up through the type (~150 instructions) that a global's does not, every frame.
ACCEPT, REFUSE, FLOOD = 0, 1, 2


class FrameBudget:
    """One connection's frame budget: a token bucket plus a flood detector.

    `charge()` is called for every inbound frame, before it is decoded, and answers
    ACCEPT (serve it), REFUSE (answer `rate_limited`) or FLOOD (close the connection
    with 1008). Refusals are counted in a leaky counter: each refusal adds one, the
    count drains at `rate` per second, and a count above `flood` means the client
    keeps sending far faster than it is served. Unlike a "refused in a row" counter
    it does not reset when a single token refills, so a sustained flood always ends
    in the close, while a client that overshoots now and then never gets near it.
    """

    ACCEPT, REFUSE, FLOOD = ACCEPT, REFUSE, FLOOD

    __slots__ = ("bucket", "flood", "refused", "stamp")

    def __init__(self, rate: float, burst: int, flood: int) -> None:
        self.bucket = TokenBucket(rate, burst)
        self.flood = float(flood)
        self.refused = 0.0
        self.stamp = self.bucket.stamp

    def charge_more(self, tokens: float) -> bool:
        """Spend `tokens` more for an expensive request (after its frame's one token
        was charged); False, and a refusal counted, if the bucket holds too few."""
        bucket = self.bucket
        now = time.monotonic()
        bucket.tokens = min(bucket.burst, bucket.tokens + (now - bucket.stamp) * bucket.rate)
        bucket.stamp = now
        if bucket.tokens >= tokens:
            bucket.tokens -= tokens
            return True
        self.refused = max(0.0, self.refused - (now - self.stamp) * bucket.rate) + 1.0
        self.stamp = now
        return False

    def charge(self, now: float | None = None) -> int:
        if now is None:
            now = time.monotonic()
        # TokenBucket.take, inline (one frame's charge, every frame): the same sums.
        bucket = self.bucket
        tokens = bucket.tokens + (now - bucket.stamp) * bucket.rate
        if tokens > bucket.burst:
            tokens = bucket.burst
        bucket.stamp = now
        if tokens >= 1.0:
            bucket.tokens = tokens - 1.0
            return ACCEPT
        bucket.tokens = tokens
        drained = (now - self.stamp) * bucket.rate
        self.refused = max(0.0, self.refused - drained) + 1.0
        self.stamp = now
        return FLOOD if self.refused > self.flood else REFUSE


def address_key(host: str) -> str:
    """The quota key of a client address: the IPv4 address, or the IPv6 /64 network."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host  # a unix socket path or something else: count it as it is
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def client_address(peer: str, forwarded_for: str | None, trusted: frozenset[str]) -> str:
    """The client's address: the TCP peer, or, when the peer is a trusted proxy, the
    right-most address in X-Forwarded-For that is not itself a trusted proxy."""
    if peer not in trusted or not forwarded_for:
        return peer
    for hop in reversed([h.strip() for h in forwarded_for.split(",")]):
        if hop and hop not in trusted:
            return hop
    return peer


@dataclass
class AddressQuotas:
    """Per-address counts: open connections and live rooms created.

    `room_live(room_id)` tells whether a room still counts (created, not finished,
    still in the lobby); rooms that ended stop counting the next time the address is
    checked, so the lobby need not report every way a room can end.
    """

    max_connections: int
    max_rooms: int
    connections: dict[str, int] = field(default_factory=dict)
    rooms: dict[str, set[str]] = field(default_factory=dict)
    _tickets: int = 0

    # -- connections ----------------------------------------------------------------

    def open_connection(self, addr: str) -> bool:
        """Count a new connection of `addr`; False (and nothing counted) if over quota."""
        count = self.connections.get(addr, 0)
        if self.max_connections and count >= self.max_connections:
            return False
        self.connections[addr] = count + 1
        return True

    def close_connection(self, addr: str) -> None:
        count = self.connections.get(addr, 0) - 1
        if count > 0:
            self.connections[addr] = count
        else:
            self.connections.pop(addr, None)

    # -- rooms ----------------------------------------------------------------------

    def rooms_of(self, addr: str, room_live: Callable[[str], bool]) -> int:
        """How many live rooms `addr` created or is creating (ended ones are forgotten)."""
        ids = self.rooms.get(addr)
        if not ids:
            return 0
        for room_id in [r for r in ids if not r.startswith("?") and not room_live(r)]:
            ids.discard(room_id)
        if not ids:
            del self.rooms[addr]
        return len(ids)

    def reserve_room(self, addr: str, room_live: Callable[[str], bool]) -> str | None:
        """Hold one of `addr`'s room slots for a creation in flight: the ticket to
        pass to `room_created` or `release_room`, or None when the quota is used up."""
        if self.max_rooms and self.rooms_of(addr, room_live) >= self.max_rooms:
            return None
        self._tickets += 1
        ticket = f"?{self._tickets}"  # "?" is not in any room id
        self.rooms.setdefault(addr, set()).add(ticket)
        return ticket

    def release_room(self, addr: str, ticket: str) -> None:
        ids = self.rooms.get(addr)
        if ids is not None:
            ids.discard(ticket)
            if not ids:
                del self.rooms[addr]

    def room_created(self, addr: str, ticket: str, room_id: str) -> None:
        self.release_room(addr, ticket)
        self.rooms.setdefault(addr, set()).add(room_id)


def parse_origins(values: Iterable[str]) -> frozenset[str]:
    """The allowed origins from repeated and/or comma-separated option values."""
    out: set[str] = set()
    for value in values:
        for item in value.split(","):
            item = item.strip().rstrip("/")
            if item:
                out.add(item.lower())
    return frozenset(out)


def origin_allowed(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    """Whether a WebSocket handshake with this Origin header may proceed.

    Allowed: no Origin at all (bots, terminal clients: only browsers send one), the
    same origin as the server (the Origin's host:port is the request's Host), any
    origin listed in `allowed`, or anything when `allowed` holds "*". A browser page
    from another site is refused, so it cannot use a visitor's browser to play.
    """
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    if "*" in allowed or origin in allowed:
        return True
    if not host:
        return False
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    default_port = 443 if parts.scheme == "https" else 80
    origin_port = parts.port or default_port
    host = host.strip().lower()
    try:
        host_parts = urlsplit("//" + host)
        host_name, host_port = host_parts.hostname, host_parts.port
    except ValueError:
        return False
    return host_name == parts.hostname and (host_port or default_port) == origin_port


def redact_url(url: str) -> str:
    """`url` with any password (user info or a `password=` query parameter) replaced
    by `***`: safe to log."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            host = parts.hostname or ""
            if ":" in host:
                host = f"[{host}]"
            port = f":{parts.port}" if parts.port is not None else ""
            netloc = f"{parts.username or ''}:***@{host}{port}"
        query = "&".join(
            f"{key}=***" if key.lower() == "password" else (f"{key}={value}" if sep else key)
            for key, sep, value in (item.partition("=") for item in parts.query.split("&") if item)
        )
        if netloc == parts.netloc and query == parts.query:
            return url  # nothing secret (and urlunsplit would drop an empty "//")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "<redis url not shown: it does not parse>"


class GuessLimiter:
    """Wrong password guesses per key (a room, an address): after `limit` misses within
    `window` seconds the key is refused (`too_many_guesses`, detail `retry_after`)
    until the oldest miss leaves the window. `check` before verifying, `failed` after
    a miss. Memory is bounded (`max_keys`, oldest keys dropped first)."""

    def __init__(self, limit: int = 10, window: float = 60.0, max_keys: int = 100_000) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self._fails: OrderedDict[str, deque[float]] = OrderedDict()

    def check(self, key: str) -> None:
        """Raise RequestError(too_many_guesses) if `key` is out of guesses for now."""
        fails = self._fails.get(key)
        if fails is None:
            return
        now = time.monotonic()
        while fails and fails[0] <= now - self.window:
            fails.popleft()
        if not fails:
            del self._fails[key]
            return
        if len(fails) >= self.limit:
            retry = round(fails[0] + self.window - now, 1)
            raise RequestError(
                "too_many_guesses",
                f"too many wrong passwords; try again in {retry:g} s",
                {"retry_after": retry},
            )

    def failed(self, key: str) -> None:
        fails = self._fails.get(key)
        if fails is None:
            fails = self._fails[key] = deque(maxlen=self.limit)
            while len(self._fails) > self.max_keys:  # the oldest keys go first
                self._fails.popitem(last=False)
        else:
            self._fails.move_to_end(key)
        fails.append(time.monotonic())
