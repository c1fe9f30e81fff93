"""msgpack packing without a Packer per call.

`msgpack.packb` builds a Packer (and its buffer) on every call; the server packs a
few small objects per move (frames, commit arguments), so each thread keeps one
Packer and reuses it. Same bytes as `msgpack.packb(data, use_bin_type=True)`; a
failed pack leaves the Packer empty for the next call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import msgpack

_PACKERS = threading.local()


def packb(data: Any) -> bytes:
    """Pack `data` (raises TypeError, ValueError or OverflowError like msgpack.packb)."""
    try:
        packer = _PACKERS.packer
    except AttributeError:
        packer = _PACKERS.packer = msgpack.Packer(use_bin_type=True)
    return packer.pack(data)


def packer() -> Callable[[Any], bytes]:
    """This thread's `packb` without the call around it: for a caller that packs
    several objects in a row (each call costs about as much as packing a short list).
    Use it at once and keep it no longer than the caller's own call."""
    try:
        return _PACKERS.packer.pack
    except AttributeError:
        _PACKERS.packer = msgpack.Packer(use_bin_type=True)
        return _PACKERS.packer.pack
