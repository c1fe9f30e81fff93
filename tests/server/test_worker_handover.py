"""`giants serve --workers 2`: a client that names its room in the URL (`/?room=<id>`)
is handed to the worker that owns the room (server.handover), so nothing of its is
relayed; without a hint, with a hostile one or when the owner died, it is served where
it landed, exactly as before."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from websockets.exceptions import ConnectionClosed

from client_cli.client import Client
from client_cli.connection import with_room_hint
from engines import registry
from server.handover import room_hint
from tests.conftest import ServeProcess, start_serve
from tests.server.game_cases import plain
from tests.server.multinode import metric, move, no_internal_errors, per_node

pytestmark = pytest.mark.redis

def total(seen: dict[str, str], name: str) -> float:
    return sum(metric(text, name) for text in seen.values())


def serve_workers(workers: list[ServeProcess], *args: str) -> ServeProcess:
    sp = start_serve(["--workers", "2", *args])
    workers.append(sp)
    return sp


async def play_out(players: list[Any], room: str, rng: random.Random) -> None:
    """Random moves by whoever is to act until the game is over."""
    acked: list[tuple[int, str]] = []
    while players[0].rooms[room].view["room"]["status"] != "finished":
        await move(players, room, rng, acked)


async def check_views(client: Any, room: str, members: list[tuple[int | None, Any]]) -> None:
    """Every member's last view is its engine view of the final position (replayed)."""
    data = await client.ok("replay", room=room)
    engine = registry.get_engine(data["game"], data["rules"])
    state = engine.new_game(data["players"], data["options"], data["seed"])
    for entry in data["actions"]:
        state = engine.apply_text(state, entry["seat"], entry["action"]).state
    assert engine.outcome(state) is not None
    for seat, member in members:
        assert member.rooms[room].view["game"] == plain(engine.view(state, seat))


async def test_members_naming_their_room_are_handed_to_its_owner(workers, client_factory, tmp_path, key_prefix) -> None:
    sp = serve_workers(workers, "--data-dir", str(tmp_path / "data"), "--key-prefix", key_prefix)
    games, watchers = [], []
    for i in range(8):
        # The creator connects with no hint (no room yet): its worker creates and owns the room.
        creator = await client_factory(sp.url, f"c{i}")
        room = (await creator.ok("create_room", game="giantslayer", options={"rounds": 1}))["room"]
        await creator.ok("join", room=room, seat=0)
        other = await client_factory(f"{sp.url}/?room={room}", f"o{i}")
        # The shipped client names the room it was started for in its URL.
        watcher = Client(sp.url, name=f"w{i}", room=room, reconnect=False)
        watchers.append(watcher)
        await watcher.connect()
        await watcher.watch(room)
        await other.ok("join", room=room, seat=1)
        games.append((room, [creator, other], watcher))
    try:
        await asyncio.gather(*(play_out(players, room, random.Random(n)) for n, (room, players, _) in enumerate(games)))
        for room, players, watcher in games:
            await watcher.rooms[room].wait_version(players[0].rooms[room].version, timeout=10)
            await check_views(players[0], room, [(0, players[0]), (1, players[1]), (None, watcher)])
            no_internal_errors(*players)
    finally:
        for watcher in watchers:
            await watcher.close()
    seen = per_node(sp.url)
    # 16 hinted connections, each accepted by a random worker: about half by the one
    # not owning its room. Each of those was handed over, and nothing was relayed.
    handed = total(seen, "giants_handover_sent_total")
    assert handed == total(seen, "giants_handover_received_total") > 0
    assert total(seen, "giants_handover_failed_total") == 0
    assert total(seen, "giants_relay_requests_total") == 0
    assert total(seen, "giants_relay_frames_total") == 0
    # Without the hint a member is served where it lands, through the relay when that
    # is not the owner (12 spectators: about half of them).
    creator = await client_factory(sp.url, "creator")
    room = (await creator.ok("create_room", game="giantslayer"))["room"]
    await creator.ok("watch", room=room)
    for n in range(12):
        late = await client_factory(sp.url, f"late{n}")
        await late.ok("watch", room=room)
        assert late.rooms[room].view["game"] == creator.rooms[room].view["game"]
    seen = per_node(sp.url)
    assert total(seen, "giants_relay_requests_total") > 0
    assert total(seen, "giants_handover_sent_total") == handed


