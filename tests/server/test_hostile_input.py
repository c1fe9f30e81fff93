"""Hostile client, input (issue 10 items 8 and 9): nothing a client sends reaches the
log as an exception or touches a Redis key it should not; names that would corrupt
other people's screens are refused; browsers from other sites are kept out; a Redis
URL's password never reaches the log."""

from __future__ import annotations

import logging

import pytest
from raw_ws import RawWs, stored

from server.app import GiantsServer
from server.config import Config

pytestmark = pytest.mark.redis

HONEST = "127.0.0.2"


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]


async def test_giants_notation_with_unicode_digits_is_bad_notation(
    giants_server, client_factory, redis_url, key_prefix, caplog
) -> None:
    caplog.set_level(logging.INFO)
    alice = await client_factory(giants_server.url, "alice")
    bob = await client_factory(giants_server.url, "bob", local_addr=(HONEST, 0))
    room = (await alice.ok("create_room", game="giants", players=2))["room"]
    await alice.ok("join", room=room)
    await bob.ok("join", room=room)
    await alice.wait_for(lambda: bool(alice.rooms[room].legal))  # the sealed bid (GI-8)
    before = await stored(redis_url, key_prefix)
    for text in ("bid ²", "bid ٣", "claim 2① workers", "place worker (5,3) logs ³", "bid 1 w²"):
        reply = await alice.error("act", room=room, action=text)
        assert reply["code"] == "bad_notation", (text, reply)
    assert await stored(redis_url, key_prefix) == before
    assert tracebacks(caplog) == []
    assert "internal_error" not in giants_server.metrics.errors
    await bob.ok("act", room=room, action=bob.rooms[room].legal[0])  # the room plays on


async def test_room_ids_never_name_another_key(giants_server, client_factory, caplog) -> None:
    caplog.set_level(logging.INFO)
    alice = await client_factory(giants_server.url, "alice")
    room = (await alice.ok("create_room", game="tara"))["room"]
    for kind in ("replay", "join", "watch", "resync", "leave", "start"):
        for bad in (f"{room}:log", f"{room}:snap", "{" + room + "}", "../x", "rooms:live"):
            reply = await alice.error(kind, room=bad)
            assert reply["code"] == "bad_message", (kind, bad, reply)
            assert reply["detail"]["fields"][0]["field"] == "room"
    assert (await alice.error("replay", room="nosuchroom"))["code"] == "no_such_room"
    assert (await alice.error("resume", room=room + ":log", token="x"))["code"] == "bad_message"
    assert tracebacks(caplog) == []
    assert "internal_error" not in giants_server.metrics.errors


@pytest.mark.parametrize(
    "name",
    ["eve\u202egnp.exe", "a\x1b[2Jb", "bell\x07", "tab\there", "zero\u200bwidth", "line\u2028break", " padded"],
)
async def test_names_that_would_corrupt_screens_are_refused(giants_server, client_factory, name) -> None:
    client = await client_factory(giants_server.url, hello=False)
    reply = await client.error("hello", protocol=1, name=name)
    assert reply["code"] == "bad_message"
    field = reply["detail"]["fields"][0]
    assert field["field"] == "name"
    assert "U+" in field["message"] or "spaces" in field["message"]
    bots = await client_factory(giants_server.url, "ok")
    assert (await bots.error("create_room", game="tara", bots={"1": name}))["code"] == "bad_message"
    await client.ok("hello", protocol=1, name="Eve ✓ Ünïcode")  # printable text is fine


async def test_join_with_a_seat_the_room_does_not_have(giants_server, client_factory) -> None:
    alice = await client_factory(giants_server.url, "alice")
    room = (await alice.ok("create_room", game="tara"))["room"]  # 2 seats
    reply = await alice.error("join", room=room, seat=5)
    assert reply["code"] == "bad_message"
    assert reply["detail"] == {
        "type": "join",
        "fields": [{"field": "seat", "error": "out_of_range", "message": "seat must be 0..1 in this room"}],
    }
    assert (await alice.ok("join", room=room, seat=1))["seat"] == 1


async def test_websocket_origin_is_checked(server_factory) -> None:
    default = await server_factory()
    host = default.url.split("://", 1)[1]
    await _connects(default.url, None)  # bots and terminal clients send no Origin
    await _connects(default.url, f"http://{host}")  # the web client it serves itself
    with pytest.raises(ConnectionRefusedError, match="403"):
        await RawWs.open(default.url, origin="https://evil.example")
    allowed = await server_factory(allowed_origin="https://play.example, https://other.example")
    await _connects(allowed.url, "https://play.example")
    await _connects(allowed.url, "https://other.example")
    with pytest.raises(ConnectionRefusedError, match="403"):
        await RawWs.open(allowed.url, origin="https://evil.example")
    anyone = await server_factory(allowed_origin="*")
    await _connects(anyone.url, "https://evil.example")


async def _connects(url: str, origin: str | None) -> None:
    ws = await RawWs.open(url, origin=origin)
    ws.close()


async def test_a_redis_password_never_reaches_the_log(key_prefix, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    url = "redis://giants:hunter2-secret@127.0.0.1:1/0"  # nothing listens on port 1
    server = GiantsServer(Config(host="127.0.0.1", port=0, redis_url=url, key_prefix=key_prefix))
    with pytest.raises(ConnectionError) as info:
        await server.start()
    await server.stop()
    assert "hunter2" not in str(info.value)
    assert "giants:***@127.0.0.1:1" in str(info.value)
    assert all("hunter2" not in r.getMessage() for r in caplog.records)
