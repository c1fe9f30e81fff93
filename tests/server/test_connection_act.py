"""Connection.handle takes an `act` straight to its room (no handler coroutine, no
`_my_room` coroutine when the room is one of the connection's): the same replies as the
plain dispatch, which is what every other request of a room still goes through
(`HANDLERS`, then `_my_room`). Each case is run as an `act` and as a `resync` (the plain
path, same room field) and must give the same error codes in the same order of checks."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import msgpack
import pytest

from protocol.codec import decode_client, decode_server, encode
from protocol.errors import ProtocolError
from protocol.frames import error_frame
from server.config import Config
from server.connection import Connection
from server.errors import RequestError
from server.metrics import Metrics


class Room:
    id = "AbCdEfGh12"

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    async def act(self, conn: Any, req_id: Any, action: str, version: int | None) -> None:
        self.calls.append(("act", conn, req_id, action, version))
        if self.fail:
            raise RequestError(self.fail, "no")

    async def resync(self, conn: Any, req_id: Any) -> None:
        self.calls.append(("resync", conn, req_id))
        if self.fail:
            raise RequestError(self.fail, "no")


class Router:
    def __init__(self, exists: bool) -> None:
        self.exists = exists

    async def room(self, room_id: str) -> Room:
        if not self.exists:
            raise RequestError("no_such_room", f"no room {room_id}")
        return Room()


class WS:
    request = response = None


def connection(*, hello: bool, member: Room | None, exists: bool, shutting_down: bool) -> tuple[Connection, list[dict[str, Any]]]:
    server = SimpleNamespace(config=Config(), metrics=Metrics(), router=Router(exists), shutting_down=shutting_down)
    conn = Connection(WS(), server)  # type: ignore[arg-type]
    replies: list[dict[str, Any]] = []
    conn.push = lambda frame: replies.append(decode_server(frame).model_dump())  # type: ignore[method-assign]
    if hello:
        conn.session = "s"
    if member is not None:
        conn.rooms[member.id] = member  # type: ignore[assignment]
    return conn, replies


async def run(kind: str, **case: Any) -> tuple[list[Any], list[tuple[Any, ...]]]:
    room = case.pop("room")
    conn, replies = connection(member=room, **case)
    fields = {"action": "c3-d4", "version": 17} if kind == "act" else {}
    await conn.handle(encode({"type": kind, "id": 7, "room": "AbCdEfGh12", **fields}))
    calls = [call[0] for call in room.calls] if room is not None else []
    assert conn.metrics.frames_in == 1
    return [(r["type"], r.get("code"), r.get("id")) for r in replies], calls


@pytest.mark.parametrize("hello", [True, False])
@pytest.mark.parametrize("member", [None, "ok", "fails"])
@pytest.mark.parametrize("exists", [True, False])
@pytest.mark.parametrize("shutting_down", [True, False])
async def test_act_replies_as_the_plain_dispatch(hello: bool, member: str | None, exists: bool, shutting_down: bool) -> None:
    def case() -> dict[str, Any]:
        room = None if member is None else Room("not_your_turn" if member == "fails" else None)
        return {"hello": hello, "room": room, "exists": exists, "shutting_down": shutting_down}

    act_replies, act_calls = await run("act", **case())
    plain_replies, plain_calls = await run("resync", **case())
    assert act_replies == plain_replies
    assert act_calls == [c.replace("resync", "act") for c in plain_calls]
    if hello and member and not shutting_down:
        assert act_calls == ["act"]
    else:
        assert len(act_replies) == 1 and act_replies[0][0] == "error" and act_replies[0][2] == 7


async def test_act_passes_its_fields() -> None:
    room = Room()
    conn, replies = connection(hello=True, member=room, exists=True, shutting_down=False)
    await conn.handle(encode({"type": "act", "id": "r1", "room": "AbCdEfGh12", "action": "c3-d4"}))
    await conn.handle(encode({"type": "act", "id": 2, "room": "AbCdEfGh12", "action": "pass", "version": 0}))
    assert room.calls == [("act", conn, "r1", "c3-d4", None), ("act", conn, 2, "pass", 0)]
    assert replies == []


BAD_ACTS: list[dict[Any, Any]] = [
    {"room": "AbCdEfGh12\n"}, {"room": "Ab:Cd"}, {"room": ""}, {"room": "a" * 65}, {"room": b"AbCdEfGh12"},
    {"action": ""}, {"action": "x" * 1025}, {"action": 5}, {"version": -1}, {"version": True}, {"version": 1.0},
    {"id": True}, {"id": None}, {"id": "r" * 65}, {"id": 2**63}, {"junk": 1}, {b"version": 1}, {"type": "Act"},
]  # fmt: skip


@pytest.mark.parametrize("spoil", BAD_ACTS)
async def test_hostile_act_gets_the_decoders_error(spoil: dict[Any, Any]) -> None:
    """An act the move's path does not take gets the error decode_client gives it, and
    reaches no room."""
    room = Room()
    conn, replies = connection(hello=True, member=room, exists=True, shutting_down=False)
    frame = msgpack.packb({"type": "act", "id": 7, "room": "AbCdEfGh12", "action": "c3-d4", "version": 1, **spoil},
                          use_bin_type=True)
    with pytest.raises(ProtocolError) as caught:
        decode_client(frame)
    await conn.handle(frame)
    assert room.calls == []
    expected = decode_server(encode(error_frame(caught.value))).model_dump()
    assert replies == [expected]