async def test_a_burst_of_hinted_connections_is_handed_over_whole(workers, client_factory, tmp_path, key_prefix) -> None:
    """Far more connections at once than a queue of datagrams to a socket held (10 by
    default): the sibling takes them all, none is served by the relay."""
    sp = serve_workers(workers, "--data-dir", str(tmp_path / "data"), "--key-prefix", key_prefix,
                       "--max-connections-per-address", "0")
    creators = [await client_factory(sp.url, f"c{i}") for i in range(6)]
    rooms = [(await c.ok("create_room", game="giantslayer"))["room"] for c in creators]

    async def watcher(n: int) -> None:
        room = rooms[n % len(rooms)]
        client = await client_factory(f"{sp.url}/?room={room}", f"w{n}")
        await client.ok("watch", room=room)

    await asyncio.gather(*(watcher(n) for n in range(240)))
    seen = per_node(sp.url)
    assert total(seen, "giants_handover_sent_total") > 0
    assert total(seen, "giants_handover_failed_total") == 0
    assert total(seen, "giants_relay_requests_total") == 0


async def test_address_limits_hold_for_handed_over_connections(workers, client_factory, tmp_path, key_prefix) -> None:
    """The worker that adopts a connection counts it against the client's own address."""
    sp = serve_workers(workers, "--data-dir", str(tmp_path / "data"), "--key-prefix", key_prefix,
                       "--max-connections-per-address", "4")
    creator = await client_factory(sp.url, "creator")
    room = (await creator.ok("create_room", game="giantslayer"))["room"]
    served, refused = 0, []
    for n in range(6):
        client = await client_factory(f"{sp.url}/?room={room}", f"m{n}", hello=False)
        try:
            await client.ok("hello", protocol=1, name=f"m{n}")
            served += 1
        except (ConnectionError, ConnectionClosed):
            await client.closed
            refused.append(client.ws.close_code)
    assert served == 3 and refused == [1008, 1008, 1008]


