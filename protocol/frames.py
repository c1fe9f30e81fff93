"""The frames a server sends, built as plain dicts (pass them to `codec.encode`) or, for
the per-move patch, as bytes: `ok_frame`, `error_frame`, `snapshot_frame`, `patch_frame`
(protocol 1), `compact_patch_frame` (protocols 2 and up), `closing_frame`; and
`patch_head` / `patch_body` / `patch_bytes`, which write a patch's msgpack in pieces so
a room packs what its members share once (byte for byte
`encode(compact_patch_frame(...))`, tests/protocol/test_patch_bytes.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import Op
from protocol.packer import packb, packer

# -- plain-dict builders for the server's hot path ----------------------------------------
# They return wire-shaped maps (pass them to `encode`), skipping pydantic entirely.


def ok_frame(req_id: int | str | None, data: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `ok` reply to `req_id`."""
    return {"type": "ok", "id": req_id, "data": dict(data) if data else {}}


def error_frame(
    exc_or_code: ProtocolError | ErrorCode | str,
    message: str = "",
    *,
    id: int | str | None = None,
    detail: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `error` reply for a ProtocolError (its id and detail used) or for a code."""
    if isinstance(exc_or_code, ProtocolError):
        code: str = exc_or_code.code.value
        message = message or exc_or_code.message
        id = exc_or_code.id if id is None else id
        detail = detail if detail is not None else exc_or_code.detail
    else:
        code = str(exc_or_code)
    out: dict[str, Any] = {"type": "error", "id": id, "code": code, "message": message}
    if detail:
        out["detail"] = dict(detail)
    return out


def snapshot_frame(
    room: str,
    version: int,
    seat: int | None,
    view: Mapping[str, Any],
    legal: list[str],
    keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A full view of `room` for one member (seat None = spectator); `keys` is the
    room's key table, given to protocol-2 members only (`protocol.compact`)."""
    frame = {
        "type": "snapshot",
        "room": room,
        "version": version,
        "seat": seat,
        "view": view,
        "legal": legal,
    }
    if keys is not None:
        frame["keys"] = keys
    return frame


def patch_frame(
    room: str, from_: int, to: int, ops: list[Op], events: list[Any], legal: list[str]
) -> dict[str, Any]:
    """A patch taking a member's view of `room` from version `from_` to `to`."""
    return {
        "type": "patch",
        "room": room,
        "from": from_,
        "to": to,
        "ops": ops,
        "events": events,
        "legal": legal,
    }


def _put_events(entries: dict[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
    """A patch's `act` and `events` entries: a leading plain `action` event travels as
    `act: [seat, action]` (`messages.Patch` puts it back), the rest as `events`."""
    head = events[0]
    if head.get("type") == "action" and len(head) == 3 and "seat" in head and "action" in head:
        entries["act"] = [head["seat"], head["action"]]
        events = events[1:]
    if events:
        entries["events"] = events


def compact_patch_frame(
    room: str, from_: int, ops: list[list[Any]], events: Sequence[Mapping[str, Any]], legal: list[str] | None,
    legal_edit: list[list[Any]] | None = None,
) -> dict[str, Any]:
    """The protocol-2 or -3 patch taking a member's view from `from_` to `from_ + 1`.

    `ops` come from `compact.compact_ops`. `to` is left out (always `from + 1`), and so
    are `events` when empty and `legal` when None: the member's legal list is unchanged
    (pass the list, even [], when it changed). Protocol 3 may pass `legal_edit`
    (`protocol.legal`) instead of `legal`. A leading `action` event travels as
    `act: [seat, action]`; the decoding side (`messages.Patch`) puts it back.
    """
    frame: dict[str, Any] = {"type": "patch", "room": room, "from": from_, "ops": ops}
    if events:
        _put_events(frame, events)
    if legal is not None:
        frame["legal"] = legal
    elif legal_edit is not None:
        frame["legal_edit"] = legal_edit
    return frame


# `encode(compact_patch_frame(...))` in parts, for a change sent to several members:
# the ops, act and events are packed once (`patch_body`), then each member's frame is
# those bytes between its own head and its own legal list (`patch_bytes`). msgpack
# packs a map as a header then its entries in order, so the concatenation is the same
# bytes, byte for byte (tests/protocol/test_patch_bytes.py).
_PATCH_KEYS = packb("type") + packb("patch") + packb("room")
_FROM = packb("from")
_LEGAL = packb("legal")
_LEGAL_EDIT = packb("legal_edit")
_OPS, _ACT, _EVENTS = packb("ops"), packb("act"), packb("events")  # patch_body's keys
_FIXMAPS = [bytes((0x80 | n,)) for n in range(16)]  # a map's header, for up to 15 entries
_BYTES = [bytes((n,)) for n in range(256)]
_FIXSTRS = [bytes((0xA0 | n,)) for n in range(32)]  # a str's header, for up to 31 bytes
PatchBody = tuple[int, bytes]
# `patch_head`'s by room id, at most HEADS_KEPT (emptied when full): ~100 bytes a room
# (the id's own str is the key) for ~2,000 instructions a change
HEADS_KEPT = 4096
_HEADS: dict[str, bytes] = {}


def patch_head(room: str) -> bytes:
    """The packed `type`, `room` and `from` key of every patch of `room` (once per change)."""
    head = _HEADS.get(room)
    if head is None:  # (kept: a room's every change packs the same head)
        if len(_HEADS) >= HEADS_KEPT:
            _HEADS.clear()
        if len(room) < 32 and room.isascii():  # a fixstr: its header, then its bytes (packb's own form)
            head = b"".join((_PATCH_KEYS, _FIXSTRS[len(room)], room.encode(), _FROM))
        else:
            head = _PATCH_KEYS + packb(room) + _FROM
        _HEADS[room] = head
    return head


def patch_body(ops: list[list[Any]], events: Sequence[Mapping[str, Any]]) -> PatchBody:
    """The `ops`, `act` and `events` entries of `compact_patch_frame(room, from_, ops,
    events, ...)` packed: their count and bytes, for `patch_bytes`."""
    # compact_patch_frame's entries after `from`, in its order: a map's entries are its
    # keys and values packed in a row, so each value is packed alone after its key's
    # bytes (no map of them built, filled by `_put_events`, packed and cut from its
    # header: ~1,400 instructions a move)
    pack = packer()
    if not events:
        return 1, _OPS + pack(ops)
    head = events[0]  # `_put_events`' test
    if head.get("type") == "action" and len(head) == 3 and "seat" in head and "action" in head:
        act = pack([head["seat"], head["action"]])
        if len(events) == 1:
            return 2, b"".join((_OPS, pack(ops), _ACT, act))
        return 3, b"".join((_OPS, pack(ops), _ACT, act, _EVENTS, pack(events[1:])))
    return 2, b"".join((_OPS, pack(ops), _EVENTS, pack(events)))


def patch_bytes(
    head: bytes, from_: int, body: PatchBody, legal: list[str] | None, legal_edit: list[list[Any]] | None = None,
    packed_legal: bytes | None = None,
) -> bytes:
    """`encode(compact_patch_frame(room, from_, ops, events, legal, legal_edit))`, the
    same bytes, from `patch_head(room)` and `patch_body(ops, events)`. `packed_legal`,
    `packb(legal)` made by the caller, stands for `legal` (both None)."""
    count, data = body
    # msgpack's smallest form of an int, as Packer writes it (a call to it costs more)
    if 0 <= from_ < 0x80:
        version = _BYTES[from_]  # positive fixint
    elif 0x80 <= from_ < 0x100:
        version = b"\xcc" + _BYTES[from_]  # uint 8
    elif 0x100 <= from_ < 0x10000:
        version = b"\xcd" + from_.to_bytes(2, "big")  # uint 16
    else:
        version = packb(from_)
    if legal is not None:
        return b"".join((_FIXMAPS[count + 4], head, version, data, _LEGAL, packb(legal)))
    if legal_edit is not None:
        return b"".join((_FIXMAPS[count + 4], head, version, data, _LEGAL_EDIT, packb(legal_edit)))
    if packed_legal is not None:
        return b"".join((_FIXMAPS[count + 4], head, version, data, _LEGAL, packed_legal))
    return b"".join((_FIXMAPS[count + 3], head, version, data))


def closing_frame(reason: str) -> dict[str, Any]:
    return {"type": "closing", "reason": reason}
