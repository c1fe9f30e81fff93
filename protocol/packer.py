"""msgpack packing without a Packer per call.

`msgpack.packb` builds a Packer (and its buffer) on every call; the server packs a
few small objects per move (frames, commit arguments), so each thread keeps one
Packer and reuses it. Same bytes as `msgpack.packb(data, use_bin_type=True)`; a
failed pack leaves the Packer empty for the next call.
"""

from __future__ import annotations

import threading
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