async def status_line(url: str, target: bytes) -> bytes:
    """The first line of the server's answer to a WebSocket upgrade for `target`."""
    host, port = url.removeprefix("ws://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    key = b"dGhlIHNhbXBsZSBub25jZQ=="
    writer.write(b"GET " + target + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
    try:
        return await asyncio.wait_for(reader.readline(), 15)
    finally:
        writer.close()


HOSTILE = [
    b"/?room=" + b"x" * 5000,  # a request line past the hand-over's limit
    b"/?room=" + b"a" * 300,  # longer than a room id
    b"/?room=../../etc/passwd",
    b"/?room=%ff%fe",
    b"/?room=a&room=b",
    b"/?room=\xc3\xa9t\xc3\xa9",  # not ASCII
    b"/?" + b"&".join(b"f%d=1" % i for i in range(500)) + b"&room=abc",
    b"/?room=nosuchroom1",  # a room id nobody holds
    b"/healthz?room=abc",
]


async def test_hostile_hints_are_served_where_they_land(workers, client_factory, tmp_path, key_prefix) -> None:
    sp = serve_workers(workers, "--data-dir", str(tmp_path / "data"), "--key-prefix", key_prefix)
    # Connections that never send their request, or only part of its first line, hold
    # up nobody (each is closed after the handshake timeout).
    silent = [await asyncio.open_connection("127.0.0.1", int(sp.url.rsplit(":", 1)[1])) for _ in range(20)]
    for _, writer in silent[:10]:
        writer.write(b"GET /?room=abc")
    creator = await client_factory(sp.url, "creator")
    room = (await creator.ok("create_room", game="giantslayer"))["room"]
    member = await client_factory(f"{sp.url}/?room={room}", "member")
    await member.ok("watch", room=room)
    # The answer to a hostile hint is the answer to the same request without one.
    for target in HOSTILE:
        assert await status_line(sp.url, target) == await status_line(sp.url, target.replace(b"room=", b"roam=")), target
    for target in HOSTILE[1:8]:
        client = await client_factory(sp.url + target.decode("latin-1"), "probe") if target.isascii() else None
        if client is not None:
            await client.ok("list_rooms")
    seen = per_node(sp.url)
    assert total(seen, "giants_handover_failed_total") == 0
    assert total(seen, "giants_handover_sent_total") <= 1  # only `member` could have been
    for _, writer in silent:
        writer.close()


async def test_a_dead_owner_leaves_its_hinted_members_where_they_land(workers, client_factory, redis_url, key_prefix) -> None:
    # Long leases: the dead worker still holds its rooms while the member connects.
    sp = serve_workers(workers, "--redis-url", redis_url, "--key-prefix", key_prefix, "--lease-ttl", "6")
    redis = aioredis.from_url(redis_url)
    try:
        first = await client_factory(sp.url, "first")
        room = (await first.ok("create_room", game="giantslayer"))["room"]
        lease = f"{key_prefix}room:{{{room}}}:lease"
        owner = (await redis.get(lease)).decode()
        pid = int(owner.rsplit("-", 2)[1])  # node ids are host-pid-random
        os.kill(pid, signal.SIGKILL)
        while Path(f"/proc/{pid}").exists():  # reaped: every thread is gone, and its sockets
            await asyncio.sleep(0.01)
        late = await client_factory(f"{sp.url}/?room={room}", "late")  # its hand-over is refused
        for _ in range(400):  # the supervisor restarts the worker; the room fails over
            holder = await redis.get(lease)
            if holder is not None and holder.decode() != owner:
                break
            await asyncio.sleep(0.05)
        await late.ok("watch", room=room)
        assert late.rooms[room].view["room"]["status"] == "waiting"
        seen = per_node(sp.url)
        assert owner not in seen
        assert total(seen, "giants_handover_failed_total") == 1
        assert total(seen, "giants_handover_sent_total") == 0
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("line", "room"),
    [
        (b"GET /?room=abc HTTP/1.1", "abc"),
        (b"GET /play?x=1&room=A_b-9 HTTP/1.1", "A_b-9"),
        (b"GET / HTTP/1.1", None),
        (b"POST /?room=abc HTTP/1.1", None),
        (b"GET /?room=abc&room=abd HTTP/1.1", None),
        (b"GET /?room=a/b HTTP/1.1", None),
        (b"GET /?room=" + b"a" * 200 + b" HTTP/1.1", None),
        (b"GET /?room=\xff HTTP/1.1", None),
        (b"GET /?room=abc  HTTP/1.1", None),
    ],
)
def test_room_hint_reads_only_a_well_formed_room_id(line: bytes, room: str | None) -> None:
    assert room_hint(line) == room


def test_clients_name_the_room_as_a_query_parameter() -> None:
    assert with_room_hint("ws://127.0.0.1:8765", "abc") == "ws://127.0.0.1:8765/?room=abc"
    assert with_room_hint("wss://h/giants?x=1", "a-b_9") == "wss://h/giants?x=1&room=a-b_9"
    assert with_room_hint("ws://h:1", None) == "ws://h:1"


async def test_a_member_whose_room_owner_is_not_found_in_time_is_served_where_it_landed(
    workers, client_factory, fault_proxy, key_prefix
) -> None:
    """Redis does not answer the lookup of the room's lease holder: after 1 s the
    connection is served by the worker it reached (through the relay) and counted in
    `giants_handover_unrouted_total`. Long leases: no orphan sweep reads the lease then."""
    # Started from a thread: the proxy lives on this test's event loop, which must run meanwhile.
    sp = await asyncio.to_thread(
        serve_workers, workers, "--redis-url", fault_proxy.url, "--key-prefix", key_prefix, "--lease-ttl", "30"
    )
    first = await client_factory(sp.url, "first")
    room = (await first.ok("create_room", game="giantslayer"))["room"]
    fault_proxy.drop_reply(f"room:{{{room}}}:lease".encode())  # the lookup's MGET
    late = []
    for i in range(60):  # until one lands on the worker that does not own the room
        late.append(await client_factory(f"{sp.url}/?room={room}", f"late{i}"))
        if fault_proxy.triggered:
            break
    assert fault_proxy.triggered, "no connection reached the other worker"
    for member in late:
        await member.ok("watch", room=room)
        assert member.rooms[room].view["room"]["status"] == "waiting"
    seen = per_node(sp.url)
    assert total(seen, "giants_handover_unrouted_total") == 1
    assert total(seen, "giants_handover_failed_total") == 0
