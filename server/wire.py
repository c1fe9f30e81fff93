"""The server's seam onto `protocol/`: encode, decode-and-validate, diff.

TEMPORARY local implementation until protocol/ lands; the server imports only these
names, so switching to protocol/ changes this file alone.
"""

from __future__ import annotations

from typing import Any

import msgpack

from server.errors import RequestError

PROTOCOL_VERSION = 1


class FrameError(RequestError):
    """A frame that could not become a request; `req_id` is its id if one was readable."""

    def __init__(self, code: str, message: str, req_id: Any = None, detail: dict[str, Any] | None = None) -> None:
        super().__init__(code, message, detail)
        self.req_id = req_id


def encode(message: dict[str, Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def decode_request(frame: bytes, max_size: int) -> dict[str, Any]:
    if len(frame) > max_size:
        raise FrameError("frame_too_large", f"frame of {len(frame)} bytes exceeds {max_size}")
    try:
        msg = msgpack.unpackb(frame, raw=False)
    except Exception:
        raise FrameError("bad_frame", "frame is not msgpack") from None
    if not isinstance(msg, dict):
        raise FrameError("bad_frame", "frame is not a msgpack map")
    return msg


def diff(old: Any, new: Any, path: list[Any] | None = None) -> list[list[Any]]:
    path = path or []
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[list[Any]] = []
        for k in old:
            if k not in new:
                ops.append(["del", [*path, k]])
        for k, v in new.items():
            if k not in old:
                ops.append(["set", [*path, k], v])
            else:
                ops.extend(diff(old[k], v, [*path, k]))
        return ops
    return [["set", path, new]]


def apply(doc: Any, ops: list[list[Any]]) -> Any:
    import copy

    doc = copy.deepcopy(doc)
    for op in ops:
        path = op[1]
        if not path:
            doc = op[2]
            continue
        target = doc
        for key in path[:-1]:
            target = target[key]
        if op[0] == "set":
            target[path[-1]] = op[2]
        elif op[0] == "del":
            del target[path[-1]]
    return doc
