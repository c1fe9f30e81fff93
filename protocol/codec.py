"""msgpack framing: encode any message, decode and validate inbound frames.

One frame is exactly one msgpack map (str as str, binary as bin). `decode_client` is
what a server runs on every inbound frame; `decode_server` is what a client runs. Both
raise `ProtocolError` subclasses carrying a stable code and, when readable, the request
id, so the caller answers with `frames.error_frame(exc)` and keeps the connection open.

`encode` packs plain dicts directly (the server's hot path: a patch push costs one
`packb`, no model round trip) and pydantic models through `messages.to_wire`; the
frames a server sends are built in `protocol.frames`.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping
from typing import Any

import msgpack
from pydantic import BaseModel, ValidationError

from protocol.errors import (
    BadFrame,
    BadMessage,
    FrameTooLarge,
    UnknownType,
)
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    MAX_ACTION_LEN,
    MAX_ID_LEN,
    MAX_ROOM_LEN,
    SERVER_MESSAGE_TYPES,
    ClientMessage,
    ServerMessage,
    server_adapter,
    to_wire,
)
from protocol.packer import packb

MAX_FRAME = 64 * 1024  # default inbound limit (bytes), configurable per call
MAX_SERVER_FRAME = 16 * 1024 * 1024  # what a client accepts: snapshots can be large
MAX_FIELD_ERRORS = 16  # detail["fields"] is capped so an error reply stays small
# Inbound structure bounds, checked before any schema validation so a hostile frame
# (a 60 KB map of 7,000 option values) costs microseconds, not a pydantic error per
# item. No valid request comes near them: the largest containers are `bots` (one entry
# per seat, at most 64) and `options` (at most 32 scalars), and no request has a
# container inside a container (request -> options -> scalar values).
MAX_CONTAINER = 64  # entries in any one map or array of a request
MAX_VALUES = 256  # values (scalars and containers) in a whole request
MAX_DEPTH = 2  # the request map is depth 1, its `options` and `bots` maps depth 2
# The unpacker's own hard limits (`unpack_map`): msgpack refuses a map or array longer
# than MAX_VALUES as soon as it reads its header, before building anything. Above
# MAX_CONTAINER, so that a merely oversized request still gets a `bad_message` carrying
# its id.
# Each request type's own validator: what the discriminated union `client_adapter`
# picks for a tag, called without the union's dispatch.
_CLIENT_VALIDATORS = {kind: model.__pydantic_validator__.validate_python for kind, model in CLIENT_MESSAGE_TYPES.items()}
# The request types none of whose fields takes a map or an array (every type but
# `create_room`), with their number of fields: such a request is validated first when
# its map has no more entries than that, and only a failure goes through the checks
# before validation (`decode_client`). Any map such a validator accepts is flat (an
# extra key is refused) and small, so those checks would have passed it: the same
# model comes out, and each refused frame gets the same error from the full path.
# tests/protocol/test_decode_fast.py proves the table's premise and the equivalence.
_FLAT_FIRST: dict[str, tuple[Any, int]] = {
    kind: (_CLIENT_VALIDATORS[kind], len(model.model_fields))
    for kind, model in CLIENT_MESSAGE_TYPES.items()
    if kind != "create_room"
}


_unpackb = msgpack.unpackb


def _no_ext(code: int, data: bytes) -> Any:
    # Extension types (timestamps included) are not part of the protocol.
    raise ValueError(f"msgpack extension type {code} is not allowed")


def encode(message: BaseModel | Mapping[str, Any]) -> bytes:
    """Pack one message (a model, or a plain map already in wire shape) into a frame.

    Plain maps are packed as they are, so the caller must use the wire names (e.g.
    "from" in a patch). Send the result as one binary WebSocket frame.
    """
    if type(message) is not dict and isinstance(message, BaseModel):  # the server's frames are dicts
        message = to_wire(message)
    return packb(message)


def unpack_map(frame: bytes, max_size: int = MAX_FRAME, *, str_keys: bool = True) -> dict[str, Any]:
    """Size-check and unpack a frame into a map without validating it against a schema.

    Raises FrameTooLarge or BadFrame. With `str_keys` (the default, used for inbound
    requests) map keys must be strings and the unpacker's hard limits apply
    (MAX_VALUES entries per map or array, no extension types; strings and binaries
    are bounded by the frame size).
    """
    if type(frame) is not bytes and not isinstance(frame, bytes | bytearray | memoryview):  # a union's check costs
        raise BadFrame("send binary frames holding one msgpack map, not text")
    size = len(frame)
    if size > max_size:
        raise FrameTooLarge(
            f"frame of {size} bytes exceeds the limit of {max_size}",
            detail={"size": size, "limit": max_size},
        )
    try:
        # raw=False, use_list=True and strict_map_key=True are msgpack >= 1.0's defaults:
        # not passed, since each keyword costs the call (all seven and the limits' dict
        # were about a third of unpacking an `act`).
        if str_keys:
            data = msgpack.unpackb(
                frame, ext_hook=_no_ext, max_map_len=MAX_VALUES, max_array_len=MAX_VALUES, max_ext_len=0
            )
        else:
            data = msgpack.unpackb(frame, ext_hook=_no_ext, strict_map_key=False)
    except Exception as exc:  # msgpack raises many types: ExtraData, ValueError, ...
        reason = str(exc)[:120] if isinstance(exc, ValueError) else ""
        raise BadFrame(f"frame is not one msgpack value: {type(exc).__name__} {reason}".rstrip()) from None
    if not isinstance(data, dict):
        raise BadFrame(f"frame is a msgpack {type(data).__name__}, not a map")
    return data


def recover_id(data: Mapping[Any, Any]) -> int | str | None:
    """The request id of a decoded map if it is a valid id, else None."""
    rid = data.get("id")
    if isinstance(rid, bool):
        return None
    if isinstance(rid, int) and -(2**63) <= rid < 2**63:
        return rid
    if isinstance(rid, str) and len(rid) <= MAX_ID_LEN:
        return rid
    return None


def _field_path(data: Any, loc: tuple[Any, ...]) -> str:
    # loc is (tag, field, ...deeper parts and union-member labels); keep the field and
    # every deeper part that really navigates the input, so labels like "constrained-int"
    # never show up as if they were keys.
    parts = [str(loc[1])] if len(loc) > 1 else []
    node: Any = data.get(loc[1]) if len(loc) > 1 and isinstance(data, dict) else None
    for part in loc[2:]:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node = node[part]
            parts.append(str(part))
        else:
            break
    return ".".join(parts)


def _bad_message(kind: str, data: dict[str, Any], exc: ValidationError, rid: Any, tagged: bool = True) -> BadMessage:
    fields: list[dict[str, str]] = []
    seen: set[str] = set()
    for err in exc.errors(include_url=False, include_input=False):
        # A union's errors start with the tag; a model's own with the field.
        path = _field_path(data, tuple(err["loc"]) if tagged else (kind, *err["loc"]))
        if path in seen:  # a union reports once per member; one line per field is enough
            continue
        seen.add(path)
        fields.append({"field": path, "error": err["type"], "message": err["msg"]})
    names = ", ".join(f["field"] for f in fields[:MAX_FIELD_ERRORS])
    return BadMessage(
        f"invalid {kind} message: {names}",
        detail={"type": kind, "fields": fields[:MAX_FIELD_ERRORS]},
        id=rid,
    )


def _check_type(data: dict[str, Any], known: Mapping[str, Any], rid: Any) -> str:
    kind = data.get("type")
    if kind is None:
        raise BadMessage(
            'message has no "type"',
            detail={"fields": [{"field": "type", "error": "missing", "message": "Field required"}]},
            id=rid,
        )
    if not isinstance(kind, str):
        raise BadMessage(
            '"type" must be a string',
            detail={
                "fields": [
                    {
                        "field": "type",
                        "error": "string_type",
                        "message": "Input should be a valid string",
                    }
                ]
            },
            id=rid,
        )
    if kind not in known:
        raise UnknownType(
            f"unknown message type {kind[:64]!r}",
            detail={"type": kind[:64], "known": sorted(known)},
            id=rid,
        )
    return kind


def _too_big(kind: str, path: str, error: str, message: str, rid: Any) -> BadMessage:
    return BadMessage(
        f"invalid {kind} message: {path or 'the request'} {message}",
        detail={"type": kind, "fields": [{"field": path, "error": error, "message": message}]},
        id=rid,
    )


_CONTAINERS = frozenset({dict, list})  # what unpack_map makes of maps and arrays


def check_shape(data: dict[str, Any], kind: str, rid: Any) -> None:
    """Refuse a request whose structure is beyond every valid request's (cheap).

    Walks the unpacked map once, stopping at the first container longer than
    MAX_CONTAINER, nesting deeper than MAX_DEPTH or the MAX_VALUES-th value. Raises
    BadMessage (error "too_long", "too_deep" or "too_many_values") with the field's path.
    """
    if len(data) > MAX_CONTAINER:
        raise _too_big(kind, "", "too_long", f"has more than {MAX_CONTAINER} fields", rid)
    if len(data) < MAX_VALUES and _CONTAINERS.isdisjoint(map(type, data.values())):
        return  # a flat map (every move's `act`): within every bound already
    budget = MAX_VALUES
    stack: list[tuple[str, Any, int]] = [(str(k), v, 2) for k, v in data.items()]
    while stack:
        path, value, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise _too_big(kind, path.split(".")[0], "too_many_values", f"holds more than {MAX_VALUES} values", rid)
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                raise _too_big(kind, path, "too_deep", f"nests deeper than {MAX_DEPTH} levels", rid)
            if len(value) > MAX_CONTAINER:
                raise _too_big(kind, path, "too_long", f"has more than {MAX_CONTAINER} entries", rid)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((f"{path}.{k}", v, depth + 1) for k, v in items)


def decode_client(frame: bytes, max_size: int = MAX_FRAME) -> ClientMessage:
    """Decode and validate one inbound request frame.

    Returns a typed, immutable request model. Raises FrameTooLarge, BadFrame,
    UnknownType or BadMessage; `exc.id` holds the request id whenever the frame was a
    map with a valid id, so the server's error reply can carry it.
    """
    return validate_client(unpack_map(frame, max_size))


_INT64_MIN, _INT64_MAX = -(2**63), 2**63
_ROOM_ID_FULL = re.compile(r"[A-Za-z0-9_-]+").fullmatch  # ROOM_ID_PATTERN as fullmatch: no "$" before a newline


# Frames up to this size are tried as an act before `unpack_map`'s limits (`act_frame`):
# a move's frame is about 50 bytes, and a frame this small holds few values whatever it is.
ACT_FRAME_MAX = 512
# An `act`'s fields as `act_frame` returns them: id, room, action, version.
ActFields = tuple[int | str, str, str, int | None]


def act_frame(frame: bytes, max_size: int = MAX_FRAME, known: Container[str] = ()) -> ActFields | None:
    """The fields of a frame `decode_client(frame, max_size)` would return as a valid
    `Act`, without building the model (its validator and the object cost about half of
    decoding a move); None for anything else, and for any frame over ACT_FRAME_MAX
    bytes: the caller then decodes it with `unpack_map` and `validate_client` for its
    model or its error (a small frame unpacked twice only if it is no act).

    Unpacked without unpack_map's keywords (its extension hook and length limits: a
    fifth of unpacking an act): a map accepted here holds no extension value and no
    container, so they could not have changed it, and a frame this small builds a few
    hundred objects at most whatever it holds. Then the checks of the strict, closed
    `Act` model in plain Python: `type` "act"; `id` an int in int64 range or a str of
    at most MAX_ID_LEN characters; `room` a RoomId; `action` of 1 to MAX_ACTION_LEN
    characters; `version` absent, None or an int >= 0; no other key. Exact types:
    msgpack makes no subclasses, and strict validation takes no bool for an int.
    `known`: room ids the caller knows to be valid RoomIds (the rooms a connection is
    in: ids of requests that passed validation); a room among them is not checked
    against the pattern again (~1,000 instructions a move). A string not in it is.
    tests/protocol/test_decode_fast.py checks it against `decode_client`.
    """
    if type(frame) is not bytes or (length := len(frame)) > ACT_FRAME_MAX or length > max_size:
        return None
    try:
        # Subscripts, not `get` (a method call each): a key missing, or a value that is
        # no map (a list, a str... : no str subscript), raises, and this is no act.
        data = _unpackb(frame)
        if data["type"] != "act":
            return None
        rid, room, action = data["id"], data["room"], data["action"]
        size = len(data)  # 4: those keys only; 5: and `version`
        version = None if size == 4 else data["version"] if size == 5 else -1
    except Exception:  # msgpack raises many types: unpack_map says which
        return None
    kind = type(rid)
    if kind is int:
        if not _INT64_MIN <= rid < _INT64_MAX:
            return None
    elif kind is not str or len(rid) > MAX_ID_LEN:
        return None
    if type(room) is not str or (room not in known and (not 0 < len(room) <= MAX_ROOM_LEN or not (
        (room.isascii() and room.isalnum()) or _ROOM_ID_FULL(room) is not None
    ))):
        return None
    if type(action) is not str or not action or len(action) > MAX_ACTION_LEN:
        return None
    if version is None or (type(version) is int and version >= 0):
        return rid, room, action, version
    return None


def validate_client(data: dict[str, Any]) -> ClientMessage:
    """`decode_client` of a frame `unpack_map` already unpacked to `data`."""
    kind = data.get("type")
    if type(kind) is str:
        first = _FLAT_FIRST.get(kind)
        if first is not None and len(data) <= first[1]:
            try:
                return first[0](data)
            except ValidationError:
                pass  # the full path below gives the error
    rid = recover_id(data)
    kind = _check_type(data, CLIENT_MESSAGE_TYPES, rid)
    check_shape(data, kind, rid)
    try:
        return _CLIENT_VALIDATORS[kind](data)
    except ValidationError as exc:
        raise _bad_message(kind, data, exc, rid, tagged=False) from None


def decode_server(frame: bytes, max_size: int = MAX_SERVER_FRAME) -> ServerMessage:
    """Decode and validate one frame a server sent (the client side of `decode_client`)."""
    data = unpack_map(frame, max_size, str_keys=False)
    rid = recover_id(data)
    kind = _check_type(data, SERVER_MESSAGE_TYPES, rid)
    try:
        return server_adapter.validate_python(data)
    except ValidationError as exc:
        raise _bad_message(kind, data, exc, rid) from None
